"""EnforcedRollingUpdate (seed 003): the rolling order of RollingUpdate, but an outdated pod is replaced whatever
its state, so a broken rollout recovers once a fixed template is applied.

- Order: highest ordinal first, down to the partition, up to ``maxUnavailable`` ordinals in flight (missing,
  terminating, or updated but not yet available) — seed 003's ``wait_for_predecessors_ready``.
- An outdated pod that is not available is deleted anyway (``ForcedReplacement`` event). Under ``Parallel`` that
  costs no budget (it is unavailable already, as in the 1.37 RollingUpdate); under ``OrderedReady`` it does, to
  keep the seed's one-after-another order.
- Creation and scale-down do not wait on outdated unhealthy pods (seed 003, implementation changes 1 and 2);
  that is ``Sync.tolerates_broken_outdated``.
- Safety halt (seed 003): when the highest ordinal in range already runs the update revision and is failing
  (phase Failed or a container Dead: crash-looping, image or config errors), lower ordinals are not touched. A
  second broken template therefore replaces one pod and stops there.
"""

from __future__ import annotations

import bisect

from rollwise.api import predicates as p
from rollwise.api.meta import name_of
from rollwise.controllers.statefulset.context import Sync
from rollwise.controllers.statefulset.in_place import replace
from rollwise.controllers.statefulset.replicas import replacement_is_outdated
from rollwise.controllers.statefulset.strategies.progress_timeout import replace_timed_out_pods

__all__ = ["EnforcedRollingUpdate"]


def _floor(sync: Sync) -> int:
    return sync.floor


class EnforcedRollingUpdate:

    def prepare(self, sync: Sync) -> bool:
        # The halt is judged before creation runs: under OrderedReady the failing top pod blocks creation anyway,
        # and the condition must say why.
        if sync.replicas:
            self._safety_halt(sync, _floor(sync))
        if sync.halted is None:
            replace_timed_out_pods(sync)
        return False

    def update(self, sync: Sync) -> None:
        floor = _floor(sync)
        n = len(sync.replicas)
        if n == 0 or sync.halted is not None:
            return
        budget = sync.budget
        # Availability budget, as KEP-961 counts it: every unavailable ordinal in range.
        unavailable = sync.unavailable_count()
        # What is in flight besides broken outdated pods (their replacement costs no availability). An ordinal
        # whose creation waits for a broken outdated pod below it to be replaced (OrderedReady, ``broken_below``)
        # is not in flight: counting it would make the replacement wait for the creation that waits for it.
        # Quiet pods (census.py) are neither missing, terminating nor unavailable: only touched ones count.
        held = _held_for_replacement(sync)
        in_flight = 0
        for i in sync.touched():
            pod = sync.replicas[i]
            if (pod is None and i not in held) or (pod is not None and sync.terminating(pod)) \
                    or (pod is not None and sync.unavailable(pod) and (not sync.outdated(pod) or i < floor)):
                in_flight += 1

        def healthy_replaceable() -> bool:
            """Whether a healthy outdated pod could be deleted now: else the walk skips the quiet ones (a healthy
            pod past the budget is passed over, and under OrderedReady nothing after the budget is acted on)."""
            return unavailable < budget and not (sync.monotonic and in_flight >= budget)

        for index in sync.walk_down(floor, quiet=healthy_replaceable):
            pod = sync.replicas[index]
            if pod is None or sync.terminating(pod) or not sync.outdated(pod) or replacement_is_outdated(sync, pod):
                continue
            broken = not sync.available(pod)
            if sync.monotonic and in_flight >= budget:
                break  # OrderedReady: one after another, in order
            if not broken and unavailable >= budget:
                # No budget for a healthy pod; a broken outdated pod further down still costs nothing to replace.
                continue
            name = name_of(pod)
            if broken:
                cause = p.unavailable_cause(pod, sync.min_ready_seconds, sync.now)
                if not replace(sync, pod, f"EnforcedRollingUpdate: {name} is outdated and not available ({cause})"):
                    break
                sync.event("ForcedReplacement", f"Forcibly replacing pod {name} ({cause}) with revision "
                                                f"{sync.update_name}", warning=True)
                sync.metric("statefulset_forced_pod_replacements_total", 1, kind="counter")
            else:
                if not replace(sync, pod, f"EnforcedRollingUpdate: {name} runs an older revision"):
                    break
                unavailable += 1
            in_flight += 1
        if sync.quiet_outdated_alive(floor) or any(
                sync.outdated(pod) and not sync.terminating(pod)
                for i in sync.pod_indexes() if i >= floor and (pod := sync.replicas[i]) is not None):
            for index in sync.touched():
                pod = sync.replicas[index]
                if pod is None or sync.terminating(pod) or (sync.unavailable(pod) and not sync.outdated(pod)):
                    sync.wait_for_unavailable(index, pod)

    @staticmethod
    def _safety_halt(sync: Sync, floor: int) -> bool:
        top = sync.replicas[-1]
        if top is None or sync.outdated(top) or sync.terminating(top) or not p.is_failing(top):
            return False
        # Outdated pods from the partition up, below the top: quiet ones counted, the others looked at.
        quiet = sync.census.quiet_outdated
        lower_outdated = bisect.bisect_left(quiet, len(sync.replicas) - 1) - bisect.bisect_left(quiet, floor) + sum(
            1 for i in sync.present if floor <= i < len(sync.replicas) - 1
            and (pod := sync.replicas[i]) is not None and sync.outdated(pod))
        if not lower_outdated:
            return False
        cause = p.unavailable_cause(top, sync.min_ready_seconds, sync.now)
        message = (f"safety halt: {name_of(top)}, the first pod at revision {sync.update_name}, is failing "
                   f"({cause}); {lower_outdated} lower ordinals are left at their revision")
        sync.halted = message
        sync.wait(name_of(top), f"to become Ready ({cause}); safety halt keeps lower ordinals untouched")
        if sync.old_condition_reason("Progressing") != "SafetyHalt":
            sync.event("SafetyHalt", message, warning=True)
            sync.metric("statefulset_safety_halt_total", 1, kind="counter")
        return True


def _held_for_replacement(sync: Sync) -> set[int]:
    """Indexes of missing ordinals above the broken outdated pod that ordered creation went past (replicas.py)."""
    if sync.broken_below is None:
        return set()
    first = next((i for i in sync.present if name_of(sync.replicas[i] or {}) == sync.broken_below), None)
    if first is None:
        return set()
    return {i for i in sync.census.loud if i > first and sync.replicas[i] is None}
