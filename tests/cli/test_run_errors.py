"""`rollwise run` before it starts: every bad flag or unusable file is one line and exit 2 (no usage block, no
traceback), and its log lines are readable text or one JSON object each."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import unusable_kubeconfigs

from rollwise.cli import main
from rollwise.cli.logs import JsonFormatter, TextFormatter, key_text


def _one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as stop:
        code = int(stop.code or 0)
    out, err = capsys.readouterr()
    assert code == 2 and out == "", err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_a_missing_kubeconfig_is_one_line_naming_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    err = _one_line_exit_2(["run", "--kubeconfig", str(tmp_path / "nope")], capsys)
    assert err.startswith(f"rollwise run: --kubeconfig {tmp_path / 'nope'}: no such file")


def test_a_kubeconfig_from_the_environment_is_named_as_such(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "gone.yaml"))
    assert "$KUBECONFIG" in _one_line_exit_2(["run"], capsys)


@pytest.mark.parametrize("text", ["{not yaml: [", "apiVersion: v1\nkind: Config\n", "- a list\n"])
def test_a_broken_kubeconfig_is_one_line(text: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(text)
    assert f"--kubeconfig {path}: " in _one_line_exit_2(["run", "--kubeconfig", str(path)], capsys)


def test_in_cluster_outside_a_pod_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--in-cluster" in _one_line_exit_2(["run", "--in-cluster"], capsys)


@pytest.mark.parametrize(("flags", "named"), [
    (["--workers", "x"], "--workers"),
    (["--log-format", "xml"], "--log-format"),
    (["--namespaces", "Team_A"], "--namespaces"),
    (["--lease-duration", "soon"], "--lease-duration"),
    (["--leader-elect=maybe"], "--leader-elect"),
    (["--leader-elect=tRuE"], "--leader-elect"),  # strconv.ParseBool takes three spellings of each, not any case
    (["--leader-elect=yes"], "--leader-elect"),
    (["--lease-name="], "--lease-name"),
    (["--lease-name=Bad_Name"], "--lease-name"),
    (["--lease-namespace="], "--lease-namespace"),
    (["--lease-namespace=Team.A"], "--lease-namespace"),
    (["--identity="], "--identity"),
    (["--workers=0"], "--workers"),
    (["--workers=-1"], "--workers"),
    (["--nonsense"], "--nonsense"),
])
def test_a_bad_flag_is_one_line_naming_it(flags: list[str], named: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = _one_line_exit_2(["run", *flags], capsys)
    assert named in err and err.startswith("rollwise run: ")


def _record(msg: str, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("rollwise.runtime.sets", logging.INFO, __file__, 1, msg, (), None)
    record.__dict__.update(extra)
    return record


def test_json_lines_carry_time_level_set_action_and_reason() -> None:
    line = JsonFormatter().format(_record("statefulset default/web: DeletePod web-2: rolling to web-7d9",
                                          set="default/web", action="DeletePod", object="web-2",
                                          reason="rolling to web-7d9", controller="statefulset"))
    doc = json.loads(line)
    assert "\n" not in line
    assert doc["level"] == "info" and doc["time"].endswith("Z")
    assert (doc["set"], doc["action"], doc["object"], doc["reason"]) == ("default/web", "DeletePod", "web-2",
                                                                         "rolling to web-7d9")
    assert set(json.loads(JsonFormatter().format(_record("caches synced")))) == {"time", "level", "logger", "msg"}


def test_text_lines_name_keys_as_kubectl_does() -> None:
    assert key_text(("default", "p")) == "default/p"
    assert "('default'" not in TextFormatter().format(_record(f"reconciling {key_text(('default', 'p'))} failed"))


@pytest.mark.parametrize("case", unusable_kubeconfigs.CASES)
def test_a_server_or_credentials_that_cannot_be_used_are_one_line_naming_the_field(
        case: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = unusable_kubeconfigs.write(tmp_path, case)
    err = _one_line_exit_2(["run", "--kubeconfig", str(path)], capsys)
    named = unusable_kubeconfigs.CASES[case][2]
    assert err.startswith(f"rollwise run: --kubeconfig {path}: context x: ") and named in err
