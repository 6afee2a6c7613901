"""The run's record: the event stream from the store's change feed, and the summary figures (spec/simulate.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from rollwise.api import predicates as p
from rollwise.api.identity import claim_ordinal, ordinal_of, ordinal_range, pod_name, revision_of
from rollwise.api.meta import Obj, controller_of, deletion_timestamp, name_of, namespace_of
from rollwise.api.retention import retention_policy
from rollwise.api.rollout import rollout_complete as is_rollout_complete
from rollwise.api.strategies import partition_floor
from rollwise.cluster.protocol import Change
from rollwise.scenario.scenario import set_label

__all__ = ["PodLists", "Recorder", "SetFigureSource", "SetFigures", "set_label"]



@dataclass(slots=True)
class SetFigures:
    """Running figures for one StatefulSet, measured from ``start``."""

    start: float | None = None
    template_changed: bool = False
    completed: bool = False
    completed_at: float | None = None
    max_unavailable: int = 0
    unavailable_pod_seconds: float = 0.0
    pod_creations: int = 0
    pod_deletions: int = 0
    forced_replacements: int = 0
    in_place_updates: int = 0
    claims_lost: int = 0
    """Claims deleted by anyone but a user while their ordinal was in range or under whenScaled=Retain."""
    writes_without_change: int = 0
    """Controller writes the quiescence rule finds (``QuietWrites``): equal to what they replace, or made on the
    world the controller's previous reconcile left, before its requeue."""
    last_unavailable: int = 0
    last_sample: float | None = None
    unavailable_steps: list[tuple[float, int]] = field(default_factory=list)  # (t, count) where the count changed
    measured_step: int = 0  # the first step that counts: the sample that ends the instant measuring (re)started at
    restarted: bool = False  # measuring restarted at this instant and its first sample is still to come
    range_steps: list[tuple[float, int, int, tuple[int, ...]]] = field(default_factory=list)
    """(t, start, stop, reserved) of the wanted ordinals (reserved: those of ``spec.reserveOrdinals`` skipped)."""


@dataclass(slots=True)
class Recorder:
    controllers: frozenset[str]
    events: list[dict[str, Any]] = field(default_factory=list)
    figures: dict[str, SetFigures] = field(default_factory=dict)
    sets: dict[str, Obj] = field(default_factory=dict)
    """The latest state of each set, in feed order: what a claim deletion is judged against."""
    ambiguous: frozenset[str] = frozenset()
    """Set names used in several namespaces: those sets are keyed ``namespace/name`` (``set_label``)."""

    def label(self, namespace: str, name: str) -> str:
        return set_label(namespace or "default", name, self.ambiguous)

    # -- the event stream ------------------------------------------------------------------------------------

    def emit(self, t: float, etype: str, **fields: Any) -> None:
        self.events.append({"t": round(t, 6), "type": etype, **fields})

    def on_change(self, ch: Change) -> None:
        if ch.kind == "Pod":
            self._pod_change(ch)
        elif ch.kind == "PersistentVolumeClaim" and ch.type == "ADDED":
            self.emit(ch.at, "PVCCreated", claim=self._claim_label(ch))
        elif ch.kind == "PersistentVolumeClaim" and ch.type == "DELETED":
            lost_from = self._claim_lost_from(ch)
            if lost_from is None:
                self.emit(ch.at, "PVCDeleted", claim=self._claim_label(ch))
            else:
                self.emit(ch.at, "PVCDeleted", claim=self._claim_label(ch), lost=True)
                self._figures(lost_from).claims_lost += 1
        elif ch.kind == "Event" and ch.type == "ADDED":
            inv = ch.obj.get("involvedObject") or {}
            self.emit(ch.at, "Event", object=f"{inv.get('kind')}/{inv.get('name')}", reason=ch.obj.get("reason"),
                      message=ch.obj.get("message"), eventType=ch.obj.get("type"))
            if ch.obj.get("reason") == "ForcedReplacement":
                key = self.label(str(inv.get("namespace") or ch.namespace), str(inv.get("name", "")))
                self._figures(key).forced_replacements += self._started(key)
        if ch.kind == "StatefulSet":
            self._set_change(ch)

    def _set_change(self, ch: Change) -> None:
        key = self.label(ch.namespace, ch.name)
        if ch.type == "DELETED":
            self.sets.pop(key, None)
            return
        self.sets[key] = ch.obj
        if ch.type == "MODIFIED" and ch.old is not None and ch.actor == "user":
            old_t = (ch.old.get("spec") or {}).get("template")
            if old_t != (ch.obj.get("spec") or {}).get("template"):
                fig = self._figures(key)
                if not fig.template_changed:
                    fig.template_changed = True
                    self._restart(fig, ch.at)

    def _claim_lost_from(self, ch: Change) -> str | None:
        """The set that lost this claim: deleted (not by a user) while its ordinal is in range, or while the set's
        policy says Retain on scale-down (reference §6.2: only whenScaled=Delete lets a condemned claim go)."""
        if ch.actor == "user":
            return None
        for set_name, sts in self.sets.items():
            if deletion_timestamp(sts) is not None or namespace_of(sts) != ch.namespace:
                continue
            ordinal = claim_ordinal(sts, ch.name)
            if ordinal is None:
                continue
            if ordinal in ordinal_range(sts) or retention_policy(sts)[0] == "Retain":
                return set_name
        return None

    def _pod_label(self, ch: Change) -> str:
        """A pod's name in events, qualified ``namespace/pod`` when its set's name is ambiguous (as ``label``)."""
        owner = (controller_of(ch.obj) or {}).get("name", "")
        return f"{ch.namespace}/{ch.name}" if owner in self.ambiguous else ch.name

    def _claim_label(self, ch: Change) -> str:
        """A claim (``<template>-<set>-<ordinal>``) of a set whose name is ambiguous is qualified too."""
        ambiguous = any(f"-{name}-" in ch.name for name in self.ambiguous)
        return f"{ch.namespace}/{ch.name}" if ambiguous else ch.name

    def _pod_change(self, ch: Change) -> None:
        new, old, t = ch.obj, ch.old, ch.at
        if ch.type == "ADDED":
            self.emit(t, "PodCreated", pod=self._pod_label(ch), ordinal=ordinal_of(new), revision=revision_of(new),
                      by=ch.actor)
            owner = self._owner(ch)
            if ch.actor in self.controllers and owner:
                self._figures(owner).pod_creations += self._started(owner)
            return
        was_terminating = old is not None and p.is_terminating(old)
        if ch.type == "DELETED":
            if not was_terminating and not p.is_terminating(new):
                self._delete_requested(ch)
            self.emit(t, "PodGone", pod=self._pod_label(ch))
            return
        if old is None:
            return
        if p.is_terminating(new) and not was_terminating:
            self._delete_requested(ch)
        if new.get("spec") is not old.get("spec") and _images(new) != _images(old):
            self._updated_in_place(ch, old)
        before, after = p.status_of(old), p.status_of(new)
        if after is before:
            return  # a write that left the status as it was (metadata, a finalizer): nothing below can differ
        phase, old_phase = after.get("phase"), before.get("phase")
        if phase == "Running" and old_phase != "Running":
            self.emit(t, "PodRunning", pod=self._pod_label(ch))
        ready, was_ready = p.is_ready(new), p.is_ready(old)
        if ready and not was_ready:
            self.emit(t, "PodReady", pod=self._pod_label(ch))
        elif was_ready and not ready:
            self.emit(t, "PodNotReady", pod=self._pod_label(ch))
        if phase == "Failed" and old_phase != "Failed":
            self.emit(t, "PodFailed", pod=self._pod_label(ch))
        now_waiting = _waiting(new)
        if not now_waiting:
            return  # most writes: nothing waits, so nothing started waiting (the old status is not read)
        waiting = _waiting(old)
        for container, reason in now_waiting.items():
            if waiting.get(container) != reason:
                self.emit(t, "ContainerWaiting", pod=self._pod_label(ch), container=container, reason=reason)

    def _owner(self, ch: Change) -> str:
        """The label of the set controlling the pod now ("" when none does)."""
        owner = (controller_of(ch.obj) or {}).get("name", "")
        return owner and self.label(ch.namespace, owner)

    def _delete_requested(self, ch: Change) -> None:
        self.emit(ch.at, "PodDeleteRequested", pod=self._pod_label(ch), revision=revision_of(ch.obj), by=ch.actor)
        owner = self._owner(ch)
        if ch.actor in self.controllers and owner:
            self._figures(owner).pod_deletions += self._started(owner)

    def _updated_in_place(self, ch: Change, old: Obj) -> None:
        """A pod's container images changed (an in-place update, api/in_place.py): same uid, new revision."""
        self.emit(ch.at, "PodUpdatedInPlace", pod=self._pod_label(ch), revision=revision_of(ch.obj),
                  fromRevision=revision_of(old), by=ch.actor)
        owner = self._owner(ch)
        if ch.actor in self.controllers and owner:
            self._figures(owner).in_place_updates += self._started(owner)

    def wrote_without_change(self, namespace: str, name: str, writes: int) -> None:
        """``writes`` controller writes the quiescence rule found for the set (sim/quiet.py)."""
        label = self.label(namespace, name)
        self._figures(label).writes_without_change += writes * self._started(label)

    # -- the summary -----------------------------------------------------------------------------------------

    def _figures(self, set_name: str) -> SetFigures:
        fig = self.figures.get(set_name)
        if fig is None:
            fig = self.figures[set_name] = SetFigures(start=0.0)
        return fig

    def _started(self, set_name: str) -> int:
        fig = self.figures.get(set_name)
        return int(fig is not None and fig.start is not None)

    @staticmethod
    def _restart(fig: SetFigures, t: float) -> None:
        """Measure from the first template change: counts and integrals restart there."""
        fig.start = t
        fig.completed = False
        fig.completed_at = None
        # The state from here on is what counts: the end-of-instant sample at ``t`` gives its first value. The last
        # sample belongs to before the change (steps earlier at this instant, a scale-down say, may have moved on).
        fig.max_unavailable = 0
        fig.unavailable_pod_seconds = 0.0
        fig.pod_creations = fig.pod_deletions = fig.forced_replacements = fig.writes_without_change = 0
        fig.last_sample = t
        fig.restarted = True

    def sample(self, t: float, sets: list[Obj], figures: SetFigureSource) -> None:
        """At the end of an instant: integrate unavailability since the last sample, and check completion."""
        for sts in sets:
            name = self.label(namespace_of(sts), name_of(sts))
            fig = self._figures(name)
            if fig.last_sample is not None:
                fig.unavailable_pod_seconds += fig.last_unavailable * (t - fig.last_sample)
            unavailable = figures.unavailable(sts, t)
            if fig.restarted:  # the first value that counts gets a step of its own, even if the count is unchanged
                fig.measured_step = len(fig.unavailable_steps)
                fig.unavailable_steps.append((round(t, 6), unavailable))
                fig.restarted = False
            elif not fig.unavailable_steps or fig.unavailable_steps[-1][1] != unavailable:
                fig.unavailable_steps.append((round(t, 6), unavailable))
            span = ordinal_range(sts)
            shape = (span.start, span.stop, () if isinstance(span, range) else span.reserved)
            if not fig.range_steps or fig.range_steps[-1][1:] != shape:
                fig.range_steps.append((round(t, 6), *shape))
            fig.last_unavailable = unavailable
            fig.last_sample = t
            fig.max_unavailable = max(fig.max_unavailable, unavailable)
            done = figures.complete(sts)
            if done and not fig.completed:
                fig.completed_at = t
            fig.completed = done

    def summary(self, end: float) -> dict[str, dict[str, Any]]:
        out = {}
        for name, fig in self.figures.items():
            start = fig.start or 0.0
            seconds = fig.unavailable_pod_seconds + fig.last_unavailable * (end - (fig.last_sample or end))
            out[name] = {
                "completed": fig.completed,
                "rolloutSeconds": _round(fig.completed_at - start) if fig.completed and fig.completed_at is not None
                else None,
                "maxUnavailableObserved": fig.max_unavailable,
                "unavailablePodSeconds": _round(seconds),
                "quorumLossSeconds": None,
                "leaderElections": None,
                "leaderlessSeconds": None,
                "podCreations": fig.pod_creations,
                "podDeletions": fig.pod_deletions,
                "forcedReplacements": fig.forced_replacements,
                "podInPlaceUpdates": fig.in_place_updates,
                "claimsLost": fig.claims_lost,
                "writesWithoutChange": fig.writes_without_change,
            }
        return out


    def samples(self) -> dict[str, dict[str, Any]]:
        """Per set, the sampled unavailable count as a step function over the whole run, and where the summary
        starts measuring: at ``measuredFrom`` seconds, from the step at index ``measuredFromStep`` on (the summary's
        ``maxUnavailableObserved`` is the largest count from there); and the ordinals in range over time,
        ``[t, start, stop)``, with a fourth item, the reserved ordinals in it, when there are any. What a timeline
        draws."""
        return {name: {"measuredFrom": fig.start or 0.0, "measuredFromStep": fig.measured_step,
                       "unavailable": [[t, n] for t, n in fig.unavailable_steps],
                       "ordinals": [[t, a, b, list(r)] if r else [t, a, b] for t, a, b, r in fig.range_steps]}
                for name, fig in self.figures.items()}


class SetFigureSource(Protocol):
    """Where a sample's two figures come from: counted over the pods (``PodLists``) or kept as counters
    (``tally.Tallies``)."""

    def unavailable(self, sts: Obj, now: float) -> int: ...

    def complete(self, sts: Obj) -> bool: ...


@dataclass(frozen=True, slots=True)
class PodLists:
    """The figures counted over each set's controlled pods, keyed as the summary is (``Recorder.label``)."""

    pods: Mapping[str, list[Obj]]
    label: Callable[[str, str], str]
    now: float

    def _pods(self, sts: Obj) -> list[Obj]:
        return self.pods.get(self.label(namespace_of(sts), name_of(sts)), [])

    def unavailable(self, sts: Obj, now: float) -> int:
        return unavailable_ordinals(sts, self._pods(sts), now)

    def complete(self, sts: Obj) -> bool:
        return rollout_complete(sts, self._pods(sts), self.now)


def _round(x: float) -> float:
    return round(x, 3)


def _images(pod: Obj) -> list[Any]:
    return [c.get("image") for c in (pod.get("spec") or {}).get("containers") or ()]


def _waiting(pod: Obj) -> dict[str, str]:
    return p.waiting_reasons(pod)


def _by_ordinal(sts: Obj, pods: list[Obj]) -> dict[int, Obj]:
    return {ordinal_of(pod): pod for pod in pods if name_of(pod) == pod_name(name_of(sts), ordinal_of(pod))}


def unavailable_ordinals(sts: Obj, pods: list[Obj], now: float) -> int:
    """Ordinals in range that are missing, terminating or not available (Ready for minReadySeconds)."""
    mrs = float(sts["spec"].get("minReadySeconds") or 0)
    by_ordinal = _by_ordinal(sts, pods)
    return sum(p.is_unavailable(by_ordinal.get(o), mrs, now) for o in ordinal_range(sts))


def rollout_complete(sts: Obj, pods: list[Obj], now: float) -> bool:
    """The summary's ``completed`` (spec/simulate.md): the controller's rule (``api/rollout.py``), judged once the
    controller has observed the set's latest generation, with the bar the contract sets: every ordinal in range
    Ready at the update revision (below a partition excepted), and no pod outside the range. The controller's
    ``RolloutComplete`` condition asks more (available: Ready for minReadySeconds), so with minReadySeconds set the
    condition follows the summary by that long; without it the two agree."""
    status = sts.get("status") or {}
    if status.get("observedGeneration") != sts["metadata"].get("generation") or not status.get("updateRevision"):
        return False
    span = ordinal_range(sts)
    by_ordinal = _by_ordinal(sts, pods)
    return is_rollout_complete(
        [by_ordinal.get(o) for o in span], outside_range=sum(1 for pod in pods if ordinal_of(pod) not in span),
        floor=partition_floor(sts["spec"].get("updateStrategy") or {}), update_revision=status["updateRevision"],
        min_ready_seconds=0.0, now=now)
