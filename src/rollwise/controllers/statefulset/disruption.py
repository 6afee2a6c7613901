"""PodDisruptionBudget-aware deletion: the set controller never takes a pod past a budget (issue 28).

Upstream's StatefulSet controller deletes pods outright, so a rollout or a scale-in ignores every
PodDisruptionBudget; only evictions (``kubectl drain``) honour them. Here every *voluntary* deletion — a rolling
update step (RollingUpdate, EnforcedRollingUpdate, podProgressTimeoutSeconds' replacements), Recreate's deletions and
a scale-in — asks first whether every budget of the namespace that selects the pod lets it go, as the eviction API
would (``api/disruption.py``); refused, the controller waits and says which budget allows how many disruptions.
Replacing a Failed or Succeeded pod is not voluntary (the pod is gone already) and is never held. The quorum-aware
controller keeps its own rule (seed 001, "Pod Deletion Method": a plain delete, the PDB bypassed by design).

The allowance is the disruption controller's, computed afresh from the view's pods, and each deletion of this plan
spends one from every budget that selects its pod: so the effective budget of a rollout is the smaller of the set's
own (maxUnavailable) and every PDB's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rollwise.api.disruption import BudgetState, budget_state, eviction_verdict, selects
from rollwise.api.meta import Obj, name_of, uid_of

__all__ = ["DisruptionGuard", "guard_for"]


class DisruptionGuard:
    """The namespace's budgets over one reconcile, with what this plan has spent of each."""

    __slots__ = ("_budgets", "_spent")

    def __init__(self, budgets: Sequence[tuple[Obj, BudgetState]]) -> None:
        self._budgets = budgets
        self._spent: dict[str, int] = {}

    def admit(self, pod: Obj) -> str | None:
        """None when every budget selecting ``pod`` lets it go now (its allowance is then spent); else why not."""
        verdicts = [(state, eviction_verdict(state, pod, self._spent.get(state.name, 0)))
                    for pdb, state in self._budgets if selects(pdb, pod)]
        for state, verdict in verdicts:
            if not verdict.allowed:
                return state.describe(self._spent.get(state.name, 0))
        for state, verdict in verdicts:
            if verdict.spends:
                self._spent[state.name] = self._spent.get(state.name, 0) + 1
        return None


def guard_for(sts: Obj, budgets: Sequence[Obj], pods: Sequence[Obj],
              scales: Mapping[str, int] | None = None) -> DisruptionGuard | None:
    """The guard for a reconcile, or None when no budget of the namespace exists (nothing to check)."""
    if not budgets:
        return None
    known = {uid_of(sts): int(sts["spec"].get("replicas", 1)), **(scales or {})}
    ordered = sorted(budgets, key=name_of)
    return DisruptionGuard([(pdb, budget_state(pdb, pods, known)) for pdb in ordered])
