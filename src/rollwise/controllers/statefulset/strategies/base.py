"""The one interface every update strategy implements (Phase D of a reconcile)."""

from __future__ import annotations

from typing import Protocol

from rollwise.controllers.statefulset.context import Sync

__all__ = ["Strategy"]


class Strategy(Protocol):
    """Decide which outdated pods to delete now, and record what the rollout waits for.

    ``update(sync)`` runs after creation, repair and scale-down found nothing to wait for. It appends
    ``DeletePod`` actions through ``sync.delete`` and waits through ``sync.wait``; it never creates pods (the next
    reconcile's creation phase does, at the revision ``revision_for_new_pod`` picks).
    """

    name: str

    def update(self, sync: Sync) -> None: ...
