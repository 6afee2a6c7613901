"""The decision log's line: one reconcile that decided actions, with the view it decided from (enough to rebuild
the ``SetView``), the resourceVersions of what it read, and each action with its reason.

``encode`` is what ``simulate``, ``up`` and ``run`` write with ``--trace``; ``decode`` is what ``check-trace``
reads, and it names the first field it cannot use (``TraceError``), never a traceback.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from rollwise.api.features import GATE_NAMES, FeatureGates
from rollwise.api.meta import Obj, name_of, uid_of
from rollwise.controllers import plan as plans
from rollwise.controllers.plan import Action
from rollwise.controllers.view import SetView
from rollwise.invariants.decision import Decision

__all__ = ["LOG_VERSION", "NOT_LOGGED", "TraceError", "decode", "encode", "requeue_of"]

LOG_VERSION = "rollwise.dev/decision-log/v1"

_ACTIONS: dict[str, type[Action]] = {
    cls.__name__: cls for cls in vars(plans).values()
    if isinstance(cls, type) and issubclass(cls, Action) and cls is not Action
}


class TraceError(ValueError):
    """A line that is not a decision the checker can use: ``field`` says where, the message what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def _rv(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


def encode(view: SetView, actions: Sequence[Action], *, controller: str, quorum: bool,
           requeue_after: float | None = None) -> dict[str, Any]:
    """One decision as a JSON-ready document; ``requeue_after``: when the controller said time alone changes
    something (seconds from the view's ``now``; None: nothing), which the quiescence rule reads."""
    sts = view.set
    doc: dict[str, Any] = {
        "log": LOG_VERSION,
        "time": view.now,
        "controller": controller,
        "quorumAware": quorum,
        "set": {"namespace": sts["metadata"].get("namespace", "default"), "name": name_of(sts), "uid": uid_of(sts),
                "apiVersion": sts.get("apiVersion", "")},
        "resourceVersions": {
            "set": _rv(sts),
            "pods": {name_of(pod): _rv(pod) for pod in view.pods},
            "claims": {name: _rv(c) for name, c in view.claims.items()},
        },
        "view": {
            "set": sts, "pods": list(view.pods), "claims": dict(view.claims), "revisions": list(view.revisions),
            "leases": dict(view.leases), "now": view.now, "gates": sorted(view.gates.enabled),
        },
        "actions": [{"type": type(a).__name__, **{f.name: getattr(a, f.name) for f in dataclasses.fields(a)}}
                    for a in actions],
        "requeueAfter": requeue_after,
    }
    if view.budgets:  # only where the namespace has PodDisruptionBudgets (the disruption-budget rule reads them)
        doc["view"].update(budgets=list(view.budgets), budgetPods=list(view.budget_pods),
                           budgetScales=dict(view.budget_scales))
    if view.analysis_runs:  # only when the set has runs (the canary-step rule reads their phases)
        doc["view"]["analysisRuns"] = dict(view.analysis_runs)
    return doc


def _obj(value: Any, where: str) -> Obj:
    if not isinstance(value, dict):
        raise TraceError(where, f"want an object, got {type(value).__name__}")
    meta = value.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        raise TraceError(f"{where}.metadata.name", "want a string")
    return value


def _field(doc: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = doc.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise TraceError(f"{where}{key}", f"want {want}, got {type(value).__name__ if key in doc else 'nothing'}")
    return value


def _action(raw: Any, where: str) -> Action:
    if not isinstance(raw, dict):
        raise TraceError(where, "want an object")
    kind = raw.get("type")
    cls = _ACTIONS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise TraceError(f"{where}.type", f"unknown action {kind!r}; known: {', '.join(sorted(_ACTIONS))}")
    names = {f.name for f in dataclasses.fields(cls)}
    try:
        action = cls(**{k: v for k, v in raw.items() if k in names})
    except TypeError as err:
        raise TraceError(where, f"{kind}: {err}") from None
    for obj_field in ("pod", "claim", "revision"):
        value = getattr(action, obj_field, None)
        if isinstance(value, dict):
            _obj(value, f"{where}.{obj_field}")
    return action


NOT_LOGGED = "not logged"
"""``requeue_of`` of a line written before the log carried ``requeueAfter``."""


def requeue_of(doc: Mapping[str, Any]) -> float | str | None:
    """The decision's requeue (seconds, or None: time alone changes nothing), or ``NOT_LOGGED``."""
    if "requeueAfter" not in doc:
        return NOT_LOGGED
    value = doc["requeueAfter"]
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise TraceError("requeueAfter", f"want a number of seconds, at least 0, or null, got {value!r}")
    return float(value)


def decode(doc: Any) -> tuple[str, Decision]:
    """The controller's name and its decision, from one line's document."""
    if not isinstance(doc, dict):
        raise TraceError("(line)", f"want a JSON object, got {type(doc).__name__}")
    if doc.get("log") != LOG_VERSION:
        raise TraceError("log", f"want {LOG_VERSION!r} (a decision log written by --trace), got {doc.get('log')!r}")
    controller = _field(doc, "controller", str, "")
    quorum = _field(doc, "quorumAware", bool, "")
    view = _field(doc, "view", dict, "")
    sts = _obj(view.get("set"), "view.set")
    if not isinstance(sts.get("spec"), dict) or not isinstance(sts["spec"].get("template"), dict):
        raise TraceError("view.set.spec.template", "want an object")
    pods = [_obj(p, f"view.pods[{i}]") for i, p in enumerate(_field(view, "pods", list, "view."))]
    claims = _field(view, "claims", dict, "view.")
    for name, claim in claims.items():
        _obj(claim, f"view.claims.{name}")
    revisions = [_obj(r, f"view.revisions[{i}]") for i, r in enumerate(_field(view, "revisions", list, "view."))]
    leases = _field(view, "leases", dict, "view.")
    now = _field(view, "now", (int, float), "view.")
    gates = _field(view, "gates", list, "view.")
    unknown = [g for g in gates if g not in GATE_NAMES]
    if unknown:
        raise TraceError("view.gates", f"unknown feature gate(s) {unknown}")
    actions = [_action(a, f"actions[{i}]") for i, a in enumerate(_field(doc, "actions", list, ""))]
    budgets = [_obj(b, f"view.budgets[{i}]") for i, b in enumerate(view.get("budgets") or [])]
    budget_pods = [_obj(x, f"view.budgetPods[{i}]") for i, x in enumerate(view.get("budgetPods") or [])]
    scales = view.get("budgetScales") or {}
    if not isinstance(scales, dict) or not all(isinstance(v, int) for v in scales.values()):
        raise TraceError("view.budgetScales", "want an object of integers")
    runs = view.get("analysisRuns") or {}
    if not isinstance(runs, dict):
        raise TraceError("view.analysisRuns", "want an object of AnalysisRuns by name")
    for name, run in runs.items():
        _obj(run, f"view.analysisRuns.{name}")
    set_view = SetView(set=sts, pods=tuple(pods), claims=claims, revisions=tuple(revisions), leases=leases,
                       now=float(now), gates=FeatureGates(enabled=frozenset(gates)), budgets=tuple(budgets),
                       budget_pods=tuple(budget_pods), budget_scales=scales, analysis_runs=runs)
    return controller, Decision(view=set_view, actions=tuple(actions), quorum=quorum)
