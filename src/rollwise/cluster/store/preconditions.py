"""Optimistic concurrency: the preconditions a write (or a delete) may carry, checked against the stored object.

A given ``resourceVersion`` must be the stored one (upstream's 409 Conflict "the object has been modified"), and
a given ``uid`` must be the stored one (an earlier incarnation of the name is another object). An empty value is
no precondition, as the API server treats it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.errors import Conflict
from rollwise.api.meta import Obj

__all__ = ["check_preconditions"]


def check_preconditions(given: Mapping[str, Any] | None, stored: Obj, *, kind: str, name: str) -> None:
    """Raise Conflict unless ``given``'s ``resourceVersion`` and ``uid`` (where set) are the stored ones.

    ``given`` is a write's metadata or a DeleteOptions' ``preconditions``; ``kind`` and ``name`` name the object in
    the message (``StatefulSet "web"``), which is built only for a conflict (every write of the store asks)."""
    if not given:
        return
    rv = given.get("resourceVersion")
    if rv not in (None, "") and str(rv) != stored["metadata"]["resourceVersion"]:
        raise Conflict(f'Operation cannot be fulfilled on {kind} "{name}": the object has been modified; '
                       "please apply your changes to the latest version and try again")
    uid = given.get("uid")
    if uid and uid != stored["metadata"]["uid"]:
        raise Conflict(f'Precondition failed on {kind} "{name}": UID in precondition: {uid}, '
                       f"UID in object meta: {stored['metadata']['uid']}")
