"""The one interface every update strategy implements."""

from __future__ import annotations

from typing import Protocol

from rollwise.controllers.statefulset.context import Sync

__all__ = ["Strategy"]


class Strategy(Protocol):
    """An update strategy: which outdated pods to delete, and what the rollout waits for.

    ``prepare(sync)`` runs before creation and scale-down; returning True skips them for this reconcile (Recreate
    uses it to keep old and new pods apart). ``update(sync)`` runs after creation, repair and scale-down found
    nothing to wait for. Both append ``DeletePod`` actions through ``sync.delete`` and waits through
    ``sync.wait``; neither creates pods (the creation phase does, at the revision ``revision_for_new_pod`` picks).
    """

    def prepare(self, sync: Sync) -> bool: ...

    def update(self, sync: Sync) -> None: ...
