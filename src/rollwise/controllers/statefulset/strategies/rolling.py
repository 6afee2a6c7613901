"""RollingUpdate: highest ordinal first, with partition and maxUnavailable (reference §5.8, KEP-961).

Gate MaxUnavailableStatefulSet off: the legacy algorithm, one pod at a time (variant A). Gate on: the budget
algorithm as fixed upstream in 1.37 (#137666, variant C) — under Parallel, outdated pods that are already
unavailable are replaced without spending budget (so a broken first revision heals once the template is fixed,
bug #137409), then the remaining budget goes to healthy outdated pods; under OrderedReady the KEP's choice 1:
delete up to the budget, and let ordered creation bring them back one by one.
"""

from __future__ import annotations

from rollwise.controllers.statefulset.context import Sync
from rollwise.controllers.statefulset.in_place import replace
from rollwise.controllers.statefulset.replicas import replacement_is_outdated
from rollwise.controllers.statefulset.strategies.progress_timeout import replace_timed_out_pods

__all__ = ["RollingUpdate", "update_floor"]


def update_floor(sync: Sync) -> int:
    """The lowest index the update touches: the partition (relative to ordinals.start), 0 without a block."""
    return sync.floor


class RollingUpdate:

    def prepare(self, sync: Sync) -> bool:
        replace_timed_out_pods(sync)
        return False

    def update(self, sync: Sync) -> None:
        if sync.gates.max_unavailable:
            with_budget(sync, floor=update_floor(sync), budget=sync.budget)
        else:
            legacy(sync, floor=update_floor(sync))


def legacy(sync: Sync, *, floor: int) -> None:
    """Variant A: delete the highest outdated pod; stop at the first pod above it that is not available."""
    for index in sync.walk_down(floor):
        pod = sync.replicas[index]
        if pod is not None and sync.outdated(pod) and not sync.terminating(pod) \
                and not replacement_is_outdated(sync, pod):
            replace(sync, pod, f"rolling update: {pod['metadata']['name']} runs an older revision")
            return  # deleted, or held by a PodDisruptionBudget (the wait says which)
        if sync.unavailable(pod):
            sync.wait_for_unavailable(index, pod)
            return


def with_budget(sync: Sync, *, floor: int, budget: int) -> None:
    """Variant C (1.37+, #137666); the OrderedReady branch is variant B, unchanged upstream.

    Every in-range ordinal that is missing, terminating or not available counts against the budget, below the
    partition too; condemned pods do not. Quiet pods are available and, at the update revision, never replaced, so
    the walks skip them (census.py).
    """
    unavailable = sync.unavailable_count()
    if not sync.monotonic:
        # Phase 1: outdated pods that are already unavailable: replacing them costs no availability.
        for index in reversed(sync.touched()):
            if index < floor:
                break
            pod = sync.replicas[index]
            if pod is not None and sync.outdated(pod) and not sync.terminating(pod) and not sync.available(pod) \
                    and not replacement_is_outdated(sync, pod):
                replace(sync, pod, f"rolling update: {pod['metadata']['name']} is outdated and already unavailable")
    spend = budget - unavailable
    for index in sync.walk_down(floor):
        if spend <= 0:
            break
        pod = sync.replicas[index]
        if pod is None or not sync.outdated(pod) or sync.terminating(pod) or replacement_is_outdated(sync, pod):
            continue
        if not sync.monotonic and not sync.available(pod):
            continue  # handled by phase 1
        if not replace(sync, pod, f"rolling update: {pod['metadata']['name']} runs an older revision"):
            break  # a PodDisruptionBudget allows no more: the next step waits for it, in order
        spend -= 1
    still_outdated = sync.quiet_outdated_alive(floor) or any(
        pod is not None and sync.outdated(pod) and not sync.terminating(pod)
        for i in sync.pod_indexes() if i >= floor and (pod := sync.replicas[i]) is not None)
    if still_outdated:
        for index in sync.touched():
            if sync.unavailable(sync.replicas[index]):
                sync.wait_for_unavailable(index, sync.replicas[index])
