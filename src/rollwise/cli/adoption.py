"""The leader's adoption sweep beside the operator: labels a custom set's unlabelled pods and claims so that the
label-scoped informers (``cluster.scope``) see them, and the controller adopts them as upstream's does.

A set is swept when its informer first sees it or its spec changes (a new set, every set at start-up: pods made by
an older rollwise), and every set again every ``RESYNC_SECONDS`` (a matching pod made by hand). Only the leader
sweeps; a refused or failed patch is logged and retried at the next sweep."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from rollwise.api.errors import ApiStatusError
from rollwise.api.meta import name_of, namespace_of
from rollwise.cluster.scope import adopt_unlabelled

__all__ = ["RESYNC_SECONDS", "sweep_forever"]

log = logging.getLogger("rollwise.run.adoption")

RESYNC_SECONDS = 60.0


async def sweep_forever(op: Any, kube: Any, controller: str = "statefulset") -> None:
    informer = op.set_informers.get(controller)
    if informer is None:
        return
    pending: set[tuple[str, str]] = set()
    wake = asyncio.Event()

    def on_set(delta: Any) -> None:
        new, old = delta.new, delta.old
        if new is not None and (old is None or old.get("spec") != new.get("spec")):
            pending.add((namespace_of(new), name_of(new)))
            wake.set()

    informer.add_handler(on_set)
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), timeout=RESYNC_SECONDS)
        if not wake.is_set():  # the resync: every set
            pending.update((namespace_of(s), name_of(s)) for s in informer.store.list())
        wake.clear()
        if not op.is_leader():
            continue  # a standby keeps the list for when it leads
        for ns, name in sorted(pending):
            sts = informer.store.get(ns, name)
            if sts is None:
                pending.discard((ns, name))
                continue
            try:
                labelled = await adopt_unlabelled(kube, sts)
            except ApiStatusError as err:
                log.warning("%s/%s: labelling its unlabelled pods and claims failed: %s %s: %s", ns, name, err.code,
                            err.reason, err.message, extra={"set": f"{ns}/{name}", "reason": err.reason})
                continue
            pending.discard((ns, name))
            if labelled:
                log.info("%s/%s: labelled %s for adoption", ns, name, ", ".join(labelled),
                         extra={"set": f"{ns}/{name}", "action": "Label", "reason": "unlabelled pods and claims"})
