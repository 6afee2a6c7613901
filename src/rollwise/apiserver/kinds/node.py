"""The one node `up` runs every pod on, as a real cluster's kubelet registers and reports it.

What clients read from a node on a real cluster: the well-known labels (``kubernetes.io/os``, ``.../arch``,
``.../hostname``), ``status.nodeInfo`` (whose ``operatingSystem`` equals the os label), addresses, capacity and
allocatable, and the kubelet's conditions (Ready plus the three pressure conditions and PIDPressure).
"""

from __future__ import annotations

import platform
import socket
from typing import Any

from rollwise.api.meta import Obj

__all__ = ["node_object"]

_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
_KUBELET_VERSION = "v1.37.0-rollwise"


def _condition(kind: str, status: str, reason: str, message: str, now: float) -> dict[str, Any]:
    return {"type": kind, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": now, "reason": reason,
            "message": message}


def node_object(name: str, *, now: float, pods: int = 110) -> Obj:
    arch = _ARCH.get(platform.machine().lower(), platform.machine().lower() or "amd64")
    system = platform.system().lower() or "linux"
    capacity = {"cpu": "8", "memory": "16Gi", "pods": str(pods), "ephemeral-storage": "100Gi"}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/os": system, "kubernetes.io/arch": arch, "kubernetes.io/hostname": name,
            "beta.kubernetes.io/os": system, "beta.kubernetes.io/arch": arch,
            "node-role.kubernetes.io/control-plane": ""}},
        "spec": {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"]},
        "status": {
            "capacity": capacity, "allocatable": dict(capacity),
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
                          {"type": "Hostname", "address": name}],
            "conditions": [
                _condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                           "kubelet has sufficient memory available", now),
                _condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure", now),
                _condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available",
                           now),
                _condition("Ready", "True", "KubeletReady", "kubelet is posting ready status", now)],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": platform.release(),
                         "osImage": f"rollwise up on {socket.gethostname()}", "containerRuntimeVersion":
                         "rollwise://simulated", "kubeletVersion": _KUBELET_VERSION,
                         "kubeProxyVersion": _KUBELET_VERSION, "operatingSystem": system, "architecture": arch},
        },
    }
