"""The operator's kubectl-facing status and its quorum-aware companion against `rollwise up`.

`up` runs with `--controllers=-apps.rollwise.dev,-quorum`: the custom kind and DEP-07's deletions are the
operator's; `up`'s built-in StatefulSet controller still recreates the pods of plain `apps/v1` sets, as
kube-controller-manager does on a real cluster.
"""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import zygote
from kubectl_support import DEADLINE, Up, statefulset
from operator_support import (
    WEB,
    Operator,
    audit_entries,
    get_json,
    last_audit_time,
    running_up_for_operator,
)

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True, companion=False),
]


def _images(up: Up, app: str) -> list[str]:
    return sorted(p["spec"]["containers"][0]["image"] for p in get_json(up, "pods", "-l", f"app={app}")["items"])


def test_kubectl_wait_for_ready_returns_only_once_the_rollout_is_done(up: Up, operator: Operator) -> None:
    up.apply(WEB)
    up.kubectl("wait", "--for=condition=Ready", "rsts/web", "--timeout=60s")
    assert _images(up, "web") == ["nginx:1.27"] * 3
    status = get_json(up, "rsts", "web")["status"]
    assert status["labelSelector"] == "app=web"
    scale = json.loads(up.kubectl("get", "--raw",
                                  "/apis/apps.rollwise.dev/v1alpha1/namespaces/default/statefulsets/web/scale").stdout)
    assert scale["status"]["selector"] == "app=web"
    # Right after the change the old Ready=True still stands, but for the previous generation: kubectl skips it.
    up.kubectl("patch", "rsts", "web", "--type=merge", "-p",
               '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}}}')
    up.kubectl("wait", "--for=condition=Ready", "rsts/web", "--timeout=60s")
    sts = get_json(up, "rsts", "web")
    assert _images(up, "web") == ["nginx:1.28"] * 3
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"]
    ready = [c for c in sts["status"]["conditions"] if c["type"] == "Ready"]
    assert ready[0]["observedGeneration"] == sts["metadata"]["generation"]


def test_the_companion_rolls_an_apps_v1_set_with_deletes_events_and_its_annotation_only(
        up: Up, operator: Operator) -> None:
    manifest = statefulset("qa", replicas=3, claims=False, image="nginx:1.26", strategy="{type: OnDelete}").replace(
        "metadata:\n  name: qa", "metadata:\n  name: qa\n  annotations: {rollwise.dev/update-policy: QuorumAware}")
    up.apply(manifest)
    up.kubectl("wait", "sts/qa", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
    up.kubectl("set", "image", "sts/qa", "app=nginx:1.27")
    # `rollout status` follows the quorum-aware rollout to its end (kubectl's own refuses OnDelete).
    followed = zygote.run(["rollout", "status", "sts/qa", "--timeout=60s"], env=up.env, timeout=DEADLINE * 2)
    assert followed.returncode == 0, followed.stderr
    assert followed.stdout.splitlines()[-1].startswith("quorum-aware roll out complete: 3 members at revision ")
    up.until(lambda: _images(up, "qa") == ["nginx:1.27"] * 3, "the companion replaced every member")

    up.until(lambda: _all_members_updated(up, "qa"), "the companion records AllMembersUpdated in its annotation")
    notes = get_json(up, "sts", "qa")["metadata"]["annotations"]
    (condition,) = json.loads(notes["rollwise.dev/quorum-status"])["conditions"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", condition["lastTransitionTime"]), "RFC 3339"
    status = get_json(up, "sts", "qa")["status"]
    assert all(c["type"] != "AllMembersUpdated" for c in status.get("conditions") or [])
    events = up.kubectl("get", "events", "--field-selector", "involvedObject.name=qa").stdout
    assert "QuorumAwareDelete" in events
    ours = [e for e in audit_entries(up) if e["user"] == "op-a" and e["verb"] in ("create", "update", "patch",
                                                                                  "delete")]
    pod_deletes = [e for e in ours if e["resource"] == "pods" and e["verb"] == "delete"]
    assert len(pod_deletes) == 3
    touched = {(e["resource"], e["verb"]) for e in ours} - {("events", "create"), ("events", "patch"),
                                                            ("leases.coordination.k8s.io", "create"),
                                                            ("leases.coordination.k8s.io", "update")}
    assert touched == {("pods", "delete"), ("statefulsets.apps", "patch")}, "never apps/v1 status, never a create"


def _quorum_set(name: str) -> str:
    notes = "annotations: {rollwise.dev/update-policy: QuorumAware}"
    return statefulset(name, replicas=3, claims=False, image="nginx:1.26", strategy="{type: OnDelete}").replace(
        f"metadata:\n  name: {name}", f"metadata:\n  name: {name}\n  {notes}")


def _pod_deletes(up: Up, since: float = 0.0) -> list[dict]:
    return [e for e in audit_entries(up) if e["resource"] == "pods" and e["verb"] == "delete" and e["time"] >= since]


@pytest.fixture
def documented(tmp_path: Path) -> Iterator[tuple[Up, Operator]]:
    """docs/operator.md "Try it against rollwise up" as written: `up --controllers=-apps.rollwise.dev`, then
    `rollwise run --kubeconfig` and no other flag (up's quorum-aware controller stays on), and a quorum-aware
    `apps/v1` set rolled once to nginx:1.27 while both run."""
    with running_up_for_operator(tmp_path) as up:
        op = Operator(up, tmp_path, "op-a", as_documented=True)
        try:
            op.wait_for("caches synced")
            up.apply(_quorum_set("qa"))
            up.kubectl("wait", "sts/qa", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
            up.kubectl("set", "image", "sts/qa", "app=nginx:1.27")
            up.until(lambda: _images(up, "qa") == ["nginx:1.27"] * 3, "every member replaced")
            yield up, op
        finally:
            assert op.stop() == 0


def _check_trace_is_clean(up: Up) -> None:
    judged = zygote.run(["check-trace", str(up.audit_log)], env=up.env, timeout=DEADLINE)
    assert judged.returncode == 0, judged.stdout


def test_the_documented_up_and_operator_set_up_deletes_each_replaced_pod_once(
        documented: tuple[Up, Operator]) -> None:
    up, _ = documented
    up.until(lambda: _all_members_updated(up, "qa"), "the operator records AllMembersUpdated")
    deletes = _pod_deletes(up)
    assert sorted(e["name"] for e in deletes) == ["qa-0", "qa-1", "qa-2"], deletes
    assert {(e["user"], e["code"]) for e in deletes} == {("op-a", 200)}, "one controller, no refused delete"
    _check_trace_is_clean(up)


def test_ups_own_quorum_aware_controller_resumes_once_the_operator_stops(documented: tuple[Up, Operator]) -> None:
    up, op = documented
    assert {e["user"] for e in _pod_deletes(up)} == {"op-a"}, "up's controller stands down meanwhile"
    assert op.stop() == 0
    since = last_audit_time(up)
    up.kubectl("set", "image", "sts/qa", "app=nginx:1.28")
    up.until(lambda: _images(up, "qa") == ["nginx:1.28"] * 3, "up's own controller replaces every member")
    deletes = _pod_deletes(up, since)
    assert sorted(e["name"] for e in deletes) == ["qa-0", "qa-1", "qa-2"], deletes
    assert {e["user"] for e in deletes} == {"system:serviceaccount:kube-system:quorum-aware-controller"}
    _check_trace_is_clean(up)  # a hand-over, not two controllers on one pod


def _all_members_updated(up: Up, name: str) -> bool:
    sts = get_json(up, "sts", name)
    state = json.loads((sts["metadata"].get("annotations") or {}).get("rollwise.dev/quorum-status") or "{}")
    return state.get("updateRevision") == sts["status"]["updateRevision"] and any(
        c["type"] == "AllMembersUpdated" and c["status"] == "True" for c in state.get("conditions") or [])


def test_ups_controller_resumes_once_a_killed_operators_lease_runs_out(tmp_path: Path) -> None:
    with running_up_for_operator(tmp_path) as up:
        op = Operator(up, tmp_path, "op-a")  # a 3 s lease
        try:
            op.wait_for("op-a started leading")
            up.apply(_quorum_set("qa"))
            up.kubectl("wait", "sts/qa", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
        finally:
            os.kill(op.proc.pid, signal.SIGKILL)  # no release: up waits the lease out by its own clock
            op.proc.wait()
        since = last_audit_time(up)
        up.kubectl("set", "image", "sts/qa", "app=nginx:1.27")
        up.until(lambda: _images(up, "qa") == ["nginx:1.27"] * 3, "up's own controller replaces every member")
        deletes = _pod_deletes(up, since)
        assert sorted(e["name"] for e in deletes) == ["qa-0", "qa-1", "qa-2"], deletes
        assert {e["user"] for e in deletes} == {"system:serviceaccount:kube-system:quorum-aware-controller"}
        lease = get_json(up, "lease", "-n", "rollwise-system", "rollwise")
        assert lease["spec"]["holderIdentity"] == "op-a", "the dead holder's Lease stands: up read it as expired"
