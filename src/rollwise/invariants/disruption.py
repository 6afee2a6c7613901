"""The disruption-budget rule: no voluntary deletion by the StatefulSet controller goes past the allowance of a
PodDisruptionBudget that selects the pod (issue 28).

Voluntary: every controller deletion of a pod that has not Failed or Succeeded (a rolling update step, Recreate, a
scale-in, a progress-timeout replacement); replacing a Failed pod is not. Each deletion is judged as the eviction
API would judge it (``api/disruption.py``), in the order the plan takes them, each allowed one spending the
budget for the next. The quorum-aware controller deletes outside budgets by design (seed 001, "Pod Deletion
Method"), so its decisions are not judged here.
"""

from __future__ import annotations

from rollwise.api import predicates as p
from rollwise.api.disruption import budget_state, eviction_verdict, selects
from rollwise.api.meta import Obj, name_of, uid_of
from rollwise.controllers.plan import DeletePod
from rollwise.invariants.decision import Decision

__all__ = ["disruption_budget"]


def _voluntary_in_order(d: Decision) -> list[Obj]:
    gone = {name_of(pod): pod for pod in d.deleted() if not (p.is_failed(pod) or p.is_succeeded(pod))}
    return [gone.pop(a.name) for a in d.actions if isinstance(a, DeletePod) and a.name in gone]


def disruption_budget(d: Decision) -> list[str]:
    state = d.state
    if d.quorum or not state.budgets:
        return []
    deleted = _voluntary_in_order(d)
    if not deleted:
        return []
    pods = state.budget_pods or state.pods
    scales = {uid_of(state.set): int(state.set["spec"].get("replicas", 1)), **state.budget_scales}
    problems = []
    for pdb in state.budgets:
        budget = budget_state(pdb, pods, scales)
        spent = 0
        for pod in deleted:
            if not selects(pdb, pod):
                continue
            verdict = eviction_verdict(budget, pod, spent)
            if not verdict.allowed:
                problems.append(f"{name_of(pod)} deleted past PodDisruptionBudget {name_of(pdb)}: {verdict.reason}")
            elif verdict.spends:
                spent += 1
    return problems
