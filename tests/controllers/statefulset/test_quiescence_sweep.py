"""Every strategy x policy, in every state where a set waits, reconciled again and again as the clock moves (issue
38): the quiescence rule (``invariants/quiescence.py``) holds on each reconcile — no write equal to what it
replaces, and none on the world the previous reconcile left before its requeue — and over 30 s the set writes at
most what time itself changes (one status write when a deadline or a hook's timeout passes). The explorer's clock
stands still; these states need it to move: a deadline passing, a hook timing out, a pod stuck past its timeout."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from builders import make_set
from harness import CONTROLLER, Harness
from test_pre_delete_hooks import _hooked as hooked_set

from rollwise.api.meta import name_of
from rollwise.controllers.plan import Plan
from rollwise.controllers.statefulset import reconcile
from rollwise.invariants.decision import Decision
from rollwise.invariants.quiescence import noop_writes, settled_writes
from rollwise.runtime.execute import execute
from rollwise.runtime.views import set_view

STRATEGIES = {
    "RollingUpdate": {"type": "RollingUpdate"},
    "RollingUpdate-budget": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}},
    "OnDelete": {"type": "OnDelete"},
    "Recreate": {"type": "Recreate"},
    "EnforcedRollingUpdate": {"type": "EnforcedRollingUpdate"},
}
POLICIES = ("OrderedReady", "Parallel")


def _watch(h: Harness, seconds: float = 30.0, step: float = 0.25, *, kubelet: bool = False) -> tuple[list[str], int]:
    """Reconcile every ``step`` s for ``seconds``, carrying out each plan as the controller would (pods otherwise
    stand still; with ``kubelet``, a deleted pod goes at once); the rule's findings, and how many reconciles wrote
    anything."""
    problems: list[str] = []
    writing = 0
    previous: tuple[Decision, float | None] | None = None
    end = h.now + seconds
    while h.now < end:
        view = set_view(h.cluster, h.sts, now=h.now, gates=h.gates)
        plan: Plan = reconcile(view)
        decision = Decision(view=view, actions=plan.actions)
        problems += noop_writes(decision)
        if previous is not None:
            problems += [f"t={h.now:g}: {p}" for p in settled_writes(*previous, decision)]
        writing += bool(plan.actions)
        execute(plan, h.cluster, sts=view.set, actor=CONTROLLER)
        previous = (decision, plan.requeue_after)
        for pod in h.pods() if kubelet else ():
            if pod["metadata"].get("deletionTimestamp") is not None:
                h.finish_termination(name_of(pod))
                previous = None  # the kubelet changed the world
        h.now += step
    return problems, writing


def _settled(name: str, policy: str, **spec: Any) -> Harness:
    h = Harness(make_set(replicas=3, policy=policy, strategy=STRATEGIES[name], **spec))
    h.settle()
    return h


def _paused(h: Harness) -> None:
    h.patch_set({"spec": {"paused": True}})
    h.set_image("nginx:2")


def _stuck_on_a_broken_pod(h: Harness) -> None:
    """The new template's first pod never becomes Ready (no kubelet moves it): the rollout waits on it."""
    h.set_image("nginx:broken")
    for pod in h.pods():  # OnDelete replaces nothing by itself: a person deletes one pod
        h.cluster.delete("Pod", "default", name_of(pod), grace_period_seconds=0)
        break
    h.sync()
    h.sync()


def _waiting_for_termination(h: Harness) -> None:
    """Pods deleted for the update terminate and never finish (Recreate waits for all of them to go)."""
    h.set_image("nginx:2")
    h.sync()


def _hooked(name: str, policy: str, timeout: int | None = None) -> Harness:
    h = hooked_set(policy, strategy=STRATEGIES[name], timeout=timeout)
    h.set_image("nginx:2")
    if name != "OnDelete":  # nothing is marked without a person's delete; the set waits all the same
        h.sync()
    return h


WAITS: dict[str, tuple[Callable[[str, str], Harness], int]] = {
    # state -> (how to reach it, how many reconciles may write in the 30 s watched: what time itself changes)
    "settled": (_settled, 0),
    "paused": (lambda n, p: _then(_settled(n, p), _paused), 1),
    "hook-pending": (_hooked, 1),
    "hook-timed-out": (lambda n, p: _hooked(n, p, timeout=5), 2),
    "stuck-on-a-broken-pod": (lambda n, p: _then(_settled(n, p), _stuck_on_a_broken_pod), 1),
    "stuck-past-the-deadline": (lambda n, p: _then(_settled(n, p, progressDeadlineSeconds=10),
                                                   _stuck_on_a_broken_pod), 2),
    "waiting-for-termination": (lambda n, p: _then(_settled(n, p), _waiting_for_termination), 1),
    "waiting-for-availability": (lambda n, p: _then(_settled(n, p, min_ready_seconds=20), _stuck_on_a_broken_pod), 2),
}


def _then(h: Harness, step: Callable[[Harness], None]) -> Harness:
    step(h)
    return h


@pytest.mark.parametrize("state", WAITS)
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", STRATEGIES)
def test_a_waiting_set_writes_nothing_while_nothing_changes(name: str, policy: str, state: str) -> None:
    reach, most = WAITS[state]
    h = reach(name, policy)
    problems, writing = _watch(h)
    assert problems == []
    # The first reconcile may still record the wait; then only time's own changes (a deadline, a timeout).
    assert writing <= most, f"{writing} reconciles wrote in 30 s"


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", ["RollingUpdate", "RollingUpdate-budget", "EnforcedRollingUpdate"])
def test_a_pod_retried_by_its_progress_timeout_is_waited_for_without_a_write(name: str, policy: str) -> None:
    """podProgressTimeoutSeconds replaces the stuck pod with back-off (5, 10, 20 s): each replacement writes, and
    the waits in between write nothing, whatever their message says of the retries (it must state no time that
    moves with the clock)."""
    strategy = {**STRATEGIES[name]}
    block = "enforcedRollingUpdate" if name == "EnforcedRollingUpdate" else "rollingUpdate"
    strategy[block] = {**strategy.get(block, {}), "podProgressTimeoutSeconds": 5}
    h = Harness(make_set(replicas=3, policy=policy, strategy=strategy))
    h.settle()
    _stuck_on_a_broken_pod(h)
    problems, writing = _watch(h, seconds=60.0, kubelet=True)
    assert problems == []
    # Three retries in 60 s (after 5, 10 and 20 s), each a delete, a create and the status after them (two pods at
    # once under maxUnavailable 2); nothing between them.
    assert 3 <= writing <= 16, f"{writing} reconciles wrote in 60 s"
