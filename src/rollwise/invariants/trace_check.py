"""``rollwise check-trace``'s judge: a run's record, line by line, against the rules (``rules``, ``store``).

Two records: the decision log (``--trace``: each reconcile that acted, with the view it decided from) carries
everything the rules read; the audit log (``up --audit-log``: one line per write, metadata only) carries who wrote
what and when, so only the rules that need no object can be judged from it (docs/check-trace.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.meta import name_of, uid_of
from rollwise.controllers.plan import CreatePod, DeletePod
from rollwise.invariants import store
from rollwise.invariants.actors import DeleteActors
from rollwise.invariants.decision import Birth, Decision, birth
from rollwise.invariants.log import NOT_LOGGED, TraceError, decode, requeue_of
from rollwise.invariants.quiescence import settled_writes
from rollwise.invariants.rules import TRANSITION_RULES

__all__ = ["MalformedLine", "Violation", "check_trace", "describe"]


class MalformedLine(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.detail = message


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    message: str
    line: int
    shown_by: tuple[int, ...]
    """The lines that show it, ascending (the violating line last)."""


@dataclass(slots=True)
class _SetTrack:
    births: dict[str, tuple[Birth, int]] = field(default_factory=dict)
    """Pod name → the context the controller created it under, and the line of the create."""
    claims: dict[str, int] = field(default_factory=dict)
    """The set's claims in the last view, each with the line it was last seen on."""


def _lines(text: Iterable[str]) -> Iterator[tuple[int, Any]]:
    for number, raw in enumerate(text, start=1):
        if not raw.strip():
            continue
        try:
            yield number, json.loads(raw)
        except ValueError as err:
            raise MalformedLine(number, f"not JSON ({err})") from None


def check_trace(text: Iterable[str]) -> tuple[str, int, Violation | None]:
    """The record's kind (``decisions`` or ``audit``), how many entries were judged, and the first violation."""
    lines = _lines(text)
    first = next(lines, None)
    if first is None:
        return "empty", 0, None
    doc = first[1]
    if isinstance(doc, dict) and "verb" in doc:
        return "audit", *_check_audit(_chain(first, lines))
    return "decisions", *_check_decisions(_chain(first, lines))


def _chain(first: tuple[int, Any], rest: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    yield first
    yield from rest


# -- the decision log ------------------------------------------------------------------------------------------


def _check_decisions(lines: Iterable[tuple[int, Any]]) -> tuple[int, Violation | None]:
    tracks: dict[str, _SetTrack] = {}
    last: dict[tuple[str, str], tuple[Decision, float | None, int]] = {}
    """(set, controller) → its last logged decision, that decision's requeue and its line (quiescence)."""
    count = 0
    for number, doc in lines:
        try:
            controller, decision = decode(doc)
            requeue = requeue_of(doc)
        except TraceError as err:
            raise MalformedLine(number, str(err)) from None
        count += 1
        key = uid_of(decision.view.set) or name_of(decision.view.set)
        try:
            found = _judge(decision, tracks.setdefault(key, _SetTrack()), number) or _settled(
                last.get((key, controller)), decision, number)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise MalformedLine(number, f"an object lacks what the rules read ({type(err).__name__}: {err})") from None
        if found is not None:
            return count, found
        if requeue == NOT_LOGGED:
            last.pop((key, controller), None)  # an older log: no requeue to judge the next decision against
        else:
            last[(key, controller)] = (decision, requeue if not isinstance(requeue, str) else None, number)
    return count, None


def _settled(previous: tuple[Decision, float | None, int] | None, decision: Decision,
             number: int) -> Violation | None:
    """The quiescence rule's second form: a decision on the world the controller's previous one left, before that
    one's requeue, writes nothing (reconciles that decided nothing are not logged and change nothing)."""
    if previous is None:
        return None
    first, requeue, line = previous
    problems = settled_writes(first, requeue, decision)
    return Violation("quiescence", problems[0], number, (line, number)) if problems else None


def _judge(d: Decision, track: _SetTrack, number: int) -> Violation | None:
    view = d.view
    if not d.quorum:
        alive = {name_of(pod) for pod in view.pods}
        track.births = {k: v for k, v in track.births.items() if k in alive}
    rules_decision = Decision(view=view, actions=d.actions, quorum=d.quorum,
                              births={k: v[0] for k, v in track.births.items()})
    for name, rule in TRANSITION_RULES.items():
        problems = rule(rules_decision)
        if problems:
            shown = {number}
            if name == "no-churn":
                shown |= {track.births[name_of(p)][1] for p in rules_decision.deleted() if name_of(p) in track.births}
            return Violation(name, problems[0], number, tuple(sorted(shown)))
    for name, problems in (("one-pod-per-ordinal", store.one_pod_per_ordinal(view.pods)),
                           ("recreate-never-mixes", store.recreate_never_mixes(view.set, view.pods, view.gates))):
        if problems:
            return Violation(name, problems[0], number, (number,))
    claims = _claims_of(d)
    retention = view.set["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
    lost = store.claims_lost(track.claims, claims, rules_decision.span, retention.get("whenScaled") or "Retain")
    if lost:
        gone = lost[0].split()[1]
        return Violation("claims", lost[0], number, (track.claims.get(gone, number), number))
    track.claims = dict.fromkeys(claims, number)
    if not d.quorum:
        context = birth(view.set, rules_decision.limits)
        for action in d.actions:
            if isinstance(action, CreatePod):
                track.births[name_of(action.pod)] = (context, number)
            elif isinstance(action, DeletePod):
                track.births.pop(action.name, None)
    return None


def _claims_of(d: Decision) -> list[str]:
    """The set's own claims in the view: ``<template>-<set>-<ordinal>``."""
    sts = d.view.set
    prefixes = [f"{name_of(t)}-{name_of(sts)}-" for t in sts["spec"].get("volumeClaimTemplates") or ()]
    return [name for name in d.view.claims
            if any(name.startswith(pre) and name[len(pre):].isdigit() for pre in prefixes)]


# -- the audit log ---------------------------------------------------------------------------------------------

_AUDIT_FIELDS = {"user": str, "verb": str, "resource": str, "namespace": str, "name": str, "code": int}
CONTROLLER_PREFIX = "system:serviceaccount:"


def _audit_entry(number: int, doc: Any) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise MalformedLine(number, f"want a JSON object, got {type(doc).__name__}")
    for key, kind in _AUDIT_FIELDS.items():
        if not isinstance(doc.get(key), kind) or isinstance(doc.get(key), bool):
            got = type(doc[key]).__name__ if key in doc else "nothing"
            raise MalformedLine(number, f"{key}: want {kind.__name__}, got {got} (an audit line of up --audit-log)")
    return doc


def _check_audit(lines: Iterable[tuple[int, Any]]) -> tuple[int, Violation | None]:
    alive: dict[tuple[str, str], int] = {}
    """Pods created and not deleted since: (namespace, name) → the line of the create."""
    sets: set[tuple[str, str]] = set()
    controllers: set[str] = set()
    deleters = DeleteActors()
    count = 0
    for number, doc in lines:
        e = _audit_entry(number, doc)
        count += 1
        if e["resource"] == "pods" and e["verb"] == "delete" and (
                first := deleters.delete_asked((e["namespace"], e["name"]), e["user"], number)) is not None:
            return count, Violation("one-actor-per-object", f"{e['user']} deletes pod {e['namespace']}/{e['name']}, "
                                    f"which {first[0]} already asked to delete: two controllers act on one object",
                                    number, (first[1], number))
        if not 200 <= e["code"] < 300:
            continue  # a refused write changed nothing
        resource, verb, key = e["resource"], e["verb"], (e["namespace"], e["name"])
        kind, _, sub = resource.partition("/")
        if kind.split(".")[0] == "statefulsets":
            sets.add(key)
            if sub == "status" or e["user"].startswith(CONTROLLER_PREFIX):
                controllers.add(e["user"])  # who writes a set's status runs its controller
            if verb == "delete" and not sub:
                alive = {k: v for k, v in alive.items() if not _member_of(k, key)}
            continue
        if kind != "pods" or sub:
            continue
        if verb == "create":
            if key in alive:
                return count, Violation("one-pod-per-ordinal",
                                        f"pod {e['namespace']}/{e['name']} created again, never deleted since its "
                                        f"create", number, (alive[key], number))
            alive[key] = number
            deleters.created(key)
        elif verb == "delete":
            alive.pop(key, None)
        is_controller = e["user"] in controllers or e["user"].startswith(CONTROLLER_PREFIX)
        if is_controller and verb in ("delete", "patch", "update") and not any(_member_of(key, s) for s in sets):
            return count, Violation("foreign-write", f"{e['user']} {verb}s pod {e['namespace']}/{e['name']}, which "
                                    "no StatefulSet in the log names as a member (<set>-<ordinal>)",
                                    number, (number,))
    return count, None


def _member_of(pod: tuple[str, str], sts: tuple[str, str]) -> bool:
    prefix = sts[1] + "-"
    return pod[0] == sts[0] and pod[1].startswith(prefix) and pod[1][len(prefix):].isdigit()


def describe(doc: Any) -> str:
    """One line of a record, in words (for the lines that show a violation)."""
    if not isinstance(doc, dict):
        return str(doc)[:200]
    if "verb" in doc:
        return (f"{doc.get('user')} {doc.get('verb')} {doc.get('resource')} {doc.get('namespace')}/{doc.get('name')}"
                f" -> {doc.get('code')}")
    s = doc.get("set") or {}
    acts = "; ".join(f"{a.get('type')} {_target(a)}: {a.get('reason', '')}".rstrip(": ")
                     for a in doc.get("actions") or () if isinstance(a, dict))
    return f"t={doc.get('time')} {doc.get('controller')} {s.get('namespace')}/{s.get('name')}: {acts}"


def _target(action: dict[str, Any]) -> str:
    if isinstance(action.get("name"), str):
        return str(action["name"])
    for key in ("pod", "claim", "revision"):
        obj = action.get(key)
        if isinstance(obj, dict):
            return str((obj.get("metadata") or {}).get("name", ""))
    return ""


