"""The one set controller (runtime/reconciler.py): the same reconcile for the simulator, ``up`` and the operator,
the differences named. A chain goes on after a controller wrote only where reads see the controller's own writes;
the synchronous and the awaited reconcile carry out the same steps."""

from __future__ import annotations

import asyncio
from typing import Any

from rollwise.api.errors import ApiStatusError, Conflict
from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj
from rollwise.cluster.resources import ROLLWISE_STATEFULSET
from rollwise.controllers.plan import Plan, WriteStatus
from rollwise.controllers.view import SetView
from rollwise.runtime.actors import QUORUM_CONTROLLER, STATEFULSET_CONTROLLER
from rollwise.runtime.reconciler import SetController
from rollwise.runtime.registrations import Registration
from rollwise.runtime.setkeys import SetKey
from rollwise.runtime.workers import CacheBehind

KEY: SetKey = (ROLLWISE_STATEFULSET, "default", "web")


class _Reads:
    """A set whose generation counts the writes made to it."""

    def __init__(self, *, sees_own_writes: bool) -> None:
        self.sees_own_writes = sees_own_writes
        self.generation = 1

    def get(self, key: SetKey) -> Obj | None:
        return {"metadata": {"name": key[2], "namespace": key[1], "generation": self.generation}}

    def view(self, sts: Obj, *, gates: FeatureGates, fresh: bool) -> SetView:
        return SetView(set=sts)


class _Writes:
    def __init__(self, reads: _Reads, fail: bool = False) -> None:
        self.reads = reads
        self.fail = fail
        self.written: list[tuple[str, int]] = []

    def write(self, row: Registration, key: SetKey, sts: Obj, plan: Plan) -> ApiStatusError | None:
        self.written.append((row.actor, sts["metadata"]["generation"]))
        self.reads.generation += 1
        return Conflict("the set changed") if self.fail else None


class _AsyncWrites(_Writes):
    async def write(self, row: Registration, key: SetKey, sts: Obj, plan: Plan) -> ApiStatusError | None:  # type: ignore[override]
        return _Writes.write(self, row, key, sts, plan)


def _row(actor: str, requeue: float, decided: list[tuple[str, int]]) -> Registration:
    def decide(view: SetView) -> Plan:
        decided.append((actor, view.set["metadata"]["generation"]))
        return Plan(actions=(WriteStatus(status={}, reason="r"),), requeue_after=requeue)
    return Registration(actor=actor, decide=decide, kinds=(ROLLWISE_STATEFULSET,), up_names={}, operator_names={})


def _controller(reads: _Reads, writes: Any, decided: list[tuple[str, int]]) -> SetController:
    chain = (_row(STATEFULSET_CONTROLLER, 30.0, decided), _row(QUORUM_CONTROLLER, 5.0, decided))
    return SetController(reads=reads, writes=writes, gates=FeatureGates(), chain=lambda _: chain)


def test_where_reads_see_own_writes_the_next_controller_decides_on_what_the_first_wrote() -> None:
    reads = _Reads(sees_own_writes=True)
    decided: list[tuple[str, int]] = []
    writes = _Writes(reads)
    assert _controller(reads, writes, decided).reconcile(KEY) == (5.0, False)
    assert decided == [(STATEFULSET_CONTROLLER, 1), (QUORUM_CONTROLLER, 2)]
    assert writes.written == [(STATEFULSET_CONTROLLER, 1), (QUORUM_CONTROLLER, 2)]


def test_where_reads_lag_own_writes_the_chain_stops_at_the_first_controller_that_wrote() -> None:
    reads = _Reads(sees_own_writes=False)
    decided: list[tuple[str, int]] = []
    writes = _Writes(reads)
    assert _controller(reads, writes, decided).reconcile(KEY) == (30.0, False)
    assert decided == [(STATEFULSET_CONTROLLER, 1)]


def test_a_failed_write_stops_the_chain_and_the_awaited_reconcile_raises_it() -> None:
    reads = _Reads(sees_own_writes=True)
    decided: list[tuple[str, int]] = []
    assert _controller(reads, _Writes(reads, fail=True), decided).reconcile(KEY) == (30.0, True)
    assert decided == [(STATEFULSET_CONTROLLER, 1)]
    reads = _Reads(sees_own_writes=True)
    ctl = _controller(reads, _AsyncWrites(reads, fail=True), [])
    try:
        asyncio.run(ctl.reconcile_async(KEY))
    except Conflict:
        pass
    else:
        raise AssertionError("the awaited reconcile returned past a failed write")


def test_the_awaited_reconcile_takes_the_same_steps_as_the_inline_one() -> None:
    inline_reads, awaited_reads = _Reads(sees_own_writes=True), _Reads(sees_own_writes=True)
    inline: list[tuple[str, int]] = []
    awaited: list[tuple[str, int]] = []
    inline_writes, awaited_writes = _Writes(inline_reads), _AsyncWrites(awaited_reads)
    requeue, _ = _controller(inline_reads, inline_writes, inline).reconcile(KEY)
    assert asyncio.run(_controller(awaited_reads, awaited_writes, awaited).reconcile_async(KEY)) == requeue
    assert awaited == inline and awaited_writes.written == inline_writes.written


def test_a_consistency_check_that_finds_the_reads_behind_decides_nothing() -> None:
    class Behind:
        def check(self, key: SetKey, sts: Obj) -> None:
            raise CacheBehind("Pod")

        def forget(self, key: SetKey) -> None:
            raise AssertionError("the set is not gone")

    reads = _Reads(sees_own_writes=False)
    decided: list[tuple[str, int]] = []
    ctl = _controller(reads, _AsyncWrites(reads), decided)
    ctl.consistency = Behind()
    try:
        asyncio.run(ctl.reconcile_async(KEY))
    except CacheBehind:
        pass
    else:
        raise AssertionError("decided on caches that had not seen the last writes")
    assert decided == []
