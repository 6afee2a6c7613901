"""Real processes for pods whose image matches a pattern (etcd by default): the process runtime."""

from rollwise.kubelet.process.gateway import GatewayError, MemberStatus, linearizable_get, member_status, put
from rollwise.kubelet.process.identity import ClusterLayout, MemberAddress, holder_identity, stable_dns_name
from rollwise.kubelet.process.member import MemberProcess, ProbeSettings
from rollwise.kubelet.process.ports import PortAllocator
from rollwise.kubelet.process.runtime import DEFAULT_PATTERN, MemberLease, PodSync, ProcessRuntime, etcd_binary
from rollwise.kubelet.process.supervisor import Supervisor

__all__ = [
    "DEFAULT_PATTERN",
    "ClusterLayout",
    "GatewayError",
    "MemberAddress",
    "MemberLease",
    "MemberProcess",
    "MemberStatus",
    "PodSync",
    "PortAllocator",
    "ProbeSettings",
    "ProcessRuntime",
    "Supervisor",
    "etcd_binary",
    "holder_identity",
    "linearizable_get",
    "member_status",
    "put",
    "stable_dns_name",
]
