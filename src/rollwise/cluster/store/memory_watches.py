"""The memory store's watch and change-feed verbs (``MemoryCluster`` inherits them): watches over the per-resource
histories of ``rollwise.cluster.store.watch``, and the change feed the simulator reads."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING

from rollwise.api.meta import Obj
from rollwise.cluster.protocol import Change
from rollwise.cluster.resources import ResourceRef, ResourceTable
from rollwise.cluster.store.feed import ChangeFeed
from rollwise.cluster.store.selectors import FieldSelector, LabelSelector, field_selector_of, label_selector_of
from rollwise.cluster.store.watch import Watch, WatchHub, parse_resource_version

__all__ = ["WatchVerbs"]


class WatchVerbs:
    """Watches and the change feed, over the store's ``_hub`` and ``_feed``."""

    if TYPE_CHECKING:
        resources: ResourceTable
        _hub: WatchHub
        _feed: ChangeFeed
        _rv: int
        list: Callable[..., builtins.list[Obj]]

    # -- watches -----------------------------------------------------------------------------------------------

    def watch(
        self,
        kind: ResourceRef,
        namespace: str | None = None,
        *,
        since: str | int | None = None,
        label_selector: str | LabelSelector | None = None,
        field_selector: str | FieldSelector | None = None,
    ) -> Watch:
        """Open a watch on one resource (``rollwise.cluster.store.watch``).

        ``since`` is a resourceVersion: the changes after it are replayed from the resource's history (Gone if it
        was compacted past); None, ``""`` or ``"0"`` start with a synthetic ADDED per current object. BadRequest for
        a malformed ``since`` or selector."""
        gk = self.resources.resolve(kind)
        labels_sel = label_selector_of(label_selector)
        fields_sel = field_selector_of(field_selector, gk)
        start = parse_resource_version(since)
        ns = namespace if namespace is None or self.resources.get(gk).namespaced else None
        current = self.list(gk, ns) if start is None else []
        return self._hub.open(self.resources.get(gk), namespace=ns, since=start, label_selector=labels_sel,
                              field_selector=fields_sel, current=current, current_rv=lambda: self._rv)

    def compact_history(self, resource_version: int | None = None, *, kind: ResourceRef | None = None) -> None:
        """Forget watch history at or below ``resource_version`` (default: all of it), for one resource or all:
        a later watch from before it gets Gone, as after an etcd compaction."""
        gk = None if kind is None else self.resources.resolve(kind)
        self._hub.compact(self._rv if resource_version is None else resource_version, gk)

    def drop_watches(self, kind: ResourceRef | None = None) -> int:
        """Close the open watches (of one resource, or all); returns how many were closed."""
        return self._hub.drop(None if kind is None else self.resources.resolve(kind))

    @property
    def cursor(self) -> int:
        """The feed position after the latest change: ``changes_since(cluster.cursor)`` returns only newer ones."""
        return self._feed.cursor

    def changes_since(self, cursor: int) -> tuple[builtins.list[Change], int]:
        """Changes after ``cursor`` and the new cursor. Gone if ``cursor`` is older than the last ``compact``."""
        return self._feed.since(cursor)

    def compact(self, cursor: int) -> None:
        """Discard the changes before ``cursor`` (consumed by every reader), so memory stays bounded."""
        self._feed.compact(cursor)
