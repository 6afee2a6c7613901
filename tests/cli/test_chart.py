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
