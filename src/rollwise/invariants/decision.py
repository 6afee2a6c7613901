"""One controller decision, the unit every transition rule judges: the view the controller decided from, the
actions it took, and (where it differs) the store those actions met.

The simulator, ``up`` and the operator hand their observers the view and the plan; the explorer knows the pods a
move deleted; ``rollwise check-trace`` rebuilds both from a decision log. Each becomes a ``Decision``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rollwise.api import predicates as p
from rollwise.api.abort import is_aborted
from rollwise.api.identity import ordinal_of, ordinal_range
from rollwise.api.meta import Obj, name_of, uid_of
from rollwise.api.ordinals import OrdinalSpan
from rollwise.controllers.plan import Action, CreatePod, DeletePod, InPlaceUpdatePod, WriteStatus
from rollwise.controllers.statefulset.limits import Limits, limits_of
from rollwise.controllers.view import SetView
from rollwise.invariants.stages import image_of

__all__ = ["Birth", "Decision", "birth", "delete_of"]

Birth = tuple[str, int, bool]
"""The template image, the partition and the abort a pod was created under (the no-churn rule's context)."""


def birth(sts: Obj, limits: Limits) -> Birth:
    """The context a pod is created (or judged) under: the set's template image and partition, and whether its
    rollout is aborted (api/abort.py: the pods then go back to the stable revision, under the same template)."""
    return image_of(sts["spec"]["template"]), limits.partition, is_aborted(sts.get("status") or {})


def delete_of(pod: Obj, reason: str = "") -> DeletePod:
    """The delete action that removed ``pod`` (for a caller that knows the pod, not the plan)."""
    meta = pod["metadata"]
    return DeletePod(name=meta["name"], namespace=meta.get("namespace", "default"), uid=meta.get("uid", ""),
                     revision="", reason=reason)


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    view: SetView
    """What the controller decided from (possibly a stale cache)."""
    actions: Sequence[Action]
    """The actions it took, in order (a crash mid-plan cuts the tail)."""
    quorum: bool = False
    """Decided by the quorum-aware controller (DEP-07), which the quorum rule judges instead of the budget."""
    truth: SetView | None = None
    """The store the actions met, where it differs from ``view``: rules judge the truth, not the cache."""
    births: Mapping[str, Birth] = field(default_factory=dict)
    """Pod name → the context the controller created it under (the no-churn rule; empty: not tracked)."""

    @property
    def state(self) -> SetView:
        return self.truth if self.truth is not None else self.view

    @property
    def limits(self) -> Limits:
        """The limits the decision acted under: with canary steps, those of the step its own status write records
        (a controller moves past a finished step and acts on the next one in one reconcile; the steps rule judges
        that move, ``invariants/steps.py``)."""
        sts = self.state.set
        written = self.written_status()
        if written is not None and "currentStepIndex" in written:
            sts = {**sts, "status": written}
        return limits_of(sts, self.state.gates)

    def written_status(self) -> Obj | None:
        """The status the decision's last status write sets, if it writes one."""
        return next((a.status for a in reversed(self.actions) if isinstance(a, WriteStatus)), None)

    @property
    def span(self) -> OrdinalSpan:
        return ordinal_range(self.state.set)

    @property
    def min_ready_seconds(self) -> float:
        return float(self.state.set["spec"].get("minReadySeconds") or 0)

    def deleted(self) -> list[Obj]:
        """The pods its deletes removed, as they were: live ones (not terminating already) that the delete names,
        by uid where the action carries one (a uid precondition spares a pod recreated under the name)."""
        wanted = {(d.name, d.uid) for d in self.actions if isinstance(d, DeletePod)}
        if not wanted:
            return []
        names = {name for name, _ in wanted}
        out = []
        for pod in self.state.pods:
            name = name_of(pod)
            if name not in names or p.is_terminating(pod):
                continue
            uid = str(pod["metadata"].get("uid", ""))
            if (name, uid) in wanted or (name, "") in wanted:
                out.append(pod)
        return out

    def updated_in_place(self) -> list[Obj]:
        """The live pods its in-place updates patched, as they were (matched by uid: the update is at a
        resourceVersion, so it cannot land on a pod recreated under the name)."""
        wanted = {(name_of(a.pod), uid_of(a.pod)) for a in self.actions if isinstance(a, InPlaceUpdatePod)}
        if not wanted:
            return []
        return [pod for pod in self.state.pods
                if (name_of(pod), uid_of(pod)) in wanted and not p.is_terminating(pod)]

    def creates(self) -> list[CreatePod]:
        return [a for a in self.actions if isinstance(a, CreatePod)]

    def by_ordinal(self) -> dict[int, Obj]:
        return {ordinal_of(pod): pod for pod in self.state.pods}
