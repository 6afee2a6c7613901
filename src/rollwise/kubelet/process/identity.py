"""Who an etcd member is: its name, URLs and initial cluster, derived from the pod and its StatefulSet.

The member name is the pod name (etcd-druid: member name = pod name, reference §1.4), and the advertised identity
is the stable network name ``<pod>.<headless service>.<namespace>.svc`` a StatefulSet gives its pods. On this
machine every member listens on 127.0.0.1 only, so the URLs carry per-ordinal ports instead of that name; the name
is kept for logs and for ``--initial-cluster`` member names. The initial cluster lists every ordinal of the set's
range at ``spec.replicas`` (a Parallel etcd set boots all members at once, as etcd-druid runs it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.identity import ordinal_range, pod_name
from rollwise.api.leases import LEADER, MEMBER, format_holder
from rollwise.api.meta import name_of, namespace_of
from rollwise.api.ordinals import OrdinalSpan
from rollwise.kubelet.process.gateway import MemberStatus
from rollwise.kubelet.process.ports import PortAllocator

__all__ = ["ClusterLayout", "MemberAddress", "holder_identity", "stable_dns_name"]


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberAddress:
    name: str
    ordinal: int
    client_port: int
    peer_port: int
    extra: tuple[int, ...] = ()  # a store's further ports (ZooKeeper's election and admin ports, NATS' monitoring)
    host: str = "127.0.0.1"  # a Patroni member listens on a loopback address of its own (its pod IP)

    @property
    def ports(self) -> tuple[int, ...]:
        return (self.client_port, self.peer_port, *self.extra)

    @property
    def client_url(self) -> str:
        return f"http://{self.host}:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://{self.host}:{self.peer_port}"

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.client_port}"


def stable_dns_name(sts: Mapping[str, Any], ordinal: int) -> str:
    """``<pod>.<serviceName>.<namespace>.svc``: the name a member would advertise in a real cluster."""
    service = (sts.get("spec") or {}).get("serviceName") or name_of(sts)
    return f"{pod_name(name_of(sts), ordinal)}.{service}.{namespace_of(sts)}.svc"


class ClusterLayout:
    """The ports and the initial cluster of one set for one run.

    Ports are allocated once per ordinal and kept for the run, so a restarted member comes back at the address
    its peers know (reference §4 item 1: data dir + same URLs = a plain restart). The token is unique per run
    and set, so a stray member of another run can never join (reference §4 item 3: member ids are a function of
    name, peer URL and token).
    """

    def __init__(self, sts: Mapping[str, Any], *, ports: PortAllocator, run_id: str,
                 known: Mapping[int, tuple[int, ...]] | None = None,
                 on_new: Callable[[ClusterLayout], None] | None = None, extra_ports: int = 0) -> None:
        """``known``: ordinal -> (client, peer, *extra) ports the members had before (a restarted owner keeps them,
        so members restarted on their data find each other); ``on_new`` is called after a member's ports are chosen;
        ``extra_ports``: how many ports each member takes beyond client and peer (the store's)."""
        self.set_name = name_of(sts)
        self.namespace = namespace_of(sts)
        self.token = f"{run_id}-{self.namespace}-{self.set_name}"
        self._ports = ports
        self._members: dict[int, MemberAddress] = {}
        self._count = 2 + extra_ports
        for ordinal, given in (known or {}).items():
            if len(given) != self._count:
                continue  # another store's, or damaged: this member gets new ports
            ports.reserve(list(given))
            self._members[ordinal] = self._address(ordinal, list(given))
        self._on_new = on_new
        self._sts = sts

    def refresh(self, sts: Mapping[str, Any]) -> None:
        self._sts = sts

    def member(self, ordinal: int) -> MemberAddress:
        if ordinal not in self._members:
            self._members[ordinal] = self._address(ordinal, self._ports.allocate(self._count))
            if self._on_new is not None:
                self._on_new(self)
        return self._members[ordinal]

    def _address(self, ordinal: int, ports: list[int]) -> MemberAddress:
        return MemberAddress(name=pod_name(self.set_name, ordinal), ordinal=ordinal, client_port=ports[0],
                             peer_port=ports[1], extra=tuple(ports[2:]))

    def ports(self) -> dict[int, tuple[int, ...]]:
        """ordinal -> (client, peer, *extra) of every member given ports so far."""
        return {o: m.ports for o, m in self._members.items()}

    def ordinals(self) -> OrdinalSpan:
        return ordinal_range(self._sts)

    def initial_cluster(self) -> str:
        """``name=peerURL,...`` over the set's ordinal range at its current replicas."""
        return ",".join(f"{m.name}={m.peer_url}" for m in (self.member(i) for i in self.ordinals()))

    def endpoints(self) -> list[str]:
        return [self.member(i).endpoint for i in self.ordinals()]

    def command(self, binary: str, ordinal: int, data_dir: str, *, election_ms: int = 1000,
                heartbeat_ms: int = 100) -> list[str]:
        """The etcd command line of one member (reference §3, ports from the layout)."""
        m = self.member(ordinal)
        return [
            binary, "--name", m.name, "--data-dir", data_dir,
            "--listen-client-urls", m.client_url, "--advertise-client-urls", m.client_url,
            "--listen-peer-urls", m.peer_url, "--initial-advertise-peer-urls", m.peer_url,
            "--initial-cluster", self.initial_cluster(), "--initial-cluster-token", self.token,
            "--initial-cluster-state", "new",
            "--election-timeout", str(election_ms), "--heartbeat-interval", str(heartbeat_ms),
            "--logger", "zap", "--log-outputs", "stderr", "--log-level", "warn",
        ]


def holder_identity(status: MemberStatus) -> str:
    """``<memberID hex>:<clusterID hex>:Leader|Member`` as etcd-backup-restore writes it (reference §1.4)."""
    role = LEADER if status.is_leader else MEMBER
    return format_holder(format(status.member_id, "x"), format(status.cluster_id, "x"), role)
