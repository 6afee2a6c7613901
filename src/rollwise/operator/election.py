"""Lease-based leader election with client-go's rules and timings (``tools/leaderelection/leaderelection.go``).

* Timings 15 s / 10 s / 2 s, validated as client-go does: leaseDuration > renewDeadline > 1.2 · retryPeriod.
* A lease held by someone else is expired only when ``leaseDuration`` has passed on *this process's monotonic
  clock* since this process last saw the record change (``observedTime``), never by reading the remote
  ``renewTime``: clocks across machines are not trusted.
* Candidates retry every retryPeriod with jitter 1.2 (``wait.JitterUntil``); taking over from another holder
  increments ``leaseTransitions``; a 409 on the update means someone else won this round.
* The leader renews every retryPeriod; if no renew succeeds within renewDeadline it stops leading at once.
* On shutdown the leader releases: empty ``holderIdentity`` and ``leaseDurationSeconds: 1``, so a successor
  takes over at its next retry instead of waiting out the lease.
* ``is_leader()`` is the fence before every write batch: leading *and* the last successful renew is younger than
  renewDeadline on the monotonic clock, so a process paused past its deadline writes nothing even before its
  renew loop notices (operator-plan §5, the SIGSTOP test).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from rollwise.api.errors import AlreadyExists, ApiStatusError, Conflict, NotFound, missing_after_refusal
from rollwise.api.meta import Obj
from rollwise.runtime.clock import AsyncClock

__all__ = ["JITTER_FACTOR", "LeaderElector", "LeaseClient", "LeaseTimings"]

log = logging.getLogger("rollwise.runtime.election")

JITTER_FACTOR = 1.2
DENIED_BACKOFF_CAP_SECONDS = 60.0
RELEASE_ATTEMPTS = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaseTimings:
    lease_duration_seconds: float = 15.0
    renew_deadline_seconds: float = 10.0
    retry_period_seconds: float = 2.0

    def __post_init__(self) -> None:
        if min(self.lease_duration_seconds, self.renew_deadline_seconds, self.retry_period_seconds) <= 0:
            raise ValueError("leaseDuration, renewDeadline and retryPeriod must be greater than zero")
        if self.lease_duration_seconds <= self.renew_deadline_seconds:
            raise ValueError(f"leaseDuration ({self.lease_duration_seconds:g} s) must be greater than renewDeadline "
                             f"({self.renew_deadline_seconds:g} s)")
        if self.renew_deadline_seconds <= JITTER_FACTOR * self.retry_period_seconds:
            raise ValueError(f"renewDeadline ({self.renew_deadline_seconds:g} s) must be greater than "
                             f"{JITTER_FACTOR} x retryPeriod ({self.retry_period_seconds:g} s)")


class LeaseClient(Protocol):
    """The three Lease verbs, raising ``rollwise.api.errors`` (NotFound, AlreadyExists, Conflict)."""

    async def get(self, namespace: str, name: str) -> Obj: ...

    async def create(self, lease: Obj) -> Obj: ...

    async def update(self, lease: Obj) -> Obj: ...


class LeaderElector:
    def __init__(self, client: LeaseClient, *, namespace: str, name: str, identity: str, clock: AsyncClock,
                 timings: LeaseTimings | None = None, rng: random.Random | None = None,
                 wall_time: Callable[[], float] = time.time,
                 on_change: Callable[[bool], None] | None = None, marks: dict[str, str] | None = None) -> None:
        if not identity:
            raise ValueError("a leader elector needs a non-empty identity")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.clock = clock
        self.timings = timings or LeaseTimings()
        self.rng = rng or random.Random()
        self.wall_time = wall_time
        self.on_change = on_change
        self.marks = dict(marks or {})
        """Annotations written on the Lease with every acquire and renew: what the holder runs, for others that
        stand down while it leads (``up``'s controllers, ``local/standdown.py``)."""
        self.attempts: list[tuple[float, bool, float]] = []
        """Every round: (monotonic time, acquired or renewed, when the record was last seen to change)."""
        self._observed: dict[str, Any] | None = None
        self._observed_rv = ""
        self._observed_at = 0.0
        self._leading = False
        self._renewed_at: float | None = None
        self._waiting_for = ""
        self._denials = 0
        """Forbidden or Unauthorized answers in a row: the campaign backs off 2ⁿ retry periods (up to a minute)
        rather than asking a server that refuses every retryPeriod."""

    # -- the fence -------------------------------------------------------------------------------------------

    def is_leader(self) -> bool:
        if not self._leading or self._renewed_at is None:
            return False
        return self.clock.now() - self._renewed_at < self.timings.renew_deadline_seconds

    def renew_age(self) -> float | None:
        """Seconds since the last successful renew while this process leads, else None."""
        if not self._leading or self._renewed_at is None:
            return None
        return self.clock.now() - self._renewed_at

    @property
    def observed_holder(self) -> str:
        return str((self._observed or {}).get("holderIdentity") or "")

    # -- the loops -------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Campaign until elected, then renew until a renew deadline is missed; returns having stopped leading."""
        await self._acquire()
        try:
            await self._renew()
        finally:
            self._set_leading(False)

    async def _acquire(self) -> None:
        t = self.timings
        while True:
            if await self.try_acquire_or_renew():
                log.info("%s acquired lease %s/%s", self.identity, self.namespace, self.name)
                self._set_leading(True)
                return
            backoff = min(2.0 ** self._denials, DENIED_BACKOFF_CAP_SECONDS / t.retry_period_seconds)
            await self.clock.sleep(t.retry_period_seconds * backoff * (1.0 + self.rng.random() * JITTER_FACTOR))

    async def _renew(self) -> None:
        # client-go opens the renewDeadline window at the first retry after a success; counting it from the
        # success itself is stricter, and agrees with the is_leader() fence.
        t = self.timings
        while True:
            await self.clock.sleep(t.retry_period_seconds)
            while not await self.try_acquire_or_renew():
                deadline = (self._renewed_at or 0.0) + t.renew_deadline_seconds
                if self.clock.now() + t.retry_period_seconds >= deadline:
                    await self.clock.sleep(max(0.0, deadline - self.clock.now()))
                    log.warning("%s failed to renew lease %s/%s within %g s; stopping leading", self.identity,
                                self.namespace, self.name, t.renew_deadline_seconds)
                    return
                await self.clock.sleep(t.retry_period_seconds)

    def _set_leading(self, leading: bool) -> None:
        if leading == self._leading:
            return
        self._leading = leading
        if not leading:
            self._renewed_at = None
        if self.on_change is not None:
            self.on_change(leading)

    # -- one round -------------------------------------------------------------------------------------------

    async def try_acquire_or_renew(self) -> bool:
        ok = await self._try()
        if ok:
            self._denials = 0
        self.attempts.append((self.clock.now(), ok, self._observed_at))
        return ok

    async def _try(self) -> bool:
        t = self.timings
        now = self.clock.now()
        stamp = self.wall_time()  # float seconds; the cluster's wire codec writes MicroTime
        mine = {"holderIdentity": self.identity, "leaseDurationSeconds": round(t.lease_duration_seconds),
                "acquireTime": stamp, "renewTime": stamp, "leaseTransitions": 0}
        try:
            lease = await self.client.get(self.namespace, self.name)
        except NotFound:
            try:
                meta: dict[str, Any] = {"name": self.name, "namespace": self.namespace}
                if self.marks:
                    meta["annotations"] = self.marks
                created = await self.client.create({
                    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": mine})
            except (AlreadyExists, Conflict):
                return False
            except ApiStatusError as err:
                self._failed("creating", err)
                return False
            self._observe(created, now)
            self._renewed_at = now
            return True
        except ApiStatusError as err:
            self._failed("reading", err)
            return False

        spec = dict(lease.get("spec") or {})
        rv = str(lease.get("metadata", {}).get("resourceVersion") or "")
        if self._observed is None or _record(spec) != _record(self._observed):
            self._observed, self._observed_rv, self._observed_at = spec, rv, now
        holder = str(spec.get("holderIdentity") or "")
        if holder and holder != self.identity:
            duration = float(spec.get("leaseDurationSeconds") or t.lease_duration_seconds)
            if self._observed_at + duration > now:
                self._denials = 0
                if holder != self._waiting_for:  # a standby says whom it waits for, once per holder
                    self._waiting_for = holder
                    log.info("%s waiting for lease %s/%s, held by %s", self.identity, self.namespace, self.name,
                             holder, extra={"lease": f"{self.namespace}/{self.name}", "holder": holder})
                return False  # held, and not yet expired by our own clock
        if holder == self.identity:
            mine["acquireTime"] = spec.get("acquireTime") or stamp
            mine["leaseTransitions"] = int(spec.get("leaseTransitions") or 0)
        else:
            mine["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        if self.marks:
            meta = dict(lease.get("metadata") or {})
            meta["annotations"] = {**(meta.get("annotations") or {}), **self.marks}
            lease = {**lease, "metadata": meta}
        try:
            updated = await self.client.update({**lease, "spec": {**spec, **mine}})
        except Conflict:
            return False  # another candidate wrote first: lost this round
        except ApiStatusError as err:
            self._failed("updating", err)
            return False
        self._observe(updated, now)
        self._renewed_at = now
        return True

    def _failed(self, doing: str, err: ApiStatusError) -> None:
        if err.code in (401, 403):
            self._denials += 1
            # The Status message names the verb, resource and namespace refused (RBAC's wording).
            missing = missing_after_refusal(
                err, f"{_VERBS[doing]} on leases.coordination.k8s.io in namespace {self.namespace}")
            log.warning("%s lease %s/%s refused (%s %s): %s; %s; backing off %g s",
                        doing, self.namespace, self.name, err.code, err.reason, err.message, missing,
                        self.timings.retry_period_seconds * min(2.0 ** self._denials,
                                                                DENIED_BACKOFF_CAP_SECONDS
                                                                / self.timings.retry_period_seconds),
                        extra={"lease": f"{self.namespace}/{self.name}", "reason": err.reason})
            return
        log.warning("%s lease %s/%s failed: %s", doing, self.namespace, self.name, err)

    def _observe(self, lease: Obj, now: float) -> None:
        self._observed = dict(lease.get("spec") or {})
        self._observed_rv = str(lease.get("metadata", {}).get("resourceVersion") or "")
        self._observed_at = now

    async def release(self) -> bool:
        """Give the lease up (only if this process still holds it by its last observation).

        A renew cancelled at shutdown may have landed with its reply lost, so the observed resourceVersion can be
        one behind: on a 409 the lease is read again and, if this process still holds it, released at the fresh
        version. client-go gives up on that conflict and leaves the successor waiting out the whole lease."""
        if self._observed is None or self.observed_holder != self.identity:
            return False
        self._set_leading(False)
        for _ in range(RELEASE_ATTEMPTS):
            try:
                try:
                    self._observe(await self.client.update(self._released()), self.clock.now())
                    return True
                except Conflict:  # a write we did not see the reply of: read the lease as it is now
                    self._observe(await self.client.get(self.namespace, self.name), self.clock.now())
            except ApiStatusError as err:
                log.warning("releasing lease %s/%s failed: %s", self.namespace, self.name, err)
                return False
            if self.observed_holder != self.identity:
                return False  # someone else holds it now: nothing of ours to give up
        log.warning("releasing lease %s/%s failed: it kept changing under %d attempts", self.namespace, self.name,
                    RELEASE_ATTEMPTS)
        return False

    def _released(self) -> Obj:
        """The observed lease, given up."""
        stamp = self.wall_time()  # float seconds; the cluster's wire codec writes MicroTime
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace, "resourceVersion": self._observed_rv},
                "spec": {**(self._observed or {}), "holderIdentity": "", "leaseDurationSeconds": 1,
                         "renewTime": stamp, "acquireTime": stamp}}


_VERBS = {"reading": "get", "creating": "create", "updating": "update"}


def _record(spec: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(spec.get(k) for k in ("holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime",
                                       "leaseTransitions"))
