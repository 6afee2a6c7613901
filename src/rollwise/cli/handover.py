"""What a hand-over of a set's pods between the two StatefulSet resources does the same way in both directions
(``migrate``: apps/v1 to rollwise; ``migrate --to apps/v1``: back): refuse a set in mid-rollout or a name the other
resource already holds, relabel revisions the selector no longer matches, and copy the revision bookkeeping to
the new set so it names its revisions as the old one did (the collision count is part of the hash)."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from rollwise.api.errors import ApiStatusError
from rollwise.api.meta import Obj, controller_of, labels, name_of, namespace_of, selector_matches, uid_of
from rollwise.cli.kubetarget import ClusterCommandError
from rollwise.cluster.resources import CONTROLLER_REVISION, ResourceRef

__all__ = ["COPIED_STATUS", "HandoverError", "copy_status", "hand_over", "owned", "refuse_existing",
           "refuse_mid_rollout", "relabel_revisions", "twin_of"]

COPIED_STATUS = ("currentRevision", "updateRevision", "collisionCount")
POLL_SECONDS = 0.5


class HandoverError(ClusterCommandError):
    pass


def twin_of(src: Obj, *, api_version: str, spec: Obj, dropped_annotations: tuple[str, ...]) -> Obj:
    """The set of the other kind that takes over from ``src``: same name, namespace, labels and annotations (less
    ``dropped_annotations``: what belongs to the old kind's tooling or controller), with ``spec``."""
    meta = src["metadata"]
    out_meta: Obj = {"name": meta["name"], "namespace": meta.get("namespace", "default")}
    if meta.get("labels"):
        out_meta["labels"] = dict(meta["labels"])
    notes = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in dropped_annotations}
    if notes:
        out_meta["annotations"] = notes
    return {"apiVersion": api_version, "kind": "StatefulSet", "metadata": out_meta, "spec": spec}


def refuse_mid_rollout(label: str, status: Obj) -> None:
    """``label``: how the set is named to the user, e.g. ``statefulset.apps/web``."""
    if status.get("currentRevision") != status.get("updateRevision"):
        raise HandoverError(f"{label} is mid-rollout (revision {status.get('updateRevision')} is not yet current); "
                            "let it finish or undo it, then migrate")


async def refuse_existing(kube: Any, resource: ResourceRef, label: str, ns: str, name: str) -> None:
    try:
        await kube.get(resource, ns, name)
    except ApiStatusError as err:
        if err.code != 404:
            raise
    else:
        raise HandoverError(f"{label} already exists; nothing was changed")


async def owned(kube: Any, ref: Any, ns: str, owner: Obj) -> list[Obj]:
    items, _ = await kube.list(ref, ns)
    return [o for o in items if (c := controller_of(o)) is not None and c.get("uid") == uid_of(owner)]


async def relabel_revisions(kube: Any, ns: str, owner: Obj) -> None:
    """The owner's revisions carry its template's labels, so its selector (and the new set's) lists them."""
    selector = owner["spec"].get("selector")
    template_labels = ((owner["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
    for rev in await owned(kube, CONTROLLER_REVISION, ns, owner):
        if not selector_matches(selector, labels(rev)):
            await kube.patch(CONTROLLER_REVISION, ns, name_of(rev), {"metadata": {"labels": dict(template_labels)}})
            print(f"controllerrevision.apps/{name_of(rev)} relabelled")


async def copy_status(kube: Any, resource: ResourceRef, label: str, created: Obj, status: Obj) -> None:
    """The old set's revision bookkeeping onto ``created``. The new set's controller may write the status first:
    re-read and retry on a conflict."""
    copied = {k: v for k, v in status.items() if k in COPIED_STATUS}
    current = created
    for _ in range(5):
        try:
            await kube.update_status({**current, "status": {**(current.get("status") or {}), **copied}})
            return
        except ApiStatusError as err:
            if err.code != 409:
                raise
            current = await kube.get(resource, namespace_of(created), name_of(created))
    raise HandoverError(f"could not copy the status to {label}")


async def hand_over(kube: Any, *, old: Obj, old_resource: ResourceRef, old_label: str, new: Obj,
                    new_resource: ResourceRef, new_label: str, pods: list[Obj], timeout: float, adopter: str) -> bool:
    """Create ``new`` with the old set's revision bookkeeping, delete ``old`` orphaning its pods, and wait until the
    new set's controller (``adopter``, named in the timeout message) has adopted every one of ``pods`` (same uids).
    False on a timeout, said on stderr."""
    created = await kube.create(new)
    await copy_status(kube, new_resource, new_label, created, old.get("status") or {})
    print(f"{new_label} created")
    await kube.delete(old_resource, namespace_of(old), name_of(old), uid=uid_of(old), propagation="Orphan")
    print(f"{old_label} deleted (pods orphaned)")
    want = {uid_of(p) for p in pods}
    deadline = time.monotonic() + timeout
    while True:
        adopted = {uid_of(p) for p in await owned(kube, "Pod", namespace_of(old), created)}
        if want <= adopted:
            print(f"{new_label} adopted {len(want)} pods; none restarted")
            return True
        if time.monotonic() >= deadline:
            print(f"error: timed out: {new_label} adopted {len(want & adopted)} of {len(want)} pods (is {adopter} "
                  "running?)", file=sys.stderr)
            return False
        await asyncio.sleep(POLL_SECONDS)
