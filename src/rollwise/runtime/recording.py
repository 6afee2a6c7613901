"""The controller's writes, noted for the consistency store: hooks around the executor's calls for one owner.

Each successful write's returned resourceVersion is recorded against the set being reconciled (KEP-5647
``WroteAt``), including the pod returned by a graceful delete. The explorer and the operator (inline or over the
API, sync or async) pass the same ``WriteNotes`` to ``runtime.execute`` as its ``hooks``, so what is noted is
decided once, on the executor's ``Call`` rather than per verb of a wrapped cluster. ``prepare`` changes what is
created (the operator's informer label).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from rollwise.api.meta import Obj
from rollwise.cluster.resources import GroupKind
from rollwise.runtime.consistency import ConsistencyStore
from rollwise.runtime.execute import Call

__all__ = ["WriteNotes"]

_OBJECT_VERBS = ("create", "update", "update_status")
"""Verbs whose first argument is the object written; the others (patch, delete) name its kind first."""


class WriteNotes:
    """``runtime.execute.CallHooks`` that note ``owner``'s writes in ``consistency``."""

    def __init__(self, consistency: ConsistencyStore, *, owner: Hashable, owner_uid: str,
                 tracked: frozenset[str] | None = None, prepare: Callable[[Obj], Obj] | None = None) -> None:
        self.consistency = consistency
        self.owner = owner
        self.owner_uid = owner_uid
        self.tracked = tracked
        """Kinds an informer watches (None: all); a write to any other kind could never be seen, so is not noted."""
        self.prepare = prepare

    def before(self, call: Call) -> Call:
        if self.prepare is None or call.verb != "create":
            return call
        return Call(call.verb, (self.prepare(call.args[0]), *call.args[1:]), call.kwargs)

    def after(self, call: Call, reply: Any) -> None:
        if call.verb == "get" or reply is None:
            return
        ref = call.args[0].get("kind") if call.verb in _OBJECT_VERBS else call.args[0]
        kind = ref.kind if isinstance(ref, GroupKind) else str(ref).partition(".")[0]  # informers are named by kind
        if self.tracked is None or kind in self.tracked:
            rv = str(reply.get("metadata", {}).get("resourceVersion") or "")
            self.consistency.wrote_at(self.owner, self.owner_uid, kind, rv)
