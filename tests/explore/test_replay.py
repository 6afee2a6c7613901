"""Traces become scenario files the simulator replays: user moves are steps, pod progress is time."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from explore_sets import STRATEGIES, manifest

from rollwise.api.features import FeatureGates
from rollwise.cli import main
from rollwise.explore import Bounds, Move, initial_node
from rollwise.explore.replay import replay_shows, trace_to_scenario, unreplayable
from rollwise.scenario.scenario import parse_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios" / "explore"


def _facts(replicas: int = 2):  # type: ignore[no-untyped-def]
    obj = manifest(STRATEGIES["RollingUpdate"][0], "Parallel", replicas=replicas)
    bounds = Bounds(replicas=replicas)
    return obj, bounds, initial_node(obj, gates=FeatureGates(), bounds=bounds).facts


def test_pod_progress_becomes_time_between_steps() -> None:
    obj, bounds, facts = _facts()
    trace = [
        Move(actor="statefulset-controller", kind="reconciles", created=("web-0", "web-1")),
        Move(actor="kubelet", kind="container starts", target="web-0"),
        Move(actor="kubelet", kind="readiness passes", target="web-0"),
        Move(actor="user", kind="changes the template", target="web", detail="image app:v1-next, good"),
        Move(actor="kubelet", kind="fault: crash", target="web-1"),
        Move(actor="statefulset-controller", kind="reconciles", deleted=("web-1",)),
        Move(actor="user", kind="scales", target="web", detail="to 1 replicas"),
    ]
    doc = trace_to_scenario(obj, facts, bounds, trace, invariant="budget", message="m")
    assert doc["steps"][0] == {"after": 7.0}
    assert doc["steps"][1]["patch"]["merge"]["spec"]["template"]["spec"]["containers"][0]["image"] == "app:v1-next"
    # Back to back at one instant, unless the trace has the controller act in between.
    assert doc["steps"][2:5] == [{"podFault": {"pod": "web-1", "fault": "crash"}}, {"after": 0.001},
                                 {"scale": {"name": "web", "replicas": 1}}]
    assert doc["steps"][-1] == {"waitFor": {"rolloutComplete": "web", "timeout": 600}}
    parse_scenario(doc)  # a valid scenario file


@pytest.mark.parametrize(("kind", "why"), [("reconciles on a stale view", "stale view"),
                                           ("crashes mid-plan", "crash"), ("fault: pull-fault", "pull failure")])
def test_what_the_simulator_cannot_express_is_named(kind: str, why: str) -> None:
    notes = unreplayable([Move(actor="statefulset-controller", kind=kind)])
    assert len(notes) == 1 and why in notes[0]


def test_a_trace_without_violation_does_not_replay_one() -> None:
    obj, bounds, facts = _facts()
    trace = [Move(actor="statefulset-controller", kind="reconciles", created=("web-0", "web-1"))]
    doc = trace_to_scenario(obj, facts, bounds, trace, invariant="claims", message="m")
    assert replay_shows(doc, "claims", facts) is False
    assert replay_shows(doc, "liveness", facts) is False


def test_the_reversed_scale_down_scenario_keeps_its_claim() -> None:
    # The explorer's replay of the claim it found lost; it replayed the loss in the simulator until the fix.
    doc = yaml.safe_load((SCENARIOS / "claim-lost-on-reversed-scale-down.yaml").read_text())
    _, _, facts = _facts()
    assert replay_shows(doc, "claims", facts) is False


def test_the_quorum_aware_rollout_fixed_mid_creation_completes_in_the_simulator(
        capsys: pytest.CaptureFixture[str]) -> None:
    # The explorer's replay of test_known_violations' quorum-aware liveness trace: its expect block asks for a
    # completed rollout, which the simulator does not reach either.
    code = main(["simulate", str(SCENARIOS / "quorum-aware-stuck-on-broken-member.yaml"), "--json"])
    capsys.readouterr()
    assert code == 0
