"""Asyncio workers over the work queue, for a driver whose world is a real API (the operator), with
controller-runtime's reconcile-result semantics (``inline.finish``, the same rule the simulator and ``up`` follow):

* an exception → ``add_rate_limited`` (back-off per key, bounded by the token bucket);
* a result of ``requeue_after`` seconds → ``forget`` then ``add_after``;
* success → ``forget``;
* ``CacheBehind`` (the KEP-5647 check failed) → ``add_rate_limited``, counted in ``rollwise_stale_sync_skips_total``.

A key is never reconciled by two workers at once: the queue hands it out once until ``done``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable

from rollwise.api.errors import ApiStatusError
from rollwise.runtime.clock import Clock
from rollwise.runtime.inline import finish
from rollwise.runtime.metrics import RuntimeMetrics
from rollwise.runtime.queue import QueueShutDown, WorkQueue

__all__ = ["CacheBehind", "Controller", "NotLeader", "Reconcile"]

log = logging.getLogger("rollwise.runtime.controller")

Reconcile = Callable[[Hashable], Awaitable[float | None]]
"""Reconcile one key; returns seconds until it should be looked at again, or None."""


class CacheBehind(Exception):
    """The informers have not yet seen this controller's own last writes for the key: skip, retry later."""


class NotLeader(Exception):
    """The leader fence failed before a write batch: nothing was written."""


class Controller:
    def __init__(self, name: str, reconcile: Reconcile, *, clock: Clock, queue: WorkQueue[Hashable] | None = None,
                 metrics: RuntimeMetrics | None = None, workers: int = 1) -> None:
        self.name = name
        self.reconcile = reconcile
        self.clock = clock
        self.metrics = metrics
        self.queue = queue if queue is not None else WorkQueue(
            clock, metrics=metrics.queue_hooks(name) if metrics is not None else None)
        self.workers = workers
        self._tasks: list[asyncio.Task[None]] = []

    async def process_next(self) -> bool:
        """Reconcile one key; False once the queue is shut down and drained."""
        try:
            key = await self.queue.get()
        except QueueShutDown:
            return False
        started = self.clock.now()
        outcome = "success"
        try:
            requeue_after = await self.reconcile(key)
        except CacheBehind as why:
            outcome = "requeue"
            log.debug("%s: %s: cache behind (%s); requeued", self.name, _text(key), why)
            if self.metrics is not None:
                self.metrics.stale_skips.labels(controller=self.name).inc()
            finish(self.queue, key, requeue_after=None, failed=True)
        except NotLeader:
            outcome = "requeue"
            finish(self.queue, key, requeue_after=None, failed=True)
        except asyncio.CancelledError:
            self.queue.add(key)  # not finished: whoever runs next must look at it again
            raise
        except ApiStatusError as err:
            # The API said no (a conflict, an outage): expected in a live cluster, retried with back-off.
            outcome = "error"
            log.warning("%s: reconciling %s failed: %s %s: %s; retrying", self.name, _text(key), err.code,
                        err.reason, err.message, extra={"controller": self.name, "set": _text(key),
                                                        "reason": err.reason})
            if self.metrics is not None:
                self.metrics.reconcile_errors.labels(controller=self.name).inc()
            finish(self.queue, key, requeue_after=None, failed=True)
        except Exception:
            outcome = "error"
            log.exception("%s: reconciling %s failed", self.name, _text(key))  # a bug: keep the traceback
            if self.metrics is not None:
                self.metrics.reconcile_errors.labels(controller=self.name).inc()
            finish(self.queue, key, requeue_after=None, failed=True)
        else:
            wait = requeue_after if requeue_after is not None and requeue_after > 0 else None
            if wait is not None:
                outcome = "requeue_after"
            finish(self.queue, key, requeue_after=wait, failed=False)
        finally:
            self.queue.done(key)
            if self.metrics is not None:
                self.metrics.reconcile_total.labels(controller=self.name, result=outcome).inc()
                self.metrics.reconcile_time.labels(controller=self.name).observe(self.clock.now() - started)
        return True

    async def _worker(self) -> None:
        while await self.process_next():
            pass

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._worker(), name=f"{self.name}-worker-{i}")
                       for i in range(self.workers)]

    def cancel(self) -> None:
        """Stop at once: no more keys, in-flight reconciles cancelled (a driver that stops synchronously)."""
        self.queue.shutdown()
        for task in self._tasks:
            task.cancel()
        self._tasks = []

    async def stop(self, *, grace_seconds: float = 10.0) -> None:
        """Stop taking keys, let in-flight reconciles finish within ``grace_seconds``, then cancel the rest."""
        self.queue.shutdown()
        if not self._tasks:
            return
        _, pending = await asyncio.wait(self._tasks, timeout=grace_seconds)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        self._tasks = []


def _text(key: Hashable) -> str:
    """A set's key as kubectl names it (``namespace/name``), not a tuple's repr."""
    return "/".join(map(str, key)) if isinstance(key, tuple) else str(key)
