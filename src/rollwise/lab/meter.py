"""A write meter and a member status poller against real store members (reference §3 "Write meter").

``WriteMeter``: one write every ``1/rate`` seconds (etcd: a put; the lab's store table has each store's), each on
its own thread with a total deadline, failing over to the next endpoint when one refuses or resets (as a
multi-endpoint client does). A member that is up without quorum makes the request hang until the deadline
(reference §2). Every request is recorded as (start, end, ok), with its own number and the store's receipt; after
the rollout ``lost`` reads every acknowledged write back through the store's reader and names those missing.

``StatusPoller``: every ``period`` seconds, each member's view of who leads and in which term (etcd:
``/v3/maintenance/status``; the store's ``role``), from which ``figures`` counts elections and leader moves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from rollwise.kubelet.process.identity import MemberAddress
from rollwise.kubelet.process.stores import RoleSample, StoreError
from rollwise.kubelet.process.stores.etcd import EtcdStore
from rollwise.lab.figures import StatusSample, WriteRecord, lost_writes
from rollwise.lab.stores import LAB_STORES, ReadBack, WriteFailed

__all__ = ["LeaderSampler", "StatusPoller", "WriteMeter"]

_ETCD = EtcdStore()


class WriteMeter:
    def __init__(self, endpoints: Sequence[str], *, clock: Callable[[], float], rate: float = 20.0,
                 deadline: float = 1.0, write: Callable[[str, int, float], int] = LAB_STORES["etcd"].write) -> None:
        if rate <= 0 or deadline <= 0:
            raise ValueError("rate and deadline must be > 0")
        self.endpoints = list(endpoints)
        self.clock, self.rate, self.deadline, self.write = clock, rate, deadline, write
        self.records: list[WriteRecord] = []
        self._preferred = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._ticker = threading.Thread(target=self._tick, daemon=True, name="write-meter")
        self._seq = 0

    def start(self) -> WriteMeter:
        self._ticker.start()
        return self

    def stop(self) -> list[WriteRecord]:
        """Stop sending, wait for requests in flight (each ends by its deadline), return every record."""
        self._stop.set()
        self._ticker.join()
        for t in self._threads:
            t.join()
        with self._lock:
            return sorted(self.records, key=lambda r: r.start)

    def lost(self, read: ReadBack, *, timeout: float) -> list[int]:
        """The numbers of the acknowledged writes the store no longer has, as ``read`` finds them (once stopped).
        StoreError or GatewayError: the store could not be read."""
        with self._lock:
            acknowledged = [r for r in self.records if r.ok]
        return lost_writes(acknowledged, read(self.endpoints, acknowledged, timeout))

    def committing(self, *, within: float = 0.2, last: int = 5) -> bool:
        """Whether writes commit now: the last ``last`` finished requests succeeded, the latest ``within`` s ago."""
        with self._lock:
            done = sorted(self.records, key=lambda r: r.end)[-last:]
        return len(done) == last and all(r.ok for r in done) and self.clock() - done[-1].end <= within

    def _tick(self) -> None:
        period = 1.0 / self.rate
        first = self.clock()
        k = 0
        while not self._stop.wait(max(0.0, first + k * period - self.clock())):
            k += 1
            self._seq += 1
            t = threading.Thread(target=self._one, args=(self._seq,), daemon=True)
            t.start()
            self._threads.append(t)
            self._threads = [x for x in self._threads if x.is_alive()]

    def _one(self, seq: int) -> None:
        start = self.clock()
        end_by = start + self.deadline
        with self._lock:
            index = self._preferred
        ok, endpoint, receipt = False, "", 0
        for step in range(len(self.endpoints)):
            remaining = end_by - self.clock()
            if remaining <= 0:
                break
            endpoint = self.endpoints[(index + step) % len(self.endpoints)]
            try:
                receipt = self.write(endpoint, seq, remaining)
            except WriteFailed:
                continue  # refused, reset, no leader, or out of time: the next endpoint, if time remains
            ok = True
            with self._lock:
                self._preferred = (index + step) % len(self.endpoints)
            break
        with self._lock:
            self.records.append(WriteRecord(start=start, end=self.clock(), ok=ok, endpoint=endpoint, seq=seq,
                                            receipt=receipt))


class StatusPoller:
    def __init__(self, endpoints: Sequence[Any], *, clock: Callable[[], float], period: float = 0.1,
                 timeout: float = 0.3,
                 role: Callable[[MemberAddress, float], RoleSample] = _ETCD.role) -> None:
        """``endpoints``: the members' addresses (``MemberAddress``), or etcd client endpoints as text."""
        self.endpoints = [e if isinstance(e, MemberAddress) else MemberAddress(
            name=str(e), ordinal=-1, client_port=int(str(e).rpartition(":")[2]), peer_port=0) for e in endpoints]
        self.clock, self.period, self.timeout, self.role = clock, period, timeout, role
        self.samples: list[StatusSample] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._poll, args=(e,), daemon=True, name=f"status-{e.name}")
                         for e in self.endpoints]

    def start(self) -> StatusPoller:
        for t in self._threads:
            t.start()
        return self

    def stop(self) -> list[StatusSample]:
        self._stop.set()
        for t in self._threads:
            t.join()
        with self._lock:
            return sorted(self.samples, key=lambda s: s.t)

    def _poll(self, endpoint: MemberAddress) -> None:
        while not self._stop.is_set():
            began = self.clock()
            try:
                st: RoleSample | None = self.role(endpoint, self.timeout)
            except StoreError:
                st = None
            if st is not None:
                with self._lock:
                    self.samples.append(StatusSample(t=self.clock(), member=format(st.member, "x"),
                                                     leader=st.leader, term=st.term))
            self._stop.wait(max(0.0, began + self.period - self.clock()))


class LeaderSampler:
    """Every ``period`` seconds, who leads a group no member's role answer names (NATS: the writer's stream), asked
    of the members in turn until one answers: (time, pod) samples, "" while none leads."""

    def __init__(self, endpoints: Sequence[str], *, clock: Callable[[], float], read: Callable[[str, float], str],
                 period: float = 0.1, timeout: float = 0.3) -> None:
        self.endpoints, self.clock, self.read, self.period, self.timeout = list(endpoints), clock, read, period, timeout
        self.samples: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True, name="leader-sampler")

    def start(self) -> LeaderSampler:
        self._thread.start()
        return self

    def stop(self) -> list[tuple[float, str]]:
        self._stop.set()
        self._thread.join()
        return list(self.samples)

    def _poll(self) -> None:
        turn = 0
        while not self._stop.is_set():
            began = self.clock()
            for step in range(len(self.endpoints)):
                try:
                    leader = self.read(self.endpoints[(turn + step) % len(self.endpoints)], self.timeout)
                except StoreError:
                    continue
                self.samples.append((self.clock(), leader))
                turn = (turn + step) % len(self.endpoints)
                break
            self._stop.wait(max(0.0, began + self.period - self.clock()))
