"""Reserved ordinals (``spec.reserveOrdinals``) on `rollwise up` with the real kubectl: the custom kind (the CRD from
deploy/) skips the reserved ordinals across scale out, an update and scale in, and a change of the list moves pods
(by the audit log, no pod is ever created at a reserved ordinal); the CRD refuses a duplicate or a negative value
with its field path; on apps/v1 it is a lab proposal (a warning under --proposals on, an unknown field under off)."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubectl_support import Up, running_up, statefulset
from operator_support import audit_entries, leading_operator, running_up_for_operator

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(crd=True),
]

IMAGE = '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.27"}]}}}}'


def _custom(name: str, replicas: int, reserve: str) -> str:
    manifest = statefulset(name, replicas=replicas).replace("apiVersion: apps/v1",
                                                            "apiVersion: apps.rollwise.dev/v1alpha1")
    extra = f"  reserveOrdinals: {reserve}\n  persistentVolumeClaimRetentionPolicy: {{whenScaled: Delete}}\n"
    return manifest.replace(f"  serviceName: {name}\n", f"  serviceName: {name}\n{extra}")


def _ordinals(up: Up, app: str) -> list[int]:
    return sorted(int(p["metadata"]["name"].rsplit("-", 1)[1])
                  for p in up.read("pods", "-l", f"app={app}")["items"])


def _settled(up: Up, resource: str, name: str, ordinals: list[int], image: str = "nginx:1.26") -> bool:
    sts = up.read(resource, name)
    status = sts.get("status") or {}
    pods = up.read("pods", "-l", f"app={name}")["items"]
    return (status.get("observedGeneration") == sts["metadata"]["generation"]
            and status.get("availableReplicas") == len(ordinals) == status.get("updatedReplicas")
            and status.get("currentRevision") == status.get("updateRevision")
            and _ordinals(up, name) == ordinals and all(p["spec"]["containers"][0]["image"] == image for p in pods)
            and all(not p["metadata"].get("deletionTimestamp") for p in pods))


def _created(up: Up, name: str) -> list[int]:
    """Every ordinal a pod of the set was created at, in order, by the audit log."""
    return [int(e["name"].rsplit("-", 1)[1]) for e in audit_entries(up)
            if e["resource"] == "pods" and e["verb"] == "create" and e.get("name", "").startswith(f"{name}-")]


def test_reserved_ordinals_hold_across_scale_out_an_update_and_scale_in_and_a_list_change_moves_pods(up: Up) -> None:
    _scale_update_and_move(up)


def test_the_operator_keeps_reserved_ordinals_across_scale_update_and_a_list_change(tmp_path: Path) -> None:
    with running_up_for_operator(tmp_path) as server:
        server.install_rollwise()
        with leading_operator(server, tmp_path, "op-a"):
            _scale_update_and_move(server)
        made = sorted(e["name"] for e in audit_entries(server)
                      if e["user"] == "op-a" and e["resource"] == "pods" and e["verb"] == "create")
        assert made == ["web-0", "web-0", "web-2", "web-2", "web-3", "web-3", "web-4", "web-4", "web-5"], \
            "the operator itself made every pod: three, one scaled out, four updated, one moved"


def _scale_update_and_move(up: Up) -> None:
    up.apply(_custom("web", 3, "[1]"))
    up.until(lambda: _settled(up, "rsts", "web", [0, 2, 3]), "a set of 3 with [1] runs 0, 2, 3")
    up.kubectl("scale", "rsts/web", "--replicas=4")
    up.until(lambda: _settled(up, "rsts", "web", [0, 2, 3, 4]), "scale out takes the next free ordinal")
    up.kubectl("patch", "rsts", "web", "--type=merge", "-p", IMAGE)
    up.until(lambda: _settled(up, "rsts", "web", [0, 2, 3, 4], "nginx:1.27"), "the update rolls every pod")
    assert 1 not in _created(up, "web")
    since = len(_created(up, "web"))
    up.kubectl("patch", "rsts", "web", "--type=merge", "-p", '{"spec":{"reserveOrdinals":[1,2]}}')
    up.until(lambda: _settled(up, "rsts", "web", [0, 3, 4, 5], "nginx:1.27"), "reserving 2 moves its pod to 5")
    assert _created(up, "web")[since:] == [5]
    up.kubectl("scale", "rsts/web", "--replicas=2")
    up.until(lambda: _settled(up, "rsts", "web", [0, 3], "nginx:1.27"), "scale in removes the highest")
    claims = sorted(c["metadata"]["name"] for c in up.read("pvc")["items"])
    assert claims == ["data-web-0", "data-web-3"], "whenScaled Delete removed the claims of every ordinal let go"
    assert not {1, 2} & set(_created(up, "web")[since:])


@pytest.mark.parametrize(("reserve", "shown"), [
    ("[1, 1]", 'spec.reserveOrdinals[1]: Duplicate value: 1'),
    ("[-1]", "spec.reserveOrdinals[0]: Invalid value: -1: should be greater than or equal to 0"),
])
def test_the_crd_refuses_a_duplicate_or_negative_reserved_ordinal_with_its_path(up: Up, reserve: str,
                                                                                 shown: str) -> None:
    result = up.kubectl("apply", "-f", "-", stdin=_custom("bad", 2, reserve), check=False)
    assert result.returncode != 0 and result.stdout == ""
    assert shown in result.stderr, result.stderr


def test_reserve_ordinals_on_apps_v1_is_a_proposal_up_keeps_with_a_warning(up: Up) -> None:
    manifest = statefulset("db", replicas=3, claims=False).replace("  serviceName: db\n",
                                                                   "  serviceName: db\n  reserveOrdinals: [0]\n")
    applied = up.kubectl("apply", "-f", "-", stdin=manifest)
    assert "Warning: spec.reserveOrdinals: a Kubernetes 1.37.0 API server does not know the field" in applied.stderr
    up.until(lambda: _settled(up, "sts", "db", [1, 2, 3]), "the apps/v1 set skips ordinal 0")


def test_reserve_ordinals_on_apps_v1_with_proposals_off_is_an_unknown_field(tmp_path: Path) -> None:
    manifest = statefulset("db", replicas=1, claims=False).replace("  serviceName: db\n",
                                                                   "  serviceName: db\n  reserveOrdinals: [0]\n")
    with running_up(tmp_path, "--proposals", "off") as up:
        result = up.kubectl("apply", "-f", "-", stdin=manifest, check=False)
    assert result.returncode != 0 and 'unknown field "spec.reserveOrdinals"' in result.stderr
