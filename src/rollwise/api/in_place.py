"""In-place image updates (OpenKruise's Advanced StatefulSet ``podUpdatePolicy``): the pure rules.

OpenKruise decides a pod can be updated in place by comparing the pod's revision with the update revision: when the
only difference is ``spec.containers[*].image``, it patches the pod's images (a pod's image is mutable) instead of
deleting it, so the pod keeps its uid, node, IP and volumes; the kubelet restarts the changed containers. It sets
the revision label in the same patch and keeps the pod out of service until the new containers run through a
readiness gate (``InPlaceUpdateReady``) that it turns False with the patch and True once every changed container's
``imageID`` differs from the one recorded before the patch.

rollwise keeps that shape without a readiness gate (``spec.readinessGates`` is immutable, so pods created before the
policy was chosen could never take one): the patch sets the images, the revision label and the annotation
``IN_PLACE_ANNOTATION`` recording each changed container's ``imageID`` before the update. While the annotation is
on the pod, ``predicates.is_running_and_ready`` says no, so the one availability rule (budget, status counters,
summary figures, invariants) counts the pod unavailable from the instant of the patch — before the kubelet has even
noticed the new image and while the pod's own Ready condition is still the old container's. Once every changed
container runs a new image (``in_place_done``), the controller removes the annotation; from then on the pod's Ready
condition (the new container's readiness) decides, as for any pod.

Why the label moves with the patch (OpenKruise's choice) rather than once the new image runs: the label says which
revision the pod's spec is, and after the patch the spec *is* the update revision's. Counting it as updated at once
is what upstream's counters already do for a replacement pod (``updatedReplicas`` counts a pod at the update
revision whether or not it is Ready), so ``updatedReplicas``, ``currentReplicas`` and the rollout-complete rule need
no special case; and a controller restarted between the patch and the restart sees an updated pod, not an outdated
one to patch again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rollwise.api.meta import Obj

__all__ = [
    "IN_PLACE_ANNOTATION",
    "IN_PLACE_IF_POSSIBLE",
    "IN_PLACE_ONLY",
    "IN_PLACE_UPDATED_AT",
    "POD_UPDATE_POLICIES",
    "RECREATE_POLICY",
    "images_only_difference",
    "in_place_done",
    "in_place_finished",
    "in_place_patched",
    "in_place_pending",
    "in_place_started_at",
    "pod_update_policy",
]

RECREATE_POLICY = "ReCreate"
IN_PLACE_IF_POSSIBLE = "InPlaceIfPossible"
IN_PLACE_ONLY = "InPlaceOnly"
POD_UPDATE_POLICIES = (RECREATE_POLICY, IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY)

IN_PLACE_ANNOTATION = "rollwise.dev/in-place-update"
"""On a pod while its containers restart for an in-place update: ``{"revision": ..., "at": seconds, "imageIDs":
{container: id}}`` (the ids before the patch; OpenKruise's ``apps.kruise.io/inplace-update-state`` keeps the same
facts)."""
IN_PLACE_UPDATED_AT = "rollwise.dev/in-place-updated-at"
"""Left on a pod once its in-place update is through: when it started (seconds, as the controller's clock read
them). A pod's clock for podProgressTimeoutSeconds starts there, not at its creation: its container is that new."""


def pod_update_policy(block: Mapping[str, Any] | None) -> str:
    """The strategy block's ``podUpdatePolicy`` (ReCreate when absent or not one of the three)."""
    value = (block or {}).get("podUpdatePolicy")
    return value if value in POD_UPDATE_POLICIES else RECREATE_POLICY


def images_only_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[dict[str, str], str]:
    """Compare two pod templates (as revisions store them). ``({container: new image}, "")`` when they differ only
    in ``spec.containers[*].image`` (the empty mapping when they do not differ at all); ``({}, path)`` naming the
    first other field that differs (OpenKruise's rule: anything else means recreate)."""
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    old_containers = old_spec.get("containers") or []
    new_containers = new_spec.get("containers") or []
    if [c.get("name") for c in old_containers] != [c.get("name") for c in new_containers]:
        return {}, "spec.template.spec.containers"
    images: dict[str, str] = {}
    for i, (a, b) in enumerate(zip(old_containers, new_containers, strict=True)):
        rest_a = {k: v for k, v in a.items() if k != "image"}
        rest_b = {k: v for k, v in b.items() if k != "image"}
        if rest_a != rest_b:
            key = sorted(k for k in {*rest_a, *rest_b} if rest_a.get(k) != rest_b.get(k))[0]
            return {}, f"spec.template.spec.containers[{i}].{key}"
        if a.get("image") != b.get("image"):
            images[str(b.get("name"))] = str(b.get("image"))
    for key in sorted({*old_spec, *new_spec} - {"containers"}):
        if old_spec.get(key) != new_spec.get(key):
            return {}, f"spec.template.spec.{key}"
    for key in sorted({*old, *new} - {"spec"}):
        if old.get(key) != new.get(key):
            return {}, f"spec.template.{key}"
    return images, ""


def in_place_pending(pod: Mapping[str, Any]) -> bool:
    """The pod carries an in-place update the controller has not yet seen through (it counts as not Ready)."""
    meta = pod.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    return bool(annotations) and IN_PLACE_ANNOTATION in annotations  # type: ignore[operator]


def _record(pod: Mapping[str, Any]) -> dict[str, Any]:
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(IN_PLACE_ANNOTATION)
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _statuses(pod: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    status = pod.get("status")
    found = status.get("containerStatuses") if isinstance(status, dict) else None
    return {str(cs.get("name")): cs for cs in found or () if isinstance(cs, dict)}


def in_place_done(pod: Mapping[str, Any]) -> bool:
    """Every container the update changed runs a new image: its ``imageID`` differs from the one recorded before
    the patch and it is running (OpenKruise's completion check). A record that is not ours to read (written by
    someone else, malformed) counts as done, so the controller clears it rather than hold the pod forever."""
    ids = _record(pod).get("imageIDs")
    if not isinstance(ids, dict):
        return True
    statuses = _statuses(pod)
    for name, before in ids.items():
        cs = statuses.get(name)
        if cs is None:
            return False
        state = cs.get("state")
        if cs.get("imageID") in ("", None, before) or not (isinstance(state, dict) and "running" in state):
            return False
    return True


def in_place_started_at(pod: Mapping[str, Any]) -> float | None:
    """When the pod's latest in-place update started (from its record, or the mark left once it was through)."""
    at = _record(pod).get("at")
    if at is None:
        at = ((pod.get("metadata") or {}).get("annotations") or {}).get(IN_PLACE_UPDATED_AT)
    if isinstance(at, bool):
        return None
    try:
        return float(at) if isinstance(at, (int, float, str)) else None
    except ValueError:
        return None


def in_place_patched(pod: Obj, images: Mapping[str, str], revision: str, label: str, *, at: float) -> Obj:
    """The pod as the in-place update writes it: new images, the revision label ``label`` set to ``revision``, and
    the annotation recording each changed container's current ``imageID``. Nothing else changes (an update of a
    pod may change only its images among the spec's fields)."""
    statuses = _statuses(pod)
    record = {"revision": revision, "at": at,
              "imageIDs": {name: str((statuses.get(name) or {}).get("imageID") or "") for name in sorted(images)}}
    meta = pod["metadata"]
    spec = pod["spec"]
    containers = [{**c, "image": images[c["name"]]} if c.get("name") in images else c
                  for c in spec.get("containers") or ()]
    return {**pod,
            "metadata": {**meta, "labels": {**(meta.get("labels") or {}), label: revision},
                         "annotations": {**(meta.get("annotations") or {}),
                                         IN_PLACE_ANNOTATION: json.dumps(record, sort_keys=True)}},
            "spec": {**spec, "containers": containers}}


def in_place_finished(pod: Obj) -> Obj:
    """The pod with the in-place record removed (the update is through; readiness is the pod's own again) and the
    time it started kept in ``IN_PLACE_UPDATED_AT``."""
    meta = pod["metadata"]
    at = in_place_started_at(pod)
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != IN_PLACE_ANNOTATION}
    if at is not None:
        annotations[IN_PLACE_UPDATED_AT] = repr(at)
    new_meta = {k: v for k, v in meta.items() if k != "annotations"}
    if annotations:
        new_meta["annotations"] = annotations
    return {**pod, "metadata": new_meta}
