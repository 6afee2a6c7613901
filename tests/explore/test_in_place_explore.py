"""The explorer takes in-place update steps (podUpdatePolicy InPlaceIfPossible): the controller patches a pod's
image, the kubelet restarts the container with it, and the in-place-restart invariant holds on every path; a
predicate that forgets the in-place record is caught."""

from __future__ import annotations

from typing import Any

import pytest
from explore_sets import found, manifest, run

from rollwise.api import predicates
from rollwise.explore import environment

IN_PLACE = {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}


def _counting_restarts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = environment._in_place_restart

    def counted(node: Any, pod: Any, bounds: Any) -> Any:
        out = real(node, pod, bounds)
        if out is not None:
            seen.append(out.move.target)
        return out

    monkeypatch.setattr(environment, "_in_place_restart", counted)
    return seen


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
@pytest.mark.parametrize("faults", [0, 1])
def test_every_path_through_in_place_updates_keeps_the_invariants(
        policy: str, faults: int, monkeypatch: pytest.MonkeyPatch) -> None:
    restarts = _counting_restarts(monkeypatch)
    result = run(manifest(IN_PLACE, policy, replicas=2), replicas=2, template_changes=1, faults=faults)
    assert result.complete and found(result) == {}
    assert {"web-0", "web-1"} <= set(restarts), "the kubelet restarted both pods' containers in place"
    assert "in-place-restart" in result.invariants and "in-place" in result.invariants


def test_a_predicate_blind_to_the_in_place_record_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # The readiness rule looks for another annotation than the one the controller writes: it no longer sees it.
    monkeypatch.setattr(predicates, "IN_PLACE_ANNOTATION", "example.com/not-the-record")
    result = run(manifest(IN_PLACE, "Parallel", replicas=2), replicas=2, template_changes=1)
    problems = found(result)
    assert "counted available while its containers restart" in problems.get("in-place-restart", ""), problems
