"""``rollwise manifests [crd|rbac|operator|all]``: what a platform team applies to run rollwise (operator-plan §6).

One generator for every way of shipping: ``deploy/`` (a kustomize base, written by ``--out-dir``) and the Helm
chart's CRD under ``charts/rollwise/crds`` (written by ``--chart-dir``; the chart's templates are written by hand and
tests/cli/test_chart.py renders them with Helm). Tests keep both in step with this module.

RBAC is modelled on upstream's statefulset-controller role (``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/
controller_policy.go``), including ``statefulsets/finalizers: update``, without which the API server refuses
owner references with ``blockOwnerDeletion``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from rollwise.cli.crd import CR_GROUP, CRD_FILE, crd
from rollwise.cluster.crd.analysis import analysis_crds
from rollwise.cluster.crd.policy import POLICY_NAME, policy
from rollwise.cluster.operator_namespace import DEFAULT_NAMESPACE, LABELS, NAME, namespace_manifest

__all__ = ["add_manifests", "documents", "render"]

DEFAULT_IMAGE = "ghcr.io/rollwise/rollwise:0.1.0"
METRICS_PORT = 8080
HEALTH_PORT = 8081
PARTS = ("crd", "policy", "rbac", "operator")

def _meta(name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(LABELS)}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def _rule(groups: list[str], resources: list[str], verbs: list[str],
          names: list[str] | None = None) -> dict[str, Any]:
    rule: dict[str, Any] = {"apiGroups": groups, "resources": resources}
    if names:
        rule["resourceNames"] = names
    rule["verbs"] = verbs
    return rule


READ = ["get", "list", "watch"]
WRITE = ["create", "update", "patch", "delete"]


def rbac(namespace: str) -> list[dict[str, Any]]:
    cluster_rules = [
        _rule([CR_GROUP], ["statefulsets"], [*READ, "patch", "update"]),
        _rule([CR_GROUP], ["statefulsets/status"], ["get", "update", "patch"]),
        _rule([CR_GROUP], ["statefulsets/finalizers"], ["update"]),
        # Canary analyses: the StatefulSet controller creates runs, the AnalysisRun controller resolves and measures.
        _rule([CR_GROUP], ["analysistemplates"], READ),
        _rule([CR_GROUP], ["analysisruns"], [*READ, *WRITE]),
        _rule([CR_GROUP], ["analysisruns/status"], ["get", "update", "patch"]),
        _rule([""], ["pods"], [*READ, *WRITE]),
        _rule([""], ["persistentvolumeclaims"], [*READ, *WRITE]),  # the claim retention policy deletes claims
        _rule([""], ["events"], ["create", "patch", "update"]),
        _rule(["apps"], ["controllerrevisions"], [*READ, *WRITE]),
        # The quorum-aware companion reads plain sets and writes only its own annotation (DEP-07).
        _rule(["apps"], ["statefulsets"], [*READ, "patch"]),
        _rule(["coordination.k8s.io"], ["leases"], READ),  # member leases
        _rule(["policy"], ["poddisruptionbudgets"], READ),  # voluntary deletions wait on the budgets
    ]
    subject = [{"kind": "ServiceAccount", "name": NAME, "namespace": namespace}]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NAME, namespace)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": _meta(f"{NAME}-operator"),
         "rules": cluster_rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": _meta(f"{NAME}-operator"),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{NAME}-operator"},
         "subjects": subject},
        # Its own leader Lease: create cannot be limited by name, the rest can.
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": _meta(f"{NAME}-leader-election", namespace),
         "rules": [_rule(["coordination.k8s.io"], ["leases"], ["create"]),
                   _rule(["coordination.k8s.io"], ["leases"], ["get", "update", "patch"], [NAME])]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": _meta(f"{NAME}-leader-election", namespace),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"{NAME}-leader-election"},
         "subjects": subject},
    ]


def operator(namespace: str, image: str, *, replicas: Any = 2, lease_duration: str = "15s",
             renew_deadline: str = "10s", retry_period: str = "2s") -> list[dict[str, Any]]:
    selector = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "operator"}
    env = [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
           {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
    args = ["run", "--in-cluster", "--leader-elect", "--lease-namespace=$(POD_NAMESPACE)", "--identity=$(POD_NAME)",
            f"--lease-duration={lease_duration}", f"--renew-deadline={renew_deadline}",
            f"--retry-period={retry_period}", f"--metrics-addr=:{METRICS_PORT}", f"--health-addr=:{HEALTH_PORT}"]
    container = {
        "name": "operator", "image": image, "imagePullPolicy": "IfNotPresent", "args": args, "env": env,
        "ports": [{"name": "metrics", "containerPort": METRICS_PORT}, {"name": "health", "containerPort": HEALTH_PORT}],
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "health"}, "periodSeconds": 5},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "health"}, "initialDelaySeconds": 15,
                          "periodSeconds": 10},
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}},
    }
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(NAME, namespace),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector},
            # A new replica is ready (caches synced) before an old one goes: a standby is always warm.
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
            "template": {
                "metadata": {"labels": dict(selector)},
                "spec": {
                    "serviceAccountName": NAME,
                    # Longer than renewDeadline (10 s), so the lease is released before the kubelet kills us.
                    "terminationGracePeriodSeconds": 30,
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532,
                                        "seccompProfile": {"type": "RuntimeDefault"}},
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                        "weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                                           "labelSelector": {"matchLabels": dict(selector)}}}]}},
                    "containers": [container],
                },
            },
        },
    }
    service = {
        "apiVersion": "v1", "kind": "Service", "metadata": _meta(f"{NAME}-metrics", namespace),
        "spec": {"selector": dict(selector),
                 "ports": [{"name": "metrics", "port": METRICS_PORT, "targetPort": "metrics"}]},
    }
    return [namespace_manifest(namespace), deployment, service]


def documents(part: str, *, namespace: str = DEFAULT_NAMESPACE, image: str = DEFAULT_IMAGE,
              **timings: Any) -> list[dict[str, Any]]:
    if part == "all":
        docs = [d for p in PARTS for d in documents(p, namespace=namespace, image=image, **timings)]
        # The Namespace first, so `kubectl apply -f -` creates it before the objects that live in it.
        return sorted(docs, key=lambda d: d["kind"] != "Namespace")
    if part == "crd":
        return [crd(), *analysis_crds()]
    if part == "policy":
        return policy()
    if part == "rbac":
        return rbac(namespace)
    if part == "operator":
        return operator(namespace, image, **timings)
    raise ValueError(f"unknown part {part!r}; one of {', '.join((*PARTS, 'all'))}")


def render(docs: list[dict[str, Any]]) -> str:
    return "---\n".join(yaml.safe_dump(d, sort_keys=False, width=120) for d in docs)


def chart_files() -> dict[str, str]:
    """The chart's generated files by path under the chart: its CRD, and the admission policy on its custom sets.
    Helm installs what is under crds/ before the templates and never deletes (nor upgrades) it, so uninstalling the
    chart keeps every custom set. The other templates are written by hand, Helm's way (values, release-prefixed
    names); tests/cli/test_chart.py renders them."""
    crd_docs = documents("crd")
    for doc in crd_docs:
        doc["metadata"]["annotations"] = {"helm.sh/resource-policy": "keep"}
    return {f"crds/{CRD_FILE}": render(crd_docs), "templates/policy.yaml": _policy_template()}


def _policy_template() -> str:
    """The admission policy as a template (Helm's ``crds/`` holds CRDs only): the generator's, its cluster-scoped
    names prefixed with the release's, as every object of the chart is, so two releases never collide."""
    text = render(documents("policy"))
    templated = '{{ include "rollwise.fullname" . }}-statefulset-keys'
    text = text.replace(f"name: {POLICY_NAME}", f"name: {templated}")
    text = text.replace(f"policyName: {POLICY_NAME}", f"policyName: {templated}")
    return text.replace("  labels:\n    app.kubernetes.io/name: rollwise\n",
                        "  labels:\n    {{- include \"rollwise.labels\" . | nindent 4 }}\n")


def kustomization(resources: list[str]) -> str:
    return "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n" + "".join(
        f"- {r}\n" for r in resources)


# The CRD stands in its own kustomization, with the admission policy on its custom sets: deleting the operator's
# (`kubectl delete -k deploy/`) must never delete the CRD, because the API server then deletes every custom set and
# the garbage collector every pod they own.
OPERATOR_PARTS = ("rbac", "operator")
CRD_PARTS = ("crd", "policy")
CRD_DIR = "crds"


def _write_deploy(directory: Path, namespace: str, image: str) -> None:
    (directory / CRD_DIR).mkdir(parents=True, exist_ok=True)
    files = [CRD_FILE if part == "crd" else f"{part}.yaml" for part in CRD_PARTS]
    for part, file in zip(CRD_PARTS, files, strict=True):
        (directory / CRD_DIR / file).write_text(render(documents(part)))
    (directory / CRD_DIR / "kustomization.yaml").write_text(kustomization(files))
    for part in OPERATOR_PARTS:
        (directory / f"{part}.yaml").write_text(render(documents(part, namespace=namespace, image=image)))
    (directory / "kustomization.yaml").write_text(kustomization([f"{p}.yaml" for p in OPERATOR_PARTS]))


def _write_chart(directory: Path) -> None:
    for name, text in chart_files().items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)


def _run(args: argparse.Namespace) -> int:
    if args.out_dir is None and args.chart_dir is None:
        sys.stdout.write(render(documents(args.part, namespace=args.namespace, image=args.image)))
        return 0
    flag, directory = ("--out-dir", args.out_dir) if args.out_dir is not None else ("--chart-dir", args.chart_dir)
    try:
        if args.out_dir is not None:
            _write_deploy(Path(directory), args.namespace, args.image)
        else:
            _write_chart(Path(directory))
    except OSError as err:  # a file where a directory goes, no permission, a full disk: one line, no traceback
        print(f"rollwise manifests: {flag} {directory}: {err.strerror or err}"
              + (f" ({err.filename})" if err.filename else ""), file=sys.stderr)
        return 2
    return 0


def add_manifests(sub: Any) -> None:
    p = sub.add_parser("manifests", help="print the CRD, RBAC and operator Deployment for a real cluster",
                       description="Print what `kubectl apply -f -` needs to run rollwise on a cluster: the CRDs "
                                   "(statefulsets, analysistemplates and analysisruns.apps.rollwise.dev), "
                                   "least-privilege RBAC, the operator Deployment (two replicas, leader election) "
                                   "and its metrics Service.")
    p.add_argument("part", nargs="?", default="all", choices=[*PARTS, "all"])
    p.add_argument("--namespace", default=DEFAULT_NAMESPACE, help=f"where the operator runs ({DEFAULT_NAMESPACE})")
    p.add_argument("--image", default=DEFAULT_IMAGE, help=f"the operator image ({DEFAULT_IMAGE})")
    p.add_argument("--out-dir", metavar="DIR", help="write the operator's parts and a kustomization.yaml into DIR, "
                                                         "the CRD and its own kustomization.yaml into DIR/crds")
    p.add_argument("--chart-dir", metavar="DIR", help="write the Helm chart's CRD into DIR/crds")
    p.set_defaults(run=_run)
