"""The operator (``rollwise run``) rolls a 3-member Patroni set on ``rollwise up``: replicas first, the primary last
after one switchover (Patroni's ``POST /switchover``: sent by the operator itself for ``rollwise.dev/leader-transfer:
patroni``, by up's process kubelet as the member's agent for ``"true"``), while a writer INSERTs throughout and loses
no acknowledged row. ``up`` leaves the custom kind and DEP-07's deletions to the operator
(``--controllers=-apps.rollwise.dev,-quorum``); roles come from the operator's role probe at each pod's IP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from operator_support import audit_entries, leading_operator, running_up_for_operator
from patroni_support import PG, Writer, data_dir, leaders, member_pods, needs_patroni, psql, serving

pytestmark = [*needs_patroni, pytest.mark.kubectl]

DEADLINE = 300.0
NEW_IMAGE = "patroni:3.0-r1"


@pytest.fixture
def patroni_data() -> Iterator[Path]:
    with data_dir() as path:
        yield path


def _timeline(ip: str) -> int:
    """The primary's timeline: one more for every promotion (a switchover or a failover)."""
    result = psql([ip], "SELECT timeline_id FROM pg_control_checkpoint()", read_write=False)
    assert result.returncode == 0, result.stderr
    return int(result.stdout.strip())


@pytest.mark.parametrize("transfer", [
    # Both cost half a minute of CPU (three PostgreSQL servers and Patroni agents, their DCS, up and the
    # operator): make test-slow, which CI runs. make test keeps Patroni on up (test_up_real_patroni.py) and the
    # Patroni page's manifest (test_docs_stores_on_up.py), and the switchover against fake Patroni APIs
    # (tests/runtime/test_hand_overs.py).
    pytest.param("patroni", id="the operator sends the switchover", marks=pytest.mark.slow),
    pytest.param("true", id="up's process kubelet answers as the member's agent", marks=pytest.mark.slow),
])
def test_the_operator_rolls_a_patroni_set_primary_last_with_one_switchover_and_no_lost_write(
        tmp_path: Path, patroni_data: Path, transfer: str) -> None:
    with running_up_for_operator(tmp_path, "--data-dir", str(patroni_data), companion=False) as up:
        up.install_rollwise()
        with leading_operator(up, tmp_path) as operator:
            up.apply(PG.replace('rollwise.dev/leader-transfer: "true"', f'rollwise.dev/leader-transfer: "{transfer}"'))
            up.until(lambda: len(p := member_pods(up)) == 3 and all(serving(x) for x in p), "three Ready members",
                     deadline=DEADLINE)
            up.until(lambda: len(ls := leaders(member_pods(up))) == 1 and not ls[0].startswith("?"), "one primary",
                     deadline=DEADLINE)
            (primary,) = leaders(member_pods(up))
            hosts = sorted(p["status"]["podIP"] for p in member_pods(up))
            primary_ip = next(p["status"]["podIP"] for p in member_pods(up) if p["metadata"]["name"] == primary)
            up.until(lambda: psql([primary_ip], "CHECKPOINT").returncode == 0, "the primary takes writes")
            timeline = _timeline(primary_ip)
            writer = Writer(hosts).start()
            up.until(lambda: len(writer.acknowledged) >= 5, "the writer's first rows")
            since = max(e["time"] for e in audit_entries(up))
            up.kubectl("patch", "rsts", "pg", "--type=json", "-p",
                       f'[{{"op": "replace", "path": "/spec/template/spec/containers/0/image", '
                       f'"value": "{NEW_IMAGE}"}}]')

            def rolled() -> bool:
                pods = member_pods(up)
                return len(pods) == 3 and all(serving(p) and p["spec"]["containers"][0]["image"] == NEW_IMAGE
                                              for p in pods)

            up.until(rolled, "every member Ready at the new image", deadline=DEADLINE)
            up.until(lambda: len(ls := leaders(member_pods(up))) == 1 and not ls[0].startswith("?"), "one primary")
            acknowledged = writer.stop()
            (new_primary,) = leaders(member_pods(up))
            new_ip = next(p["status"]["podIP"] for p in member_pods(up) if p["metadata"]["name"] == new_primary)
            stored = psql([new_ip], "SELECT id FROM w")
            assert stored.returncode == 0, stored.stderr
            present = {int(x) for x in stored.stdout.split()}
            timeline_after = _timeline(new_ip)
            events = up.read("events")["items"]
            if transfer == "patroni":  # the operator's own switchover, and it alone sent one
                operator.wait_for(r"switchover of default/pg-\d to pg-\d: Successfully switched over")

        deletions = [e["name"] for e in audit_entries(up)
                     if e["resource"] == "pods" and e["verb"] == "delete" and e["time"] >= since
                     and e.get("user", "").startswith("op-")]
    # Replicas first, the primary last, each once.
    assert sorted(deletions) == ["pg-0", "pg-1", "pg-2"], deletions
    assert deletions[-1] == primary, (deletions, primary)
    # One hand-over: one switchover asked for and done (one promotion: the timeline moved by one), none timed out.
    reasons = [e["reason"] for e in events]
    assert reasons.count("LeaderTransferRequested") == 1, reasons
    assert "LeaderTransferTimedOut" not in reasons
    assert new_primary != primary
    assert timeline_after == timeline + 1, (timeline, timeline_after)
    # No acknowledged write lost; the writer kept writing through the rollout.
    assert len(acknowledged) > 5
    assert set(acknowledged) <= present, sorted(set(acknowledged) - present)
