"""An aborted canary (api/abort.py, controllers/statefulset/abort.py): the stable revision is the target, so the
pods at the update revision go back highest ordinal first within maxUnavailable and no other pod is touched; the
condition says RolloutAborted; the settled, aborted set writes nothing; retry and a new template start again."""

from __future__ import annotations

from typing import Any

import pytest
from builders import make_set
from harness import Harness
from test_canary_steps import _judged_settle

from rollwise.api.abort import NothingToAbort, NothingToRetry, aborted_status, retried_status
from rollwise.api.reasons import failing_reason
from rollwise.api.rollout import status_progress
from rollwise.controllers.plan import DeletePod, EmitEvent


def _held(steps: list[dict[str, Any]], *, max_unavailable: int = 1) -> Harness:
    h = Harness(make_set(replicas=4, policy="Parallel", strategy={
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable, "steps": steps}}))
    h.settle()
    h.set_image("nginx:2")
    h.settle()
    return h


def _abort(h: Harness) -> None:
    h.cluster.update_status({**h.sts, "status": aborted_status(h.sts)})  # the CLI's write


def _uids(h: Harness) -> dict[str, str]:
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in h.cluster.list("Pod", "default")}


def test_an_abort_mid_step_takes_back_exactly_the_updated_pods_highest_first_within_the_budget() -> None:
    h = _held([{"replicas": 3}, {"pause": {}}], max_unavailable=2)
    stable = h.status()["currentRevision"]
    assert sorted(n for n, r in h.pod_revisions().items() if r != stable) == ["foo-1", "foo-2", "foo-3"]
    before = _uids(h)
    _abort(h)
    deleted = [a.name for a in h.sync().actions if isinstance(a, DeletePod)]
    assert deleted == ["foo-3", "foo-2"]  # two at a time (maxUnavailable 2), highest ordinals first
    assert _judged_settle(h) == []
    assert set(h.pod_revisions().values()) == {stable}
    after = _uids(h)
    assert after["foo-0"] == before["foo-0"]  # never at the update revision: untouched
    assert all(after[n] != before[n] for n in ("foo-1", "foo-2", "foo-3"))
    status = h.status()
    assert status["abort"] is True and status["updateRevision"] == stable == status["stableRevision"]
    assert failing_reason(status["conditions"]) == "RolloutAborted"
    progressing = next(c for c in status["conditions"] if c["type"] == "Progressing")
    assert "aborted by rollwise rollout abort" in progressing["message"]


def test_an_abort_emits_one_warning_event_and_the_settled_aborted_set_writes_nothing() -> None:
    h = _held([{"replicas": 2}, {"pause": {}}])
    _abort(h)
    events = [a for a in h.sync().actions if isinstance(a, EmitEvent) and a.event_reason == "RolloutAborted"]
    assert len(events) == 1 and events[0].event_type == "Warning"
    h.settle()
    assert h.plan().actions == ()
    h.now += 3600
    assert h.plan().actions == ()


def test_retry_starts_the_steps_again_at_the_first() -> None:
    h = _held([{"replicas": 2}, {"pause": {}}])
    _abort(h)
    h.settle()
    h.cluster.update_status({**h.sts, "status": retried_status(h.sts)})
    assert _judged_settle(h) == []
    update = h.status()["updateRevision"]
    assert sorted(n for n, r in h.pod_revisions().items() if r == update) == ["foo-2", "foo-3"]
    assert h.status()["currentStepIndex"] == 1 and "abort" not in h.status()
    assert failing_reason(h.status()["conditions"]) is None


def test_a_new_template_after_an_abort_starts_a_new_rollout() -> None:
    h = _held([{"replicas": 1}, {"pause": {}}])
    _abort(h)
    h.settle()
    h.set_image("nginx:3")
    assert _judged_settle(h) == []
    update = h.status()["updateRevision"]
    assert [n for n, r in h.pod_revisions().items() if r == update] == ["foo-3"]
    assert "abort" not in h.status() and h.status()["currentStepIndex"] == 1


def test_abort_and_retry_are_refused_when_there_is_nothing_to_do() -> None:
    h = _held([{"replicas": 1}, {"pause": {}}])
    with pytest.raises(NothingToRetry):
        retried_status(h.sts)
    _abort(h)
    with pytest.raises(NothingToAbort, match="aborted already"):
        aborted_status(h.sts)
    h2 = Harness(make_set(replicas=2))
    h2.settle()
    with pytest.raises(NothingToAbort, match="no rollout under way"):
        aborted_status(h2.sts)


def test_an_aborted_set_s_counters_do_not_read_as_complete() -> None:
    h = _held([{"replicas": 1}, {"pause": {}}])
    _abort(h)
    h.settle()
    assert set(h.pod_revisions().values()) == {h.status()["updateRevision"]}  # the stable one, while aborted
    assert not status_progress(h.sts).done
