"""Which StatefulSets a change wakes: the one table of wake rules, for every driver (the simulator, ``up`` and the
operator) — upstream ``stateful_set.go``'s event handlers (reference upstream-statefulset.md §5.1).

| change of      | wakes                                                                                     |
|----------------|-------------------------------------------------------------------------------------------|
| a Pod          | its controller, before and after the change (by kind, group and name, as controller-runtime's |
|                | ``OnlyControllerOwner``); while it has none, every set of its namespace whose selector     |
|                | matches it (an orphan a set may adopt). Any change: an application's agent removing a      |
|                | pre-delete hook's label or finalizer is what lets a PreparingDelete pod go (hooks.py)       |
| a member Lease | the set its ``rollwise.dev/member-of`` label names; unlabelled, every set of its namespace |
| a PodDisrup-   | every set of its namespace: a budget that loosens (or goes) may free a deletion a set      |
| tionBudget     | waits on (controllers/statefulset/disruption.py)                                           |
| a Pod, again   | when it became Ready or stopped being so, or went, and a budget of the namespace selects   |
|                | it: every set of the namespace too (the allowance moved; ``ClusterSets`` only: the     |
|                | operator's Pod informer sees rollwise's own pods, which wake their set anyway)            |
| a claim        | on a change of its status or of its resize-refused annotation (KEP-4650: an expansion moved  |
|                | on or was refused), the sets whose claim templates name it                                 |
| an AnalysisRun | on a change of its status (a phase, a measurement) or its going, the set that controls it   |
|                | (a canary's analysis step reads its phase, controllers/statefulset/analysis.py)            |
| a StatefulSet  | itself, except a controller's own status write: the controller wrote what it had just      |
|                | decided, and reconciling on it decides nothing new                                         |
| anything else  | nothing (upstream watches no ControllerRevision; the reconcile lists them)                 |

Keys come sorted, so the order of work never depends on string hashing. The sets are found through a
``SetLookup``: the store's both resources (``ClusterSets``), or an operator's cache of its one resource.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rollwise.api.claim_templates import RESIZE_REFUSED_ANNOTATION
from rollwise.api.disruption import counts_healthy, selects
from rollwise.api.errors import NotFound
from rollwise.api.identity import claim_ordinal
from rollwise.api.leases import MEMBER_OF_LABEL
from rollwise.api.meta import Obj, controller_of, labels, namespace_of, selector_matches
from rollwise.cluster.protocol import Change, Cluster
from rollwise.runtime.actors import CONTROLLERS, DISRUPTION_CONTROLLER
from rollwise.runtime.setkeys import SetKey, all_sets, find_set, set_key, set_resource

__all__ = ["ClusterSets", "SetLookup", "is_own_status_write", "sets_to_wake"]

class SetLookup(Protocol):
    def sets_in(self, namespace: str) -> Sequence[Obj]:
        """Every set the driver runs in ``namespace``, by name."""
        ...

    def find(self, namespace: str, name: str) -> Obj | None: ...


class ClusterSets:
    """Both StatefulSet resources of a store (``setkeys.all_sets``)."""

    __slots__ = ("_cluster",)

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster

    def sets_in(self, namespace: str) -> Sequence[Obj]:
        return all_sets(self._cluster, namespace)

    def budgets_in(self, namespace: str) -> Sequence[Obj]:
        return self._cluster.list("PodDisruptionBudget", namespace)

    def find(self, namespace: str, name: str) -> Obj | None:
        try:
            return find_set(self._cluster, namespace, name)
        except NotFound:
            return None


def sets_to_wake(sets: SetLookup, ch: Change) -> list[SetKey]:
    """The sets to reconcile because of ``ch`` (empty for kinds no set reads)."""
    if ch.kind == "Pod":
        owners = _owners_of(sets, ch.obj, ch.old)
        if isinstance(sets, ClusterSets) and _budget_moved(ch) and any(
                selects(b, ch.obj) for b in sets.budgets_in(ch.namespace)):
            return sorted({*owners, *(set_key(s) for s in sets.sets_in(ch.namespace))})
        return owners
    if ch.kind == "PodDisruptionBudget":
        if ch.actor == DISRUPTION_CONTROLLER and ch.old is not None and ch.old.get("spec") == ch.obj.get("spec"):
            return []  # up's disruption controller wrote the status the pods already gave (local/hosted.py)
        return sorted(set_key(s) for s in sets.sets_in(ch.namespace))
    if ch.kind == "Lease":
        return _members_of(sets, ch.namespace, ch.obj)
    if ch.of_statefulset and not is_own_status_write(ch):
        return [(ch.resource, ch.namespace, ch.name)]
    if ch.kind == "AnalysisRun" and (ch.type == "DELETED" or (ch.old or {}).get("status") != ch.obj.get("status")):
        ref = controller_of(ch.obj)
        return [(set_resource(ref), ch.namespace, str(ref["name"]))] if ref is not None \
            and ref.get("kind") == "StatefulSet" else []
    if ch.kind == "PersistentVolumeClaim" and ch.type == "MODIFIED" and _resize_moved(ch):
        return sorted(set_key(s) for s in sets.sets_in(ch.namespace) if claim_ordinal(s, ch.name) is not None)
    return []


def _budget_moved(ch: Change) -> bool:
    """The pod's part in a budget's allowance changed: it became Ready, stopped being Ready, or went."""
    old, new = ch.old, ch.obj
    if old is None or ch.type == "DELETED":
        return ch.type == "DELETED"
    return counts_healthy(old) != counts_healthy(new)


def _resize_moved(ch: Change) -> bool:
    """A claim's expansion moved on (its status changed) or was refused (the annotation the executor writes).
    Nothing else about a claim changes a decision, so an owner-reference repair wakes no set."""
    old, new = ch.old or {}, ch.obj
    if old.get("status") != new.get("status"):
        return True
    before = (old.get("metadata") or {}).get("annotations") or {}
    after = (new.get("metadata") or {}).get("annotations") or {}
    return before.get(RESIZE_REFUSED_ANNOTATION) != after.get(RESIZE_REFUSED_ANNOTATION)


def is_own_status_write(ch: Change) -> bool:
    """A controller's write that changed neither spec nor metadata: its own status write."""
    if ch.actor not in CONTROLLERS or ch.type != "MODIFIED" or ch.old is None:
        return False
    old, new = ch.old, ch.obj
    spec = old.get("spec")
    if spec is not new.get("spec") and spec != new.get("spec"):  # a status write shares the spec
        return False
    before, after = old["metadata"], new["metadata"]
    if len(before) != len(after) or ("resourceVersion" in before) != ("resourceVersion" in after):
        return False
    for k, v in before.items():  # noqa: SIM110 - a loop, not all() over a generator: every status write asks
        if k != "resourceVersion" and (k not in after or after[k] != v):
            return False
    return True


def _members_of(sets: SetLookup, namespace: str, lease: Obj) -> list[SetKey]:
    owner = labels(lease).get(MEMBER_OF_LABEL)
    if not owner:
        return sorted(set_key(s) for s in sets.sets_in(namespace))
    found = sets.find(namespace, owner)
    return [set_key(found)] if found is not None else []


def _owners_of(sets: SetLookup, pod: Obj, old: Obj | None) -> list[SetKey]:
    ref = controller_of(pod)
    if ref is not None and (old is None or controller_of(old) is ref) and ref.get("kind") == "StatefulSet":
        # The common case: one controller, the very reference before and after (a status write shares it).
        return [(set_resource(ref), namespace_of(pod), str(ref["name"]))]
    keys: set[SetKey] = set()
    ns = namespace_of(pod)
    for obj in (pod, old):
        if obj is None:
            continue
        ref = controller_of(obj)
        if ref is not None and ref.get("kind") == "StatefulSet":
            keys.add((set_resource(ref), ns, str(ref["name"])))
        elif ref is None:
            for sts in sets.sets_in(ns):
                if selector_matches(sts["spec"].get("selector"), labels(obj)):
                    keys.add(set_key(sts))
    return sorted(keys)
