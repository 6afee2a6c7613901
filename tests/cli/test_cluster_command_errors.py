"""The commands that act on one set of a cluster (`rollout`, `status`, `get`, `migrate`, `dashboard`, also as
`kubectl rollwise`) meeting a kubeconfig they cannot use: a missing file, one that is not YAML, one whose shape is
wrong, a context that is not in it, credentials in it that no client can use. Each is one line naming the file
(and the field) and exit 1, as kubectl answers (`status` and `get`: 4, their documented "could not ask"), never a
traceback."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import unusable_kubeconfigs

from rollwise.cli import main

COMMANDS = [["rollout", "status", "rsts/web"], ["rollout", "history", "sts/web"], ["status", "rsts/web"],
            ["get", "sts/web"], ["migrate", "sts/web"], ["dashboard"]]
KUBECONFIGS = {
    "not YAML": "{not yaml: [",
    "a list": "- a list\n",
    "clusters not a list": "clusters: 5\ncurrent-context: x\n",
    "no such context": "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\ncurrent-context: x\n",
}


COULD_NOT_ASK = {"status": 4, "get": 4}
"""The commands whose exit codes tell "could not ask" apart from a failure (docs/watching-rollouts.md)."""


def _one_line_exit_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert (code, out) == (COULD_NOT_ASK.get(argv[0], 1), ""), err
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("text", KUBECONFIGS.values(), ids=KUBECONFIGS.keys())
def test_an_unusable_kubeconfig_is_one_line_naming_it(command: list[str], text: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config"
    path.write_text(text)
    assert f"--kubeconfig {path}: " in _one_line_exit_1([*command, "--kubeconfig", str(path)], capsys)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_missing_kubeconfig_from_the_environment_is_named_as_such(
        command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "gone.yaml"))
    err = _one_line_exit_1(command, capsys)
    assert err == f"error: $KUBECONFIG {tmp_path / 'gone.yaml'}: no such file (pass --kubeconfig FILE)\n"


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("case", unusable_kubeconfigs.CASES)
def test_a_server_or_credentials_that_cannot_be_used_are_one_line_naming_the_file_and_field(
        command: list[str], case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = unusable_kubeconfigs.write(tmp_path, case)
    err = _one_line_exit_1([*command, "--kubeconfig", str(path)], capsys)
    named = unusable_kubeconfigs.CASES[case][2]
    assert err.startswith(f"error: --kubeconfig {path}: context x: ") and named in err


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_an_exec_plugin_that_fails_is_one_line_getting_credentials_not_an_unreachable_server(
        command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plugin = tmp_path / "login"
    plugin.write_text("#!/bin/sh\necho 'session expired: run login again' >&2\nexit 1\n")
    plugin.chmod(0o755)
    path = unusable_kubeconfigs.kubeconfig(
        tmp_path, "", f"exec: {{apiVersion: client.authentication.k8s.io/v1beta1, command: {plugin}}}")
    err = _one_line_exit_1([*command, "--kubeconfig", str(path)], capsys)
    assert err.startswith("error: getting credentials: ") and "session expired: run login again" in err


@pytest.mark.parametrize("command", [["status", "sts/web"], ["get", "sts/web"]], ids=" ".join)
def test_status_and_get_exit_4_when_the_api_server_cannot_be_reached(
        command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:  # a port nothing listens on once this is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = tmp_path / "config"
    path.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {{}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u}}}}]
current-context: x
""")
    code = main([*command, "--kubeconfig", str(path)])
    out, err = capsys.readouterr()
    assert (code, out) == (4, "")
    assert err.startswith("Error from server (ServiceUnavailable): cannot reach the API server") and \
        len(err.splitlines()) == 1, err
