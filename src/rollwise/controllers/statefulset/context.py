"""The per-reconcile working state: the set's slots by ordinal, its condemned pods, and the plan being built.
``Sync`` lives for one ``reconcile`` call (a builder, like upstream's in-memory ``replicas[]`` and ``status``)."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rollwise.api import lifecycle
from rollwise.api import predicates as p
from rollwise.api.features import FeatureGates
from rollwise.api.identity import REVISION_LABEL, pod_name, revision_of
from rollwise.api.lifecycle import PreDeleteHook, hook_held, hook_wait, is_preparing_delete, pre_delete_hook
from rollwise.api.meta import Obj, name_of
from rollwise.api.ordinals import OrdinalSpan, position_in
from rollwise.api.strategies import ENFORCED_ROLLING_UPDATE, ROLLING_UPDATE
from rollwise.controllers.census import Census, loud_census, quiet_at, quiet_context
from rollwise.controllers.plan import (
    Action,
    Blocked,
    ClearPreparingDelete,
    DeletePod,
    EmitEvent,
    MarkPreparingDelete,
    MetricSample,
)
from rollwise.controllers.statefulset.disruption import DisruptionGuard
from rollwise.controllers.statefulset.limits import limits_of

__all__ = ["Sync"]


@dataclass(slots=True, kw_only=True)
class Sync:
    """One ``reconcile`` call's working state, dropped after it (upstream's ``replicas``/``condemned`` in
    ``stateful_set_control.go`` ``updateStatefulSet``): phases read the slots and append actions, waits and events,
    which ``reconcile`` turns into one ``Plan``; ``floor``, ``budget`` etc. are resolved once (``__post_init__``)."""

    sts: Obj
    now: float
    gates: FeatureGates
    span: OrdinalSpan
    """The wanted ordinals (``api.identity.ordinal_range``: ``reserveOrdinals`` skipped)."""
    replicas: Sequence[Obj | None]
    """Index i holds the pod for ordinal ``span[i]``, or None while it is missing (upstream's placeholder)."""
    condemned: list[Obj]
    """Pods with an ordinal outside the range, highest ordinal first (reference §5.3)."""
    current_revision: Obj
    update_revision: Obj
    collision_count: int
    claims: MutableMapping[str, Obj]
    """The namespace's claims by name; what this plan creates or repairs is written here (over the view's)."""
    census: Census = None  # type: ignore[assignment]  # set in __post_init__ when not given
    """Which in-range pods are quiet (census.py): phases walk ``census.loud`` and count the rest. Not given: none
    is quiet, and every phase walks every pod."""
    present: list[int] = None  # type: ignore[assignment]  # set in __post_init__ when not given
    """In-range indexes holding a pod that is not quiet, ascending (the other loud indexes are missing)."""
    actions: list[Action] = field(default_factory=list)
    blocked: list[Blocked] = field(default_factory=list)
    deleted: set[str] = field(default_factory=set)
    """Pods this plan deletes: every later step treats them as terminating."""
    update_type: str = ROLLING_UPDATE
    """The strategy in effect: ``spec.updateStrategy.type``, or RollingUpdate when its feature gate is off."""
    metrics: list[MetricSample] = field(default_factory=list)
    progress_events: list[EmitEvent] = field(default_factory=list)
    """Events a strategy raises about the rollout itself (ForcedReplacement, SafetyHalt, RecreateStarted, ...)."""
    wake_times: list[float] = field(default_factory=list)
    """Instants at which time alone changes a decision (a timeout, a deadline): the plan asks to be woken then."""
    broken_below: str | None = None
    """Under EnforcedRollingUpdate and OrderedReady: the first outdated unhealthy pod creation went past."""
    halted: str | None = None
    """Set by a strategy that stopped on purpose (EnforcedRollingUpdate's safety halt): the message to show."""
    halt_reason: str = "SafetyHalt"
    """The Progressing condition's reason while ``halted`` (InPlaceOnly's halt has its own)."""
    retried: dict[str, str] = field(default_factory=dict)
    """Pods podProgressTimeoutSeconds retries (no progress: progress.py), with what a wait on one adds to its cause."""
    unpaused_progressing: dict[str, Any] | None = None
    """While paused: the Progressing condition the set would have without the pause (Ready follows it once the
    rollout is complete: a pause that holds nothing back does not make a set unready)."""
    guard: DisruptionGuard | None = None
    """The namespace's PodDisruptionBudgets (disruption.py); None: there are none."""
    create_at_current: bool = False
    """A paused Recreate set that has deleted nothing yet creates new pods at the current revision (pause.py)."""
    revisions: Mapping[str, Obj] = field(default_factory=dict)
    """The set's ControllerRevisions by name: what an in-place update compares a pod's template with."""
    in_place: set[str] = field(default_factory=set)
    """Pods this plan updates in place: every later step treats them as unavailable (their containers restart)."""
    marked: set[str] = field(default_factory=set)
    """Pods marked PreparingDelete (pre-delete hooks, hooks.py), by the view or by this plan: they are going, so
    every step treats them as terminating (unavailable, never acted on again) until they are deleted."""
    hook_halted: str | None = None
    """Set when a marked pod outstayed the hook's ``timeoutSeconds``: no voluntary deletion starts (hooks.py)."""
    _labels: tuple[tuple[str, str], ...] = ()
    _health: dict[int, tuple[bool, bool]] = field(default_factory=dict)
    """Per pod object (by identity): (running and ready, available at ``now``) — computed once per reconcile,
    since every phase asks again and a 1,000-pod set asks thousands of times."""
    _unavailable: tuple[int, int] = (-1, 0)
    """``unavailable_count`` as of ``len(deleted)`` (deletions only ever add)."""
    # Derived once per reconcile from the fields above (read thousands of times on large sets):
    spec: dict[str, Any] = field(init=False)
    monotonic: bool = field(init=False)
    """OrderedReady processes one ordinal at a time and stops at the first unhealthy one (reference §5.3)."""
    strategy_block: dict[str, Any] | None = field(init=False)
    """``rollingUpdate`` or ``enforcedRollingUpdate``, whichever the effective type reads (None if absent)."""
    floor: int = field(init=False)
    """The partition as an index (``api/strategies.partition_floor``): the lowest index the update touches."""
    update_name: str = field(init=False)
    current_name: str = field(init=False)
    min_ready_seconds: float = field(init=False)
    budget: int = field(init=False)
    """The resolved maxUnavailable (reference §2, KEP-961): 1 when the gate is off or the strategy has no block."""
    paused: bool = field(init=False)
    """``spec.paused`` (pause.py): no new rollout step starts."""
    hook: PreDeleteHook | None = field(init=False)
    """``spec.lifecycle.preDelete`` (api/lifecycle.py), or None."""

    def __post_init__(self) -> None:
        self.spec = self.sts["spec"]
        self.monotonic = self.spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        self.update_name = name_of(self.update_revision)
        self.current_name = name_of(self.current_revision)
        self.min_ready_seconds = float(self.spec.get("minReadySeconds") or 0)
        self.paused = self.spec.get("paused") is True
        limits = limits_of(self.sts, self.gates, self.update_type)
        self.strategy_block, self.budget, self.floor = limits.block, limits.budget, limits.partition
        if self.census is None:
            ctx = quiet_context(self.sts, update_revision=self.update_name, current_revision=self.current_name)
            self.census = loud_census(ctx, ())
        if self.present is None:
            self.present = [i for i in self.census.loud if self.replicas[i] is not None]
        self.hook = pre_delete_hook(self.sts)
        # A marked pod is never quiet (census.is_quiet): the loud ones and the condemned are all there is to see.
        self.marked = {name_of(pod) for pod in self.unquiet_pods() if is_preparing_delete(pod)}

    @property
    def tolerates_broken_outdated(self) -> bool:
        """EnforcedRollingUpdate (seed 003): an outdated pod that is not healthy neither blocks ordered creation and
        scale-down nor the update; it is replaced whatever its state."""
        return self.update_type == ENFORCED_ROLLING_UPDATE

    def labels(self) -> tuple[tuple[str, str], ...]:
        """Metric labels: namespace, name and pod management policy (KEP-961)."""
        if not self._labels:
            self._labels = (("namespace", self.sts["metadata"].get("namespace", "default")),
                            ("statefulset", name_of(self.sts)),
                            ("pod_management_policy", self.spec.get("podManagementPolicy", "OrderedReady")))
        return self._labels

    def metric(self, name: str, value: float, *, kind: str = "gauge") -> None:
        self.metrics.append(MetricSample(name=name, value=value, kind=kind, labels=self.labels()))

    def requeue_at(self, t: float) -> None:
        self.wake_times.append(t)

    def old_condition_reason(self, ctype: str) -> str | None:
        """The reason of the set's condition of that type as last written (how it knows it announced a phase)."""
        for c in (self.sts.get("status") or {}).get("conditions") or ():
            if c.get("type") == ctype:
                return c.get("reason")  # type: ignore[no-any-return]
        return None

    def event(self, reason: str, message: str, *, warning: bool = False) -> None:
        self.progress_events.append(EmitEvent(event_type="Warning" if warning else "Normal", event_reason=reason,
                                              message=message, reason=message))

    # -- predicates that also see this plan's own deletions --------------------------------------------------

    def health(self, pod: Obj) -> tuple[bool, bool]:
        """(running and ready, available) for this reconcile's ``now``."""
        if self.in_place and pod["metadata"]["name"] in self.in_place:
            return (False, False)  # patched by this plan: its containers are about to restart (api/in_place.py)
        key = id(pod)
        found = self._health.get(key)
        if found is None:
            ready = p.is_running_and_ready(pod)
            found = (ready, ready and p.is_available(pod, self.min_ready_seconds, self.now))
            self._health[key] = found
        return found

    def terminating(self, pod: Obj) -> bool:
        meta = pod["metadata"]
        return meta.get("deletionTimestamp") is not None or (bool(self.deleted) and meta["name"] in self.deleted) \
            or (bool(self.marked) and meta["name"] in self.marked)

    def deleting(self, pod: Obj) -> bool:
        """Terminating for real (a deletion requested, by this plan or before): a pod only marked PreparingDelete is
        not, and the status counts it as the pod it still is."""
        meta = pod["metadata"]
        return meta.get("deletionTimestamp") is not None or (bool(self.deleted) and meta["name"] in self.deleted)

    def unavailable(self, pod: Obj | None) -> bool:
        """Missing, terminating (or being deleted now), or not available for minReadySeconds."""
        return pod is None or self.terminating(pod) or not self.health(pod)[1]

    def available(self, pod: Obj | None) -> bool:
        return not self.unavailable(pod)

    def outdated(self, pod: Obj) -> bool:
        """At any revision other than the update revision, or with no revision label (reference §5.8)."""
        labels = pod["metadata"].get("labels")
        return (labels.get(REVISION_LABEL, "") if labels else "") != self.update_name

    def ordinal(self, index: int) -> int:
        return self.span[index]

    def position(self, ordinal: int) -> int:
        """The ordinal's index among the wanted ones (where it would be, if it is not one): what a partition and
        ``status.currentReplicas`` count (api/ordinals.py)."""
        return position_in(self.span, ordinal)

    # -- recording -----------------------------------------------------------------------------------------

    def delete(self, pod: Obj, reason: str) -> None:
        meta = pod["metadata"]
        self.actions.append(
            DeletePod(name=meta["name"], namespace=meta.get("namespace", "default"), uid=meta.get("uid", ""),
                      revision=revision_of(pod), reason=reason)
        )
        self.deleted.add(meta["name"])

    def disrupt(self, pod: Obj, reason: str) -> bool:
        """A voluntary deletion (an update step, Recreate, a scale-in) once every PodDisruptionBudget on the pod
        allows it, else a wait naming the budget; a pod its hook holds is marked PreparingDelete (hooks.py), and a
        hook the template gives no pod is a Warning with each deletion. Returns whether the step is taken."""
        if self.hook_halted is not None:
            self.wait(pod, f"to be deleted: the rollout is halted ({self.hook_halted})")
            return False
        if not self.admit(pod, "to be deleted"):
            return False
        held = hook_held(self.hook, pod)
        if held:
            meta = pod["metadata"]
            self.actions.append(MarkPreparingDelete(
                name=meta["name"], namespace=meta.get("namespace", "default"), uid=meta.get("uid", ""), at=self.now,
                hook=", ".join(held), reason=f"{reason}; its pre-delete hook holds it until released"))
            self.marked.add(meta["name"])
            self.wait(pod, hook_wait(self.hook, pod, since=self.now))
            return True
        if self.hook is not None and (unused := lifecycle.hook_on_no_pod(self.sts)) is not None:
            self.event("PreDeleteHookUnused", f"{name_of(pod)} deleted without waiting: {unused}", warning=True)
        self.delete(pod, reason)
        return True

    def going_cause(self, pod: Obj, default: str) -> str | None:
        """Why a terminating pod holds things up: ``default``, or None while it is only marked PreparingDelete (the
        wait on its hook is recorded already, by hooks.py or ``disrupt``)."""
        name = pod["metadata"]["name"]
        if self.marked and name in self.marked and name not in self.deleted and pod["metadata"].get(
                "deletionTimestamp") is None:
            return None
        return default

    def unmark(self, pod: Obj) -> None:
        """The pod is no longer going (hooks.py clears its mark): every later step sees it as it is."""
        meta = pod["metadata"]
        self.actions.append(ClearPreparingDelete(name=meta["name"], namespace=meta.get("namespace", "default"),
                                                 uid=meta.get("uid", ""), reason="the controller no longer deletes it"))
        self.marked.discard(meta["name"])
        self._unavailable = (-1, 0)

    def admit(self, pod: Obj, what: str) -> bool:
        """Whether every PodDisruptionBudget that selects the pod allows one more disruption now (spending it);
        else a wait, ``what`` first (e.g. "to be deleted"), naming the budget."""
        if self.guard is not None:
            refusal = self.guard.admit(pod)
            if refusal is not None:
                self.wait(pod, f"{what}: {refusal}")
                return False
        return True

    def wait(self, pod: Obj | str | None, cause: str) -> None:
        name = pod if isinstance(pod, str) else ("" if pod is None else name_of(pod))
        self.blocked.append(Blocked(pod=name, cause=cause))

    def wait_for_unavailable(self, index: int, pod: Obj | None, note: str = "") -> None:
        """Why the pod at ``index`` holds things up (``note``: what else on-call should know, after the cause)."""
        name = pod_name(name_of(self.sts), self.ordinal(index)) if pod is None else name_of(pod)
        if pod is not None and name in self.marked and name not in self.deleted:
            return  # waiting on its pre-delete hook: hooks.py or ``disrupt`` said so already
        if pod is not None and name in self.deleted:
            cause = "terminating"
        elif pod is not None and name in self.in_place:
            cause = "containers restarting for an in-place update"  # patched by this plan; the view predates it
        else:
            cause = p.unavailable_cause(pod, self.min_ready_seconds, self.now)
        note += self.retried.get(name, "")  # a podProgressTimeoutSeconds retry: how often, and the next try's time
        self.wait(name, f"to become available: {cause}{note}" if cause != "terminating" else "to finish terminating")

    def pods(self) -> list[Obj]:
        """Every existing pod the set owns: in range, then condemned."""
        return [x for x in self.replicas if x is not None] + self.condemned

    # -- the census: what a phase must walk, and what it may count ----------------------------------------------

    def quiet_deleted(self) -> list[int]:
        """Indexes of quiet pods this plan deletes or marks PreparingDelete (going from then on, no longer quiet)."""
        if not self.deleted and not self.marked:
            return []
        going = self.deleted | self.marked if self.marked else self.deleted
        found = (quiet_at(self.census, name) for name in going)
        return sorted(i for i in found if i is not None)

    def quiet_marked(self) -> list[int]:
        """Indexes of quiet pods this plan marks PreparingDelete and does not delete: still running, as they were."""
        if not self.marked:
            return []
        found = (quiet_at(self.census, name) for name in self.marked if name not in self.deleted)
        return sorted(i for i in found if i is not None)

    def quiet_acted(self) -> list[int]:
        """Indexes of quiet pods this plan deletes or updates in place (no longer quiet from then on)."""
        if not self.in_place:
            return self.quiet_deleted()
        found = (quiet_at(self.census, name) for name in self.deleted | self.in_place | self.marked)
        return sorted(i for i in found if i is not None)

    def quiet_in_place(self) -> int:
        """Quiet pods this plan updates in place (the census counts them available; they no longer are)."""
        return sum(1 for name in self.in_place if quiet_at(self.census, name) is not None)

    def touched(self) -> Sequence[int]:
        """In-range indexes a phase must look at, ascending: the loud ones and the quiet pods deleted or updated in
        place so far. Every other index holds a quiet pod that no phase acts on, waits for or stops at."""
        if not self.deleted and not self.in_place and not self.marked:  # the common case (every phase asks)
            return self.census.loud
        deleted = self.quiet_acted()
        if not deleted:
            return self.census.loud
        return sorted({*self.census.loud, *deleted})

    def pod_indexes(self) -> Sequence[int]:
        """The touched indexes that hold a pod, ascending (``touched`` without the missing ordinals)."""
        if not self.deleted and not self.in_place and not self.marked:
            return self.present
        deleted = self.quiet_acted()
        return sorted({*self.present, *deleted}) if deleted else self.present

    def unquiet_pods(self) -> list[Obj]:
        """The pods the census does not count: loud in-range pods, then the condemned (quiet deleted ones are
        counted by the census, so a caller adding the census' counts must not walk them again)."""
        return self._at(self.present) + self.condemned

    def loud_pods(self) -> list[Obj]:
        """The pods a phase must look at one by one: touched in-range pods, then the condemned."""
        return self._at(self.pod_indexes()) + self.condemned

    def unavailable_count(self) -> int:
        """In-range ordinals that are missing, terminating (or deleted by this plan) or not available.

        Kept until this plan deletes another pod: nothing else a reconcile does moves it (the slots, the census and
        ``now`` are fixed for the call), and the update's budget and the metrics each ask."""
        seen, count = self._unavailable
        acted = len(self.deleted) + len(self.in_place) + len(self.marked)
        if seen == acted:
            return count
        missing = len(self.census.loud) - len(self.present)
        count = missing + sum(1 for i in self.pod_indexes() if self.unavailable(self.replicas[i]))
        self._unavailable = (acted, count)
        return count

    def walk_down(self, floor: int, *, quiet: Callable[[], bool] = lambda: True) -> Iterator[int]:
        """Indexes from the top down to ``floor`` an update may act on: the touched ones and the quiet outdated ones
        (lazily, so an update that stops after its budget does not walk the rest). Skipped: quiet pods at the update
        revision, which no update step acts on or waits for; and quiet outdated ones whenever ``quiet()`` says the
        caller could not act on one now (it is asked before each step)."""
        touched, outdated = self.touched(), self.census.quiet_outdated
        i, j = len(touched) - 1, len(outdated) - 1
        while True:
            a = touched[i] if i >= 0 else -1
            b = outdated[j] if j >= 0 and quiet() else -1
            index = max(a, b)
            if index < floor or index < 0:
                return
            if a == index:
                i -= 1
            if b == index:
                j -= 1
            yield index

    def _at(self, indexes: Sequence[int]) -> list[Obj]:
        return [pod for i in indexes if (pod := self.replicas[i]) is not None]

    def _quiet(self, index: int) -> Obj:
        pod = self.census.slots[index]
        assert pod is not None, "a quiet index holds a pod"
        return pod

    def quiet_outdated_alive(self, floor: int = 0) -> int:
        """Quiet outdated pods at index ``floor`` or above that this plan has not deleted."""
        outdated = self.census.quiet_outdated
        above = len(outdated) - bisect.bisect_left(outdated, floor)
        return above - sum(1 for i in self.quiet_deleted() if i >= floor and self.outdated(self._quiet(i)))

    def quiet_updated_alive(self) -> int:
        """Quiet pods at the update revision that this plan has not deleted."""
        return self.census.quiet_updated - sum(1 for i in self.quiet_deleted()
                                               if not self.outdated(self._quiet(i)))
