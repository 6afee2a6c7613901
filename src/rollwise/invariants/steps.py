"""canary-step: the controller moves a canary on only where the steps let it (controllers/statefulset/steps.py).

A status write that records a later ``currentStepIndex`` than the set's status holds (for the same update
revision) may move past a ``replicas`` step and past a timed pause whose duration has run out since its recorded
start; past an ``analysis`` step only when the step's AnalysisRun in the view the controller decided from says
``Successful``; never past ``pause: {}`` — only ``rollwise rollout promote`` moves that (a user's write, which no
controller decision makes) — unless the same write says the rollout is complete (a scale-in can
leave no pod to hold back). Deletions against the step's partition are the partition rule's, which
reads the partition of the step the decision records (``Decision.limits``).
"""

from __future__ import annotations

from rollwise.api.steps import set_steps
from rollwise.controllers.statefulset.analysis import run_name, verdict_of
from rollwise.invariants.decision import Decision

__all__ = ["canary_step"]


def canary_step(d: Decision) -> list[str]:
    written = d.written_status()
    if written is None or "currentStepIndex" not in written:
        return []
    old = d.state.set.get("status") or {}
    if old.get("updateRevision") != written.get("updateRevision") or "currentStepIndex" not in old:
        return []  # a new rollout starts at step 0 wherever it went
    if written.get("currentRevision") == written.get("updateRevision"):
        return []  # every replica updated and available (a scale-in can finish a held canary): nothing is held
    steps = set_steps(d.state.set, d.limits.update_type)
    start, end = int(old["currentStepIndex"]), int(written["currentStepIndex"])
    problems = []
    paused_at = old.get("pauseStartTime")
    recorded = old.get("rolloutAttempt")
    attempt = recorded if isinstance(recorded, int) else 0
    for index in range(start, min(end, len(steps))):
        step = steps[index]
        if step.kind == "analysis":
            verdict = verdict_of(d.view.analysis_runs, d.state.set, run_name(str(old["updateRevision"]), index,
                                                                             attempt))
            if not verdict.passed:
                problems.append(f"moved past step {index + 1} ({step.describe()}) on analysis run {verdict.name} "
                                f"({verdict.phase}), not Successful, without a promote")
        elif step.kind == "pause" and step.duration is None:
            problems.append(f"moved past step {index + 1} ({step.describe()}) without a promote")
        elif step.kind == "pause" and index == start and isinstance(paused_at, (int, float)) \
                and d.view.now < float(paused_at) + float(step.duration or 0):
            problems.append(f"ended step {index + 1} ({step.describe()}) at t={d.view.now}, before "
                            f"{float(paused_at) + float(step.duration or 0)}")
    return problems
