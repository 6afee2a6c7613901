"""The leader's adoption sweep beside the operator: labels a custom set's unlabelled pods and claims so that the
label-scoped informers (``cluster.client.scope``) see them, and the controller adopts them as upstream's does.

A set is swept when its informer first sees it (a new set, every set at start-up: pods made by an older rollwise) or
its selector or claim templates change (what decides which pods and claims are its own; a template change, a
rollout, does not), and every set again every ``RESYNC_SECONDS`` (a matching pod made by hand). The sets due in one
round are swept a namespace at a time, with one list of its unlabelled pods and claims. Only the leader sweeps; a
refused or failed patch is logged, and that namespace's sets are retried at the next sweep."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from rollwise.api.errors import ApiStatusError
from rollwise.api.handover import leaves_pods_alone
from rollwise.api.meta import name_of, namespace_of
from rollwise.cluster.client.scope import adopt_unlabelled

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
        if new is not None and (old is None or _adoption_keys(old) != _adoption_keys(new)):
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
        for ns in sorted({ns for ns, _ in pending}):
            names = sorted(name for n, name in pending if n == ns)
            # A set being deleted or handed over (api/handover.py) is left alone, as its controller leaves it.
            sets = [sts for name in names
                    if (sts := informer.store.get(ns, name)) is not None and not leaves_pods_alone(sts)]
            try:
                labelled = await adopt_unlabelled(kube, sets)
            except ApiStatusError as err:
                log.warning("%s: labelling the unlabelled pods and claims of %d sets failed: %s %s: %s", ns,
                            len(sets), err.code, err.reason, err.message, extra={"namespace": ns, "reason": err.reason})
                continue
            pending.difference_update((ns, name) for name in names)
            if labelled:
                log.info("%s: labelled %s for adoption", ns, ", ".join(labelled),
                         extra={"namespace": ns, "action": "Label", "reason": "unlabelled pods and claims"})


def _adoption_keys(sts: Any) -> tuple[Any, Any]:
    """What decides which pods and claims are a set's own: its selector and its claim templates' names."""
    spec = sts.get("spec") or {}
    return spec.get("selector"), [name_of(t) for t in spec.get("volumeClaimTemplates") or [] if isinstance(t, dict)]
