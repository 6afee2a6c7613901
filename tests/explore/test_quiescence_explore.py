"""Quiescence in the explorer (issue 38): on every state each controller reconciles twice — once as its move, then
again a moment later on the world that move left, before its requeue — and the second plan writes nothing. The
explorer's clock stands still, so a status that moves with the clock is only seen by the second look.

The real controllers keep it with a pause and a pre-delete hook as user actions, unperturbed and on views up to
three moves stale; a controller that stamps the clock into its status, or writes the status it read, is caught
with its shortest trace."""

from __future__ import annotations

import dataclasses

import pytest
from explore_sets import STRATEGIES, found, manifest, run
from tiers import sweep

from rollwise.controllers.plan import Plan, WriteStatus
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView

QUIESCENCE = "quiescence"


def _stamps_the_clock(view: SetView) -> Plan:
    """The paused set's old bug in general form: a time written into the status on every reconcile."""
    plan = reconcile(view)
    old = view.set.get("status") or {}
    status = dict(next((a.status for a in plan.actions if isinstance(a, WriteStatus)), old))
    status["lastReconcileTime"] = view.now
    actions = [a for a in plan.actions if not isinstance(a, WriteStatus)]
    if status != old:
        actions.append(WriteStatus(status=status, reason="status changed"))
    return dataclasses.replace(plan, actions=tuple(actions))


def _writes_what_it_read(view: SetView) -> Plan:
    """A controller that writes its status whether or not it changed."""
    plan = reconcile(view)
    if plan.of_type(WriteStatus) or not view.set.get("status"):
        return plan
    return dataclasses.replace(plan, actions=(*plan.actions, WriteStatus(status=view.set["status"])))


@pytest.mark.parametrize(("name", "policy"), sweep(
    ((n, p) for n in STRATEGIES for p in ("OrderedReady", "Parallel")),
    fast={("RollingUpdate", "Parallel"), ("Recreate", "OrderedReady")}))
def test_a_paused_or_hooked_set_is_quiet_on_every_state(name: str, policy: str) -> None:
    strategy, annotations = STRATEGIES[name]
    result = run(manifest(strategy, policy, annotations=annotations, replicas=2), replicas=2, template_changes=1,
                 user_actions=1, safety="pause,hook")
    assert result.complete, "the bounded state space must be exhausted"
    assert QUIESCENCE in result.invariants
    assert found(result) == {}


def test_a_paused_set_is_quiet_on_views_three_moves_stale() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    result = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=1, user_actions=1,
                 perturb="stale:3", safety="pause")
    assert result.complete
    assert found(result) == {}


def test_a_controller_that_stamps_the_clock_into_its_status_is_caught() -> None:
    strategy, _ = STRATEGIES["RollingUpdate"]
    result = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=0,
                 decide=_stamps_the_clock)
    violations = {v.invariant: v for v in result.violations}
    assert QUIESCENCE in violations, found(result)
    assert violations[QUIESCENCE].message == ("write status 1 s after a reconcile of the same world (nothing "
                                              "changed but the clock)")


def test_a_controller_that_writes_the_status_it_read_is_caught() -> None:
    strategy, _ = STRATEGIES["OnDelete"]
    result = run(manifest(strategy, "OrderedReady", replicas=2), replicas=2, template_changes=0,
                 decide=_writes_what_it_read)
    # Seen first on the second look at a state whose own reconcile wrote a real change; either form names the write.
    assert found(result).get(QUIESCENCE, "").startswith("write status"), found(result)
