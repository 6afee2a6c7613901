"""Where kube-scheduler may put a pod, and why nowhere: the filter plugins that make a pod Pending on a small cluster
(pkg/scheduler/framework/plugins), pure.

- NodeName: a pod that names its node is not scheduled (it is bound already).
- NodeUnschedulable: a cordoned node (``spec.unschedulable``) takes only pods that tolerate
  ``node.kubernetes.io/unschedulable:NoSchedule``.
- TaintToleration: every NoSchedule and NoExecute taint of the node must be tolerated (PreferNoSchedule is a
  preference, not a filter).
- NodeAffinity: ``spec.nodeSelector`` must match the node's labels, and so must one term of
  ``requiredDuringSchedulingIgnoredDuringExecution`` (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``, ``Gt``,
  ``Lt`` on labels).

A pod with ``spec.schedulingGates`` is not tried at all (KEP-3521, GA in 1.30): it stays Pending with PodScheduled
False, reason ``SchedulingGated``, until its gates are removed (only removal is allowed: ``validation_pods.py``).

Among the nodes that pass, the one running the fewest pods is chosen (then by name): a stand-in for the scoring
plugins. A pod no node takes gets upstream's message, e.g. ``0/1 nodes are available: 1 node(s) were
unschedulable. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.``
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rollwise.api.meta import Obj, name_of

__all__ = ["GATED_MESSAGE", "GATED_REASON", "UNSCHEDULABLE_TAINT", "choose_node", "node_rejects", "placement",
           "scheduled_at", "scheduling_gated", "tolerates", "unschedulable_status", "unscheduled"]

UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
_FILTERED_EFFECTS = ("NoSchedule", "NoExecute")
# pkg/apis/core/types.go PodReasonSchedulingGated, and the scheduler's message for it
# (pkg/scheduler/schedule_one.go, KEP-3521).
GATED_REASON = "SchedulingGated"
GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"


def tolerates(tolerations: Sequence[Any], taint: Mapping[str, Any]) -> bool:
    """Some toleration matches the taint (k8s.io/api core/v1 toleration.go ToleratesTaint)."""
    for t in tolerations:
        if not isinstance(t, Mapping):
            continue
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        key = t.get("key") or ""
        if key and key != taint.get("key"):
            continue
        operator = t.get("operator") or "Equal"
        if operator == "Exists" or (operator == "Equal" and (t.get("value") or "") == (taint.get("value") or "")):
            return True
    return False


def _expression_matches(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator = str(expr.get("key") or ""), expr.get("operator")
    values = [str(v) for v in expr.get("values") or ()]
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    if operator in ("Gt", "Lt") and key in labels and len(values) == 1:
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if operator == "Gt" else have < want
    return False


def _affinity_matches(spec: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    selector = spec.get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        return True
    # Terms are ORed, the expressions of a term ANDed (a term with no expressions matches nothing).
    return any(term.get("matchExpressions") and all(_expression_matches(e, labels) for e in term["matchExpressions"])
               for term in terms if isinstance(term, Mapping))


def node_rejects(pod: Mapping[str, Any], node: Mapping[str, Any]) -> str | None:
    """Why ``node`` cannot take ``pod``, in the scheduler's words; None when it can."""
    spec = pod.get("spec") or {}
    tolerations = spec.get("tolerations") or []
    node_spec = node.get("spec") or {}
    if node_spec.get("unschedulable") and not tolerates(
            tolerations, {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"}):
        return "node(s) were unschedulable"
    for taint in node_spec.get("taints") or ():
        if isinstance(taint, Mapping) and taint.get("effect") in _FILTERED_EFFECTS \
                and not tolerates(tolerations, taint):
            return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value') or ''}}}"
    labels = (node.get("metadata") or {}).get("labels") or {}
    if not _affinity_matches(spec, labels):
        return "node(s) didn't match Pod's node affinity/selector"
    return None


def choose_node(pod: Mapping[str, Any], nodes: Sequence[Obj], running: Mapping[str, int]) -> tuple[str | None, str]:
    """(the node to bind ``pod`` to, "") or (None, the FailedScheduling message). ``running``: pods per node."""
    rejected: Counter[str] = Counter()
    feasible = []
    for node in nodes:
        why = node_rejects(pod, node)
        if why is None:
            feasible.append(name_of(node))
        else:
            rejected[why] += 1
    if feasible:
        return min(feasible, key=lambda n: (running.get(n, 0), n)), ""
    total = len(nodes)
    reasons = ", ".join(f"{count} {why}" for why, count in sorted(rejected.items()))
    message = f"0/{total} nodes are available" + (f": {reasons}." if reasons else ".")
    return None, f"{message} preemption: 0/{total} nodes are available: {total} Preemption is not helpful for " \
                 "scheduling."


def scheduling_gated(pod: Mapping[str, Any]) -> bool:
    """The pod has scheduling gates left (``spec.schedulingGates`` not empty): no scheduler may bind it."""
    spec = pod.get("spec")
    gates = spec.get("schedulingGates") if isinstance(spec, Mapping) else None
    return isinstance(gates, list) and bool(gates)


def placement(pod: Mapping[str, Any], nodes: Sequence[Obj], running: Mapping[str, int],
              now: float) -> tuple[str | None, Obj]:
    """One scheduling attempt: (the node to bind to, the status unchanged) or (None, the Pending status that says
    why not: SchedulingGated while the pod has gates, else Unschedulable with upstream's message)."""
    raw = pod.get("status")
    status: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if scheduling_gated(pod):
        return None, unschedulable_status(status, GATED_MESSAGE, now, reason=GATED_REASON)
    node, message = choose_node(pod, nodes, running)
    if node is not None:
        return node, dict(status)
    return None, unschedulable_status(status, message, now)


def _scheduled_condition(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    status = pod.get("status")
    listed = status.get("conditions") if isinstance(status, Mapping) else None
    return next((c for c in listed if isinstance(c, Mapping) and c.get("type") == "PodScheduled"), None) \
        if isinstance(listed, list) else None


def unscheduled(pod: Mapping[str, Any]) -> bool:
    """The scheduler found no node for the pod (PodScheduled False): no kubelet runs it."""
    condition = _scheduled_condition(pod)
    return condition is not None and condition.get("status") == "False"


def scheduled_at(pod: Mapping[str, Any]) -> float | None:
    """When a pod the scheduler bound late was bound (its PodScheduled True transition), if that is a number."""
    condition = _scheduled_condition(pod)
    at = condition.get("lastTransitionTime") if condition is not None and condition.get("status") == "True" else None
    return float(at) if isinstance(at, int | float) and not isinstance(at, bool) else None


def unschedulable_status(status: Mapping[str, Any], message: str, now: float, *,
                         reason: str = "Unschedulable") -> Obj:
    """A pod's status once the scheduler found no node (or may not look for one: ``GATED_REASON``): Pending,
    PodScheduled False with the reason and message; the transition time kept while it stays False."""
    conditions = [c for c in status.get("conditions") or () if isinstance(c, dict)]
    old = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
    since = old["lastTransitionTime"] if old and old.get("status") == "False" and old.get("lastTransitionTime") \
        else now
    condition = {"type": "PodScheduled", "status": "False", "lastProbeTime": None, "lastTransitionTime": since,
                 "reason": reason, "message": message}
    return {**status, "phase": "Pending",
            "conditions": [c for c in conditions if c.get("type") != "PodScheduled"] + [condition]}
