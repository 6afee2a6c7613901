"""Which change wakes which object, for the controllers of objects other than sets
(``registrations.OBJECT_CONTROLLERS``): the counterpart of ``routing.sets_to_wake``, one rule per controller, the
same in every driver that hosts it.

Each rule reads the change and, where it must, lists the store (an orphan pod wakes the sets of its namespace that
may adopt it), and returns ``ObjectKey``s: the kind, namespace and name of an object to reconcile. They are
upstream's event handlers: ``pkg/controller/deployment/deployment_controller.go`` (``addReplicaSet``,
``updateReplicaSet``: the owner of a ReplicaSet), ``pkg/controller/replicaset/replica_set.go`` (``addPod``: the
controller of a pod, or every set that may adopt an orphan), ``pkg/controller/disruption/disruption.go`` (``addPod``:
the budgets of a pod's namespace), and Argo Rollouts' ``analysis/controller.go`` (a run's own changes).
"""

from __future__ import annotations

from collections.abc import Iterable

from rollwise.api.analysis import COMPLETED_PHASES
from rollwise.api.meta import controller_of, name_of, namespace_of
from rollwise.cluster.protocol import Change, Cluster
from rollwise.cluster.resources import ANALYSIS_RUN, ANALYSIS_TEMPLATE, POD, GroupKind, group_of

__all__ = ["DEPLOYMENT", "PDB", "REPLICASET", "REPLICATION_CONTROLLER", "ObjectKey", "budgets_to_wake",
           "owners_to_wake", "runs_to_wake"]

DEPLOYMENT = GroupKind("apps", "Deployment")
REPLICASET = GroupKind("apps", "ReplicaSet")
REPLICATION_CONTROLLER = GroupKind("", "ReplicationController")
PDB = GroupKind("policy", "PodDisruptionBudget")
_ADOPTERS = (REPLICASET, REPLICATION_CONTROLLER)

ObjectKey = tuple[GroupKind, str, str]


def owners_to_wake(cluster: Cluster, ch: Change, kinds: tuple[GroupKind, ...]) -> Iterable[ObjectKey]:
    """A Deployment, ReplicaSet or ReplicationController (of ``kinds``) wakes itself and its controlling owner; a
    pod wakes its controller, and an orphan pod every set of its namespace that may adopt it."""
    gk, namespace = ch.resource, ch.namespace
    if gk in kinds:
        yield gk, namespace, ch.name
    ref = controller_of(ch.obj)
    if ref is not None:
        owner = GroupKind(group_of(str(ref.get("apiVersion") or "")), str(ref.get("kind") or ""))
        if owner in kinds:
            yield owner, namespace, str(ref.get("name"))
    elif gk == POD and ch.type != "DELETED":
        for set_kind in _ADOPTERS:
            if set_kind in kinds:
                for rs in cluster.list(set_kind, namespace):
                    yield set_kind, namespace, name_of(rs)


def budgets_to_wake(cluster: Cluster, ch: Change, kinds: tuple[GroupKind, ...]) -> Iterable[ObjectKey]:
    """A budget wakes itself; a pod wakes every budget of its namespace (a budget's selector may match it now or
    may have matched it before)."""
    gk = ch.resource
    if gk in kinds and ch.type != "DELETED":
        yield gk, ch.namespace, ch.name
    elif gk == POD:
        for pdb in cluster.list(PDB, ch.namespace):
            yield PDB, ch.namespace, name_of(pdb)


def runs_to_wake(cluster: Cluster, ch: Change, kinds: tuple[GroupKind, ...]) -> Iterable[ObjectKey]:
    """A run wakes itself; a template wakes the runs of its namespace that have not resolved their templates yet and
    have not completed (a run resolves them once, at its first reconcile)."""
    if ch.group != ANALYSIS_RUN.group:
        return
    if ch.kind == ANALYSIS_RUN.kind and ch.type != "DELETED":
        yield ANALYSIS_RUN, ch.namespace, ch.name
    elif ch.kind == ANALYSIS_TEMPLATE.kind:
        # By bare kind: a store and the operator's cache reader (``runtime/cache.py``) both answer to it.
        for run in cluster.list(ANALYSIS_RUN.kind, ch.namespace):
            if not (run.get("spec") or {}).get("metrics") and (run.get("status") or {}).get("phase") \
                    not in COMPLETED_PHASES:
                yield ANALYSIS_RUN, namespace_of(run), name_of(run)
