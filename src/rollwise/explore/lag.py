"""Informer lag in the explorer: which older stores a controller may still decide on, through the runtime's own
read-your-writes check (KEP-5647, ``runtime/consistency.py``) and the write notes that feed it.

A controller's caches, in the explorer, are the store as it was some moves earlier: every informer cut at the same
point of the change feed, so each has seen up to that store's resourceVersion (a relist's). The check then refuses
a store that misses one of the controller's own last writes, as it refuses a lagging cache in the operator; with
the check off (``--no-read-your-writes``) the controller decides on it anyway, as upstream's did before 1.36
(kubernetes/kubernetes#59848: a pod created again, or deleted again, from a cache that missed the controller's
own create or delete).
"""

from __future__ import annotations

from collections.abc import Mapping

from rollwise.cluster.store.memory import MemoryCluster
from rollwise.runtime.consistency import ConsistencyStore
from rollwise.runtime.recording import WriteNotes

__all__ = ["behind", "recording"]


def _store(written: Mapping[str, str], actor: str, set_uid: str, seen: MemoryCluster | None) -> ConsistencyStore:
    rv = str(seen.resource_version) if seen is not None else ""
    consistency = ConsistencyStore(lambda resource: rv)
    for resource, at in written.items():
        consistency.wrote_at(actor, set_uid, resource, at)
    return consistency


def behind(written: Mapping[str, str], actor: str, set_uid: str, seen: MemoryCluster) -> list[str]:
    """The runtime's check before ``actor`` decides on ``seen``: the resources whose cache misses one of its own
    last writes (``written``: resource → resourceVersion); empty: it may decide."""
    return _store(written, actor, set_uid, seen).check(actor, set_uid)


def recording(written: Mapping[str, str], actor: str, set_uid: str) -> tuple[WriteNotes, ConsistencyStore]:
    """Executor hooks that note each of ``actor``'s writes (KEP-5647 ``WroteAt``) in the returned store, which
    starts from ``written``; ``store.written(actor)`` is the record after the plan ran."""
    consistency = _store(written, actor, set_uid, None)
    return WriteNotes(consistency, owner=actor, owner_uid=set_uid), consistency
