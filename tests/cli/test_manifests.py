"""`rollwise manifests`: the CRD agrees with rollwise's validation, RBAC and the Deployment follow the plan, and
`deploy/` and the Helm chart stay the generator's output."""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rollwise.api.defaults import apply_defaults
from rollwise.api.features import FeatureGates
from rollwise.api.validation import validate_statefulset
from rollwise.cli import main
from rollwise.cli.crd import COUNT_MINIMUMS, ENUMS, crd
from rollwise.cli.manifests import (
    DEFAULT_IMAGE,
    DEFAULT_NAMESPACE,
    chart_files,
    documents,
    render,
)

ROOT = Path(__file__).resolve().parents[2]
GATES = FeatureGates()

CR: dict[str, Any] = {
    "apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet", "metadata": {"name": "web"},
    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
             "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "app", "image": "app:v1"}]}}},
}


def _with(path: str, value: Any) -> dict[str, Any]:
    obj = copy.deepcopy(CR)
    node = obj["spec"]
    *parents, leaf = path.replace("{block}", "rollingUpdate").split(".")
    for key in parents:
        node = node.setdefault(key, {})
    node[leaf] = value
    return obj


def _errors(obj: dict[str, Any]) -> list[str]:
    return [e.path for e in validate_statefulset(apply_defaults(obj, gates=GATES), gates=GATES)]


def _schema_at(path: str) -> dict[str, Any]:
    node = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    for key in path.replace("{block}", "rollingUpdate").split("."):
        node = node["properties"][key]
    return node


@pytest.mark.parametrize("path", sorted(COUNT_MINIMUMS))
def test_every_minimum_in_the_crd_is_the_one_validation_enforces(path: str) -> None:
    minimum = COUNT_MINIMUMS[path]
    assert _schema_at(path).get("minimum") == minimum
    assert _errors(_with(path, minimum if minimum is not None else -1)) == []
    if minimum is not None:
        assert _errors(_with(path, minimum - 1)) == [f"spec.{path.replace('{block}', 'rollingUpdate')}"]


@pytest.mark.parametrize("path", sorted(ENUMS))
def test_every_enum_in_the_crd_is_what_validation_accepts(path: str) -> None:
    assert _schema_at(path)["enum"] == list(ENUMS[path])
    for value in ENUMS[path]:
        obj = _with(path, value)
        if path == "updateStrategy.type" and value != "RollingUpdate":
            obj["spec"]["updateStrategy"] = {"type": value}
        assert _errors(obj) == [], value
    assert _errors(_with(path, "Bogus")) == [f"spec.{path.replace('{block}', 'rollingUpdate')}"]


def test_the_crd_has_names_subresources_and_columns_kubectl_needs() -> None:
    spec = crd()["spec"]
    assert spec["names"]["shortNames"] == ["rsts"] and spec["names"]["categories"] == ["all", "rollwise"]
    version = spec["versions"][0]
    assert version["subresources"]["scale"]["labelSelectorPath"] == ".status.labelSelector"
    assert [c["name"] for c in version["additionalPrinterColumns"] if "priority" not in c] == [
        "Desired", "Current", "Updated", "Ready", "Age"]
    spec_props = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    # The pod template declares what validation reads and keeps the rest as written; the claim templates are
    # declared whole, so the immutability rule sees every field of them.
    assert spec_props["template"]["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"] is True
    assert "x-kubernetes-preserve-unknown-fields" not in spec_props["volumeClaimTemplates"]["items"]


def test_rbac_names_every_verb_and_resource_and_no_wildcard() -> None:
    rules = [r for d in documents("rbac") if "rules" in d for r in d["rules"]]
    assert all("*" not in r["verbs"] and "*" not in r["resources"] and "*" not in r["apiGroups"] for r in rules)
    flat = {(g, res, v) for r in rules for g in r["apiGroups"] for res in r["resources"] for v in r["verbs"]}
    assert ("apps.rollwise.dev", "statefulsets/finalizers", "update") in flat
    assert ("", "pods", "delete") in flat and ("apps", "statefulsets", "update") not in flat
    assert ("coordination.k8s.io", "leases", "update") in flat


def test_the_deployment_runs_two_replicas_non_root_and_outlives_the_renew_deadline() -> None:
    deployment = next(d for d in documents("operator") if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert deployment["spec"]["replicas"] == 2 and "--leader-elect" in container["args"]
    assert pod["terminationGracePeriodSeconds"] >= 10
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_deploy_holds_exactly_the_generators_output() -> None:
    assert (ROOT / "deploy" / "crds" / "crd.yaml").read_text() == render(documents("crd"))
    for part in ("rbac", "operator"):
        assert (ROOT / "deploy" / f"{part}.yaml").read_text() == render(documents(part)), part


def test_out_dir_writes_the_crd_apart_from_the_operator(tmp_path: Path) -> None:
    assert main(["manifests", "--out-dir", str(tmp_path)]) == 0
    assert (tmp_path / "kustomization.yaml").read_text() == (ROOT / "deploy" / "kustomization.yaml").read_text()
    assert (tmp_path / "crds" / "kustomization.yaml").read_text() == (
        ROOT / "deploy" / "crds" / "kustomization.yaml").read_text()
    top = yaml.safe_load((tmp_path / "kustomization.yaml").read_text())["resources"]
    assert top == ["rbac.yaml", "operator.yaml"], "deleting the operator's kustomization must never delete the CRD"
    assert yaml.safe_load((tmp_path / "crds" / "kustomization.yaml").read_text())["resources"] == [
        "crd.yaml", "policy.yaml"], "the admission policy on the custom sets stays with their CRD"


@pytest.mark.parametrize("flag", ["--out-dir", "--chart-dir"])
def test_an_output_directory_that_is_a_file_is_one_line_and_exit_2(
        flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    taken = tmp_path / "taken"
    taken.write_text("a file\n")
    assert main(["manifests", flag, str(taken)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"rollwise manifests: {flag} {taken}: Not a directory")
    assert len(err.splitlines()) == 1 and taken.read_text() == "a file\n"


def _key(doc: dict[str, Any]) -> tuple[str, str, str]:
    return doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"]


@pytest.mark.kubectl
def test_kubectl_kustomize_renders_the_same_documents_as_manifests_all() -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    rendered = []
    for directory in (ROOT / "deploy" / "crds", ROOT / "deploy"):
        out = subprocess.run([kubectl, "kustomize", str(directory)], capture_output=True, text=True, timeout=120,
                             check=True, env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
        rendered.append(list(yaml.safe_load_all(out.stdout)))
    crds, operator = rendered
    assert [d["kind"] for d in crds] == ["CustomResourceDefinition"] * 3 + ["ValidatingAdmissionPolicy",
                                                                          "ValidatingAdmissionPolicyBinding"]
    assert sorted(d["metadata"]["name"] for d in crds[:3]) == [
        "analysisruns.apps.rollwise.dev", "analysistemplates.apps.rollwise.dev", "statefulsets.apps.rollwise.dev"]
    assert "CustomResourceDefinition" not in [d["kind"] for d in operator]
    assert sorted(crds + operator, key=_key) == sorted(documents("all"), key=_key)


def test_the_charts_crd_is_the_generators_and_lives_where_helm_never_deletes_it() -> None:
    generated = chart_files()
    assert [name for name in generated if name.startswith("crds/")] == ["crds/crd.yaml"], \
        "Helm never deletes a CRD under crds/, and takes nothing else there"
    for name, text in generated.items():
        assert (ROOT / "charts" / "rollwise" / name).read_text() == text
    assert not (ROOT / "charts" / "rollwise" / "templates" / "crd.yaml").exists()


def test_manifests_prints_yaml_documents_with_the_namespace_and_image_asked_for(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["manifests", "operator", "--namespace", "ops", "--image", "registry.local/rollwise:dev"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [d["kind"] for d in docs] == ["Namespace", "Deployment", "Service"]
    assert docs[1]["metadata"]["namespace"] == "ops"
    assert docs[1]["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.local/rollwise:dev"
    assert DEFAULT_NAMESPACE != "ops" and DEFAULT_IMAGE != "registry.local/rollwise:dev"


def test_an_unknown_part_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["manifests", "everything"])
    assert caught.value.code == 2 and capsys.readouterr().out == ""


def test_crd_md_names_where_the_chart_keeps_each_generated_file() -> None:
    rows = [line for line in (ROOT / "docs" / "crd.md").read_text().splitlines() if line.startswith("| `deploy/crds/")]
    where = {Path(name).name: name for name in chart_files()}
    assert sorted(where) == ["crd.yaml", "policy.yaml"]
    for row in rows:
        file = row.split("`")[1].removeprefix("deploy/crds/")
        chart_path = where[file]
        named = (f"the chart's `charts/rollwise/{chart_path}`", f"the chart's `{Path(chart_path).parent}/`")
        assert any(n in row for n in named), row
    assert len(rows) == len(where)
