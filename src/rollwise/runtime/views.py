"""Building a controller's view from a cluster: shared by the simulator, tests, and (later) the operator."""

from __future__ import annotations

import builtins
from typing import Any, Protocol, TypeGuard, runtime_checkable

from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj, controller_of, labels, name_of, namespace_of, selector_matches, uid_of
from rollwise.cluster.protocol import Cluster
from rollwise.controllers.statefulset.analysis import SET_LABEL
from rollwise.controllers.view import SetView
from rollwise.runtime.setkeys import all_sets

__all__ = ["IndexedReads", "analysis_reads", "budget_reads", "set_view"]


@runtime_checkable
class IndexedReads(Protocol):
    """Reads served from an owner index (``MemoryCluster``, the operator's informer caches)."""

    def controlled_by(self, kind: str, owner_uid: str) -> builtins.list[Obj]: ...

    def uncontrolled(self, kind: str, namespace: str) -> builtins.list[Obj]: ...


_INDEXED: dict[type, bool] = {}


def _indexed(cluster: Cluster) -> TypeGuard[IndexedReads]:
    """``isinstance(cluster, IndexedReads)``, once per type (a runtime protocol check is slow on a hot path)."""
    kind = type(cluster)
    found = _INDEXED.get(kind)
    if found is None:
        found = _INDEXED[kind] = isinstance(cluster, IndexedReads)
    return found


def set_view(cluster: Cluster, sts: Obj, *, now: float, gates: FeatureGates) -> SetView:
    """The set plus what its controller reads: pods it controls or could adopt, claims, revisions and leases."""
    ns = namespace_of(sts)
    set_uid = uid_of(sts)
    selector = sts["spec"].get("selector")
    if _indexed(cluster):
        # Indexed reads: what the set controls plus orphans, as an informer's indexer would serve them.
        pods = tuple(
            [p for p in cluster.controlled_by("Pod", set_uid) if (controller_of(p) or {}).get("uid") == set_uid]
            + [p for p in cluster.uncontrolled("Pod", ns) if selector_matches(selector, labels(p))]
        )
    else:
        pods = tuple(
            pod for pod in cluster.list("Pod", ns)
            if ((ref := controller_of(pod)) is not None and ref.get("uid") == set_uid)
            or (ref is None and selector_matches(selector, labels(pod)))
        )
    claims = {name_of(c): c for c in cluster.list("PersistentVolumeClaim", ns)}
    leases = {name_of(x): x for x in cluster.list("Lease", ns)}
    return SetView(set=sts, pods=pods, claims=claims, revisions=set_revisions(cluster, sts), leases=leases, now=now,
                   gates=gates, **budget_reads(cluster, ns), **analysis_reads(cluster, sts))


def analysis_reads(cluster: Cluster, sts: Obj) -> dict[str, Any]:
    """The view's AnalysisRuns: those labelled with the set's name (the controller reads only the ones it
    controls). Read for every set, not only one with an analysis step: steps edited mid-run leave a run measuring
    that the controller terminates, and completed runs that the run history still trims."""
    # The bare kind: a store resolves it to apps.rollwise.dev's, and an operator's cache keys its informer so.
    runs = cluster.list("AnalysisRun", namespace_of(sts), selector={"matchLabels": {SET_LABEL: name_of(sts)}})
    return {"analysis_runs": {name_of(run): run for run in runs}}


def budget_reads(cluster: Cluster, ns: str) -> dict[str, Any]:
    """The view's PodDisruptionBudget fields: the namespace's budgets and, only when there are some, its pods and
    the scale of their StatefulSets (a percentage budget scales its pods' controllers)."""
    budgets = tuple(cluster.list("PodDisruptionBudget", ns))
    if not budgets:
        return {}
    pods = cluster.list("Pod", ns)
    scales = {uid_of(s): int(s["spec"].get("replicas", 1)) for s in all_sets(cluster, ns)}
    return {"budgets": budgets, "budget_pods": tuple(pods), "budget_scales": scales}


def set_revisions(cluster: Cluster, sts: Obj) -> tuple[Obj, ...]:
    """The set's candidate revisions: those it controls, or orphans it may adopt."""
    ns = namespace_of(sts)
    if _indexed(cluster):
        set_uid = uid_of(sts)
        selector = sts["spec"].get("selector")
        prefix = f"{name_of(sts)}-"
        revisions = tuple(
            list(cluster.controlled_by("ControllerRevision", set_uid))
            + [r for r in cluster.uncontrolled("ControllerRevision", ns) if name_of(r).startswith(prefix)
               or selector_matches(selector, labels(r))]
        )
    else:
        revisions = tuple(cluster.list("ControllerRevision", ns))
    return revisions
