"""A controller must not decide on a cache that has not yet seen its own last writes (KEP-5647).

Upstream (``pkg/controller/util/consistency/consistency.go``, on by default for StatefulSets since 1.36) records
the resourceVersion each successful write returned, per owner and resource; before the next reconcile of that
owner it requires every informer's latest-seen resourceVersion to have reached it, else it skips the reconcile
and requeues rate-limited (``stale_sync_skips_total``). Without it a pod deleted a moment ago can still look
available in the cache, and the same maxUnavailable budget is spent twice.

resourceVersions are opaque to clients in general, but KEP-5647 relies on the API server's guarantee that they
are decimal integers compared by length, then lexically (``apimachinery`` ``CompareResourceVersion``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

__all__ = ["ConsistencyStore", "compare_resource_versions"]


def compare_resource_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` is older than, equal to or newer than ``b``. Raises ValueError on a non-integer RV."""
    for rv in (a, b):
        if not rv.isdigit() or (len(rv) > 1 and rv[0] == "0"):
            raise ValueError(f"resourceVersion {rv!r} is not a canonical decimal integer")
    if len(a) != len(b):
        return -1 if len(a) < len(b) else 1
    return (a > b) - (a < b)


@dataclass(slots=True)
class _Written:
    uid: str
    rvs: dict[str, str] = field(default_factory=dict)  # resource -> newest RV this controller wrote


class ConsistencyStore:
    """Written RVs per owner, checked against what the informers have seen.

    ``latest_seen(resource)`` returns the newest RV the informer for ``resource`` has observed ("" if none).
    """

    def __init__(self, latest_seen: Callable[[str], str]) -> None:
        self._latest_seen = latest_seen
        self._owners: dict[Hashable, _Written] = {}

    def wrote_at(self, owner: Hashable, owner_uid: str, resource: str, rv: str) -> None:
        """Record a successful write for ``owner`` (identified by its uid too) that returned ``rv``."""
        if not rv:
            return
        entry = self._owners.get(owner)
        if entry is None or entry.uid != owner_uid:
            entry = self._owners[owner] = _Written(uid=owner_uid)  # a new object under an old name starts clean
        held = entry.rvs.get(resource)
        if held is None or compare_resource_versions(rv, held) > 0:
            entry.rvs[resource] = rv

    def behind(self, owner: Hashable) -> list[str]:
        """The resources whose informer has not yet seen this owner's last write to them (empty: ready)."""
        entry = self._owners.get(owner)
        if entry is None:
            return []
        lagging = []
        for resource, rv in entry.rvs.items():
            seen = self._latest_seen(resource)
            if not seen or compare_resource_versions(seen, rv) < 0:
                lagging.append(resource)
        return lagging

    def check(self, owner: Hashable, owner_uid: str) -> list[str]:
        """The check before a reconcile of ``owner`` (the set as its cache shows it, ``owner_uid``): a record kept
        for an older object under the name is dropped, then the resources whose cache is behind (empty: decide)."""
        self.clear(owner, owner_uid)
        return self.behind(owner)

    def written(self, owner: Hashable) -> dict[str, str]:
        """The newest resourceVersion this controller wrote per resource for ``owner`` (a copy; empty: none)."""
        entry = self._owners.get(owner)
        return dict(entry.rvs) if entry is not None else {}

    def ensure_ready(self, owner: Hashable) -> bool:
        """True when the caches have caught up with every write recorded for ``owner``.

        The record is kept until a newer write or ``clear``: a cache can go back in time (a relist served from a
        lagging API server's watch cache, kubernetes/kubernetes#59848), so a check that passed once must be able
        to fail again.
        """
        return not self.behind(owner)

    def clear(self, owner: Hashable, owner_uid: str | None = None) -> None:
        """Forget ``owner`` (deleted), or only its record for another uid when ``owner_uid`` is given."""
        entry = self._owners.get(owner)
        if entry is not None and (owner_uid is None or entry.uid != owner_uid):
            del self._owners[owner]

    def __len__(self) -> int:
        return len(self._owners)
