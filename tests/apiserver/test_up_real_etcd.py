"""``rollwise up`` with real etcd members: a quorum-aware rollout of a 3-member set, driven through lightkube.

``up`` runs as a subprocess on a free port, as a user starts it, and is stopped with SIGTERM. The set's pods
(image ``etcd:*``) run as real etcd processes. Asserted are outcomes, never durations: writes kept committing
through the rollout, never more than one member down at once, every member Ready at the new revision with the
member id it had (it restarted on its own claim's data), every data directory still there, and no process of the
run left after ``up`` stopped.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

from kubectl_support import DEADLINE as START_DEADLINE
from kubectl_support import stop_up
from kubectl_support import until as poll_until
from lightkube import Client
from lightkube.config.kubeconfig import KubeConfig
from lightkube.resources.apps_v1 import StatefulSet
from lightkube.resources.coordination_v1 import Lease
from lightkube.resources.core_v1 import Event, Pod
from lightkube.types import PatchType
from member_marks import needs_etcd
from zygote import Process, spawn

from rollwise.kubelet.process import GatewayError, linearizable_get, member_status
from rollwise.lab.meter import WriteMeter

pytestmark = needs_etcd

DEADLINE = 90.0
until = functools.partial(poll_until, deadline=DEADLINE, most=0.1)  # this file's deadline and cadence
SET = {
    "apiVersion": "apps/v1", "kind": "StatefulSet",
    "metadata": {"name": "etcd", "namespace": "default",
                 "annotations": {"rollwise.dev/update-policy": "QuorumAware"}},
    "spec": {
        "replicas": 3, "serviceName": "etcd-peer", "podManagementPolicy": "Parallel",
        "updateStrategy": {"type": "OnDelete"},
        "selector": {"matchLabels": {"app": "etcd"}},
        "template": {"metadata": {"labels": {"app": "etcd"}},
                     "spec": {"terminationGracePeriodSeconds": 10,
                              "containers": [{"name": "etcd", "image": "etcd:3.5.1",
                                              "readinessProbe": {"exec": {"command": ["etcdctl", "endpoint", "health"]},
                                                                 "periodSeconds": 1}}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                  "spec": {"accessModes": ["ReadWriteOnce"],
                                           "resources": {"requests": {"storage": "1Gi"}}}}],
    },
}



def _members(root: Path) -> dict[int, list[str]]:
    """pid -> command line of every live process whose command line names ``root`` (this run's etcd members)."""
    out: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(str(root) in arg for arg in argv):
            out[int(entry.name)] = argv
    return out


def _ready(pod: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in (pod.status.conditions or []))


def _down(pods: list[Any]) -> int:
    """Members not serving: missing, terminating or not Ready."""
    serving = sum(1 for p in pods if p.metadata.deletionTimestamp is None and _ready(p))
    return 3 - serving


def _start_up(tmp: Path) -> tuple[Process, Path]:
    kubeconfig = tmp / "kubeconfig"
    proc = spawn(["up", "--port", "0", "--data-dir", str(tmp / "up"), "--kubeconfig", str(kubeconfig)])
    assert proc.stdout is not None
    end = time.monotonic() + START_DEADLINE
    lines: list[str] = []
    while time.monotonic() < end and not (lines and lines[-1].startswith("export KUBECONFIG=")):
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
    if not (lines and lines[-1].startswith("export KUBECONFIG=")):
        stop_up(proc)
        raise AssertionError(f"rollwise up did not start: {lines}")
    return proc, kubeconfig


def test_quorum_aware_rollout_under_up_keeps_quorum_revision_and_data_and_leaves_no_process(tmp_path: Path) -> None:
    proc, kubeconfig = _start_up(tmp_path)
    root = tmp_path / "up" / "processes"
    meter: WriteMeter | None = None
    seen: set[int] = set()
    try:
        client = Client(KubeConfig.from_file(kubeconfig), trust_env=False, field_manager="test")
        client.create(StatefulSet.from_dict(SET))

        def pods() -> list[Any]:
            return list(client.list(Pod, namespace="default", labels={"app": "etcd"}))

        until(lambda: len(p := pods()) == 3 and _down(p) == 0, "three Ready members")
        until(lambda: len(list(client.list(Lease, namespace="default"))) == 3, "three member Leases")
        before = {lease.metadata.name: lease.spec.holderIdentity.split(":")[0]
                  for lease in client.list(Lease, namespace="default")}
        members = _members(root)
        seen |= set(members)
        endpoints = sorted({argv[argv.index("--advertise-client-urls") + 1].removeprefix("http://")
                            for argv in members.values()})
        assert len(endpoints) == 3

        meter = WriteMeter(endpoints, clock=time.monotonic, rate=20, deadline=0.5).start()
        until(meter.committing, "writes committing before the rollout")
        client.patch(StatefulSet, "etcd", {"spec": {"template": {"spec": {"containers": [
            {"name": "etcd", "image": "etcd:3.5.1-r1"}]}}}}, namespace="default", patch_type=PatchType.STRATEGIC)
        t0 = time.monotonic()
        worst = 0

        def rolled() -> bool:
            nonlocal worst
            seen.update(_members(root))
            current = pods()
            worst = max(worst, _down(current))
            sts = client.get(StatefulSet, "etcd", namespace="default")
            revision = sts.status.updateRevision
            return (len(current) == 3 and _down(current) == 0 and bool(revision)
                    and all(p.metadata.labels.get("controller-revision-hash") == revision for p in current))

        until(rolled, "every member Ready at the new revision")
        writes = meter.stop()
        meter = None
        window = sorted((r for r in writes if r.start >= t0), key=lambda r: r.start)

        # Never a majority down: one member at a time.
        assert worst == 1
        # Quorum kept: a quorum loss fails every write for as long as it lasts (each has 0.5 s); at most the one
        # write in flight to a member as it stopped may fail before the meter fails over.
        assert any(r.ok for r in window)
        failed_in_a_row = max((sum(1 for _ in run) for ok, run in _runs(window) if not ok), default=0)
        assert failed_in_a_row <= 1, [r for r in window if not r.ok]
        for pod in pods():
            assert pod.spec.containers[0].image == "etcd:3.5.1-r1"
        # The claim is the data: each member restarted on its own directory, so it kept its member id.
        after = {lease.metadata.name: lease.spec.holderIdentity.split(":")[0]
                 for lease in client.list(Lease, namespace="default")}
        assert after == before
        for ordinal in range(3):
            assert (root / "claims" / "default" / f"data-etcd-{ordinal}" / "etcd" / "member").is_dir()
        assert len(seen) >= 6  # three first members and three replacements
        # The kubelet's Events, as for a simulated container: each replaced member was stopped and started.
        events = [(e.reason, e.involvedObject.name) for e in client.list(Event, namespace="default")]
        for ordinal in range(3):
            assert ("Killing", f"etcd-{ordinal}") in events and ("Started", f"etcd-{ordinal}") in events
    finally:
        if meter is not None:
            meter.stop()
        code = stop_up(proc)
    assert code == 0
    # Nothing outlives up: no live process names this run's directory (by command line, so a recycled pid
    # cannot pass for one of ours).
    until(lambda: not _members(root), "no etcd process after up stopped", deadline=10)
    for ordinal in range(3):  # stopping up keeps the data, as a node's disks outlive the kubelet
        assert (root / "claims" / "default" / f"data-etcd-{ordinal}" / "etcd" / "member").is_dir()


def _runs(records: list[Any]) -> list[tuple[bool, list[Any]]]:
    out: list[tuple[bool, list[Any]]] = []
    for r in records:
        if out and out[-1][0] == r.ok:
            out[-1][1].append(r)
        else:
            out.append((r.ok, [r]))
    return out


def test_members_restarted_by_a_new_up_on_the_same_data_dir_form_their_cluster_again(tmp_path: Path) -> None:
    """Stop and start ``up`` on one data dir: each member comes back on its claim's data at the address its peers
    stored, so the same cluster (same member ids) answers linearizable reads again."""
    root = tmp_path / "up" / "processes"

    def answering() -> dict[str, int]:
        """endpoint -> member id of every live member that answers a linearizable read (quorum formed)."""
        out = {}
        for argv in _members(root).values():
            endpoint = argv[argv.index("--advertise-client-urls") + 1].removeprefix("http://")
            try:
                linearizable_get(endpoint, "probe", timeout=0.5)
                out[endpoint] = member_status(endpoint, timeout=0.5).member_id
            except GatewayError:
                continue
        return out

    ids: list[dict[str, int]] = []
    for run in range(2):
        proc, kubeconfig = _start_up(tmp_path)
        try:
            if run == 0:
                client = Client(KubeConfig.from_file(kubeconfig), trust_env=False, field_manager="test")
                client.create(StatefulSet.from_dict(SET))
            until(lambda: len(answering()) == 3, f"three members answering (run {run + 1})")
            ids.append(answering())
        finally:
            code = stop_up(proc)
        assert code == 0
        until(lambda: not _members(root), "no etcd process after up stopped", deadline=10)
    assert ids[1] == ids[0]
