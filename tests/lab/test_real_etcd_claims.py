"""The claim is the data, on real etcd: a member whose claim is deleted comes back empty and cannot rejoin.

A member restarted on its own data directory is a plain restart; one started on an empty directory under the same
name and peer URL is refused by etcd (reference §4 item 2). So deleting a claim by mistake must really cost that
member, never silently hand it its old data — while the other members' claims stay untouched.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from member_marks import needs_etcd

from rollwise.api import predicates as p
from rollwise.api.errors import NotFound
from rollwise.api.features import FeatureGates
from rollwise.kubelet.process import ProbeSettings, ProcessRuntime
from rollwise.lab.plane import LabPlane
from rollwise.lab.scenarios import SCENARIOS, STRATEGIES, LabTimings, set_manifest
from rollwise.sim.record import rollout_complete

pytestmark = needs_etcd


def _waiting_reason(pod: dict) -> str | None:
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    return (statuses[0].get("state") or {}).get("waiting", {}).get("reason")


def test_a_member_whose_claim_was_deleted_restarts_empty_and_is_refused_by_its_peers(tmp_path: Path) -> None:
    runtime = ProcessRuntime(tmp_path, probe=ProbeSettings(initial_delay_seconds=0, period_seconds=0.2,
                                                           timeout_seconds=0.5, failure_threshold=1))
    plane = LabPlane(runtime, gates=FeatureGates())
    asyncio.run(_claim_deleted_story(plane, tmp_path))
    pids = list(runtime.supervisor.started)
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() for pid in pids):
        assert time.monotonic() < deadline, "a member outlived the plane"


async def _claim_deleted_story(plane: LabPlane, root: Path) -> None:
    runtime = plane.runtime
    async with plane:
        plane.create(set_manifest(SCENARIOS["dep07"], STRATEGIES["quorum"], LabTimings()))

        def healthy() -> bool:
            sts = plane.cluster.get("StatefulSet", "default", "etcd")
            return rollout_complete(sts, plane.pods_of(sts), plane.clock())

        assert await plane.run_until(healthy, timeout=60)
        kept = {o: runtime.data_dir("default", f"data-etcd-{o}") / "etcd" / "member" for o in (0, 2)}
        assert all(path.is_dir() for path in kept.values())
        old_uid = plane.cluster.get("Pod", "default", "etcd-1")["metadata"]["uid"]

        plane.delete("PersistentVolumeClaim", "data-etcd-1")
        plane.delete("Pod", "etcd-1")

        def refused() -> bool:
            try:
                pod = plane.cluster.get("Pod", "default", "etcd-1")
            except NotFound:  # between the old pod's removal and the new one's creation
                return False
            return pod["metadata"]["uid"] != old_uid and _waiting_reason(pod) == "CrashLoopBackOff"

        assert await plane.run_until(refused, timeout=60)
        pod = plane.cluster.get("Pod", "default", "etcd-1")
        last = pod["status"]["containerStatuses"][0]["lastState"]["terminated"]
        assert last["exitCode"] != 0 and not p.is_ready(pod)
        log = (root / "logs" / "etcd-1.log").read_text()
        assert "already been bootstrapped" in log or "discovery failed" in log
        assert all(path.is_dir() for path in kept.values())  # the other members' data is untouched
        assert plane.cluster.get("PersistentVolumeClaim", "default", "data-etcd-1")  # a new, empty claim
