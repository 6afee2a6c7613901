"""``rollwise up`` with five real etcd members and ``rollwise.dev/leader-transfer``: the old leader's pod is deleted
only once another member's Lease says Leader (moved there by etcd's MoveLeader, which up's process kubelet sends when
the controller annotates the leader's pod), and the hand-over does not time out. Outcomes only, never durations."""

from __future__ import annotations

import contextlib
import copy
import threading
from pathlib import Path
from typing import Any

from kubectl_support import stop_up
from lightkube import Client
from lightkube.config.kubeconfig import KubeConfig
from lightkube.resources.apps_v1 import StatefulSet
from lightkube.resources.coordination_v1 import Lease
from lightkube.resources.core_v1 import Event, Pod
from lightkube.types import PatchType
from member_marks import needs_etcd
from test_up_real_etcd import SET, _ready, _start_up, until

pytestmark = needs_etcd


def _leaders(client: Client) -> set[str]:
    return {lease.metadata.name for lease in client.list(Lease, namespace="default")
            if (lease.spec.holderIdentity or "").endswith(":Leader")}


class _History:
    """Every event of a watch on one kind in ``default`` from ``since``, as (resourceVersion, type, object)."""

    def __init__(self, client: Client, kind: Any, since: str | None) -> None:
        self._seen: list[tuple[int, str, Any]] = []
        self._lock = threading.Lock()

        def pump() -> None:
            with contextlib.suppress(Exception):  # the server stops at the end of the test
                for kind_of_event, obj in client.watch(kind, namespace="default", resource_version=since):
                    with self._lock:
                        self._seen.append((int(obj.metadata.resourceVersion), kind_of_event, obj))

        threading.Thread(target=pump, daemon=True).start()

    def events(self) -> list[tuple[int, str, Any]]:
        with self._lock:
            return sorted(self._seen, key=lambda event: event[0])


def test_up_moves_leadership_with_move_leader_before_the_old_leader_is_deleted(tmp_path: Path) -> None:
    manifest = copy.deepcopy(SET)
    manifest["metadata"]["annotations"]["rollwise.dev/leader-transfer"] = "true"
    manifest["spec"]["replicas"] = 5
    proc, kubeconfig = _start_up(tmp_path)
    try:
        client = Client(KubeConfig.from_file(kubeconfig), trust_env=False, field_manager="test")
        client.create(StatefulSet.from_dict(manifest))

        def pods() -> dict[str, Any]:
            return {p.metadata.name: p for p in client.list(Pod, namespace="default", labels={"app": "etcd"})}

        until(lambda: len(p := pods()) == 5 and all(_ready(x) for x in p.values()), "five Ready members")
        until(lambda: len(_leaders(client)) == 1 and len(list(client.list(Lease, namespace="default"))) == 5,
               "five member Leases, one Leader")
        (leader,) = _leaders(client)
        old_uid = pods()[leader].metadata.uid
        # Both kinds are watched from here on; up's resourceVersions are one counter across kinds, so the Leases
        # as they stood when the old leader's pod was deleted are the Lease events before that pod write. (Two
        # polls, one of Leases and one of pods, race with the controller between them.)
        listing = client.list(Lease, namespace="default")
        holders = {lease.metadata.name: lease.spec.holderIdentity or "" for lease in listing}
        since = listing.resourceVersion
        leases = _History(client, Lease, since)
        members = _History(client, Pod, since)
        client.patch(StatefulSet, "etcd", {"spec": {"template": {"spec": {"containers": [
            {"name": "etcd", "image": "etcd:3.5.1-r1"}]}}}}, namespace="default", patch_type=PatchType.STRATEGIC)

        def old_leader_going() -> int | None:
            return next((rv for rv, kind, pod in members.events() if pod.metadata.uid == old_uid
                         and (kind == "DELETED" or pod.metadata.deletionTimestamp is not None)), None)

        until(lambda: old_leader_going() is not None, "the old leader's deletion")
        deleted_at = old_leader_going()
        assert deleted_at is not None
        for rv, _, lease in leases.events():
            if rv < deleted_at:
                holders[lease.metadata.name] = lease.spec.holderIdentity or ""
        leaders_when_deleted = {name for name, holder in holders.items() if holder.endswith(":Leader")}
        # The old leader's Lease no longer said Leader when its pod went, and another member's did.
        assert leaders_when_deleted and leader not in leaders_when_deleted, holders
        until(lambda: all(p.spec.containers[0].image == "etcd:3.5.1-r1" and _ready(p) for p in pods().values())
               and len(pods()) == 5, "every member Ready at the new image")
        reasons = [e.reason for e in client.list(Event, namespace="default")]
        assert "LeaderTransferRequested" in reasons and "LeaderTransferTimedOut" not in reasons
    finally:
        code = stop_up(proc)
    assert code == 0
