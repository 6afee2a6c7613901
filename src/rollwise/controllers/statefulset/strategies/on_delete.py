"""OnDelete: the controller never replaces a pod for a template change; people do (reference §5.9)."""

from __future__ import annotations

from rollwise.controllers.statefulset.context import Sync

__all__ = ["OnDelete"]


class OnDelete:
    name = "OnDelete"

    def prepare(self, sync: Sync) -> bool:
        return False

    def update(self, sync: Sync) -> None:
        outdated = [pod for pod in sync.replicas if pod is not None and sync.outdated(pod)]
        if outdated:
            names = ", ".join(pod["metadata"]["name"] for pod in outdated[:3])
            more = f" and {len(outdated) - 3} more" if len(outdated) > 3 else ""
            sync.wait("", f"OnDelete: {names}{more} run an older revision until deleted")
