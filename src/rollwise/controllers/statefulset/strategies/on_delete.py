"""OnDelete: the controller never replaces a pod for a template change; people do (reference §5.9)."""

from __future__ import annotations

import heapq
import itertools

from rollwise.controllers.statefulset.context import Sync

__all__ = ["OnDelete"]


class OnDelete:

    def prepare(self, sync: Sync) -> bool:
        return False

    def update(self, sync: Sync) -> None:
        # Every outdated pod, terminating or not: the loud ones and the quiet ones (census.py, two disjoint sets of
        # indexes) merge by index; only the first three are named.
        loud = [i for i in sync.present if (pod := sync.replicas[i]) is not None and sync.outdated(pod)]
        quiet = sync.census.quiet_outdated
        count = len(loud) + len(quiet)
        first = list(itertools.islice(heapq.merge(loud, quiet), 3))
        if count:
            names = ", ".join(sync.replicas[i]["metadata"]["name"] for i in first)  # type: ignore[index]
            more = f" and {count - 3} more" if count > 3 else ""
            sync.wait("", f"OnDelete: {names}{more} run an older revision until deleted")
