"""The codec at the edge: RFC 3339 times on the wire, float seconds inside.

Inside rollwise every timestamp is a float (seconds: virtual in the simulator, since the epoch in ``up`` and the
operator), so pure code compares and subtracts them without parsing. On the wire Kubernetes speaks strings:
``metav1.Time`` (``2026-11-23T19:48:06Z``, whole seconds) and ``metav1.MicroTime``
(``2026-11-23T19:48:06.123456Z``, six fractional digits). This module converts the known time paths once, where
bytes enter (``decode``: a request body, an object read from a real API server) or leave (``encode``: a
response, a watch event). Nothing in ``controllers/`` or ``api/`` ever sees a wire string.

``decode`` accepts any RFC 3339 time (whole seconds, as a real API server's ``metav1.Time`` has, or fractional;
``Z`` or an offset). Encoding a ``Time`` drops the fraction, as upstream's marshalling does, so a controller that
reads from a real cluster sees whole seconds and must tolerate them.

The paths (reference operator-plan.md §1.4): ``metadata.{creation,deletion}Timestamp``; conditions'
``lastTransitionTime`` (and ``lastUpdateTime``, ``lastProbeTime``); ``status.startTime``; container
``state``/``lastState`` ``startedAt``/``finishedAt``; Lease ``spec.{acquire,renew}Time`` (MicroTime); Event times;
an AnalysisRun's ``status.startedAt`` and its measurements' ``startedAt``/``finishedAt``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from rollwise.api.errors import FieldError, Invalid
from rollwise.api.meta import Obj, format_time
from rollwise.cluster.resources import (
    ANALYSIS_RUN,
    EVENT,
    EVENT_V1,
    LEASE,
    STATEFULSET_KINDS,
    GroupKind,
    ResourceTable,
)

__all__ = ["decode", "encode", "format_micro_time", "format_time", "parse_time", "time_paths"]

TIME, MICRO = "Time", "MicroTime"

Path = tuple[str, ...]
"""Keys from the object's root; ``"[]"`` stands for every item of a list."""

_CONDITIONS: tuple[tuple[Path, str], ...] = tuple(
    (("status", "conditions", "[]", f), TIME)
    for f in ("lastTransitionTime", "lastUpdateTime", "lastProbeTime", "lastHeartbeatTime"))
_CONTAINER_TIMES: tuple[tuple[Path, str], ...] = tuple(
    (("status", statuses, "[]", state, phase, f), TIME)
    for statuses in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")
    for state in ("state", "lastState")
    for phase, fields in (("running", ("startedAt",)), ("terminated", ("startedAt", "finishedAt")))
    for f in fields)
_COMMON: tuple[tuple[Path, str], ...] = (
    (("metadata", "creationTimestamp"), TIME),
    (("metadata", "deletionTimestamp"), TIME),
    *_CONDITIONS,
)
_BY_KIND: dict[GroupKind, tuple[tuple[Path, str], ...]] = {
    GroupKind("", "Pod"): ((("status", "startTime"), TIME), *_CONTAINER_TIMES),
    LEASE: ((("spec", "acquireTime"), MICRO), (("spec", "renewTime"), MICRO)),
    EVENT_V1: ((("firstTimestamp",), TIME), (("lastTimestamp",), TIME), (("eventTime",), MICRO),
               (("series", "lastObservedTime"), MICRO)),
    EVENT: ((("deprecatedFirstTimestamp",), TIME), (("deprecatedLastTimestamp",), TIME), (("eventTime",), MICRO),
            (("series", "lastObservedTime"), MICRO)),
    # a canary pause's start (controllers/statefulset/steps.py), on both kinds
    **dict.fromkeys(STATEFULSET_KINDS, ((("status", "pauseStartTime"), TIME),)),
    # an analysis's start and each measurement's (controllers/analysis/)
    ANALYSIS_RUN: ((("status", "startedAt"), TIME),
                   *((("status", "metricResults", "[]", "measurements", "[]", f), TIME)
                     for f in ("startedAt", "finishedAt"))),
}

_TABLE = ResourceTable.builtin()
_EARLIEST = datetime(1, 1, 1, tzinfo=UTC).timestamp()
_LATEST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()


def time_paths(gk: GroupKind) -> tuple[tuple[Path, str], ...]:
    """The time fields of a resource with their wire type (``Time`` or ``MicroTime``)."""
    return _COMMON + _BY_KIND.get(gk, ())


def format_micro_time(t: float) -> str:
    """``metav1.MicroTime``: RFC 3339 with six fractional digits."""
    micros = round(t * 1_000_000)
    seconds, frac = divmod(micros, 1_000_000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{frac:06d}Z"


def parse_time(text: str) -> float:
    """Seconds since the epoch from an RFC 3339 time (``Z`` or an offset; any fraction). ValueError if it is not
    one."""
    if not isinstance(text, str) or "T" not in text.upper():
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    value = text.strip()
    if value[-1:] in ("Z", "z"):
        value = value[:-1] + "+00:00"
    stamp = datetime.fromisoformat(value)
    if stamp.tzinfo is None:
        raise ValueError(f"an RFC 3339 time needs a zone: {text!r}")
    seconds = math.floor(stamp.replace(microsecond=0).timestamp())
    return (seconds * 1_000_000 + stamp.microsecond) / 1_000_000


@dataclass(frozen=True, slots=True)
class _Node:
    """The time paths of one resource below one point, as a tree walked once per object: every object read from
    the API passes through here (tens of thousands a minute in the operator), so the walk is kept to dict lookups.
    """

    each: _Node | None
    """Set for a list: the node every item is walked with."""
    fields: tuple[tuple[str, str | _Node], ...]
    """For a mapping: each key with the wire type at a leaf, or the node below it."""


@functools.cache
def _trie(gk: GroupKind) -> _Node:
    return _node([(path, wire) for path, wire in time_paths(gk)])


def _node(paths: list[tuple[Path, str]]) -> _Node:
    if paths and paths[0][0][0] == "[]":
        return _Node(each=_node([(path[1:], wire) for path, wire in paths]), fields=())
    below: dict[str, list[tuple[Path, str]]] = {}
    leaves: dict[str, str] = {}
    for path, wire in paths:
        if len(path) == 1:
            leaves[path[0]] = wire
        else:
            below.setdefault(path[0], []).append((path[1:], wire))
    return _Node(each=None, fields=(*leaves.items(), *((k, _node(v)) for k, v in below.items())))


_parse_text = functools.lru_cache(maxsize=4096)(parse_time)
"""``parse_time`` for strings, remembered: the same few times come back in every watch event of an object."""

_Where = tuple[Any, ...]
"""Where a value is: ``(parent, key or index)`` pairs from the root's ``()``, made into a dotted path only for an
error (``_where``)."""


def _convert(obj: Any, node: _Node, fn: Callable[[Any, str, _Where], Any], where: _Where) -> Any:
    """A copy of ``obj`` with ``fn(value, wire type, where)`` applied at every time path under ``node``, in one walk
    (only the containers on a path are copied, each once)."""
    each = node.each
    if each is not None:
        if not isinstance(obj, list):
            return obj
        return [_convert(item, each, fn, (where, i)) for i, item in enumerate(obj)]
    if type(obj) is not dict and not isinstance(obj, Mapping):  # the exact type first: an ABC check is slow
        return obj
    out = None
    for key, below in node.fields:
        value = obj.get(key)
        if value is None:
            continue
        if out is None:
            out = dict(obj)
        at = (where, key)
        out[key] = fn(value, below, at) if isinstance(below, str) else _convert(value, below, fn, at)
    return obj if out is None else out


def _where(where: _Where) -> str:
    parts: list[str | int] = []
    while where:
        where, part = where
        parts.append(part)
    return "".join(f"[{p}]" if isinstance(p, int) else p if i == 0 else f".{p}"
                   for i, p in enumerate(reversed(parts)))


def _resource(obj: Mapping[str, Any], gk: GroupKind | None) -> GroupKind:
    return gk if gk is not None else _TABLE.of(obj)


def encode(obj: Obj, gk: GroupKind | None = None) -> Obj:
    """The wire form of an internal object (a copy; ``obj`` is unchanged): float times become RFC 3339 strings.
    ``gk`` is the object's resource (read from ``apiVersion``/``kind`` if not given)."""
    def formatted(value: Any, wire: str, _where: _Where) -> Any:
        if not _is_number(value):
            return value
        return format_micro_time(float(value)) if wire == MICRO else format_time(float(value))

    out = _convert(obj, _trie(_resource(obj, gk)), formatted, ())
    return dict(out) if out is obj else out


def decode(obj: Obj, gk: GroupKind | None = None) -> Obj:
    """The internal form of a wire object (a copy): RFC 3339 times become float seconds; numbers stay numbers, so
    decoding twice is harmless. Raises Invalid, naming every field, for a time that does not parse."""
    errors: list[FieldError] = []

    def parse(value: Any, _wire: str, where: _Where) -> Any:
        try:
            if type(value) is str:  # what a wire object holds: parsed once per distinct time
                return _parse_text(value)
            if _is_number(value):
                if not _EARLIEST <= value <= _LATEST:  # also refuses NaN
                    raise ValueError(value)
                return float(value)
            return _parse_text(value) if isinstance(value, str) else parse_time(value)
        except (ValueError, TypeError, OverflowError):
            errors.append(FieldError(path=_where(where), value=value, rule="must be an RFC 3339 time"))
            return value

    out = _convert(obj, _trie(_resource(obj, gk)), parse, ())
    if errors:
        raise Invalid(errors=errors)
    return dict(out) if out is obj else out


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
