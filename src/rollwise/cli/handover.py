"""What a hand-over of a set's pods between the two StatefulSet resources does the same way in both directions
(``migrate``: apps/v1 to rollwise; ``migrate --to apps/v1``: back): refuse a set in mid-rollout or a name the other
resource already holds, relabel revisions the selector no longer matches, and copy the revision bookkeeping to
the new set so it names its revisions as the old one did (the collision count is part of the hash).

The hand-over itself cannot lose a pod (issue 38): the old set is fenced first (``api/handover.py``: rollwise's
controllers, the operator's and ``up``'s, write none of its pods and adopt none for it, and their live read before
an adoption refuses it even where a cache has not seen the mark), and only then is anything created or deleted;
its Orphan delete goes through the ``orphan`` finalizer, so no controller may adopt for it meanwhile; and success
is said only once the new set controls every pod under its old uid and the old set is gone. A pod restarted is
named, with exit 1."""

from __future__ import annotations

import asyncio
import contextlib
import math
import sys
import time
from collections.abc import Mapping
from typing import Any

from rollwise.api.errors import ApiStatusError
from rollwise.api.handover import HANDOVER_ANNOTATION
from rollwise.api.meta import (
    Obj,
    controller_of,
    deletion_timestamp,
    labels,
    name_of,
    namespace_of,
    selector_matches,
    uid_of,
)
from rollwise.cli.kubetarget import ClusterCommandError
from rollwise.cluster.resources import CONTROLLER_REVISION, ResourceRef

__all__ = ["COPIED_STATUS", "HandoverError", "copy_status", "hand_over", "owned", "refuse_existing",
           "refuse_unmovable", "relabel_revisions", "restarts", "twin_of"]

COPIED_STATUS = ("currentRevision", "updateRevision", "collisionCount")
POLL_SECONDS = 0.5


class HandoverError(ClusterCommandError):
    pass


def twin_of(src: Obj, *, api_version: str, spec: Obj, dropped_annotations: tuple[str, ...]) -> Obj:
    """The set of the other kind that takes over from ``src``: same name, namespace, labels and annotations (less
    ``dropped_annotations``: what belongs to the old kind's tooling or controller), with ``spec``. Never the fence:
    it belongs to the set handed over, and one left by a migrate stopped half-way would hold the new set too."""
    meta = src["metadata"]
    out_meta: Obj = {"name": meta["name"], "namespace": meta.get("namespace", "default")}
    if meta.get("labels"):
        out_meta["labels"] = dict(meta["labels"])
    dropped = (*dropped_annotations, HANDOVER_ANNOTATION)
    notes = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in dropped}
    if notes:
        out_meta["annotations"] = notes
    return {"apiVersion": api_version, "kind": "StatefulSet", "metadata": out_meta, "spec": spec}


def refuse_unmovable(label: str, sts: Obj) -> None:
    """Refuse, before anything is written, a set being deleted (the hand-over would move its pods to a new set
    while a finalizer kept the old one) or in mid-rollout. ``label``: how the set is named to the user, e.g.
    ``statefulset.apps/web``."""
    if deletion_timestamp(sts) is not None:
        held = ", ".join(sts["metadata"].get("finalizers") or []) or "nothing"
        raise HandoverError(f"{label} is being deleted (its finalizers: {held}); nothing was changed")
    status = sts.get("status") or {}
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
    """Fence ``old``, create ``new`` with the old set's revision bookkeeping, delete ``old`` orphaning its pods,
    wait until the new set's controller (``adopter``, named in the timeout message) has adopted every one of
    ``pods`` and ``old`` is gone, then check each pod's uid once more. False, said on stderr with the pods that
    restarted, on a timeout or a restart."""
    ns = namespace_of(old)
    await kube.patch(old_resource, ns, name_of(old), _fence(old, new_label))
    print(f"{old_label} fenced (its controller leaves its pods alone)")
    try:
        created = await kube.create(new)
        await copy_status(kube, new_resource, new_label, created, old.get("status") or {})
    except BaseException:
        # Nothing is deleted yet: the old set goes back to its controller.
        with contextlib.suppress(ApiStatusError):
            await kube.patch(old_resource, ns, name_of(old), _fence(old, None))
        raise
    print(f"{new_label} created")
    await kube.delete(old_resource, ns, name_of(old), uid=uid_of(old), propagation="Orphan")
    print(f"{old_label} deleted (pods orphaned)")
    want = {name_of(p): uid_of(p) for p in pods}
    deadline = time.monotonic() + timeout if timeout > 0 else math.inf  # 0: no limit, as every --timeout
    while True:
        now = {name_of(p): p for p in (await kube.list("Pod", ns))[0] if name_of(p) in want}
        restarted = restarts(want, now)
        adopted = [n for n, p in now.items() if n not in restarted and _controller_uid(p) == uid_of(created)]
        if restarted:
            print(f"error: {len(restarted)} of {len(want)} pods restarted during the hand-over: "
                  + ", ".join(restarted), file=sys.stderr)
            return False
        # The old set's deletion finished too: its orphaning is over, so no later write can take a pod back.
        lingering = len(adopted) == len(want) and await _still_there(kube, old_resource, old)
        if len(adopted) == len(want) and not lingering:
            print(f"{new_label} adopted {_pods(len(want))}; none restarted")
            return True
        if time.monotonic() >= deadline:
            why = (f"{old_label} is still being deleted (is the garbage collector running?)" if lingering else
                   f"{new_label} adopted {len(adopted)} of {_pods(len(want))} (is {adopter} running?)")
            print(f"error: timed out: {why}", file=sys.stderr)
            return False
        await asyncio.sleep(POLL_SECONDS)


def _pods(n: int) -> str:
    return f"{n} pod" if n == 1 else f"{n} pods"


def restarts(want: Mapping[str, str], now: Mapping[str, Obj]) -> list[str]:
    """The pods of ``want`` (name to uid) that ``now`` (name to pod) lacks or holds with another uid, each as
    ``name (gone)`` or ``name (uid OLD is now NEW)``."""
    out = []
    for name, uid in sorted(want.items()):
        pod = now.get(name)
        if pod is None:
            out.append(f"{name} (gone)")
        elif uid_of(pod) != uid:
            out.append(f"{name} (uid {uid} is now {uid_of(pod)})")
    return out


def _fence(old: Obj, new_label: str | None) -> Obj:
    """The patch that puts (``new_label``) or lifts (None) the hand-over mark (api/handover.py), on this very set."""
    return {"metadata": {"uid": uid_of(old), "annotations": {HANDOVER_ANNOTATION: new_label}}}


def _controller_uid(pod: Obj) -> str | None:
    ref = controller_of(pod)
    return None if ref is None else str(ref.get("uid"))


async def _still_there(kube: Any, resource: ResourceRef, old: Obj) -> bool:
    try:
        current = await kube.get(resource, namespace_of(old), name_of(old))
    except ApiStatusError as err:
        if err.code != 404:
            raise
        return False
    return uid_of(current) == uid_of(old)
