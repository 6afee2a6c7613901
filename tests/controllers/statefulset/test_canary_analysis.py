"""A canary's analysis step in the pure controller (controllers/statefulset/analysis.py, steps.py): the step creates
the AnalysisRun of the contract and holds while it runs; Successful moves on in the same reconcile; Failed or Error
aborts, taking back exactly the updated pods; Inconclusive holds until promote; retry starts a fresh run. Here the
test writes the run's status as the AnalysisRun controller would."""

from __future__ import annotations

from typing import Any

from builders import make_set
from harness import Harness
from test_canary_steps import _at_update, _judged_settle

from rollwise.api.abort import aborted_status, retried_status
from rollwise.api.meta import owner_reference
from rollwise.api.reasons import failing_reason
from rollwise.api.steps import promoted_status
from rollwise.controllers.plan import (
    CreateAnalysisRun,
    DeleteAnalysisRun,
    DeletePod,
    EmitEvent,
    TerminateAnalysisRun,
    WriteStatus,
)
from rollwise.controllers.statefulset import reconcile
from rollwise.invariants.decision import Decision
from rollwise.invariants.steps import canary_step
from rollwise.runtime.views import set_view

ANALYSIS = {"analysis": {"templates": [{"templateName": "error-rate"}], "args": [{"name": "svc", "value": "web"}]}}
FAILED_MESSAGE = 'metric error-rate failed: result 0.12 matches failureCondition "result > 0.05"'


def _at_analysis(steps: list[dict[str, Any]] | None = None) -> Harness:
    """A 4-replica set rolled to a new image with ``[{replicas: 2}, analysis]``, settled at the analysis step."""
    h = Harness(make_set(replicas=4, policy="Parallel", strategy={
        "type": "RollingUpdate", "rollingUpdate": {"steps": steps or [{"replicas": 2}, ANALYSIS]}}))
    h.settle()
    h.set_image("nginx:2")
    h.settle()
    return h


def _run(h: Harness) -> dict[str, Any]:
    (run,) = h.cluster.list("AnalysisRun.apps.rollwise.dev", "default")
    return run


def _finish(h: Harness, phase: str, message: str = "") -> None:
    """The AnalysisRun controller's verdict, written through the status subresource."""
    run = _run(h)
    h.cluster.update_status({**run, "status": {"phase": phase, **({"message": message} if message else {})}},
                            actor="analysis-controller")


def _progressing(h: Harness) -> dict[str, Any]:
    return next(c for c in h.status()["conditions"] if c["type"] == "Progressing")


def _uids(h: Harness) -> dict[str, str]:
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in h.pods()}


def test_an_analysis_step_creates_the_run_of_the_contract_and_holds_naming_it() -> None:
    h = _at_analysis()
    update = h.status()["updateRevision"]
    run = _run(h)
    assert run["metadata"]["name"] == f"{update}-1"
    assert run["metadata"]["labels"] == {"rollwise.dev/set": "foo", "rollwise.dev/revision": update,
                                         "rollwise.dev/step": "1"}
    (owner,) = run["metadata"]["ownerReferences"]
    assert owner["uid"] == h.sts["metadata"]["uid"] and owner["controller"] is True
    assert run["spec"] == {"templates": [{"templateName": "error-rate"}], "args": [{"name": "svc", "value": "web"}]}
    assert sorted(_at_update(h)) == ["foo-2", "foo-3"]
    progressing = _progressing(h)
    assert progressing["status"] == "Unknown" and progressing["reason"] == "AnalysisRunning"
    assert f"analysis run {update}-1" in progressing["message"]
    assert h.status()["currentStepAnalysisRun"] == {"name": f"{update}-1", "phase": "Pending"}
    assert h.plan().actions == ()  # held: the run is there, nothing to write


def test_a_run_that_still_runs_holds_and_a_changed_phase_is_written_once() -> None:
    h = _at_analysis()
    _finish(h, "Running")
    plan = h.sync()
    assert not any(isinstance(a, (DeletePod, CreateAnalysisRun)) for a in plan.actions)
    assert h.status()["currentStepAnalysisRun"]["phase"] == "Running"
    assert h.plan().actions == ()


def test_a_successful_run_moves_past_the_step_in_the_same_reconcile_and_the_rest_follow() -> None:
    h = _at_analysis()
    _finish(h, "Successful")
    plan = h.sync()
    assert [a.name for a in plan.actions if isinstance(a, DeletePod)] == ["foo-1"]  # the rest, within maxUnavailable
    assert _judged_settle(h) == []
    status = h.status()
    assert status["currentRevision"] == status["updateRevision"] and status["currentStepIndex"] == 2
    assert "currentStepAnalysisRun" not in status


def test_a_failed_run_aborts_and_takes_back_exactly_the_updated_pods_naming_the_metric() -> None:
    h = _at_analysis()
    stable = h.status()["currentRevision"]
    before = _uids(h)
    _finish(h, "Failed", FAILED_MESSAGE)
    plan = h.sync()
    assert [a.name for a in plan.actions if isinstance(a, DeletePod)] == ["foo-3"]  # at once, highest first
    events = [a for a in plan.actions if isinstance(a, EmitEvent) and a.event_reason == "RolloutAborted"]
    assert len(events) == 1 and FAILED_MESSAGE in events[0].message
    status = h.status()
    assert status["abort"] is True and FAILED_MESSAGE in status["abortMessage"]
    assert status["currentStepAnalysisRun"]["phase"] == "Failed"
    assert failing_reason(status["conditions"]) == "RolloutAborted"
    assert _progressing(h)["status"] == "False" and "error-rate" in _progressing(h)["message"]
    assert _judged_settle(h) == []
    assert set(h.pod_revisions().values()) == {stable}
    after = _uids(h)
    assert after["foo-0"] == before["foo-0"] and after["foo-1"] == before["foo-1"]  # never touched
    assert after["foo-2"] != before["foo-2"] and after["foo-3"] != before["foo-3"]
    assert h.plan().actions == ()  # the settled, aborted set writes nothing
    assert h.status()["currentStepAnalysisRun"]["phase"] == "Failed"  # kept for the display while aborted


def test_an_error_run_aborts_too() -> None:
    h = _at_analysis()
    _finish(h, "Error", "metric error-rate: template error-rate not found")
    h.sync()
    assert h.status()["abort"] is True and "not found" in h.status()["abortMessage"]


def test_a_run_that_fails_while_the_step_is_reached_aborts_on_the_next_reconcile() -> None:
    # The run was made before the step was reached (a status lost, say): the verdict is read on the way there.
    h = _at_analysis([{"replicas": 1}, {"pause": {"duration": 10}}, ANALYSIS])
    update = h.status()["updateRevision"]
    h.cluster.create({"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisRun",
                      "metadata": {"name": f"{update}-2", "namespace": "default", "labels": {"rollwise.dev/set": "foo"},
                                   "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "foo",
                                                        "uid": h.sts["metadata"]["uid"], "controller": True}]},
                      "status": {"phase": "Failed", "message": FAILED_MESSAGE}})
    h.now = 20  # the pause is over: the controller moves to the analysis step itself
    plan = h.sync()
    assert not any(isinstance(a, DeletePod) for a in plan.actions)
    assert plan.requeue_after is not None and plan.requeue_after < 1
    assert h.status()["abort"] is True
    assert _judged_settle(h) == []
    assert set(h.pod_revisions().values()) == {h.status()["currentRevision"]}


def test_an_inconclusive_run_holds_until_promote_moves_past() -> None:
    h = _at_analysis([{"replicas": 1}, ANALYSIS, {"pause": {}}])
    _finish(h, "Inconclusive", "metric error-rate is inconclusive: result 0.04")
    h.sync()
    progressing = _progressing(h)
    assert progressing["reason"] == "AnalysisInconclusive" and "promote" in progressing["message"]
    assert h.plan().actions == ()
    h.cluster.update_status({**h.sts, "status": promoted_status(h.sts, full=False)})
    h.sync()
    assert h.status()["currentStepIndex"] == 2 and _progressing(h)["reason"] == "RolloutStepPaused"


def test_retry_starts_a_fresh_run_and_keeps_the_failed_one() -> None:
    h = _at_analysis()
    update = h.status()["updateRevision"]
    _finish(h, "Failed", FAILED_MESSAGE)
    h.settle()
    h.cluster.update_status({**h.sts, "status": retried_status(h.sts)})
    h.settle()
    runs = {r["metadata"]["name"]: r for r in h.cluster.list("AnalysisRun.apps.rollwise.dev", "default")}
    assert sorted(runs) == [f"{update}-1", f"{update}-1.1"]
    assert runs[f"{update}-1"]["status"]["phase"] == "Failed"  # the record of why the first attempt stopped
    assert h.status()["currentStepAnalysisRun"] == {"name": f"{update}-1.1", "phase": "Pending"}
    assert h.status()["rolloutAttempt"] == 1 and sorted(_at_update(h)) == ["foo-2", "foo-3"]


def test_a_paused_set_creates_no_run() -> None:
    h = Harness(make_set(replicas=4, policy="Parallel", strategy={
        "type": "RollingUpdate", "rollingUpdate": {"steps": [ANALYSIS]}}))
    h.settle()
    h.patch_set({"spec": {"paused": True}})
    h.set_image("nginx:2")
    h.settle()
    assert h.cluster.list("AnalysisRun.apps.rollwise.dev", "default") == []


def test_a_run_someone_else_controls_is_no_verdict() -> None:
    h = _at_analysis()
    update = h.status()["updateRevision"]
    h.cluster.delete("AnalysisRun.apps.rollwise.dev", "default", f"{update}-1")
    h.cluster.create({"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisRun",
                      "metadata": {"name": f"{update}-1", "namespace": "default",
                                   "labels": {"rollwise.dev/set": "foo"}},
                      "status": {"phase": "Successful"}})
    plan = h.sync()
    assert not any(isinstance(a, DeletePod) for a in plan.actions)
    assert h.status()["currentStepIndex"] == 1


def test_the_canary_step_rule_flags_a_step_passed_on_a_run_that_is_not_successful() -> None:
    h = _at_analysis()
    _finish(h, "Running")
    view = set_view(h.cluster, h.sts, now=h.now, gates=h.gates)
    plan = reconcile(view)
    assert canary_step(Decision(view=view, actions=plan.actions)) == []
    skipped = {**h.status(), "currentStepIndex": 2}
    forged = (WriteStatus(status=skipped, reason="a controller that does not wait for its analysis"),)
    (problem,) = canary_step(Decision(view=view, actions=forged))
    assert "analysis run" in problem and "Running" in problem
    _finish(h, "Successful")
    view = set_view(h.cluster, h.sts, now=h.now, gates=h.gates)
    assert canary_step(Decision(view=view, actions=reconcile(view).actions)) == []


def test_an_abort_while_the_run_measures_terminates_it_once() -> None:
    h = _at_analysis()
    _finish(h, "Running")
    h.sync()
    h.cluster.update_status({**h.sts, "status": aborted_status(h.sts)})  # the CLI's abort
    plan = h.sync()
    (terminate,) = [a for a in plan.actions if isinstance(a, TerminateAnalysisRun)]
    assert terminate.name == _run(h)["metadata"]["name"] and _run(h)["spec"]["terminate"] is True
    assert not any(isinstance(a, TerminateAnalysisRun) for a in h.sync().actions)  # the flag is there: once
    h.settle()
    assert h.plan().actions == ()


def test_a_promote_past_a_running_analysis_terminates_its_run_and_a_new_template_the_old_one() -> None:
    h = _at_analysis([{"replicas": 1}, ANALYSIS, {"pause": {}}])
    _finish(h, "Running")
    h.sync()
    h.cluster.update_status({**h.sts, "status": promoted_status(h.sts, full=False)})
    plan = h.sync()
    assert [a.name for a in plan.actions if isinstance(a, TerminateAnalysisRun)] == [_run(h)["metadata"]["name"]]
    h2 = _at_analysis()
    old = _run(h2)["metadata"]["name"]
    h2.set_image("nginx:3")
    plan = h2.sync()
    assert [a.name for a in plan.actions if isinstance(a, TerminateAnalysisRun)] == [old]


def test_the_run_of_the_step_in_force_is_never_terminated() -> None:
    h = _at_analysis()
    _finish(h, "Running")
    h.patch_set({"spec": {"paused": True}})
    assert not any(isinstance(a, TerminateAnalysisRun) for a in h.sync().actions)


def _past_run(h: Harness, name: str, phase: str) -> None:
    """A run of an earlier rollout, as the set made it, completed with ``phase`` (the clock moves one second)."""
    h.now += 1
    h.cluster.create({"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisRun",
                      "metadata": {"name": name, "namespace": "default", "labels": {"rollwise.dev/set": "foo"},
                                   "ownerReferences": [owner_reference(h.sts)]},
                      "spec": {"templates": [{"templateName": "error-rate"}]}})
    if phase:
        run = h.cluster.get("AnalysisRun.apps.rollwise.dev", "default", name)
        h.cluster.update_status({**run, "status": {"phase": phase}}, actor="analysis-controller")


def _run_names(h: Harness) -> list[str]:
    return sorted(r["metadata"]["name"] for r in h.cluster.list("AnalysisRun.apps.rollwise.dev", "default"))


def test_the_set_keeps_its_five_newest_successful_and_five_newest_unsuccessful_runs_once() -> None:
    h = Harness(make_set(replicas=2, strategy={"type": "RollingUpdate",
                                                "rollingUpdate": {"steps": [{"replicas": 1}, ANALYSIS]}}))
    h.settle()
    for i in range(7):
        _past_run(h, f"ok-{i}", "Successful")
    for i, phase in enumerate(["Failed", "Error", "Inconclusive", "Failed", "Failed", "Error", "Failed"]):
        _past_run(h, f"bad-{i}", phase)
    _past_run(h, "measuring-0", "Running")  # the oldest of all, but still running
    _past_run(h, "measuring-1", "")
    plan = h.sync()
    deleted = [a.name for a in plan.actions if isinstance(a, DeleteAnalysisRun)]
    assert deleted == ["bad-0", "bad-1", "ok-0", "ok-1"]
    assert _run_names(h) == sorted([*(f"ok-{i}" for i in range(2, 7)), *(f"bad-{i}" for i in range(2, 7)),
                                    "measuring-0", "measuring-1"])
    assert not any(isinstance(a, DeleteAnalysisRun) for a in h.sync().actions)  # an unchanged world: nothing


def test_the_run_the_status_names_and_a_run_of_another_owner_are_never_deleted() -> None:
    h = _at_analysis()
    name = _run(h)["metadata"]["name"]
    _finish(h, "Failed", FAILED_MESSAGE)
    h.settle()  # aborted: the failed run stays named in status.currentStepAnalysisRun
    assert h.status()["currentStepAnalysisRun"]["name"] == name
    for i in range(6):
        _past_run(h, f"bad-{i}", "Failed")
    stranger = {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "AnalysisRun",
                "metadata": {"name": "theirs", "namespace": "default", "labels": {"rollwise.dev/set": "foo"}},
                "spec": {"templates": [{"templateName": "error-rate"}]}}
    h.now -= 100  # older than all of them
    h.cluster.create(stranger)
    h.cluster.update_status({**h.cluster.get("AnalysisRun.apps.rollwise.dev", "default", "theirs"),
                             "status": {"phase": "Failed"}}, actor="someone")
    h.now += 200
    deleted = [a.name for a in h.sync().actions if isinstance(a, DeleteAnalysisRun)]
    assert deleted == ["bad-0"]  # six of them and the named one: the named one is kept beside the newest five
    assert name in _run_names(h) and "theirs" in _run_names(h)


def test_a_running_run_of_a_set_whose_analysis_steps_were_edited_away_is_terminated() -> None:
    h = _at_analysis()
    _finish(h, "Running")
    h.sync()
    name = _run(h)["metadata"]["name"]
    h.patch_set({"spec": {"updateStrategy": {"rollingUpdate": {"steps": [{"replicas": 2}]}}}})
    plan = h.sync()
    assert [a.name for a in plan.actions if isinstance(a, TerminateAnalysisRun)] == [name]
    assert _run(h)["spec"]["terminate"] is True
    assert not any(isinstance(a, TerminateAnalysisRun) for a in h.sync().actions)  # the flag is there: once
    h.patch_set({"spec": {"updateStrategy": {"rollingUpdate": {"steps": None}}}})
    assert not any(isinstance(a, TerminateAnalysisRun) for a in h.sync().actions)
