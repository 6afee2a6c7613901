"""Recreate (seed 000, KEP-3541 as it stands): delete every old pod, wait until all are gone, then create.

The four phases of the seed's algorithm, decided afresh from the pods on every reconcile, so a controller
restarted in any phase resumes correctly:

- NeedsDeletion: some old-revision pod is not terminating — delete all of them at once, in range or not, whatever
  their state (that is what makes a stuck rollout recover);
- WaitingTermination: old-revision pods are still terminating — do nothing, so old and new never run together;
- ReadyForCreation: no old pod is left — the ordinary creation phase makes the missing pods at the update revision,
  in podManagementPolicy order (OrderedReady: ascending, each after its predecessor is Running and Ready);
- Complete: every ordinal runs the update revision.

Claims are never deleted (only pods are); a change of the strategy type alone starts nothing, since revisions
hash the template only.
"""

from __future__ import annotations

from rollwise.api.meta import name_of
from rollwise.controllers.statefulset.context import Sync

__all__ = ["Recreate", "recreate_phase"]

NEEDS_DELETION = "NeedsDeletion"
WAITING_TERMINATION = "WaitingTermination"
READY_FOR_CREATION = "ReadyForCreation"
COMPLETE = "Complete"


def recreate_phase(sync: Sync) -> str:
    """seed 000 determine_phase(): from the revision labels and deletion timestamps of all the set's pods."""
    # Quiet pods (census.py) are counted, not walked: outdated or not, alive unless this plan deletes them.
    alive_outdated = sync.quiet_outdated_alive()
    old_active = alive_outdated
    old_terminating = len(sync.census.quiet_outdated) - alive_outdated
    new = sync.quiet_updated_alive()
    for pod in sync.unquiet_pods():
        if sync.outdated(pod):
            if sync.terminating(pod):
                old_terminating += 1
            else:
                old_active += 1
        elif not sync.terminating(pod):
            new += 1  # seed 000: a terminating new-revision pod is ignored (it will be recreated)
    if old_active:
        return NEEDS_DELETION
    if old_terminating:
        return WAITING_TERMINATION
    if new < len(sync.replicas):
        return READY_FOR_CREATION
    return COMPLETE


class Recreate:

    def prepare(self, sync: Sync) -> bool:
        phase = recreate_phase(sync)
        if phase == NEEDS_DELETION:
            old = [pod for pod in sync.pods() if sync.outdated(pod) and not sync.terminating(pod)]  # once per rollout
            if sync.old_condition_reason("Progressing") != "RecreateInProgress":
                sync.event("RecreateStarted", f"Deleting all {len(old)} pods for Recreate update to revision "
                                              f"{sync.update_name}")
            for pod in sorted(old, key=name_of):
                # KEP-3541: orphans with ordinal >= replicas are deleted too, and broken pods like any other.
                if not sync.disrupt(pod, f"Recreate: {name_of(pod)} runs an older revision"):
                    break  # a PodDisruptionBudget holds the rest: old pods go as it allows, new ones wait
            sync.wait("", f"Recreate: deleting {len(old)} old-revision pods before creating any new one")
            return True
        if phase == WAITING_TERMINATION:
            left = sorted(name_of(pod) for pod in sync.pods() if sync.outdated(pod))  # short: all terminating
            sync.wait("", f"Recreate: waiting for {len(left)} old-revision pods to terminate: {_names(left)}")
            return True
        if phase == READY_FOR_CREATION and not any(pod is not None for pod in sync.replicas) and (
            sync.old_condition_reason("Progressing") == "RecreateInProgress"
        ):
            sync.event("RecreateCreating", f"All old-revision pods are gone; creating {len(sync.replicas)} pods at "
                                           f"revision {sync.update_name}")
        return False

    def update(self, sync: Sync) -> None:
        return  # creation happens in the ordinary creation phase, once prepare() lets it run


def _names(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
