"""One store behind both Event APIs: ``events.k8s.io/v1`` Events are ``v1`` Events seen in the newer shape.

As kube-apiserver stores both in one etcd resource and converts between them (``pkg/apis/events/v1``
conversion), an Event written through either API is read through both. The renamed fields: ``involvedObject`` is
``regarding``, ``message`` is ``note``, ``reportingComponent`` is ``reportingController``, ``source`` is
``deprecatedSource``, ``firstTimestamp``/``lastTimestamp``/``count`` are ``deprecated...``; the rest keep names.
"""

from __future__ import annotations

import re
from typing import Any

from rollwise.api.meta import Obj

__all__ = ["selector_to_stored", "to_served", "to_stored"]

_RENAMES = (("involvedObject", "regarding"), ("message", "note"), ("reportingComponent", "reportingController"),
            ("source", "deprecatedSource"), ("firstTimestamp", "deprecatedFirstTimestamp"),
            ("lastTimestamp", "deprecatedLastTimestamp"), ("count", "deprecatedCount"))


def to_served(obj: Obj) -> Obj:
    """A stored (``v1``) Event in the ``events.k8s.io/v1`` shape."""
    out: dict[str, Any] = dict(obj)
    for core, new in _RENAMES:
        if core in out:
            out[new] = out.pop(core)
    out["apiVersion"], out["kind"] = "events.k8s.io/v1", "Event"
    return out


def to_stored(obj: Obj) -> Obj:
    """An ``events.k8s.io/v1`` Event in the stored (``v1``) shape."""
    out: dict[str, Any] = dict(obj)
    for core, new in _RENAMES:
        if new in out:
            out[core] = out.pop(new)
    out["apiVersion"], out["kind"] = "v1", "Event"
    return out


_SELECTOR_FIELDS = {"regarding": "involvedObject", "reportingController": "reportingComponent",
                    "deprecatedSource": "source"}


def selector_to_stored(selector: str | None) -> str | None:
    """A field selector written against ``events.k8s.io/v1`` names, in the stored Event's names."""
    if not selector:
        return selector
    return re.sub(r"(?<![\w.])(regarding|reportingController|deprecatedSource)(?=[.=!])",
                  lambda m: _SELECTOR_FIELDS[m.group(1)], selector)
