"""Injected API failures for the memory store (after upstream's fake ``SetCreateStatefulPodError(err, after)``)."""

from __future__ import annotations

from collections.abc import Hashable

from rollwise.api.errors import ApiStatusError

__all__ = ["FaultPlan"]


class _Fault:
    __slots__ = ("error", "skip", "times")

    def __init__(self, error: ApiStatusError, skip: int, times: int) -> None:
        self.error, self.skip, self.times = error, skip, times


class FaultPlan:
    """Which calls fail: per (verb, resource), each injection counts calls on its own."""

    def __init__(self, verbs: frozenset[str]) -> None:
        self._verbs = verbs
        self._faults: dict[tuple[str, Hashable], list[_Fault]] = {}

    def add(self, verb: str, kind: Hashable, error: ApiStatusError, *, after: int, times: int) -> None:
        if verb not in self._verbs:
            raise ValueError(f"verb must be one of {sorted(self._verbs)}, not {verb!r}")
        if after < 0 or times < 1:
            raise ValueError("after must be >= 0 and times >= 1")
        self._faults.setdefault((verb, kind), []).append(_Fault(error, after, times))

    def check(self, verb: str, kind: Hashable) -> None:
        """Count this call; raise the oldest injection that fires on it (the call then writes nothing)."""
        rules = self._faults.get((verb, kind))
        if not rules:
            return
        fired: ApiStatusError | None = None
        for rule in rules:
            if rule.skip > 0:
                rule.skip -= 1
                continue
            rule.times -= 1
            if fired is None:
                fired = rule.error
        rules[:] = [r for r in rules if r.times > 0]
        if fired is not None:
            raise fired.with_traceback(None)  # the same instance may be raised many times
