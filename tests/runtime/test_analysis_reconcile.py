"""One reconcile of an AnalysisRun (runtime/analysis.py), the procedure up and the operator share: the spec write
alone on the first reconcile, the metrics due measured together off the loop, one status write, the completion
event, the requeue, and nothing written when nothing changed."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from rollwise.api.analysis import Measured
from rollwise.api.meta import Obj
from rollwise.runtime.analysis import reconcile_run

T0 = 1_800_000_000.0
TEMPLATE = {"metadata": {"name": "checks"}, "spec": {"metrics": [
    {"name": "errors", "interval": "5s", "count": 2, "failureCondition": "result > 0.05",
     "provider": {"web": {"url": "http://x/errors"}}},
    {"name": "latency", "successCondition": "result < 100", "provider": {"web": {"url": "http://x/latency"}}}]}}
RUN: dict[str, Any] = {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisRun",
                       "metadata": {"name": "web-1-2", "namespace": "default"},
                       "spec": {"templates": [{"templateName": "checks"}]}}


class Writes:
    def __init__(self) -> None:
        self.made: list[tuple[str, Obj]] = []

    async def update(self, obj: Obj) -> Obj:
        self.made.append(("update", obj))
        return obj

    async def update_status(self, obj: Obj) -> Obj:
        self.made.append(("status", obj))
        return obj


def test_a_run_resolves_then_measures_its_metrics_together_and_ends_with_one_event() -> None:
    writes = Writes()
    first = asyncio.run(reconcile_run(RUN, {"checks": TEMPLATE}, writes=writes, now=lambda: T0))
    assert [verb for verb, _ in writes.made] == ["update"] and first.requeue is None
    resolved = writes.made[-1][1]
    threads: set[int] = set()
    values = {"http://x/errors": 0.01, "http://x/latency": 42}

    def measurer(metric: dict[str, Any], *, timeout: float) -> Measured:
        threads.add(threading.get_ident())
        return Measured(values[metric["provider"]["web"]["url"]])

    second = asyncio.run(reconcile_run(resolved, {}, writes=writes, now=lambda: T0 + 1, measurer=measurer))
    assert [verb for verb, _ in writes.made] == ["update", "status"]
    status = writes.made[-1][1]["status"]
    assert [(r["name"], r["phase"], r["count"]) for r in status["metricResults"]] == [
        ("errors", "Running", 1), ("latency", "Successful", 1)]
    assert threading.get_ident() not in threads, "providers run off the event loop"
    assert second.requeue == 5.0 and second.events == ()
    again = asyncio.run(reconcile_run(writes.made[-1][1], {}, writes=writes, now=lambda: T0 + 3,
                                      measurer=measurer))
    assert len(writes.made) == 2 and again.requeue == 3.0, "nothing due, nothing written"
    values["http://x/errors"] = 0.2
    last = asyncio.run(reconcile_run(writes.made[-1][1], {}, writes=writes, now=lambda: T0 + 6,
                                     measurer=measurer))
    status = writes.made[-1][1]["status"]
    assert status["phase"] == "Failed" and last.requeue is None
    assert [(e.event_type, e.reason) for e in last.events] == [("Warning", "AnalysisRunFailed")]
    assert last.events[0].message == ('analysis web-1-2 completed Failed: metric errors failed: result 0.2 matches '
                                      'failureCondition "result > 0.05"')
