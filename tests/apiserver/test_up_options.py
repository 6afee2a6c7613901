"""``rollwise up`` options, fault knobs and the wall-clock driver's speed scaling."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from server_support import AUTH, api, body, next_event, pod, run

from rollwise.apiserver.auth.tls import load_or_create, merge_kubeconfig
from rollwise.apiserver.serving.config import Faults
from rollwise.cli import main
from rollwise.cli.up import parse_controllers, parse_faults
from rollwise.kubelet.profiles import ImageBehaviour, KubeletProfile
from rollwise.local.driver import scaled_profile

PODS = "/api/v1/namespaces/default/pods"


@pytest.mark.parametrize(("text", "expected"), [
    ("*", {"statefulset", "apps.rollwise.dev", "quorum", "analysis", "kubelet", "deployment", "replicaset"}),
    ("-apps.rollwise.dev", {"statefulset", "quorum", "analysis", "kubelet", "deployment", "replicaset"}),
    ("-apps.rollwise.dev,-quorum", {"statefulset", "analysis", "kubelet", "deployment", "replicaset"}),
    ("*,-kubelet", {"statefulset", "apps.rollwise.dev", "quorum", "analysis", "deployment", "replicaset"}),
    ("*,-analysis", {"statefulset", "apps.rollwise.dev", "quorum", "kubelet", "deployment", "replicaset"}),
    ("statefulset", {"statefulset"}),
    ("", set()),
])
def test_controllers_list_reads_like_kube_controller_manager(text: str, expected: set[str]) -> None:
    assert parse_controllers(text) == expected


def test_faults_parse_and_refuse_unknown_or_out_of_range() -> None:
    assert parse_faults("conflict-rate=0.5,watch-delay=0.1") == {"conflict-rate": 0.5, "watch-delay": 0.1}
    for bad in ("bogus=1", "error-rate=2", "compact-every=x", "watch-delay"):
        with pytest.raises(ValueError, match="--faults"):
            parse_faults(bad)


@pytest.mark.parametrize("argv", [
    ["up", "--controllers", "nonsense"], ["up", "--faults", "error-rate=7"], ["up", "--speed", "0"],
    ["up", "--speed", "nan"], ["up", "--speed", "1e309"], ["up", "--port", "70000"], ["up", "--data-dir", __file__],
    ["up", "--ephemeral", "--audit-log", "/nonexistent/audit.jsonl"], ["up", "--ephemeral", "--audit-log", "/"]])
def test_invalid_up_options_exit_2_with_nothing_on_stdout(argv: list[str], capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and "rollwise up:" in err
    assert len(err.splitlines()) == 1 and err.startswith(f"rollwise up: {argv[-2]}"), err


def test_speed_divides_every_simulated_duration() -> None:
    profile = KubeletProfile(start_seconds=5, ready_seconds=2, termination_seconds=3,
                             images={"slow": ImageBehaviour(start_seconds=40)})
    fast = scaled_profile(profile, 10)
    assert (fast.start_seconds, fast.ready_seconds, fast.termination_seconds) == (0.5, 0.2, 0.3)
    assert (fast.crash_backoff_seconds, fast.pull_backoff_max_seconds) == (1.0, 30.0)
    assert fast.start_delay("slow") == 4.0


def test_injected_conflicts_and_errors_answer_a_status_and_write_nothing() -> None:
    async def t() -> None:
        async with api(faults=Faults(conflict_rate=1.0)) as (c, store):
            resp = await c.post(PODS, json=pod("a"), headers=AUTH)
            assert (resp.status, (await body(resp))["reason"]) == (409, "Conflict")
            assert store.list(store.registry.find("", "v1", "pods"), "default") == []  # type: ignore[arg-type]
        async with api(faults=Faults(error_rate=1.0)) as (c, _):
            resp = await c.post(PODS, json=pod("a"), headers=AUTH)
            assert (resp.status, (await body(resp))["reason"]) == (500, "InternalError")
            assert (await c.get(PODS, headers=AUTH)).status == 200  # reads are never failed
        async with api(faults=Faults(timeout_rate=1.0)) as (c, _):
            resp = await c.post(PODS, json=pod("a"), headers=AUTH)
            assert (resp.status, (await body(resp))["reason"]) == (504, "Timeout")
    run(t)


def test_dropped_watches_end_their_streams() -> None:
    async def t() -> None:
        async with api() as (c, _):
            await c.post(PODS, json=pod("a"), headers=AUTH)
            async with c.get(f"{PODS}?watch=true", headers=AUTH) as resp:
                assert (await next_event(resp))["type"] == "ADDED"
                assert (await c.post("/debug/rollwise/drop-watches", headers=AUTH)).status == 200
                assert await asyncio.wait_for(resp.content.read(), 10) == b""
    run(t)


def test_watch_timeout_ends_the_stream() -> None:
    async def t() -> None:
        async with api() as (c, _), c.get(f"{PODS}?watch=true&timeoutSeconds=0", headers=AUTH) as resp:
            assert await asyncio.wait_for(resp.content.read(), 10) == b""
    run(t)


def test_merge_kubeconfig_keeps_other_contexts_and_replaces_its_own(tmp_path: Path) -> None:
    creds = load_or_create(tmp_path / "pki")
    again = load_or_create(tmp_path / "pki")
    assert again.token == creds.token and again.ca_pem == creds.ca_pem  # reused, so a kubeconfig keeps working
    config = tmp_path / "config"
    config.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "prod",
                                      "clusters": [{"name": "prod", "cluster": {"server": "https://prod"}}],
                                      "users": [{"name": "prod", "user": {}}],
                                      "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "prod"}}]}))
    merge_kubeconfig(config, "https://127.0.0.1:1", creds)
    merge_kubeconfig(config, "https://127.0.0.1:2", creds)
    merged = yaml.safe_load(config.read_text())
    assert merged["current-context"] == "prod"
    assert [c["name"] for c in merged["contexts"]] == ["prod", "rollwise"]
    assert [c["cluster"]["server"] for c in merged["clusters"]] == ["https://prod", "https://127.0.0.1:2"]
