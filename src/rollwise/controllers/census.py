"""Which of a set's pods a reconcile can skip: the quiet ones, counted instead of walked.

Upstream's controller walks every pod of the set on every sync, and so did ours: under OrderedReady a rollout is
thousands of reconciles, each O(replicas), so the simulator was quadratic. Most pods, most of the time, ask for
nothing. A *quiet* pod is one every phase of the reconcile passes over without an action, a wait or a stop, and
whose only contribution is to the counters: owned and matching (adoption has nothing to do), in range, not
terminating, Running and Ready and available past the requeue instant, identity and storage as they should be,
claims' owner references as the retention policy wants, and at the current or the update revision. The phases
walk the others (``Census.loud``: in-range ordinals with no quiet pod) and take quiet pods from counts; the only
quiet pods a phase looks at one by one are the outdated ones an update replaces, highest first, and it stops
when it has spent its budget.

A census is judged against a ``QuietContext``: the facts of the set that decide quietness (its identity,
selector, range, claim templates, retention policy, ``minReadySeconds`` and the two revisions). Quietness is
monotone in time: a quiet pod stays quiet until it, its claims or the context change, which is what lets a driver
keep a census up to date from its change feed (``sim/census.py``) instead of computing it on every
reconcile. ``reconcile`` uses a census from the view only when its context is the one it derives itself; else it
takes one over the view's pods. ``loud_census`` declares nothing quiet: every phase then walks every pod as
upstream does, which is the oracle the equivalence tests compare against.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import overload

from rollwise.api import predicates as p
from rollwise.api.identity import (
    claim_name,
    identity_matches,
    is_member_of,
    ordinal_of,
    ordinal_range,
    revision_of,
    storage_matches,
)
from rollwise.api.lifecycle import is_preparing_delete
from rollwise.api.memo import IdentityMemo
from rollwise.api.meta import Obj, controller_of, labels, name_of, namespace_of, selector_matches, uid_of
from rollwise.api.ordinals import OrdinalSpan, index_in
from rollwise.api.records import dataclass
from rollwise.api.retention import claim_owners_up_to_date

__all__ = [
    "REQUEUE_EPSILON",
    "Census",
    "QuietContext",
    "Slots",
    "census_of",
    "is_quiet",
    "loud_census",
    "quiet_at",
    "quiet_context",
]

REQUEUE_EPSILON = 1e-3
"""Availability is strict (Ready for *longer than* minReadySeconds), so the controller looks just after the instant
it flips; a pod is quiet only once that look is behind it (the requeue computation would otherwise still name it)."""


@dataclass(frozen=True, slots=True)
class QuietContext:
    """The facts of a set that quietness depends on. Two reconciles with equal contexts classify pods alike."""

    uid: str
    name: str
    namespace: str
    kind: str
    selector: str
    """The selector as canonical JSON (a dict does not hash)."""
    span: OrdinalSpan
    """The wanted ordinals (``api.identity.ordinal_range``): slot i holds the pod of ``span[i]``."""
    replicas: int
    templates: tuple[str, ...]
    retention: str
    min_ready_seconds: float
    update_revision: str
    current_revision: str


_CONTEXTS: IdentityMemo[QuietContext] = IdentityMemo()


def quiet_context(sts: Obj, *, update_revision: str, current_revision: str) -> QuietContext:
    """The set's context, memoised on the identity of its spec (api/memo.py): a status write shares the spec, so a
    set reconciled on every pod event builds its context once per spec version."""
    meta = sts.get("metadata") or {}
    extra = (str(meta.get("uid", "")), name_of(sts), str(sts.get("kind", "")), update_revision, current_revision)
    return _CONTEXTS.cached((sts["spec"],), extra, lambda: _context(sts, update_revision, current_revision))


def _context(sts: Obj, update_revision: str, current_revision: str) -> QuietContext:
    spec = sts["spec"]
    span = ordinal_range(sts)
    return QuietContext(
        uid=uid_of(sts), name=name_of(sts), namespace=namespace_of(sts), kind=str(sts.get("kind", "")),
        selector=json.dumps(spec.get("selector"), sort_keys=True, default=str),
        span=span, replicas=len(span),
        templates=tuple(str((t.get("metadata") or {}).get("name", "")) for t in spec.get("volumeClaimTemplates") or ()),
        retention=json.dumps(spec.get("persistentVolumeClaimRetentionPolicy"), sort_keys=True, default=str),
        min_ready_seconds=float(spec.get("minReadySeconds") or 0),
        update_revision=update_revision, current_revision=current_revision)


def is_quiet(ctx: QuietContext, sts: Obj, pod: Obj, claims: Mapping[str, Obj], now: float) -> bool:
    """Every phase of a reconcile at ``now`` (or later, while nothing it reads changes) passes this pod over.

    Each clause names the phase that would otherwise act on or stop at the pod. The cheap clauses that most pods
    on their way up fail come first (a pod is asked about on every write the kubelet makes)."""
    meta = pod["metadata"]
    if meta.get("deletionTimestamp") is not None:  # every phase: terminating pods wait or block
        return False
    ref = controller_of(pod)
    if ref is None or ref.get("uid") != ctx.uid:  # ownership: adoption or not ours
        return False
    if is_preparing_delete(pod):  # pre-delete hooks: a marked pod is going (controllers/statefulset/hooks.py)
        return False
    if not p.is_running_and_ready(pod):  # creation, repair, failed pods, the budget, timeouts
        return False
    if not selector_matches(sts["spec"].get("selector"), labels(pod)) or not is_member_of(sts, pod):
        return False  # ownership: released
    index = index_in(ctx.span, ordinal_of(pod))
    if index < 0:  # scale-down (or a reserved ordinal): condemned
        return False
    if revision_of(pod) not in (ctx.update_revision, ctx.current_revision):  # history and status counters
        return False
    if ctx.min_ready_seconds > 0:
        at = p.available_at(pod, ctx.min_ready_seconds)
        if at is None or at + REQUEUE_EPSILON > now:  # availability and the requeue instant
            return False
    if not identity_matches(sts, pod) or not storage_matches(sts, pod):  # identity repair
        return False
    if ctx.templates and uid_of(pod):  # in-range claims' owner references (claims.keep_in_range_claims)
        ordinal = ordinal_of(pod)
        for template in ctx.templates:
            existing = claims.get(claim_name(template, ctx.name, ordinal))
            if existing is not None and not claim_owners_up_to_date(existing, sts, pod, condemned=False):
                return False
    return True


class Slots(Sequence["Obj | None"]):
    """The in-range slots of one reconcile: the census' quiet slots with the loud pods laid over them, without
    copying the quiet ones (a copy per reconcile is O(replicas), which the census exists to avoid)."""

    __slots__ = ("_base", "_over")

    def __init__(self, base: Sequence[Obj | None], over: dict[int, Obj]) -> None:
        self._base = base
        self._over = over

    def __len__(self) -> int:
        return len(self._base)

    @overload
    def __getitem__(self, index: int) -> Obj | None: ...

    @overload
    def __getitem__(self, index: slice) -> list[Obj | None]: ...

    def __getitem__(self, index: int | slice) -> Obj | list[Obj | None] | None:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._base)))]
        if index < 0:
            index += len(self._base)
        pod = self._over.get(index)
        return pod if pod is not None else self._base[index]

    def __iter__(self) -> Iterator[Obj | None]:
        over = self._over
        for index, pod in enumerate(self._base):
            yield over.get(index, pod)


@dataclass(frozen=True, slots=True)
class Census:
    """The set's in-range ordinals split into quiet pods and the rest, for one ``QuietContext``.

    ``slots[i]`` is the quiet pod of index i (ordinal ``start + i``), None where there is none; ``loud`` lists, in
    ascending order, the indexes with no quiet pod (missing, or a pod some phase must look at); ``quiet_outdated``
    the indexes of quiet pods at the current revision when it is not the update revision, ascending;
    ``quiet_updated`` counts quiet pods at the update revision; ``others`` are the candidate pods that are not
    quiet (loud owned pods, condemned ones, orphans), in the order the view gave them.

    A driver may hand over its own live sequences rather than copies: a census, like its view, is read during the
    reconcile it was made for, before the driver takes in the next change."""

    ctx: QuietContext
    slots: Sequence[Obj | None]
    loud: Sequence[int]
    quiet_outdated: Sequence[int]
    quiet_updated: int
    others: tuple[Obj, ...]


Classifier = Callable[[QuietContext, Obj, Obj, Mapping[str, Obj], float], bool]


def census_of(ctx: QuietContext, sts: Obj, candidates: Iterable[Obj], claims: Mapping[str, Obj], now: float,
              *, classify: Classifier = is_quiet) -> Census:
    """The census over ``candidates`` (what a view offers: owned pods and orphans), computed in full."""
    candidates = tuple(candidates)
    slots: list[Obj | None] = [None] * ctx.replicas
    others: list[Obj] = []
    quiet_updated = 0
    outdated: list[int] = []
    for pod in candidates:
        if classify(ctx, sts, pod, claims, now):
            index = index_in(ctx.span, ordinal_of(pod))
            if slots[index] is not None:  # two quiet pods for one ordinal: let the phases sort them out
                return loud_census(ctx, candidates)
            slots[index] = pod
            if revision_of(pod) == ctx.update_revision:
                quiet_updated += 1
            else:
                outdated.append(index)
        else:
            others.append(pod)
    outdated.sort()
    loud = [i for i, pod in enumerate(slots) if pod is None]
    return Census(ctx=ctx, slots=slots, loud=loud, quiet_outdated=outdated, quiet_updated=quiet_updated,
                  others=tuple(others))


def loud_census(ctx: QuietContext, candidates: Iterable[Obj]) -> Census:
    """Nothing quiet: every phase walks every pod (the full computation, and the oracle of the tests)."""
    return Census(ctx=ctx, slots=[None] * ctx.replicas, loud=list(range(ctx.replicas)), quiet_outdated=[],
                  quiet_updated=0, others=tuple(candidates))


def quiet_at(census: Census, name: str) -> int | None:
    """The index of the quiet pod of that name, or None when no quiet pod has it."""
    _, _, tail = name.rpartition("-")
    if not tail.isdigit():
        return None
    index = index_in(census.ctx.span, int(tail))
    if 0 <= index < len(census.slots):
        pod = census.slots[index]
        if pod is not None and name_of(pod) == name:
            return index
    return None
