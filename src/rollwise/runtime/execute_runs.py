"""The executor's steps for a canary's AnalysisRuns (controllers/statefulset/analysis.py): creating the run of an
analysis step, terminating one the rollout no longer waits on (Argo Rollouts' ``cancelAnalysisRuns``), and deleting
a completed one beyond the set's run history (``deleteAnalysisRuns``)."""

from __future__ import annotations

from collections.abc import Callable

from rollwise.api.errors import AlreadyExists, NotFound
from rollwise.api.meta import name_of
from rollwise.cluster.resources import ANALYSIS_RUN
from rollwise.controllers.plan import CreateAnalysisRun, DeleteAnalysisRun, TerminateAnalysisRun
from rollwise.runtime.calls import Steps, call

__all__ = ["run_steps"]


def run_steps(action: CreateAnalysisRun | TerminateAnalysisRun | DeleteAnalysisRun, *, actor: str, set_name: str,
              event: Callable[[str, str, str], None]) -> Steps:
    if isinstance(action, DeleteAnalysisRun):
        # No uid precondition (the executors' delete verb carries one for pods only): the controller makes a run
        # again under its name only for the step in force, which the history never deletes.
        try:
            yield call("delete", ANALYSIS_RUN, action.namespace, action.name, actor=actor)
        except NotFound:
            return  # gone meanwhile: the goal is met
        event("Normal", "AnalysisRunDeleted", f"delete AnalysisRun {action.name} in StatefulSet {set_name} "
                                              f"successful: {action.reason}")
        return
    if isinstance(action, TerminateAnalysisRun):
        try:  # the uid is a precondition: a run made again under the name is not touched
            yield call("patch", ANALYSIS_RUN, action.namespace, action.name,
                       {"metadata": {"uid": action.uid}, "spec": {"terminate": True}}, actor=actor)
        except NotFound:
            return  # gone meanwhile: nothing left to stop
        event("Normal", "AnalysisRunTerminated", f"terminate AnalysisRun {action.name} in StatefulSet {set_name}: "
                                                 "the rollout no longer waits on it")
        return
    try:
        yield call("create", action.run, actor=actor, handed_over=True)
    except AlreadyExists:
        return  # a view that predates it: the next reconcile reads the run that is there
    event("Normal", "AnalysisRunCreated", f"create AnalysisRun {name_of(action.run)} in StatefulSet {set_name} "
                                          "successful")
