"""The safety rules of a rollout, stated once, judged by the explorer (every move), the tests (every reconcile of
the simulator) and ``rollwise check-trace`` (every decision a real run logged).

``rules``: what a controller's ``Decision`` (the view it decided from and the actions it took) must keep;
``store``: what the objects of a moment must keep. Budget and partition come from the controller's own resolution
(``controllers.statefulset.limits``), never a copy.
"""

from rollwise.invariants.decision import Birth, Decision, birth, delete_of
from rollwise.invariants.rules import TRANSITION_RULES, judge, promised_budget
from rollwise.invariants.store import claims_lost, one_pod_per_ordinal, recreate_never_mixes, status_agrees_with_pods

__all__ = [
    "TRANSITION_RULES",
    "Birth",
    "Decision",
    "birth",
    "claims_lost",
    "delete_of",
    "judge",
    "one_pod_per_ordinal",
    "promised_budget",
    "recreate_never_mixes",
    "status_agrees_with_pods",
]
