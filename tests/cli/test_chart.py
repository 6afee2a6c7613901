"""The Helm chart rendered by Helm itself (Helm v4's Go SDK, through the helm-python-sdk wheel: `make test` installs
the `chart` extra): `helm lint --strict` is clean, every value does what values.yaml says, the operator's rights are
the generator's, and two releases render side by side without a name collision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from rollwise.cli.manifests import documents

helm = pytest.importorskip("helm_python", reason="Helm's renderer (pip install 'rollwise[chart]') is not installed")

CHART = Path(__file__).resolve().parents[2] / "charts" / "rollwise"

EVERYTHING: dict[str, Any] = {
    "image": {"repository": "registry.local/rollwise", "tag": "dev", "pullPolicy": "Always"},
    "imagePullSecrets": [{"name": "regcred"}],
    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "ops", "effect": "NoSchedule"}],
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["ops"]}]}]}}},
    "podAnnotations": {"team": "platform"},
    "podLabels": {"cost-centre": "db"},
    "extraArgs": ["--workers=10"],
    "extraEnv": [{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}],
    "priorityClassName": "system-cluster-critical",
    "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
    "serviceMonitor": {"enabled": True, "interval": "15s", "labels": {"release": "prometheus"}},
    "logFormat": "json",
    "watchNamespaces": ["team-a", "team-b"],
}


def _render(values: dict[str, Any] | None = None, *, name: str = "rollwise",
            namespace: str = "rollwise-system") -> list[dict[str, Any]]:
    with helm.Chart.load(str(CHART)) as chart:
        out = chart.render(values or {}, name=name, namespace=namespace)
    return [d for text in out.values() for d in yaml.safe_load_all(text) if d]


def _one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (doc,) = [d for d in docs if d["kind"] == kind]
    return doc


def _rules(doc: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(g, r, v) for rule in doc["rules"] for g in rule["apiGroups"] for r in rule["resources"]
            for v in rule["verbs"]}


@pytest.mark.parametrize("values", [{}, EVERYTHING], ids=["defaults", "every-value"])
def test_helm_lint_strict_is_clean(values: dict[str, Any]) -> None:
    report = helm.lint(str(CHART), values, strict=True)
    # Severity 1 is information; the only one is "icon is recommended" (the project has no hosted icon).
    assert report["errors"] == [] and [m for m in report["messages"] if m["severity"] >= 2] == []
    assert [m["error"] for m in report["messages"]] == ["icon is recommended"]


def test_the_defaults_render_the_generators_operator_with_release_prefixed_names() -> None:
    docs = _render()
    generated = {d["kind"]: d for d in documents("all")}
    assert _rules(_one(docs, "ClusterRole")) == _rules(generated["ClusterRole"]), "the same rights as deploy/"
    deployment = _one(docs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    want_pod = generated["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"] == want_pod["securityContext"]
    container, want = pod["containers"][0], want_pod["containers"][0]
    for key in ("image", "env", "ports", "readinessProbe", "livenessProbe", "resources", "securityContext"):
        assert container[key] == want[key], key
    assert container["args"] == [*want["args"][:4], "--lease-name=rollwise", *want["args"][4:], "--log-format=text",
                                 "--log-level=INFO"]
    assert deployment["spec"]["replicas"] == 2
    assert {d["kind"] for d in docs} == {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                                         "Deployment", "Service", "PodDisruptionBudget", "ValidatingAdmissionPolicy",
                                         "ValidatingAdmissionPolicyBinding"}
    policy, binding = _one(docs, "ValidatingAdmissionPolicy"), _one(docs, "ValidatingAdmissionPolicyBinding")
    assert binding["spec"]["policyName"] == policy["metadata"]["name"] == "rollwise-statefulset-keys"
    assert policy["spec"] == generated["ValidatingAdmissionPolicy"]["spec"], "the generator's rules, as deploy/"


def test_every_value_lands_where_values_yaml_says() -> None:
    docs = _render(EVERYTHING, name="ops")
    deployment = _one(docs, "Deployment")
    template = deployment["spec"]["template"]
    pod = template["spec"]
    container = pod["containers"][0]
    assert container["image"] == "registry.local/rollwise:dev" and container["imagePullPolicy"] == "Always"
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]
    assert container["resources"] == EVERYTHING["resources"]
    assert pod["nodeSelector"] == EVERYTHING["nodeSelector"] and pod["tolerations"] == EVERYTHING["tolerations"]
    assert pod["affinity"] == EVERYTHING["affinity"]
    assert template["metadata"]["annotations"] == {"team": "platform"}
    assert template["metadata"]["labels"]["cost-centre"] == "db"
    assert deployment["spec"]["selector"]["matchLabels"].items() <= template["metadata"]["labels"].items()
    assert container["args"][-4:] == ["--log-format=json", "--log-level=INFO", "--namespaces=team-a,team-b",
                                      "--workers=10"]
    assert container["env"][-1] == {"name": "HTTPS_PROXY", "value": "http://proxy:3128"}
    assert pod["priorityClassName"] == "system-cluster-critical"
    pdb = _one(docs, "PodDisruptionBudget")
    assert pdb["spec"] == {"minAvailable": 1, "selector": deployment["spec"]["selector"]}
    monitor = _one(docs, "ServiceMonitor")
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    assert monitor["spec"]["endpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "15s"}]
    assert monitor["spec"]["selector"]["matchLabels"] == _one(docs, "Service")["spec"]["selector"]
    # Watching namespaces: the rights are Roles there, no ClusterRole.
    roles = [d for d in docs if d["kind"] == "Role" and d["metadata"]["name"] == "ops-rollwise-operator"]
    assert sorted(r["metadata"]["namespace"] for r in roles) == ["team-a", "team-b"]
    assert all(_rules(r) == _rules(_one(documents("rbac"), "ClusterRole")) for r in roles)
    assert not [d for d in docs if d["kind"] in ("ClusterRole", "ClusterRoleBinding")]


def test_a_single_replica_gets_no_disruption_budget_that_would_block_every_drain() -> None:
    assert "PodDisruptionBudget" not in {d["kind"] for d in _render({"replicas": 1})}


def test_an_unknown_log_format_fails_the_render_naming_the_value() -> None:
    with pytest.raises(helm.HelmRenderError, match="logFormat: must be text or json"):
        _render({"logFormat": "xml"})


def _key(doc: dict[str, Any]) -> tuple[str, str, str]:
    return doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"]


@pytest.mark.parametrize("namespaces", [("ops", "ops"), ("ops-a", "ops-b")], ids=["one-namespace", "two"])
def test_two_releases_render_side_by_side_without_a_name_collision(namespaces: tuple[str, str]) -> None:
    first = _render({"serviceMonitor": {"enabled": True}}, name="blue", namespace=namespaces[0])
    second = _render({"serviceMonitor": {"enabled": True}}, name="green", namespace=namespaces[1])
    assert not {_key(d) for d in first} & {_key(d) for d in second}
    cluster_scoped = [d["metadata"]["name"] for d in first + second if "namespace" not in d["metadata"]]
    assert sorted(cluster_scoped) == ["blue-rollwise-operator", "blue-rollwise-operator",
                                      "blue-rollwise-statefulset-keys", "blue-rollwise-statefulset-keys",
                                      "green-rollwise-operator", "green-rollwise-operator",
                                      "green-rollwise-statefulset-keys", "green-rollwise-statefulset-keys"]
    # Neither release's Deployment, Service or budget selects the other's pods, and each leads on its own Lease.
    for mine, theirs in ((first, second), (second, first)):
        their_pod = _one(theirs, "Deployment")["spec"]["template"]["metadata"]["labels"]
        assert not _one(mine, "Deployment")["spec"]["selector"]["matchLabels"].items() <= their_pod.items()
        assert not _one(mine, "Service")["spec"]["selector"].items() <= their_pod.items()
    leases = [a for d in (first, second) for a in _one(d, "Deployment")["spec"]["template"]["spec"]["containers"][0][
        "args"] if a.startswith("--lease-name=")]
    assert leases == ["--lease-name=blue-rollwise", "--lease-name=green-rollwise"]


@pytest.mark.parametrize("extra", [["--log-level=DEBUG"], ["--log-level", "DEBUG"]], ids=["flag=value", "flag value"])
def test_an_extra_arg_that_sets_a_flag_replaces_the_default_rather_than_repeating_it(extra: list[str]) -> None:
    args = _one(_render({"extraArgs": extra}), "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--log-level=INFO" not in args and args[-len(extra):] == extra
    assert len([a for a in args if a.startswith("--log-level")]) == 1, args
    assert "--log-format=text" in args, "the other defaults stay"


@pytest.mark.parametrize("flag", ["--lease-duration", "--renew-deadline", "--retry-period", "--metrics-addr",
                                  "--health-addr", "--log-format", "--namespaces", "--lease-name", "--identity",
                                  "--lease-namespace"])
def test_every_flag_the_chart_sets_gives_way_to_extra_args(flag: str) -> None:
    values = {"extraArgs": [f"{flag}=x"], "watchNamespaces": ["a"]}
    args = _one(_render(values), "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [a for a in args if a.split("=")[0] == flag] == [f"{flag}=x"]


# The Kubernetes release in which each kind the chart installs is served at the version the chart writes (GA).
SERVED_SINCE = {
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): (1, 16),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"): (1, 30),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"): (1, 30),
    ("apps/v1", "Deployment"): (1, 9),
    ("policy/v1", "PodDisruptionBudget"): (1, 21),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): (1, 8),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): (1, 8),
    ("rbac.authorization.k8s.io/v1", "Role"): (1, 8),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): (1, 8),
    ("v1", "Service"): (1, 0),
    ("v1", "ServiceAccount"): (1, 0),
    ("monitoring.coreos.com/v1", "ServiceMonitor"): (1, 0),  # the Prometheus Operator's CRD, any release
}


def test_the_charts_kube_version_floor_serves_every_kind_it_installs() -> None:
    meta = yaml.safe_load((CHART / "Chart.yaml").read_text())
    floor = meta["kubeVersion"]
    assert floor.startswith(">=") and floor.endswith(".0-0"), "a floor that admits pre-releases (EKS's, GKE's)"
    major, minor = (int(x) for x in floor[2:].split(".")[:2])
    crds = [doc for p in (CHART / "crds").glob("*.yaml") for doc in yaml.safe_load_all(p.read_text())]
    for doc in _render(EVERYTHING) + crds:
        since = SERVED_SINCE[(doc["apiVersion"], doc["kind"])]
        assert (major, minor) >= since, f"{doc['apiVersion']} {doc['kind']} is served from 1.{since[1]}, not {floor}"
