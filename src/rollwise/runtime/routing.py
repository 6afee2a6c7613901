"""Which StatefulSets a change wakes: the mapping from watch events to work-queue keys that every driver shares.

- a pod wakes its controller (before and after the change), or, while it has none, every set whose selector
  matches it (an orphan a set may adopt, reference §5.1);
- a member Lease wakes the set its ``rollwise.dev/member-of`` label names (or every set in its namespace);
- a set wakes itself, except for a controller's own status write: an informer delivers that too, but reconciling
  on it decides nothing new (the controller wrote what it had just decided).

Keys come sorted, so the order of work never depends on string hashing.
"""

from __future__ import annotations

from rollwise.api.errors import NotFound
from rollwise.api.meta import Obj, controller_of, labels, namespace_of, selector_matches
from rollwise.cluster.protocol import Change, Cluster
from rollwise.cluster.resources import STATEFULSET
from rollwise.runtime.reconciler import CONTROLLERS
from rollwise.runtime.setkeys import SetKey, all_sets, find_set, set_key, set_resource

__all__ = ["MEMBER_OF_LABEL", "is_own_status_write", "sets_to_wake"]

MEMBER_OF_LABEL = "rollwise.dev/member-of"


def sets_to_wake(cluster: Cluster, ch: Change) -> list[SetKey]:
    """The sets to reconcile because of ``ch`` (empty for kinds no set reads)."""
    if ch.kind == "Pod":
        return _owners_of(cluster, ch.obj, ch.old)
    if ch.kind == "Lease":
        owner = labels(ch.obj).get(MEMBER_OF_LABEL)
        if owner:
            return [_set_named(cluster, ch.namespace, owner)]
        return [set_key(s) for s in all_sets(cluster, ch.namespace)]
    if ch.of_statefulset and not is_own_status_write(ch):
        return [(ch.resource, ch.namespace, ch.name)]
    return []


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


def _owners_of(cluster: Cluster, pod: Obj, old: Obj | None) -> list[SetKey]:
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
            for sts in all_sets(cluster, ns):
                if selector_matches(sts["spec"].get("selector"), labels(obj)):
                    keys.add(set_key(sts))
    return sorted(keys)


def _set_named(cluster: Cluster, namespace: str, name: str) -> SetKey:
    try:
        return set_key(find_set(cluster, namespace, name))
    except NotFound:
        return STATEFULSET, namespace, name
