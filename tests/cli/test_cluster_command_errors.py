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
@pytest.mark.parametrize(("text", "named"), [
    ("apiVersion: v1\nkind: Config\ncurrent-context: [x]\nclusters: []\ncontexts: []\n",
     "current-context: must be a context's name"),
    ("apiVersion: v1\nkind: Config\ncurrent-context: {x: 1}\n", "current-context: must be a context's name"),
], ids=["a list", "a mapping"])
def test_a_current_context_that_is_not_a_name_is_named(command: list[str], text: str, named: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config"
    path.write_text(text)
    assert _one_line_exit_1([*command, "--kubeconfig", str(path)], capsys) == f"error: --kubeconfig {path}: {named}\n"


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != ["dashboard"]], ids=" ".join)
def test_a_context_namespace_that_is_no_namespaces_name_is_named(command: list[str], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = unusable_kubeconfigs.kubeconfig(tmp_path, "", "token: t")
    path.write_text(path.read_text().replace("{cluster: c, user: u}", "{cluster: c, user: u, namespace: Team_A}"))
    err = _one_line_exit_1([*command, "--kubeconfig", str(path)], capsys)
    assert err == (f"error: --kubeconfig {path}: context x: namespace 'Team_A': not a namespace's name "
                   "(a DNS-1123 label)\n")


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_kubeconfig_that_is_a_directory_is_not_said_to_be_missing(command: list[str], tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    err = _one_line_exit_1([*command, "--kubeconfig", str(tmp_path)], capsys)
    assert err == f"error: --kubeconfig {tmp_path}: not a file (pass --kubeconfig FILE)\n"


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


_CONTEXT_X = "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
MISSING_ENTRIES = {
    "no clusters": (f"apiVersion: v1\nkind: Config\n{_CONTEXT_X}users: [{{name: u, user: {{token: t}}}}]\n",
                    "clusters: none in the file (context x names cluster c)"),
    "empty clusters": (f"clusters: []\n{_CONTEXT_X}users: [{{name: u, user: {{token: t}}}}]\n",
                       "clusters: none in the file (context x names cluster c)"),
    "another cluster": (f"clusters: [{{name: d, cluster: {{server: 'https://127.0.0.1:9'}}}}]\n{_CONTEXT_X}"
                        "users: [{name: u, user: {token: t}}]\n", "context x: cluster c: not in the file's clusters"),
    "no such user": (f"clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:9'}}}}]\n{_CONTEXT_X}",
                     "context x: user u: not in the file's users"),
    "no contexts": ("clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]\ncurrent-context: x\n",
                    "contexts: none in the file (current-context is x)"),
}


@pytest.mark.parametrize("command", [["get", "sts/web"], ["status", "rsts/web"]], ids=" ".join)
@pytest.mark.parametrize("case", MISSING_ENTRIES)
def test_a_kubeconfig_missing_an_entry_names_the_field_and_what_points_at_it(
        command: list[str], case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config"
    text, named = MISSING_ENTRIES[case]
    path.write_text(text)
    assert _one_line_exit_1([*command, "--kubeconfig", str(path)], capsys) == f"error: --kubeconfig {path}: {named}\n"


def test_a_ca_file_that_is_gone_is_named_by_its_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = unusable_kubeconfigs.write(tmp_path, "CA file gone")
    err = _one_line_exit_1(["get", "sts/web", "--kubeconfig", str(path)], capsys)
    assert err == (f"error: --kubeconfig {path}: context x: cluster certificate-authority /nonexistent/ca.crt: "
                   "cannot be read (No such file or directory)\n")


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_refused_connection_is_kubectls_line_not_an_error_from_a_server(
        command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as closed:  # a port nothing listens on: bound, never listening
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        path = unusable_kubeconfigs.kubeconfig(tmp_path, f"server: 'http://127.0.0.1:{port}'", "token: t")
        err = _one_line_exit_1([*command, "--kubeconfig", str(path)], capsys)
    assert err == (f"error: The connection to the server 127.0.0.1:{port} was refused - did you specify the right "
                   "host or port?\n")
