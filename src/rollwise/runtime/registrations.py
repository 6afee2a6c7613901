"""The StatefulSet controllers and the kinds each runs for: one table, read by every driver (the simulator, ``up``
and the operator), so a controller cannot run for one kind in one driver and not in another.

| controller (actor)      | decides with       | sets                        | up --controllers  | run --controllers |
|-------------------------|--------------------|-----------------------------|-------------------|-------------------|
| statefulset-controller  | reconcile          | apps/v1                     | statefulset       | (none: kube-con-  |
|                         |                    |                             |                   | troller-manager's)|
|                         |                    | apps.rollwise.dev           | apps.rollwise.dev | statefulset       |
| quorum-aware-controller | reconcile_quorum   | both, where handed_to_quorum| quorum            | quorum            |

The AnalysisRun controller (``runtime/analysis.py``) decides on runs, not sets: it is a row of its own table
(``OBJECT_CONTROLLERS``), named ``analysis`` in both ``up --controllers`` and ``run --controllers``, and stands
down in ``up`` for the runs of the namespaces a leading operator runs it for, as the set controllers do.

Rows are chained in table order on one set: the quorum-aware controller (DEP-07) decides on what the StatefulSet
controller left, as controller-runtime chains reconcilers of one object by the order they are registered.

The last column is what ``up`` reads to stand down: a controller the operator runs for a kind is one that ``up``
must not run beside it (``local/standdown.py``). The operator never runs the StatefulSet controller of ``apps/v1``
sets: on a cluster that is kube-controller-manager's, which ``up`` plays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.meta import Obj, annotations_of
from rollwise.cluster.resources import ANALYSIS_RUN, ROLLWISE_STATEFULSET, STATEFULSET, STATEFULSET_KINDS, GroupKind
from rollwise.controllers.plan import Plan
from rollwise.controllers.quorum import handed_to_quorum, reconcile_quorum
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView
from rollwise.runtime.actors import ANALYSIS_CONTROLLER, QUORUM_CONTROLLER, STATEFULSET_CONTROLLER

__all__ = ["ANALYSIS", "CONTROLLERS_MARK", "NAMESPACES_MARK", "OBJECT_CONTROLLERS", "QUORUM", "SET_CONTROLLERS",
           "STATEFULSET_ROW", "KindController", "OperatorMarks", "Registration", "chain_for", "operator_kinds",
           "operator_marks", "read_operator_marks", "up_kinds"]

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

    def runs_for(self, sts: Obj) -> bool:
        return self.handed is None or self.handed(sts)


STATEFULSET_ROW = Registration(
    actor=STATEFULSET_CONTROLLER, decide=reconcile, kinds=STATEFULSET_KINDS,
    up_names={STATEFULSET: "statefulset", ROLLWISE_STATEFULSET: "apps.rollwise.dev"},
    operator_names={ROLLWISE_STATEFULSET: "statefulset"})
QUORUM = Registration(
    actor=QUORUM_CONTROLLER, decide=reconcile_quorum, kinds=STATEFULSET_KINDS, handed=handed_to_quorum,
    up_names=dict.fromkeys(STATEFULSET_KINDS, "quorum"), operator_names=dict.fromkeys(STATEFULSET_KINDS, "quorum"))

SET_CONTROLLERS: tuple[Registration, ...] = (STATEFULSET_ROW, QUORUM)
"""Chain order: each decides on what the ones before it left."""


@dataclass(frozen=True, slots=True, kw_only=True)
class KindController:
    """A controller of objects other than sets: the names it runs by in each driver, as a ``Registration`` has."""

    actor: str
    kinds: tuple[GroupKind, ...]
    up_names: Mapping[GroupKind, str]
    operator_names: Mapping[GroupKind, str]


ANALYSIS = KindController(actor=ANALYSIS_CONTROLLER, kinds=(ANALYSIS_RUN,), up_names={ANALYSIS_RUN: "analysis"},
                          operator_names={ANALYSIS_RUN: "analysis"})
OBJECT_CONTROLLERS: tuple[KindController, ...] = (ANALYSIS,)


def chain_for(kind: GroupKind, *, runs: Callable[[Registration], bool] = lambda _: True) -> tuple[Registration, ...]:
    """The controllers of ``kind``'s sets, in chain order, those ``runs`` turns off left out."""
    return tuple(r for r in SET_CONTROLLERS if kind in r.kinds and runs(r))


def up_kinds(runs: Callable[[Registration, GroupKind], bool]) -> tuple[GroupKind, ...]:
    """The StatefulSet kinds some controller of ``up`` runs for (``runs``: its ``--controllers``, row by kind): a
    kind whose StatefulSet controller is left to the operator still has the quorum-aware controller, as the table
    says, so its sets are still watched."""
    return tuple(kind for kind in STATEFULSET_KINDS if any(runs(row, kind) for row in chain_for(kind)))


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
