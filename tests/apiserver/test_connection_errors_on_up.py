"""A cluster command whose TLS handshake with `rollwise up` fails (a kubeconfig without the CA that signed the
server's certificate) says so in one line, as kubectl does: no server answered, so it is no `Error from server`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
import zygote
from kubectl_support import DEADLINE, Up

pytestmark = pytest.mark.kubectl


def _without_ca(up: Up, tmp_path: Path) -> Path:
    config = yaml.safe_load(up.kubeconfig.read_text())
    for entry in config["clusters"]:
        entry["cluster"].pop("certificate-authority-data", None)
    path = tmp_path / "no-ca.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize("command", [["get", "sts/web"], ["status", "sts/web"], ["rollout", "history", "sts/web"]],
                         ids=" ".join)
def test_a_failed_tls_handshake_is_one_line_naming_it_not_an_error_from_the_server(
        up: Up, tmp_path: Path, command: list[str]) -> None:
    config = _without_ca(up, tmp_path)
    ours = zygote.run([*command, "--kubeconfig", str(config)], env=up.env, timeout=DEADLINE * 2)
    could_not_ask = 4 if command[0] in ("get", "status") else 1  # their documented code for "could not ask"
    assert (ours.returncode, ours.stdout) == (could_not_ask, "")
    # OpenSSL's own words for why it refused the chain follow; which words depends on the chain up serves.
    assert ours.stderr.startswith(f"error: Unable to connect to the server {up.url}: TLS handshake failed: "
                                  "certificate verify failed: ") and ours.stderr.count("\n") == 1, ours.stderr
    theirs = subprocess.run([up.kubectl_path, "--kubeconfig", str(config), "get", "sts"], capture_output=True,
                            text=True, env=up.env, timeout=DEADLINE, check=False)
    assert theirs.returncode == 1, theirs.stderr
    assert theirs.stderr.splitlines()[-1].startswith("Unable to connect to the server: "), "kubectl says it alike"
