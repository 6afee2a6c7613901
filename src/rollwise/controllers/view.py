"""The immutable snapshot a controller decides from (DESIGN principle 1).

The driver rebuilds the view from the store on every reconcile; the controller remembers nothing between calls,
so a restart at any moment resumes correctly (level-triggered, like upstream and controller-runtime).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field

from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj
from rollwise.api.records import dataclass
from rollwise.api.role_probe import ProbeAnswer
from rollwise.controllers.census import Census

__all__ = ["SetView"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SetView:
    """One StatefulSet and everything in its namespace its controller reads.

    ``pods``: the pods it may own — those it controls and orphans whose labels match its selector (the driver
    may pass more; the controller filters). ``claims``: PersistentVolumeClaims by name. ``revisions``: every
    ControllerRevision in the namespace (names collide namespace-wide). ``leases``: coordination Leases by name.
    A driver may share its own live collections with the view: it is read during the reconcile it was built for.
    """

    set: Obj
    pods: Sequence[Obj] = ()
    claims: Mapping[str, Obj] = field(default_factory=dict)
    revisions: tuple[Obj, ...] = ()
    leases: Mapping[str, Obj] = field(default_factory=dict)
    now: float = 0.0
    gates: FeatureGates = field(default_factory=FeatureGates)
    budgets: tuple[Obj, ...] = ()
    """The namespace's PodDisruptionBudgets (policy/v1): voluntary deletions wait rather than exceed one."""
    budget_pods: Sequence[Obj] = ()
    """The namespace's pods, read only when it has budgets (a budget may select other workloads' pods too)."""
    budget_scales: Mapping[str, int] = field(default_factory=dict)
    """Controller uid → its replicas, for the controllers of ``budget_pods`` (a percentage budget scales them)."""
    probes: Mapping[str, ProbeAnswer] = field(default_factory=dict)
    """The last role-probe answer of each member pod, by pod name (a set with ``spec.roleProbe`` or the
    ``rollwise.dev/role-probe-*`` annotations; the driver probes, the controller reads, api/role_probe.py)."""
    analysis_runs: Mapping[str, Obj] = field(default_factory=dict)
    """AnalysisRuns by name: those of the set's canary analysis steps (labelled ``rollwise.dev/set``; the driver may
    pass more, the controller reads only the ones it controls, controllers/statefulset/analysis.py)."""
    census: Census | None = None
    """Optional: which pods are quiet, kept up to date by a driver that follows the change feed. Used only when its
    context is the one the reconcile derives (controllers/statefulset/census.py); a census over ``pods`` otherwise."""
