"""KEP-4650 claim template updates in the simulator: InPlace expands every claim, highest ordinal first, one
replica at a time, without touching a pod; OnClaimDelete and fixed fields are reported; a shrink is refused; a
StorageClass without expansion is named in the condition."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from rollwise.api.claim_templates import RESIZE_REFUSED_ANNOTATION
from rollwise.api.conditions import condition_of
from rollwise.api.errors import Invalid, InvalidObject
from rollwise.cli import main
from rollwise.cluster.resources import GroupKind
from rollwise.sim import parse_scenario
from rollwise.sim.loop import Simulation

CUSTOM = GroupKind("apps.rollwise.dev", "StatefulSet")
GROW = {"kind": "StatefulSet", "name": "db", "merge": {"spec": {"volumeClaimTemplates": [
    {"metadata": {"name": "data"},
     "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}}]}}}


def _scenario(*, policy: str | None = "InPlace", steps: list[dict[str, Any]] | None = None,
              storage_class: str | None = None, objects: list[dict[str, Any]] | None = None,
              partition: int = 0) -> dict[str, Any]:
    claim_spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if storage_class is not None:
        claim_spec["storageClassName"] = storage_class
    spec: dict[str, Any] = {
        "replicas": 3, "podManagementPolicy": "OrderedReady", "selector": {"matchLabels": {"app": "db"}},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "db", "image": "db:1"}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": claim_spec}]}
    if policy is not None:
        spec["volumeClaimUpdatePolicy"] = policy
    grow = copy.deepcopy(GROW)
    if storage_class is not None:
        grow["merge"]["spec"]["volumeClaimTemplates"][0]["spec"]["storageClassName"] = storage_class
    return {"name": "claims", "description": "claim template update",
            "objects": [*(objects or []), {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
                                           "metadata": {"name": "db"}, "spec": spec}],
            "steps": steps if steps is not None else [
                {"waitFor": {"ready": "db", "timeout": 120}}, {"after": 1}, {"patch": grow}, {"after": 60}]}


def _run(raw: dict[str, Any]) -> tuple[Simulation, dict[str, Any]]:
    sim = Simulation(parse_scenario(raw))
    return sim, sim.run()


def _claims(sim: Simulation) -> dict[str, dict[str, Any]]:
    return {c["metadata"]["name"]: c for c in sim.cluster.list("PersistentVolumeClaim", "default")}


def _pods(sim: Simulation) -> dict[str, str]:
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in sim.cluster.list("Pod", "default")}


def _resizes(result: dict[str, Any]) -> list[tuple[float, str]]:
    return [(e["t"], e["message"]) for e in result["events"]
            if e.get("type") == "Event" and e.get("reason") == "SuccessfulResize"]


def test_growing_the_template_expands_every_claim_without_touching_a_pod() -> None:
    raw = _scenario()
    before = Simulation(parse_scenario({**raw, "steps": raw["steps"][:2]}))
    before.run()
    sim, result = _run(raw)
    assert _pods(sim) == _pods(before)  # same pods, same uids: none created or deleted by the resize
    creations = [e for e in result["events"] if e["type"] in ("PodCreated", "PodDeleted")]
    assert len(creations) == 3  # the three first creations only
    for name, claim in _claims(sim).items():
        assert claim["spec"]["resources"]["requests"]["storage"] == "2Gi", name
        assert claim["status"]["capacity"]["storage"] == "2Gi", name
        assert "conditions" not in claim["status"], name
    [entry] = _set(sim)["status"]["volumeClaimTemplates"]
    assert entry == {"name": "data", "compatibleReplicas": 3, "updatingReplicas": 0, "overSizedReplicas": 0,
                     "totalCapacity": "6Gi"}


def _set(sim: Simulation) -> dict[str, Any]:
    return sim.cluster.get(CUSTOM, "default", "db")


def test_claims_expand_highest_ordinal_first_one_replica_at_a_time() -> None:
    _, result = _run(_scenario())
    order = _resizes(result)
    assert [m.split()[2] for _, m in order] == ["data-db-2", "data-db-1", "data-db-0"]
    times = [t for t, _ in order]
    assert times[0] < times[1] < times[2]  # the next one only once the one above has grown (capacity >= request)


def test_the_partition_holds_lower_ordinals_claims() -> None:
    sim, _ = _run(_scenario(partition=2))
    sizes = {n: c["status"]["capacity"]["storage"] for n, c in _claims(sim).items() if "status" in c}
    assert sizes == {"data-db-2": "2Gi"}
    requests = {n: c["spec"]["resources"]["requests"]["storage"] for n, c in _claims(sim).items()}
    assert requests == {"data-db-0": "1Gi", "data-db-1": "1Gi", "data-db-2": "2Gi"}


def test_while_a_claim_expands_the_progressing_condition_says_so() -> None:
    sim = Simulation(parse_scenario(_scenario()))
    sim.run(until=23.0)  # the patch is at 22 s: data-db-2 is expanding
    progressing = condition_of(_set(sim)["status"]["conditions"], "Progressing")
    assert progressing is not None and "expanding claim data-db-2 to 2Gi" in progressing["message"]
    claim = _claims(sim)["data-db-2"]
    assert [c["type"] for c in claim["status"]["conditions"]] in (["Resizing"], ["FileSystemResizePending"])
    assert claim["status"]["capacity"]["storage"] == "1Gi"


def test_on_claim_delete_leaves_claims_and_reports_the_new_size_as_new_claims_only() -> None:
    sim, result = _run(_scenario(policy=None))
    assert not _resizes(result)
    assert {c["spec"]["resources"]["requests"]["storage"] for c in _claims(sim).values()} == {"1Gi"}
    [entry] = _set(sim)["status"]["volumeClaimTemplates"]
    assert entry["compatibleReplicas"] == 0 and entry["newClaimsOnly"] == ["resources.requests.storage"]
    changed = [e for e in result["events"] if e.get("reason") == "ClaimTemplateChanged"]
    assert len(changed) == 1 and "apply to claims created from now on" in changed[0]["message"]


def test_a_set_that_never_changed_its_templates_reports_nothing() -> None:
    raw = _scenario(policy=None)
    sim, _ = _run({**raw, "steps": raw["steps"][:2]})
    assert "volumeClaimTemplates" not in _set(sim)["status"]


def _shrinking() -> dict[str, Any]:
    shrink = copy.deepcopy(GROW)
    shrink["merge"]["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "500Mi"
    return _scenario(steps=[{"waitFor": {"ready": "db", "timeout": 120}}, {"patch": GROW}, {"patch": shrink}])


def test_a_scenario_that_shrinks_a_template_is_refused_with_the_steps_field_path() -> None:
    with pytest.raises(InvalidObject) as refused:
        parse_scenario(_shrinking())
    assert [str(e) for e in refused.value.errors] == [
        "steps[2].patch.merge.spec.volumeClaimTemplates[0].spec.resources.requests.storage: Forbidden: "
        "may not be less than the previous value"]


def test_rollwise_validate_refuses_the_shrink_with_exit_2_and_nothing_on_stdout(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "shrink.yaml"
    path.write_text(yaml.safe_dump(_shrinking()), encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "steps[2].patch.merge.spec.volumeClaimTemplates[0].spec.resources.requests.storage: Forbidden" in err


def test_the_store_refuses_a_shrink_the_scenario_did_not_see(tmp_path: Path) -> None:
    sim = Simulation(parse_scenario(_scenario(steps=[])))
    sim.run()
    shrink = copy.deepcopy(GROW["merge"])
    shrink["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "500Mi"
    with pytest.raises(Invalid) as refused:
        sim.cluster.patch(CUSTOM, "default", "db", shrink)
    assert [e.path for e in refused.value.errors] == ["spec.volumeClaimTemplates[0].spec.resources.requests.storage"]


def test_a_storage_class_without_expansion_is_named_in_the_condition() -> None:
    fixed = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fixed"},
             "provisioner": "example.com/disk", "allowVolumeExpansion": False}
    sim, result = _run(_scenario(storage_class="fixed", objects=[fixed]))
    assert not _resizes(result)
    progressing = condition_of(_set(sim)["status"]["conditions"], "Progressing")
    assert progressing is not None and progressing["status"] == "False"
    assert progressing["reason"] == "ClaimResizeRefused"
    assert "claim data-db-2 (StorageClass fixed) cannot expand to 2Gi" in progressing["message"]
    assert "only dynamically provisioned pvc can be resized" in progressing["message"]
    claim = _claims(sim)["data-db-2"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "1Gi"
    assert claim["metadata"]["annotations"][RESIZE_REFUSED_ANNOTATION].startswith("2Gi: ")
    failed = [e for e in result["events"] if e.get("reason") == "FailedResize"]
    assert len(failed) == 1  # refused once, then reported, not retried


def test_the_result_document_lists_every_claim_with_its_request_capacity_and_conditions() -> None:
    # A run goes on until the controllers are quiet; the limit stops this one while data-db-2 is expanding.
    mid = {**_scenario(steps=[{"waitFor": {"ready": "db", "timeout": 120}}, {"after": 1}, {"patch": GROW}]),
           "limitSeconds": 22.5}
    _, during = _run(mid)
    _, after = _run(_scenario())
    expanding = {c["name"]: c for c in during["final"]["claims"]}
    assert expanding["data-db-2"]["storage"] == "2Gi" and expanding["data-db-2"]["capacity"] == "1Gi"
    assert {c["type"] for c in expanding["data-db-2"]["conditions"]} & {"Resizing", "FileSystemResizePending"}
    # Not reached yet; the simulator's claims carry a capacity once an expansion writes one (no provisioner).
    assert expanding["data-db-0"] == {"name": "data-db-0", "storage": "1Gi", "capacity": None, "conditions": [],
                                      "terminating": False}
    assert [(c["name"], c["storage"], c["capacity"]) for c in after["final"]["claims"]] == [
        ("data-db-0", "2Gi", "2Gi"), ("data-db-1", "2Gi", "2Gi"), ("data-db-2", "2Gi", "2Gi")]
