"""`rollwise rollout status` prints kubectl's StatefulSet progress lines (kubectl `rollout_status.go`) and says when
the rollout is done by the one rule of api/rollout.py: as the custom kind's Ready condition (`kubectl wait`) says,
for every strategy; OnDelete and quorum-aware sets are followed to their end."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rollwise.cli.kubetarget import parse_target
from rollwise.cli.rollout import status_message
from rollwise.cluster.resources import ROLLWISE_STATEFULSET, STATEFULSET


def _sts(*, generation: int = 2, strategy: dict[str, Any] | None = None, **status: Any) -> dict[str, Any]:
    base = {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "updatedReplicas": 3,
            "currentReplicas": 3,
            "currentRevision": "web-b", "updateRevision": "web-b"}
    return {"metadata": {"name": "web", "generation": generation},
            "spec": {"replicas": 3, "updateStrategy": strategy or {"type": "RollingUpdate"}},
            "status": {**base, **status}}


@pytest.mark.parametrize(("sts", "line", "done"), [
    (_sts(generation=3), "Waiting for statefulset spec update to be observed...", False),
    (_sts(observedGeneration=0), "Waiting for statefulset spec update to be observed...", False),
    (_sts(readyReplicas=1, availableReplicas=1), "Waiting for 2 pods to be ready...", False),
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


def test_a_pod_ready_but_not_yet_available_is_waited_for() -> None:
    assert status_message(_sts(availableReplicas=2)) == ("Waiting for 1 pods to be available...", False)


def test_on_delete_is_followed_until_its_pods_are_recreated() -> None:
    waiting = _sts(strategy={"type": "OnDelete"}, updatedReplicas=1, currentRevision="web-a")
    assert status_message(waiting) == ("Waiting for 2 pods to be deleted and recreated at revision web-b (OnDelete "
                                       "replaces a pod only when it is deleted)...", False)
    assert status_message(_sts(strategy={"type": "OnDelete"}))[1] is True


QUORUM = {"rollwise.dev/update-policy": "QuorumAware"}


def _quorum(**status: Any) -> dict[str, Any]:
    sts = _sts(strategy={"type": "OnDelete"}, **status)
    sts["metadata"]["annotations"] = dict(QUORUM)
    return sts


def test_a_quorum_aware_rollout_is_followed_quoting_what_the_controller_waits_for() -> None:
    wait = {"type": "AllMembersUpdated", "status": "False", "reason": "UpdateInProgress",
            "message": "waiting for web-1: updated but not participating"}
    line, done = status_message(_quorum(updatedReplicas=2, currentRevision="web-a", conditions=[wait]))
    assert not done
    assert line == ("Waiting for quorum-aware roll out to finish: 2 of 3 members at revision web-b: waiting for "
                    "web-1: updated but not participating...")
    assert status_message(_quorum()) == ("quorum-aware roll out complete: 3 members at revision web-b...", True)


def test_a_quorum_aware_apps_v1_set_reads_the_companion_annotation_of_the_current_revision() -> None:
    def annotated(revision: str) -> dict[str, Any]:
        sts = _quorum(updatedReplicas=1, currentRevision="web-a")
        state = {"updateRevision": revision, "conditions": [
            {"type": "AllMembersUpdated", "status": "False", "reason": "UpdateInProgress", "message": "held",
             "lastTransitionTime": "2026-11-25T21:00:00Z"}]}
        sts["metadata"]["annotations"]["rollwise.dev/quorum-status"] = json.dumps(state)
        return sts

    assert status_message(annotated("web-b"))[0].endswith("revision web-b: held...")
    assert status_message(annotated("web-old"))[0].endswith("revision web-b..."), "a stale wait is not quoted"


def _custom(ready: str, reason: str, **status: Any) -> dict[str, Any]:
    sts = _sts(strategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}, **status)
    sts["apiVersion"] = "apps.rollwise.dev/v1alpha1"
    sts["status"]["conditions"] = [{"type": "Ready", "status": ready, "reason": reason, "observedGeneration": 2}]
    return sts


def test_the_custom_kind_is_done_exactly_when_its_ready_condition_says_so() -> None:
    held = _custom("True", "PartitionRolledOut", updatedReplicas=1, currentRevision="web-a")
    assert status_message(held) == ("partitioned roll out complete: 1 new pods have been updated...", True)
    behind = _custom("True", "PartitionRolledOut", updatedReplicas=1, currentRevision="web-a")
    behind["status"]["conditions"][0]["observedGeneration"] = 1
    behind["status"]["availableReplicas"] = 2
    assert status_message(behind)[1] is False, "a Ready of an older generation is not read"


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


@pytest.mark.parametrize("text", ["sts/a b", "sts/web/extra", "sts/../x", "sts/%2e%2e", "rsts/Web", "sts/" + "a" * 254])
def test_a_name_no_set_can_have_is_refused_before_anything_is_asked(text: str) -> None:
    """A set's name is a DNS-1123 subdomain; anything else was sent as it stood: a space broke the request line
    (reported as an InternalError "from the server"), and ``..`` or ``%2e%2e`` walked the URL to another path."""
    with pytest.raises(ValueError, match="lowercase RFC 1123 subdomain"):
        parse_target(text)


@pytest.mark.parametrize("argv", [["rollout", "status", "deploy/web"], ["rollout", "undo", "web"],
                                  ["migrate", "rsts/web"], ["migrate", "deploy/web"]])
def test_invalid_targets_exit_2_with_nothing_on_stdout(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from rollwise.cli import main

    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ")


def _exit_and_output(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from rollwise.cli import main

    try:
        code = main(argv)
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", [["status", "rsts/web"], ["get", "rsts/web"], ["rollout", "status", "rsts/web"],
                                     ["migrate", "rsts/web", "--to", "apps/v1"], ["migrate", "sts/web"]])
@pytest.mark.parametrize("value", ["nan", "inf", "-5s", "1e999", "5 m", "soon", "5d"])
def test_a_timeout_that_is_no_duration_is_refused_before_anything_is_asked(
        command: list[str], value: str, capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    """Every cluster command reads ``--timeout`` by one grammar, kubectl's (Go's ``time.ParseDuration`` for
    ms, s, m and h, or bare seconds); NaN waited forever and a negative migrate timeout fenced and deleted the old
    set before giving up at once. The kubeconfig is missing: an accepted value would be exit 4 or 1, not 2."""
    code, out, err = _exit_and_output([*command, f"--timeout={value}", "--kubeconfig", str(tmp_path / "none")],
                                      capsys)
    assert code == 2 and out == "", (code, err)
    assert "--timeout" in err and "Traceback" not in err


@pytest.mark.parametrize(("value", "seconds"), [("0", 0.0), ("30", 30.0), ("30s", 30.0), ("500ms", 0.5),
                                                ("2m", 120.0), ("1.5h", 5400.0)])
def test_timeouts_read_as_kubectl_reads_them(value: str, seconds: float) -> None:
    from rollwise.cli.rollout import duration

    assert duration(value) == seconds


@pytest.mark.parametrize("command", [["status", "sts/web"], ["get", "sts/web"], ["migrate", "sts/web"],
                                     ["rollout", "history", "sts/web"]])
@pytest.mark.parametrize("namespace", ["a b", "../..", "%2e%2e", "Team"])
def test_a_namespace_no_object_can_be_in_is_refused_before_anything_is_asked(
        command: list[str], namespace: str, capsys: pytest.CaptureFixture[str], tmp_path: Any) -> None:
    code, out, err = _exit_and_output([*command, "-n", namespace, "--kubeconfig", str(tmp_path / "none")], capsys)
    assert code == 2 and out == "", (code, err)
    assert "lowercase RFC 1123 label" in err and "Traceback" not in err
