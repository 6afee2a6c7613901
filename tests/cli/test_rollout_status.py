"""`rollwise rollout status` prints kubectl's StatefulSet progress lines (kubectl `rollout_status.go`) and says when
the rollout is done; OnDelete is refused as kubectl refuses non-rolling strategies."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.cli.kubetarget import parse_target
from rollwise.cli.rollout import RolloutError, status_message
from rollwise.cluster.resources import ROLLWISE_STATEFULSET, STATEFULSET


def _sts(*, generation: int = 2, strategy: dict[str, Any] | None = None, **status: Any) -> dict[str, Any]:
    base = {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 3, "currentReplicas": 3,
            "currentRevision": "web-b", "updateRevision": "web-b"}
    return {"metadata": {"name": "web", "generation": generation},
            "spec": {"replicas": 3, "updateStrategy": strategy or {"type": "RollingUpdate"}},
            "status": {**base, **status}}


@pytest.mark.parametrize(("sts", "line", "done"), [
    (_sts(generation=3), "Waiting for statefulset spec update to be observed...", False),
    (_sts(observedGeneration=0), "Waiting for statefulset spec update to be observed...", False),
    (_sts(readyReplicas=1), "Waiting for 2 pods to be ready...", False),
    (_sts(updatedReplicas=1, currentRevision="web-a"),
     "waiting for statefulset rolling update to complete 1 pods at revision web-b...", False),
    (_sts(), "statefulset rolling update complete 3 pods at revision web-b...", True),
    (_sts(strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}, updatedReplicas=0,
          currentRevision="web-a"),
     "Waiting for partitioned roll out to finish: 0 out of 1 new pods have been updated...", False),
    (_sts(strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}, updatedReplicas=1,
          currentRevision="web-a"),
     "partitioned roll out complete: 1 new pods have been updated...", True),
    (_sts(strategy={"type": "Recreate"}), "statefulset rolling update complete 3 pods at revision web-b...", True),
])
def test_status_lines_follow_kubectl(sts: dict[str, Any], line: str, done: bool) -> None:
    assert status_message(sts) == (line, done)


def test_on_delete_has_no_rollout_status() -> None:
    with pytest.raises(RolloutError, match="OnDelete"):
        status_message(_sts(strategy={"type": "OnDelete"}))


@pytest.mark.parametrize(("text", "kind", "display"), [
    ("rsts/web", ROLLWISE_STATEFULSET, "statefulset.apps.rollwise.dev/web"),
    ("statefulsets.apps.rollwise.dev/web", ROLLWISE_STATEFULSET, "statefulset.apps.rollwise.dev/web"),
    ("sts/web", STATEFULSET, "statefulset.apps/web"),
    ("StatefulSet/web", STATEFULSET, "statefulset.apps/web"),
])
def test_targets_read_as_kubectl_spells_them(text: str, kind: Any, display: str) -> None:
    target = parse_target(text)
    assert (target.kind, target.name, target.display) == (kind, "web", display)


@pytest.mark.parametrize("text", ["web", "rsts/", "deploy/web", "/web"])
def test_bad_targets_are_refused_with_the_rule(text: str) -> None:
    with pytest.raises(ValueError, match="TYPE/NAME"):
        parse_target(text)


@pytest.mark.parametrize("argv", [["rollout", "status", "deploy/web"], ["rollout", "undo", "web"],
                                  ["migrate", "rsts/web"], ["migrate", "deploy/web"]])
def test_invalid_targets_exit_2_with_nothing_on_stdout(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from rollwise.cli import main

    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ")
