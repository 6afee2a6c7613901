"""In-place image updates in the rollout: ``rollingUpdate.podUpdatePolicy`` (OpenKruise's Advanced StatefulSet).

- ``ReCreate`` (the default): an outdated pod is deleted and created again, as upstream does.
- ``InPlaceIfPossible``: when the pod's revision and the update revision differ only in container images, the
  pod's images are updated in place (``InPlaceUpdatePod``): same uid, node, IP and volumes; the kubelet restarts
  the changed containers. Any other difference falls back to deleting the pod.
- ``InPlaceOnly``: as InPlaceIfPossible, but a pod that cannot be updated in place halts the rollout before any pod
  is touched, with a Progressing=False condition that names the pod and the first field that differs.

The update keeps the strategy's order and budget: the strategies call ``replace`` where they would delete, so an
in-place update is chosen highest ordinal first, from the partition up, and counts as unavailable against
maxUnavailable from the patch until its containers run again (api/in_place.py says how, and who sets the label).
"""

from __future__ import annotations

from rollwise.api.identity import REVISION_LABEL, revision_of
from rollwise.api.in_place import (
    IN_PLACE_ONLY,
    RECREATE_POLICY,
    images_only_difference,
    in_place_done,
    in_place_finished,
    in_place_patched,
    in_place_pending,
    pod_update_policy,
)
from rollwise.api.memo import IdentityMemo
from rollwise.api.meta import Obj, name_of
from rollwise.api.reasons import IN_PLACE_IMPOSSIBLE
from rollwise.api.revisions import template_of
from rollwise.api.strategies import ROLLING_KINDS
from rollwise.controllers.plan import InPlaceUpdatePod, UpdatePod
from rollwise.controllers.statefulset.context import Sync

__all__ = ["finish_in_place", "in_place_only_halt", "replace"]

_DIFFERENCES: IdentityMemo[tuple[dict[str, str], str]] = IdentityMemo()
"""The difference between two revisions, keyed on the revision objects: every outdated pod of a wave asks it."""


def _difference(sync: Sync, pod: Obj) -> tuple[dict[str, str], str]:
    """``({container: image}, "")`` when only images separate the pod's revision from the update revision, else
    ``({}, what differs)``."""
    old = sync.revisions.get(revision_of(pod))
    if old is None:
        return {}, f"its revision {revision_of(pod) or '(none)'} is not in the set's history"
    new = sync.update_revision
    images, path = _DIFFERENCES.cached((old, new), None,
                                       lambda: images_only_difference(template_of(old), template_of(new)))
    if not path and not images:
        return {}, "the revisions hold the same template"  # a collision-renamed twin: nothing to patch
    return images, path


def replace(sync: Sync, pod: Obj, reason: str) -> bool:
    """Bring an outdated pod to the update revision: in place where the policy and the revisions allow, else by
    deleting it (the creation phase makes it again at the update revision). Either is a voluntary disruption, so
    every PodDisruptionBudget that selects the pod must allow it; returns whether it was done (else the plan
    waits, naming the budget)."""
    policy = pod_update_policy(sync.strategy_block)
    if policy != RECREATE_POLICY:
        images, _ = _difference(sync, pod)
        if images:
            if not sync.admit(pod, "to be updated in place"):
                return False
            name = name_of(pod)
            patched = in_place_patched(pod, images, sync.update_name, REVISION_LABEL, at=sync.now)
            sync.actions.append(InPlaceUpdatePod(
                pod=patched, images=tuple(sorted(images.items())), revision=revision_of(pod),
                reason=f"{reason}; only images differ, updating in place ({policy})"))
            sync.in_place.add(name)
            return True
    return sync.disrupt(pod, reason)


def in_place_only_halt(sync: Sync) -> bool:
    """InPlaceOnly: True (and the set's condition says why) when some outdated pod the rollout would update, from
    the partition up, cannot be updated in place. Checked before the update touches any pod."""
    if sync.update_type not in ROLLING_KINDS or \
            pod_update_policy(sync.strategy_block) != IN_PLACE_ONLY:
        return False
    floor = sync.floor
    # Outdated pods from the partition up; quiet ones are among them (walk_down yields them), condemned ones are
    # scale-down's, not the update's.
    possible: set[str] = set()
    for index in sync.walk_down(floor):
        pod = sync.replicas[index]
        if pod is None or not sync.outdated(pod) or sync.terminating(pod) or revision_of(pod) in possible:
            continue
        images, path = _difference(sync, pod)
        if images:
            possible.add(revision_of(pod))
            continue
        name = name_of(pod)
        detail = f"{path} differs" if path.startswith("spec.") else path
        message = f"podUpdatePolicy InPlaceOnly: {name} cannot be updated in place to revision {sync.update_name}: " \
                  f"{detail}"
        sync.halted = message
        sync.halt_reason = IN_PLACE_IMPOSSIBLE
        sync.wait(name, f"to be updatable in place (InPlaceOnly): {detail}")
        if sync.old_condition_reason("Progressing") != IN_PLACE_IMPOSSIBLE:
            sync.event(IN_PLACE_IMPOSSIBLE, message, warning=True)
        return True
    return False


def finish_in_place(sync: Sync) -> None:
    """Clear the in-place record of every pod whose changed containers run their new image (api/in_place.py): from
    then on the pod's own Ready condition says whether it serves. A pod carrying a record is never quiet."""
    for pod in sync.loud_pods():
        if in_place_pending(pod) and not sync.terminating(pod) and in_place_done(pod):
            sync.actions.append(UpdatePod(pod=in_place_finished(pod),
                                          reason=f"{name_of(pod)} runs its new images: in-place update done"))
