"""The KEP-5647 consistency store and the reconcile-result semantics around it, in virtual time."""

from __future__ import annotations

import pytest
from runtime_fakes import run

from rollwise.runtime.clock import VirtualClock
from rollwise.runtime.consistency import ConsistencyStore, compare_resource_versions
from rollwise.runtime.metrics import RuntimeMetrics
from rollwise.runtime.workers import CacheBehind, Controller


@pytest.mark.parametrize(("a", "b", "expected"), [("9", "10", -1), ("10", "9", 1), ("123", "123", 0),
                                                  ("199", "200", -1), ("1000000000000000000000", "999", 1)])
def test_resource_versions_compare_as_integers_by_length_then_lexically(a: str, b: str, expected: int) -> None:
    assert compare_resource_versions(a, b) == expected


@pytest.mark.parametrize("bad", ["", "abc", "-1", "012", "1.5"])
def test_a_non_integer_resource_version_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="resourceVersion"):
        compare_resource_versions(bad, "1")


def test_skips_while_the_cache_is_behind_and_proceeds_after_catch_up() -> None:
    seen = {"Pod": "9", "StatefulSet": "12"}
    store = ConsistencyStore(lambda resource: seen.get(resource, ""))
    store.wrote_at("default/web", "uid-1", "Pod", "10")
    store.wrote_at("default/web", "uid-1", "Pod", "8")  # an older write never lowers the mark
    store.wrote_at("default/web", "uid-1", "StatefulSet", "11")
    assert store.behind("default/web") == ["Pod"]
    assert not store.ensure_ready("default/web")
    seen["Pod"] = "10"
    assert store.ensure_ready("default/web")
    assert store.ensure_ready("default/other")  # nothing written for it


def test_a_cache_that_goes_back_in_time_is_caught_again() -> None:
    seen = {"Pod": "10"}
    store = ConsistencyStore(lambda resource: seen[resource])
    store.wrote_at("web", "uid-1", "Pod", "10")
    assert store.ensure_ready("web")
    seen["Pod"] = "7"  # a relist served from a lagging API server's cache
    assert not store.ensure_ready("web")


def test_a_new_uid_under_the_same_name_starts_clean() -> None:
    store = ConsistencyStore(lambda resource: "5")
    store.wrote_at("web", "uid-1", "Pod", "10")
    store.clear("web", "uid-1")  # same uid: kept
    assert not store.ensure_ready("web")
    store.clear("web", "uid-2")  # the set was deleted and recreated
    assert store.ensure_ready("web")
    store.wrote_at("web", "uid-2", "Pod", "10")
    store.wrote_at("web", "uid-3", "Pod", "3")  # a write for yet another uid replaces the record
    assert store.ensure_ready("web")
    store.clear("web")
    assert len(store) == 0


def _controller(reconcile, clock: VirtualClock, metrics: RuntimeMetrics | None = None) -> Controller:  # type: ignore[no-untyped-def]
    return Controller("sts", reconcile, clock=clock, metrics=metrics)


def test_reconcile_results_error_backs_off_requeue_after_forgets_success_forgets() -> None:
    async def go() -> None:
        clock = VirtualClock()
        results: dict[str, list[object]] = {"err": [RuntimeError("boom"), RuntimeError("boom"), None],
                                            "later": [30.0, None], "ok": [None]}
        calls: list[tuple[float, str]] = []

        async def reconcile(key: object) -> float | None:
            calls.append((clock.now(), str(key)))
            result = results[str(key)].pop(0)
            if isinstance(result, Exception):
                raise result
            return result  # type: ignore[return-value]

        metrics = RuntimeMetrics()
        ctl = _controller(reconcile, clock, metrics)
        ctl.start()
        for key in ("err", "later", "ok"):
            ctl.queue.add(key)
        await clock.run_until(100.0)
        assert calls == [(0.0, "err"), (0.0, "later"), (0.0, "ok"), (0.005, "err"), (0.015, "err"),
                         (30.0, "later")]
        assert ctl.queue.num_requeues("err") == 0  # forgotten after its success
        assert metrics.registry.get_sample_value("controller_runtime_reconcile_errors_total",
                                                 {"controller": "sts"}) == 2
        assert metrics.registry.get_sample_value("controller_runtime_reconcile_total",
                                                 {"controller": "sts", "result": "requeue_after"}) == 1
        await ctl.stop()
    run(go())


def test_a_stale_cache_skips_the_reconcile_and_counts_it() -> None:
    async def go() -> None:
        clock = VirtualClock()
        seen = {"Pod": "4"}
        store = ConsistencyStore(lambda r: seen[r])
        store.wrote_at("web", "uid-1", "Pod", "5")
        acted: list[float] = []

        async def reconcile(key: object) -> float | None:
            if not store.ensure_ready(key):  # type: ignore[arg-type]
                raise CacheBehind("Pod")
            acted.append(clock.now())
            return None

        metrics = RuntimeMetrics()
        ctl = _controller(reconcile, clock, metrics)
        ctl.start()
        ctl.queue.add("web")
        await clock.run_until(0.01)
        assert acted == []
        seen["Pod"] = "5"  # the informer catches up
        await clock.run_until(1.0)
        assert acted == [0.015]  # the second rate-limited retry (5 ms, then 10 ms)
        assert metrics.registry.get_sample_value("rollwise_stale_sync_skips_total", {"controller": "sts"}) == 2
        await ctl.stop()
    run(go())
