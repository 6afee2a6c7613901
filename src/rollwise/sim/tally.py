"""The run record's per-instant figures kept as counters, not recounted: unavailable ordinals and completion.

At the end of every instant the record samples each set (``record.py``): how many ordinals in range are
unavailable, and whether the rollout is complete; ``waitFor`` asks the same. Counting over the set's pods each
time made a 1,000-replica OrderedReady run (thousands of instants) quadratic. ``Tallies`` follows the change feed
and keeps, per set, counters of its pods against the facts those figures are judged by (range, update revision,
partition, minReadySeconds): a pod change moves the counters by what that one pod contributes; a change of those
facts recounts the set once. The only thing time changes by itself is availability under minReadySeconds: pods
Ready but not yet for long enough are kept apart and looked at when a figure is asked for.

The figures are ``record.unavailable_ordinals`` and ``record.rollout_complete`` over the pods the set controls;
tests/sim/test_incremental_views.py holds the counters to them at every instant of random runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rollwise.api import predicates as p
from rollwise.api.identity import ordinal_range, parent_and_ordinal, pod_name, revision_of
from rollwise.api.meta import Obj, name_of, namespace_of, shares_owner_references, uid_of
from rollwise.api.ordinals import OrdinalSpan, position_in
from rollwise.api.strategies import partition_floor
from rollwise.cluster.protocol import Change
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.runtime.census import PerSetFollower, before_and_after

__all__ = ["Tallies"]

_Facts = tuple[OrdinalSpan, str, int, float]
"""(wanted ordinals, update revision, partition, minReadySeconds)."""


def _facts(sts: Obj) -> _Facts:
    """Read from the set's ``spec`` and its status' update revision only."""
    span = ordinal_range(sts)
    return (span, _update_revision(sts), partition_floor(sts["spec"].get("updateStrategy") or {}),
            float(sts["spec"].get("minReadySeconds") or 0))


def _update_revision(sts: Obj) -> str:
    return str((sts.get("status") or {}).get("updateRevision") or "")


@dataclass(slots=True)
class _Tally:
    sts: Obj
    facts: _Facts
    owned: dict[tuple[str, str], Obj] = field(default_factory=dict)
    """Every pod the set controls, by (namespace, name)."""
    slots: dict[int, Obj] = field(default_factory=dict)
    """In-range ordinals -> the pod of that ordinal's own name."""
    outside: int = 0
    """Controlled pods whose ordinal is out of range."""
    not_ready: int = 0
    """In-range pods terminating, or not Running and Ready."""
    wrong_revision: int = 0
    """In-range pods from the partition up not at the update revision."""
    young: set[int] = field(default_factory=set)
    """In-range ordinals whose pod is Running and Ready but maybe not yet for minReadySeconds."""

    def add(self, pod: Obj, sign: int) -> None:
        span, update, floor, mrs = self.facts
        ordinal = self._slot_of(pod)
        if ordinal is None:
            return
        if ordinal not in span:
            self.outside += sign
            return
        if sign > 0:
            self.slots[ordinal] = pod
        else:
            self.slots.pop(ordinal, None)
            self.young.discard(ordinal)
        ready = not p.is_terminating(pod) and p.is_running_and_ready(pod)
        if not ready:
            self.not_ready += sign
        elif mrs > 0 and sign > 0:
            self.young.add(ordinal)
        if position_in(span, ordinal) >= floor and revision_of(pod) != update:
            self.wrong_revision += sign

    def replace(self, old: Obj, new: Obj) -> None:
        """``add(old, -1)`` then ``add(new, 1)`` for two states of one pod (the same name), reading the name
        once."""
        span, update, floor, mrs = self.facts
        ordinal = parent_and_ordinal(name_of(new))[1]
        if self.slots.get(ordinal) is not old:  # else the old state held its slot: in range, of the set's own name
            slot = self._slot_of(new)
            if slot is None or slot not in span:
                return  # out of range or not of the set's own name: it stays so
            ordinal = slot
        self.slots[ordinal] = new
        self.young.discard(ordinal)
        was_ready = not p.is_terminating(old) and p.is_running_and_ready(old)
        ready = not p.is_terminating(new) and p.is_running_and_ready(new)
        self.not_ready += was_ready - ready
        if ready and mrs > 0:
            self.young.add(ordinal)
        if position_in(span, ordinal) >= floor and new["metadata"].get("labels") is not old["metadata"].get("labels"):
            self.wrong_revision += (revision_of(new) != update) - (revision_of(old) != update)

    def _slot_of(self, pod: Obj) -> int | None:
        """The pod's ordinal; None for a pod in range whose name is not the set's own for it (it counts nowhere)."""
        name = name_of(pod)
        ordinal = parent_and_ordinal(name)[1]
        if ordinal in self.facts[0] and name != pod_name(name_of(self.sts), ordinal):
            return None
        return ordinal

    def recount(self) -> None:
        self.slots, self.young = {}, set()
        self.outside = self.not_ready = self.wrong_revision = 0
        for pod in self.owned.values():
            self.add(pod, 1)

    def unavailable(self, now: float) -> int:
        span, _, _, mrs = self.facts
        waiting = {o for o in self.young if not p.is_available(self.slots[o], mrs, now)}
        self.young = waiting  # available stays available until the pod changes (it then comes back through add)
        return (len(span) - len(self.slots)) + self.not_ready + len(waiting)

    def complete(self) -> bool:
        status = self.sts.get("status") or {}
        if status.get("observedGeneration") != self.sts["metadata"].get("generation") or not status.get(
                "updateRevision"):
            return False
        return (self.outside == 0 and len(self.slots) == len(self.facts[0]) and self.not_ready == 0
                and self.wrong_revision == 0)


class Tallies(PerSetFollower[_Tally]):
    """Per-set counters for the run record, fed every change of the feed (``on_change``)."""

    def __init__(self, cluster: MemoryCluster) -> None:
        super().__init__(cluster)
        self._read_sets(cluster)

    def on_change(self, ch: Change) -> None:
        if ch.kind == "Pod":
            if self._restatus(ch):
                return
            before, after = before_and_after(ch)
            held = None
            if before is not None and (held := self._entry_of(before)) is not None:
                self._forget(held, before)
            if after is not None and (tally := self._entry_of(after)) is not None:
                if tally is not held:
                    self._forget(tally, after)  # a pod read when the set was first seen may come again here
                tally.owned[(ch.namespace, ch.name)] = after
                tally.add(after, 1)
        elif ch.of_statefulset:
            self._set_changed(ch)

    def _restatus(self, ch: Change) -> bool:
        """A write that kept the pod's owner references as they were (a status write shares them) to a pod its
        tally holds: the tally swaps the two states instead of forgetting one and adding the other. False: not
        such a write."""
        old, new = ch.old, ch.obj
        if ch.type != "MODIFIED" or old is None:
            return False
        if not shares_owner_references(old, new):
            return False
        tally = self._entry_of(new)
        key = (ch.namespace, ch.name)
        if tally is None or tally.owned.get(key) is not old:
            return False
        tally.owned[key] = new
        tally.replace(old, new)
        return True

    def _new_entry(self, sts: Obj) -> _Tally:
        return _Tally(sts=sts, facts=_facts(sts))

    def _take_pod(self, entry: _Tally, pod: Obj) -> None:
        self._remember(entry, pod)

    def _update(self, tally: _Tally, sts: Obj) -> None:
        before, tally.sts = tally.sts, sts
        if sts["spec"] is before["spec"] and _update_revision(sts) == _update_revision(before):
            return  # the facts read nothing else (a status write shares the spec)
        facts = _facts(sts)
        if facts != tally.facts:
            tally.facts = facts
            tally.recount()

    def _remember(self, tally: _Tally, pod: Obj) -> None:
        self._forget(tally, pod)  # idempotent: a pod read at the set's creation may come again through the feed
        tally.owned[(namespace_of(pod), name_of(pod))] = pod
        tally.add(pod, 1)

    def _forget(self, tally: _Tally, pod: Obj) -> None:
        """Take back what the stored object of that name added (not ``pod``'s: they may differ)."""
        stored = tally.owned.pop((namespace_of(pod), name_of(pod)), None)
        if stored is not None:
            tally.add(stored, -1)

    def unavailable(self, sts: Obj, now: float) -> int:
        """``record.unavailable_ordinals`` of the set at ``now``."""
        return self._sets[uid_of(sts)].unavailable(now)

    def complete(self, sts: Obj) -> bool:
        """``record.rollout_complete`` of the set."""
        return self._sets[uid_of(sts)].complete()
