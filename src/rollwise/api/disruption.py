"""PodDisruptionBudgets (policy/v1), judged as the disruption controller and the eviction API judge them.

Pure helpers shared by the StatefulSet controller (which waits rather than exceed a budget), the ``pods/eviction``
subresource of ``rollwise up`` and the invariant that no voluntary deletion goes past a budget:

- which pods a budget selects: policy/v1 reads an empty selector (``{}``) as every pod of the namespace and a
  missing one as none (kubernetes ``pkg/controller/disruption``, ``getPodsForPdb``);
- ``budget_state``: kube-controller-manager's disruption controller (``getExpectedPodCount``,
  ``countHealthyPods``, ``updatePdbStatus``): healthy is Ready and not terminating; ``minAvailable`` as an integer
  counts against the pods selected, while ``maxUnavailable`` and a percentage ``minAvailable`` scale the replicas of
  the pods' controllers (a percentage rounds up); ``disruptionsAllowed = currentHealthy - desiredHealthy`` (never
  below 0). A pod whose controller's scale is not known counts as one replica, as if it were its own controller;
- ``eviction_verdict``: kube-apiserver's eviction handler (``pkg/registry/core/pod/storage/eviction.go``): a pod
  already terminating, Pending, Succeeded or Failed ignores every budget; an unready pod goes under
  ``unhealthyPodEvictionPolicy: AlwaysAllow``, and under the default ``IfHealthyBudget`` when the budget is healthy
  (currentHealthy >= desiredHealthy > 0); anything else needs ``disruptionsAllowed > 0`` and spends one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rollwise.api import predicates as p
from rollwise.api.intstr import PERCENT, scaled_value
from rollwise.api.meta import Obj, controller_of, labels, name_of, selector_matches

__all__ = ["ALWAYS_ALLOW", "BudgetState", "Verdict", "budget_state", "counts_healthy", "eviction_verdict",
           "ignores_budgets", "selects"]

ALWAYS_ALLOW = "AlwaysAllow"


def selects(pdb: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Whether the budget covers the pod (same namespace assumed: budgets are read per namespace)."""
    selector = (pdb.get("spec") or {}).get("selector")
    if selector is None:
        return False
    if isinstance(selector, Mapping) and not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return True  # policy/v1: an empty selector selects every pod of the namespace
    return selector_matches(selector, labels(pod))


def counts_healthy(pod: Mapping[str, Any]) -> bool:
    """A pod a budget counts in ``currentHealthy``: Ready and not terminating (disruption.go ``countHealthyPods``).
    The one rule: the budget's status, the eviction verdict and what wakes a budget's sets (runtime/routing.py)."""
    return not p.is_terminating(pod) and p.is_ready(pod)


def _int_or_percent(value: Any) -> int | str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, str) and PERCENT.match(value)):
        return value
    return None


@dataclass(frozen=True, slots=True)
class BudgetState:
    """A budget's status fields as the disruption controller would write them now."""

    name: str
    expected: int
    desired_healthy: int
    current_healthy: int
    unhealthy_policy: str

    @property
    def allowed(self) -> int:
        return max(0, self.current_healthy - self.desired_healthy)

    def describe(self, spent: int = 0) -> str:
        """Why the budget holds a pod, ``spent`` of its disruptions being taken already by the same decision."""
        return (f"PodDisruptionBudget {self.name} allows {max(0, self.allowed - spent)} disruptions (needs "
                f"{self.desired_healthy} healthy pods, has {self.current_healthy - spent})")


def budget_state(pdb: Mapping[str, Any], pods: Iterable[Obj], scales: Mapping[str, int] | None = None) -> BudgetState:
    """``pods``: the namespace's pods (others are filtered out); ``scales``: controller uid → its replicas."""
    spec = pdb.get("spec") or {}
    selected = [pod for pod in pods if selects(pdb, pod)]
    current = sum(1 for pod in selected if counts_healthy(pod))
    min_available = _int_or_percent(spec.get("minAvailable"))
    max_unavailable = _int_or_percent(spec.get("maxUnavailable"))
    if isinstance(min_available, int):
        expected, desired = len(selected), min_available
    else:
        expected = _expected_scale(selected, scales or {})
        if max_unavailable is not None:
            desired = max(0, expected - scaled_value(max_unavailable, expected, round_up=True))
        elif min_available is not None:
            desired = scaled_value(min_available, expected, round_up=True)
        else:
            desired = expected  # neither field: no disruption allowed (the API server refuses such a budget)
    policy = str(spec.get("unhealthyPodEvictionPolicy") or "IfHealthyBudget")
    return BudgetState(name=name_of(pdb), expected=expected, desired_healthy=desired, current_healthy=current,
                       unhealthy_policy=policy)


def _expected_scale(selected: Sequence[Obj], scales: Mapping[str, int]) -> int:
    seen: set[str] = set()
    total = 0
    for pod in selected:
        ref = controller_of(pod)
        uid = str(ref.get("uid") or "") if ref is not None else ""
        if uid and uid in scales:
            if uid not in seen:
                seen.add(uid)
                total += scales[uid]
        else:
            total += 1
    return total


def ignores_budgets(pod: Mapping[str, Any]) -> bool:
    """A pod the eviction API deletes whatever the budgets say: terminating already, Pending, Succeeded or Failed."""
    return p.is_terminating(pod) or p.is_pending(pod) or p.is_succeeded(pod) or p.is_failed(pod)


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    spends: bool
    """Whether the disruption spends one of the budget's allowed disruptions (a healthy pod's does)."""
    reason: str


def eviction_verdict(state: BudgetState, pod: Mapping[str, Any], spent: int = 0) -> Verdict:
    """Whether one budget lets ``pod`` go, ``spent`` of its disruptions being taken already by earlier deletions
    of the same decision (their pods still count as healthy in ``state``)."""
    if ignores_budgets(pod):
        return Verdict(True, False, "the pod is terminating, Pending, Succeeded or Failed")
    if not counts_healthy(pod):  # not terminating (above), so: not Ready
        if state.unhealthy_policy == ALWAYS_ALLOW:
            return Verdict(True, False, "unhealthyPodEvictionPolicy AlwaysAllow lets an unready pod go")
        if state.desired_healthy > 0 and state.current_healthy - spent >= state.desired_healthy:
            return Verdict(True, False, "the budget is healthy, so an unready pod may go")
    if state.allowed - spent > 0:
        return Verdict(True, True, "within the budget")
    return Verdict(False, False, f"The disruption budget {state.name} needs {state.desired_healthy} healthy pods "
                                 f"and has {state.current_healthy - spent} currently")
