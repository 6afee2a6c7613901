"""The StatefulSet controllers and the kinds each runs for: one table, read by every driver (the simulator, ``up``
and the operator), so a controller cannot run for one kind in one driver and not in another.

| controller (actor)      | decides with       | sets                        | up --controllers  | run --controllers |
|-------------------------|--------------------|-----------------------------|-------------------|-------------------|
| statefulset-controller  | reconcile          | apps/v1                     | statefulset       | (none: kube-con-  |
|                         |                    |                             |                   | troller-manager's)|
|                         |                    | apps.rollwise.dev           | apps.rollwise.dev | statefulset       |
| quorum-aware-controller | reconcile_quorum;  | both, where handed_to_quorum| quorum            | quorum            |
|                         | the operator's on  |                             |                   |                   |
|                         | apps/v1: companion |                             |                   |                   |

The controllers of other objects are rows of ``OBJECT_CONTROLLERS``, each hosted by the one controller host
(``runtime/host.py``) over its own work queue of ``(kind, namespace, name)`` keys, woken by its rule of
``runtime/wakes.py``:

| controller (actor)      | decides with                | objects               | wakes       | up / run --controllers |
|-------------------------|-----------------------------|-----------------------|-------------|------------------------|
| deployment-controller   | deployment.reconcile        | Deployment            | owners      | deployment / -         |
| replicaset-controller   | replicaset.reconcile        | ReplicaSet            | owners      | replicaset / -         |
| replication-controller  | replicaset.reconcile        | ReplicationController | owners      | replicaset / -         |
| disruption-controller   | disruption.budget_status    | PodDisruptionBudget   | budgets     | disruption / -         |
| analysis-controller     | analysis.decide (+ measure) | AnalysisRun           | runs        | analysis / analysis    |

``up`` plays kube-controller-manager, so it runs the first four; the operator never does. The AnalysisRun
controller stands down in ``up`` for the runs of the namespaces a leading operator runs it for, as the set
controllers do.

Both set rows are woken by ``routing.sets_to_wake`` (their ``wakes``); the one change dispatcher every driver feeds
(``runtime/dispatch.py``) asks ``sets_woken``, which asks each distinct rule of the rows, and a set's key runs its
whole chain. Rows are chained in table order on one set:
the quorum-aware controller (DEP-07) decides on what the StatefulSet controller left, as controller-runtime chains
reconcilers of one object by the order they are registered.

Where the operator never runs a kind's StatefulSet controller (``apps/v1``: kube-controller-manager owns the set's
status, and a second status writer would fight it), the quorum-aware controller decides as the companion
(``runtime/companion.py``), which keeps its conditions in an annotation of its own: the row's ``operator_decide``,
read through ``operator_decision``.

The last column is what ``up`` reads to stand down: a controller the operator runs for a kind is one that ``up``
must not run beside it (``local/standdown.py``). The operator never runs the StatefulSet controller of ``apps/v1``
sets: on a cluster that is kube-controller-manager's, which ``up`` plays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.meta import Obj, annotations_of
from rollwise.cluster.protocol import Change, Cluster
from rollwise.cluster.resources import ANALYSIS_RUN, ROLLWISE_STATEFULSET, STATEFULSET, STATEFULSET_KINDS, GroupKind
from rollwise.controllers import analysis, deployment, disruption, replicaset
from rollwise.controllers.plan import Plan
from rollwise.controllers.quorum import handed_to_quorum, reconcile_quorum
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView
from rollwise.runtime.actors import (
    ANALYSIS_CONTROLLER,
    DEPLOYMENT_CONTROLLER,
    DISRUPTION_CONTROLLER,
    QUORUM_CONTROLLER,
    REPLICASET_CONTROLLER,
    REPLICATION_CONTROLLER,
    STATEFULSET_CONTROLLER,
)
from rollwise.runtime.companion import reconcile_companion
from rollwise.runtime.routing import SetLookup, sets_to_wake
from rollwise.runtime.setkeys import SetKey
from rollwise.runtime.wakes import (
    DEPLOYMENT,
    PDB,
    REPLICASET,
    ObjectKey,
    budgets_to_wake,
    owners_to_wake,
    runs_to_wake,
)
from rollwise.runtime.wakes import REPLICATION_CONTROLLER as REPLICATION_CONTROLLER_KIND

__all__ = [
    "ANALYSIS",
    "CONTROLLERS_MARK",
    "DEPLOYMENT_ROW",
    "DISRUPTION",
    "NAMESPACES_MARK",
    "OBJECT_CONTROLLERS",
    "QUORUM",
    "REPLICASET_ROW",
    "REPLICATION_ROW",
    "SET_CONTROLLERS",
    "STATEFULSET_ROW",
    "KindController",
    "OperatorMarks",
    "Registration",
    "chain_for",
    "operator_decision",
    "operator_kind_name",
    "operator_kinds",
    "operator_marks",
    "read_operator_marks",
    "run_controller_names",
    "sets_woken",
    "up_controller_names",
    "up_kinds",
]

CONTROLLERS_MARK = "rollwise.dev/controllers"
"""On the operator's leader-election Lease: the ``run --controllers`` the holder runs, comma-separated."""
NAMESPACES_MARK = "rollwise.dev/namespaces"
"""On the same Lease: the namespaces it watches, comma-separated (empty or absent: every namespace)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Registration:
    actor: str
    """The name its writes, events and decisions carry (``runtime/actors.py``)."""
    decide: Callable[[SetView], Plan]
    kinds: tuple[GroupKind, ...]
    up_names: Mapping[GroupKind, str]
    """Per kind, the name ``up --controllers`` turns it off by."""
    operator_names: Mapping[GroupKind, str]
    """Per kind, the name ``rollwise run --controllers`` runs it by; a kind absent here the operator never runs."""
    handed: Callable[[Obj], bool] | None = None
    """Which sets of its kinds it decides for (None: every one)."""
    wakes: Callable[[SetLookup, Change], list[SetKey]] = sets_to_wake
    """Which sets a change wakes (``runtime/routing.py``); a set's key wakes its whole chain."""
    operator_decide: Mapping[GroupKind, Callable[[SetView], Plan]] = field(default_factory=dict)
    """Per kind, how the operator's run of it decides where that differs from ``decide``."""

    def runs_for(self, sts: Obj) -> bool:
        return self.handed is None or self.handed(sts)


STATEFULSET_ROW = Registration(
    actor=STATEFULSET_CONTROLLER, decide=reconcile, kinds=STATEFULSET_KINDS,
    up_names={STATEFULSET: "statefulset", ROLLWISE_STATEFULSET: "apps.rollwise.dev"},
    operator_names={ROLLWISE_STATEFULSET: "statefulset"})
QUORUM = Registration(
    actor=QUORUM_CONTROLLER, decide=reconcile_quorum, kinds=STATEFULSET_KINDS, handed=handed_to_quorum,
    up_names=dict.fromkeys(STATEFULSET_KINDS, "quorum"), operator_names=dict.fromkeys(STATEFULSET_KINDS, "quorum"),
    operator_decide={kind: reconcile_companion for kind in STATEFULSET_KINDS
                     if kind not in STATEFULSET_ROW.operator_names})

SET_CONTROLLERS: tuple[Registration, ...] = (STATEFULSET_ROW, QUORUM)
"""Chain order: each decides on what the ones before it left."""
_SET_WAKES = tuple(dict.fromkeys(row.wakes for row in SET_CONTROLLERS))


def sets_woken(sets: SetLookup, ch: Change) -> list[SetKey]:
    """The sets ``ch`` wakes, by the rules of the set controllers' rows (each distinct rule asked once): what the one
    change dispatcher (``runtime/dispatch.py``) asks of each change a driver reads."""
    if len(_SET_WAKES) == 1:
        return _SET_WAKES[0](sets, ch)
    return list(dict.fromkeys(key for wakes in _SET_WAKES for key in wakes(sets, ch)))


@dataclass(frozen=True, slots=True, kw_only=True)
class KindController:
    """A controller of objects other than sets: what it owns, how it decides, what wakes it, and the names it runs
    by in each driver, as a ``Registration`` has. The driver that hosts it supplies the reconcile that reads the
    view, calls ``decide`` and writes the plan (``local/hosted.py``, ``operator/analysis.py``)."""

    actor: str
    kinds: tuple[GroupKind, ...]
    decide: Callable[..., Any]
    """The pure decision (``controllers/``): the reconcile a driver hosts for this row calls it."""
    wakes: Callable[[Cluster, Change, tuple[GroupKind, ...]], Iterable[ObjectKey]]
    """Which objects of ``kinds`` a change wakes (``runtime/wakes.py``)."""
    up_names: Mapping[GroupKind, str]
    operator_names: Mapping[GroupKind, str]
    ignores_own_writes: bool = False
    """Its own writes wake nothing (a status it computed from what it read; upstream's disruption controller)."""

    def woken_by(self, cluster: Cluster, ch: Change) -> Iterable[ObjectKey]:
        if self.ignores_own_writes and ch.actor == self.actor:
            return ()
        return self.wakes(cluster, ch, self.kinds)


DEPLOYMENT_ROW = KindController(actor=DEPLOYMENT_CONTROLLER, kinds=(DEPLOYMENT,), decide=deployment.reconcile,
                                wakes=owners_to_wake, up_names={DEPLOYMENT: "deployment"}, operator_names={})
REPLICASET_ROW = KindController(actor=REPLICASET_CONTROLLER, kinds=(REPLICASET,), decide=replicaset.reconcile,
                                wakes=owners_to_wake, up_names={REPLICASET: "replicaset"}, operator_names={})
REPLICATION_ROW = KindController(actor=REPLICATION_CONTROLLER, kinds=(REPLICATION_CONTROLLER_KIND,),
                                 decide=replicaset.reconcile, wakes=owners_to_wake,
                                 up_names={REPLICATION_CONTROLLER_KIND: "replicaset"}, operator_names={})
DISRUPTION = KindController(actor=DISRUPTION_CONTROLLER, kinds=(PDB,), decide=disruption.budget_status,
                            wakes=budgets_to_wake, up_names={PDB: "disruption"}, operator_names={},
                            ignores_own_writes=True)
ANALYSIS = KindController(actor=ANALYSIS_CONTROLLER, kinds=(ANALYSIS_RUN,), decide=analysis.decide,
                          wakes=runs_to_wake, up_names={ANALYSIS_RUN: "analysis"},
                          operator_names={ANALYSIS_RUN: "analysis"})
OBJECT_CONTROLLERS: tuple[KindController, ...] = (DEPLOYMENT_ROW, REPLICASET_ROW, REPLICATION_ROW, DISRUPTION,
                                                  ANALYSIS)


def up_controller_names() -> tuple[str, ...]:
    """Every ``up --controllers`` name the table gives, once each, in table order (the set controllers first)."""
    names = [n for row in SET_CONTROLLERS for n in row.up_names.values()]
    return tuple(dict.fromkeys([*names, *(n for row in OBJECT_CONTROLLERS for n in row.up_names.values())]))


def run_controller_names() -> tuple[str, ...]:
    """Every ``rollwise run --controllers`` name the table gives, once each, in table order."""
    names = [n for row in SET_CONTROLLERS for n in row.operator_names.values()]
    return tuple(dict.fromkeys([*names, *(n for row in OBJECT_CONTROLLERS for n in row.operator_names.values())]))


def chain_for(kind: GroupKind, *, runs: Callable[[Registration], bool] = lambda _: True) -> tuple[Registration, ...]:
    """The controllers of ``kind``'s sets, in chain order, those ``runs`` turns off left out."""
    return tuple(r for r in SET_CONTROLLERS if kind in r.kinds and runs(r))


def up_kinds(runs: Callable[[Registration, GroupKind], bool]) -> tuple[GroupKind, ...]:
    """The StatefulSet kinds some controller of ``up`` runs for (``runs``: its ``--controllers``, row by kind): a
    kind whose StatefulSet controller is left to the operator still has the quorum-aware controller, as the table
    says, so its sets are still watched."""
    return tuple(kind for kind in STATEFULSET_KINDS if any(runs(row, kind) for row in chain_for(kind)))


def operator_kind_name(kind: GroupKind) -> str:
    """The name of the operator's controller that hosts ``kind``'s chain (its informer, work queue and metrics): the
    ``run --controllers`` name of the first row of the chain the operator runs for the kind."""
    return next(row.operator_names[kind] for row in chain_for(kind) if kind in row.operator_names)


def operator_decision(row: Registration, kind: GroupKind) -> Callable[[SetView], Plan]:
    """How ``row`` decides for sets of ``kind`` when the operator runs it (``operator_decide``, else ``decide``)."""
    return row.operator_decide.get(kind, row.decide)


def operator_kinds(names: tuple[str, ...]) -> dict[GroupKind, tuple[Registration, ...]]:
    """Per StatefulSet kind, the chain ``rollwise run --controllers NAMES`` runs for it (kinds with none left out)."""
    out: dict[GroupKind, tuple[Registration, ...]] = {}
    for kind in STATEFULSET_KINDS:
        chain = tuple(r for r in chain_for(kind) if r.operator_names.get(kind) in names)
        if chain:
            out[kind] = chain
    return out


@dataclass(frozen=True, slots=True)
class OperatorMarks:
    """What a Lease's holder says it runs: ``run --controllers`` names and the namespaces (empty: all)."""

    controllers: frozenset[str]
    namespaces: frozenset[str]

    def runs(self, row: Registration | KindController, kind: GroupKind, namespace: str) -> bool:
        """Does the holder run ``row`` for sets of ``kind`` in ``namespace``."""
        name = row.operator_names.get(kind)
        return name is not None and name in self.controllers and (not self.namespaces or namespace in self.namespaces)


def operator_marks(controllers: tuple[str, ...], namespaces: tuple[str, ...]) -> dict[str, str]:
    """The annotations the operator's elector writes on its Lease, read back by ``read_operator_marks``."""
    # Both keys always, so a new holder's marks replace the last holder's whole (empty: every namespace).
    return {CONTROLLERS_MARK: ",".join(controllers), NAMESPACES_MARK: ",".join(namespaces)}


def read_operator_marks(lease: Any) -> OperatorMarks | None:
    """The marks of an operator's Lease; None for any other Lease (a member Lease, kube-controller-manager's)."""
    notes = annotations_of(lease)
    if CONTROLLERS_MARK not in notes:
        return None
    return OperatorMarks(controllers=frozenset(filter(None, notes[CONTROLLERS_MARK].split(","))),
                         namespaces=frozenset(filter(None, notes.get(NAMESPACES_MARK, "").split(","))))
