"""``spec.paused``: Deployment's pause for every StatefulSet strategy (issue 28).

Deployment's meaning, carried over (kubernetes ``pkg/controller/deployment``: a paused Deployment scales but does not
roll; its Progressing condition reads ``DeploymentPaused`` and the progress deadline is not checked; resuming resets
the deadline's clock):

- No new rollout step starts: no pod is deleted to move it to the update revision (RollingUpdate, EnforcedRollingUpdate
  and podProgressTimeoutSeconds' retries); Recreate deletes nothing it has not already deleted. OnDelete is paused
  trivially (the controller never deletes for an update); the quorum-aware controller (controllers/quorum) starts no
  deletion either.
- What is under way finishes: pods already terminating go, and a missing ordinal is created at the revision the
  creation phase picks, as without a pause (the rollout deleted it: bringing it back is finishing that step).
- Scaling and repairs still happen (phases A-C: a failed pod is deleted and recreated, a missing pod created, a
  condemned pod deleted). Under Recreate, before its deletions began, a new pod comes at the *current* revision, so
  old and new never run together (Recreate's one rule) while the set still scales.
- ``Progressing`` reads ``Unknown``/``RolloutPaused``, the deadline does not run, and the first reconcile after a
  resume starts its clock afresh (progress.py).
"""

from __future__ import annotations

from rollwise.api.strategies import RECREATE, ROLLING_KINDS
from rollwise.controllers.statefulset.context import Sync
from rollwise.controllers.statefulset.strategies import strategy_for
from rollwise.controllers.statefulset.strategies.recreate import NEEDS_DELETION, recreate_phase

__all__ = ["ROLLOUT_PAUSED", "hold_while_paused", "note_paused"]

ROLLOUT_PAUSED = "RolloutPaused"


def hold_while_paused(sync: Sync) -> bool:
    """What a paused set's strategy still does before creation (its ``prepare``): under Recreate, the wait for the
    old pods it already deleted, and the current revision for new pods while no deletion has begun. Returns True
    when creation and scale-down must wait (old-revision pods still terminating)."""
    if sync.update_type != RECREATE:
        return False
    if recreate_phase(sync) == NEEDS_DELETION:
        sync.create_at_current = True
        return False
    return strategy_for(RECREATE).prepare(sync)  # WaitingTermination holds; ReadyForCreation goes on


def note_paused(sync: Sync) -> None:
    """The wait a paused set reports in place of its update step: how many pods the pause keeps at their revision."""
    floor = sync.floor if sync.update_type in ROLLING_KINDS else 0
    outdated = sync.quiet_outdated_alive(floor) + sum(
        1 for i in sync.pod_indexes() if i >= floor and (pod := sync.replicas[i]) is not None
        and sync.outdated(pod) and not sync.terminating(pod))
    if outdated:
        sync.wait("", f"rollout paused: {outdated} pods stay at their revision until spec.paused is false")
