"""What a quorum model reported in a result document (spec/simulate.md), for ``--plot``: per set, the intervals
quorum was lost, leader tenures and every leader change, rebuilt from its ``QuorumLost``, ``QuorumRestored`` and
``LeaderChanged`` events. No matplotlib here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.identity import parent_and_ordinal
from rollwise.cli.timeline import end_time

__all__ = ["QuorumMarks", "quorum_marks"]


@dataclass(frozen=True, slots=True, kw_only=True)
class QuorumMarks:
    """What a quorum model reported for one set: outages, leader tenures and every leader change."""

    lost: tuple[tuple[float, float], ...] = ()
    leaders: tuple[tuple[float, float, str], ...] = ()  # (start, end, pod)
    changes: tuple[tuple[float, str | None], ...] = ()  # (t, new leader or None)


def _quorum_set(ev: Mapping[str, Any], last: str | None, result: Mapping[str, Any]) -> str | None:
    named = ev.get("statefulSet") or ev.get("set")
    if named:
        return str(named)
    if ev.get("pod"):
        return parent_and_ordinal(str(ev["pod"]))[0] or None
    if last is not None:  # QuorumLost/Restored carry no pod: the set whose leader we saw last
        return last
    sets = [name for name, fig in (result.get("summary") or {}).items() if fig.get("quorumLossSeconds") is not None]
    return sets[0] if len(sets) == 1 else None


def quorum_marks(result: Mapping[str, Any]) -> dict[str, QuorumMarks]:
    """Per set with quorum events: the intervals quorum was lost, leader tenures and leader changes."""
    end = end_time(result)
    lost: dict[str, list[tuple[float, float]]] = {}
    leaders: dict[str, list[tuple[float, float, str]]] = {}
    changes: dict[str, list[tuple[float, str | None]]] = {}
    lost_since: dict[str, float] = {}
    leader: dict[str, tuple[float, str]] = {}
    last: str | None = None
    for ev in result.get("events") or ():
        if ev["type"] not in ("QuorumLost", "QuorumRestored", "LeaderChanged"):
            continue
        t, name = float(ev["t"]), _quorum_set(ev, last, result)
        if name is None:
            continue
        last = name
        changes.setdefault(name, [])
        if ev["type"] == "QuorumLost":
            lost_since.setdefault(name, t)
        elif ev["type"] == "QuorumRestored" and name in lost_since:
            lost.setdefault(name, []).append((lost_since.pop(name), t))
        elif ev["type"] == "LeaderChanged":
            if name in leader:
                since, pod = leader.pop(name)
                leaders.setdefault(name, []).append((since, t, pod))
            if ev.get("pod"):
                leader[name] = (t, ev["pod"])
            changes[name].append((t, ev.get("pod")))
    for name, since in lost_since.items():
        lost.setdefault(name, []).append((since, end))
    for name, (since, pod) in leader.items():
        leaders.setdefault(name, []).append((since, end, pod))
    return {name: QuorumMarks(lost=tuple(lost.get(name, ())), leaders=tuple(leaders.get(name, ())),
                              changes=tuple(ch)) for name, ch in changes.items()}
