"""docs/stores/zookeeper.md, nats.md and patroni.md as a newcomer follows them: each page's fenced ``yaml``
manifests, taken literally, applied with the real kubectl to ``rollwise up`` (Patroni's custom kind after the CRD, as
its page says), and what the page promises checked: three members Ready, and the page's own role probe, read by the
controller's rule, naming exactly one leader among them. Outcomes only, never durations."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubectl_support import ROOT, Up, running_up
from patroni_support import data_dir, needs_patroni

from rollwise.api.role_probe import FOLLOWER, LEADER, ProbeAnswer, RoleProbe, check_role_probe, probe_of, read_role
from rollwise.kubelet.process.stores import STORES
from rollwise.runtime.role_probes import http_get

# Three real members of each store, booted from the page's manifest: 5-12 s each here, so in `make test`.
pytestmark = pytest.mark.kubectl

DEADLINE = 240.0
PAGES = ROOT / "docs" / "stores"

# Where a member under up writes the port the probe's container port stands for (its own config in its claim).
MEMBER_PORT = {"zookeeper": ("zookeeper", "zoo.cfg", r"admin\.serverPort=(\d+)"),
               "nats": ("nats", "nats.conf", r'http: "127\.0\.0\.1:(\d+)"')}


def _manifests(page: str) -> list[dict[str, Any]]:
    """Every document of the page's fenced yaml blocks, exactly as written there."""
    text = (PAGES / f"{page}.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, flags=re.S | re.M)
    assert blocks, f"{page}.md has no yaml block"
    return [doc for block in blocks for doc in yaml.safe_load_all(block) if doc]


def _probe(sts: dict[str, Any]) -> RoleProbe:
    raw, path = probe_of(sts)
    probe, errors = check_role_probe(raw, path)
    assert probe is not None and not errors, errors
    return probe


def _ready(pod: dict[str, Any]) -> bool:
    return pod["metadata"].get("deletionTimestamp") is None and any(
        c["type"] == "Ready" and c["status"] == "True" for c in (pod.get("status") or {}).get("conditions") or ())


def _pods(up: Up, sts: dict[str, Any]) -> list[dict[str, Any]]:
    labels = ",".join(f"{k}={v}" for k, v in sts["spec"]["selector"]["matchLabels"].items())
    return list(up.read("pods", "-l", labels)["items"])


def _roles(up: Up, sts: dict[str, Any], store: str, claims: Path) -> dict[str, str]:
    """pod -> leader | follower | unknown: one GET to each member at the page probe's port, read by its rule. Under
    up a Patroni member answers at its pod IP; a ZooKeeper or NATS member at the loopback port its config names."""
    probe, out = _probe(sts), {}
    for pod in _pods(up, sts):
        name = pod["metadata"]["name"]
        if store in MEMBER_PORT:
            folder, config, pattern = MEMBER_PORT[store]
            found = re.search(pattern, (claims / f"data-{name}" / folder / config).read_text(encoding="utf-8"))
            assert found is not None
            host, port = "127.0.0.1", int(found.group(1))
        else:
            host, port = pod["status"]["podIP"], probe.port
        status, body, error = http_get(host, port, probe)
        out[name] = read_role(probe, ProbeAnswer(at=0.0, status=status, body=body, error=error), pod=name,
                              now=0.0).kind
    return out


def _one_leader(roles: dict[str, str]) -> bool:
    return len(roles) == 3 and all(r in (LEADER, FOLLOWER) for r in roles.values()) and (
        sum(r == LEADER for r in roles.values()) == 1)


@pytest.fixture
def world_readable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A data directory PostgreSQL (run as ``postgres`` under root) can enter, and a working directory it need not."""
    monkeypatch.chdir(tmp_path)
    with data_dir() as path:
        yield path


def _follow(up: Up, page: str, store: str, claims: Path) -> None:
    manifests = _manifests(page)
    [sts] = [m for m in manifests if m["kind"] == "StatefulSet"]
    if sts["apiVersion"].startswith("apps.rollwise.dev/"):
        up.install_crd()  # docs/install.md's first step, which the page's own commands repeat
    for manifest in manifests:
        up.apply(yaml.safe_dump(manifest))
    up.until(lambda: len(p := _pods(up, sts)) == sts["spec"]["replicas"] and all(_ready(x) for x in p),
             f"the {page}.md members Ready", deadline=DEADLINE)
    up.until(lambda: _one_leader(_roles(up, sts, store, claims)), f"{page}.md's probe names one leader",
             deadline=DEADLINE, on_fail=lambda: str(_roles(up, sts, store, claims)))


@pytest.mark.parametrize("store", [pytest.param(s, marks=pytest.mark.skipif(
    STORES[s].binary() is None, reason=f"{s} is not installed")) for s in ("zookeeper", "nats")])
def test_the_store_page_s_manifest_applied_as_written_gives_ready_members_and_one_leader(
        tmp_path: Path, store: str) -> None:
    with running_up(tmp_path, "--data-dir", str(tmp_path / "up")) as up:
        _follow(up, store, store, tmp_path / "up" / "processes" / "claims" / "default")


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_patroni)])
def test_the_patroni_page_s_manifest_applied_as_written_gives_ready_members_and_one_primary(
        tmp_path: Path, world_readable: Path, _: None) -> None:
    with running_up(tmp_path, "--data-dir", str(world_readable)) as up:
        _follow(up, "patroni", "patroni", world_readable / "patroni" / "claims" / "default")
