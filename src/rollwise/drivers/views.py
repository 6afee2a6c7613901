"""Building a controller's view from a cluster: shared by the simulator, tests, and (later) the operator."""

from __future__ import annotations

from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj, controller_of, labels, name_of, namespace_of, selector_matches, uid_of
from rollwise.cluster.protocol import Cluster
from rollwise.controllers.view import SetView

__all__ = ["set_view"]


def set_view(cluster: Cluster, sts: Obj, *, now: float, gates: FeatureGates) -> SetView:
    """The set plus what its controller reads: pods it controls or could adopt, claims, revisions and leases."""
    ns = namespace_of(sts)
    set_uid = uid_of(sts)
    selector = sts["spec"].get("selector")
    pods = tuple(
        pod for pod in cluster.list("Pod", ns)
        if ((ref := controller_of(pod)) is not None and ref.get("uid") == set_uid)
        or (ref is None and selector_matches(selector, labels(pod)))
    )
    claims = {name_of(c): c for c in cluster.list("PersistentVolumeClaim", ns)}
    revisions = tuple(cluster.list("ControllerRevision", ns))
    leases = {name_of(x): x for x in cluster.list("Lease", ns)}
    return SetView(set=sts, pods=pods, claims=claims, revisions=revisions, leases=leases, now=now, gates=gates)
