"""Timestamps at the wire edge: the store keeps float seconds, the API speaks RFC 3339.

``Time`` fields have whole seconds (``2026-01-02T03:04:05Z``), ``MicroTime`` fields six fractional digits. The
fields are recognised by name, wherever they sit, and converted only between the two expected types, so an
unrelated value under such a name passes untouched.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

__all__ = ["MICRO_TIME_FIELDS", "TIME_FIELDS", "format_time", "from_wire", "parse_time", "to_wire"]

TIME_FIELDS = frozenset({
    "creationTimestamp", "deletionTimestamp", "lastTransitionTime", "lastProbeTime", "lastUpdateTime",
    "lastHeartbeatTime", "startTime", "startedAt", "finishedAt", "firstTimestamp", "lastTimestamp",
    "lastScaleTime", "completionTime",
})
MICRO_TIME_FIELDS = frozenset({"eventTime", "acquireTime", "renewTime"})


def format_time(seconds: float, *, micro: bool = False) -> str:
    dt = datetime.fromtimestamp(seconds, UTC)
    if micro:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> float | None:
    """Seconds since the epoch for an RFC 3339 string, None if it is not one."""
    s = text.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def to_wire(value: Any) -> Any:
    """A copy of ``value`` with float timestamps rendered as RFC 3339."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(v, int | float) and not isinstance(v, bool) and (k in TIME_FIELDS or k in MICRO_TIME_FIELDS):
                out[k] = format_time(float(v), micro=k in MICRO_TIME_FIELDS)
            else:
                out[k] = to_wire(v)
        return out
    if isinstance(value, list):
        return [to_wire(v) for v in value]
    return value


def from_wire(value: Any) -> Any:
    """A copy of ``value`` with RFC 3339 timestamps parsed to float seconds."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(v, str) and (k in TIME_FIELDS or k in MICRO_TIME_FIELDS):
                parsed = parse_time(v)
                out[k] = v if parsed is None else parsed
            else:
                out[k] = from_wire(v)
        return out
    if isinstance(value, list):
        return [from_wire(v) for v in value]
    return value
