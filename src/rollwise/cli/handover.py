"""What a hand-over of a set's pods between the two StatefulSet resources does the same way in both directions
(``migrate``: apps/v1 to rollwise; ``migrate --to apps/v1``: back): refuse a set in mid-rollout or a name the other
resource already holds, relabel revisions the selector no longer matches, and copy the revision bookkeeping to
the new set so it names its revisions as the old one did (the collision count is part of the hash)."""

from __future__ import annotations

from typing import Any

from rollwise.api.errors import ApiStatusError
from rollwise.api.meta import Obj, controller_of, labels, name_of, namespace_of, selector_matches, uid_of
from rollwise.cli.kubetarget import ClusterCommandError
from rollwise.cluster.resources import CONTROLLER_REVISION, ResourceRef

__all__ = ["COPIED_STATUS", "HandoverError", "copy_status", "owned", "refuse_existing", "refuse_mid_rollout",
           "relabel_revisions"]

COPIED_STATUS = ("currentRevision", "updateRevision", "collisionCount")


class HandoverError(ClusterCommandError):
    pass


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
