"""``rollwise up`` with real Patroni members (image ``patroni:*``): Debian's patroni over PostgreSQL, one etcd as the
DCS. Applied with the real kubectl, read over the API; each member answers at its pod IP. Outcomes only, never
durations."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kubectl_support import running_up
from patroni_support import PG, data_dir, leaders, member_pods, needs_patroni, processes_under, psql, serving

from rollwise.kubelet.process.patroni import PG_PORT
from rollwise.kubelet.process.stores import StoreError
from rollwise.kubelet.process.stores.pg_wire import simple_query

pytestmark = needs_patroni

DEADLINE = 240.0  # three initdb/basebackup runs on a shared two-core machine


@pytest.fixture
def patroni_data() -> Iterator[Path]:
    with data_dir() as path:
        yield path


def test_a_three_member_patroni_set_elects_one_primary_and_a_deleted_replica_rejoins_on_its_data(
        tmp_path: Path, patroni_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # up starts in a directory only root may enter (pytest's own, mode 700, as a fresh clone in a mktemp directory
    # is): PostgreSQL's tools, run as another user, must not need the directory they were started in.
    monkeypatch.chdir(tmp_path)
    with running_up(tmp_path, "--data-dir", str(patroni_data)) as up:
        up.install_crd()
        up.apply(PG)
        up.until(lambda: len(p := member_pods(up)) == 3 and all(serving(x) for x in p), "three Ready members",
                 deadline=DEADLINE)
        pods = member_pods(up)
        hosts = [p["status"]["podIP"] for p in pods]
        assert len(set(hosts)) == 3 and all(h.startswith("127.") for h in hosts)  # each member at its own address
        up.until(lambda: len(leaders(member_pods(up))) == 1 and not leaders(member_pods(up))[0].startswith("?"),
                 "the probe reads exactly one leader", deadline=DEADLINE)
        (primary,) = leaders(member_pods(up))
        # The primary takes writes; libpq's read-write host list finds it as a client would.
        assert psql(hosts, "CREATE TABLE kept (id int); INSERT INTO kept VALUES (1), (2), (3)").returncode == 0
        # The lab's writer speaks PostgreSQL's protocol itself: the primary acknowledges, a replica refuses.
        by_name = {p["metadata"]["name"]: p["status"]["podIP"] for p in pods}
        simple_query(by_name[primary], PG_PORT, "INSERT INTO kept VALUES (0)", timeout=5)
        replica_ip = next(ip for name, ip in by_name.items() if name != primary)
        with pytest.raises(StoreError, match="read-only transaction"):  # whether or not it has replayed `kept` yet
            simple_query(replica_ip, PG_PORT, "CREATE TABLE refused (id int)", timeout=5)
        assert psql(hosts, "DELETE FROM kept WHERE id = 0").returncode == 0
        # kubectl exec into a member finds Patroni's and PostgreSQL's tools set up for it, as in a Spilo pod.
        listed = up.kubectl("exec", primary, "--", "patronictl", "list").stdout
        assert all(f"pg-{o}" in listed for o in range(3)) and listed.count("Leader") == 1, listed
        assert up.kubectl("exec", primary, "--", "psql", "-qAtc", "SELECT count(*) FROM kept").stdout.strip() == "3"

        replica = next(p for p in pods if p["metadata"]["name"] != primary)
        name, uid = replica["metadata"]["name"], replica["metadata"]["uid"]
        pgdata = patroni_data / "patroni" / "claims" / "default" / f"data-{name}" / "pgdata"
        identity = (pgdata / "global" / "pg_control").stat().st_ino
        up.kubectl("delete", "pod", name, "--wait=false")
        up.until(lambda: any(p["metadata"]["name"] == name and p["metadata"]["uid"] != uid and serving(p)
                             for p in member_pods(up)), f"{name} back and Ready", deadline=DEADLINE)
        # It rejoined as a replica on its claim's data (nothing cloned again: the table was there before), the
        # primary unchanged, and it streams what the primary writes after its return.
        assert leaders(member_pods(up)) == [primary]
        assert psql(hosts, "INSERT INTO kept VALUES (4)").returncode == 0
        ip = next(p["status"]["podIP"] for p in member_pods(up) if p["metadata"]["name"] == name)

        def replicated() -> bool:
            result = psql([ip], "SELECT count(*), pg_is_in_recovery() FROM kept", read_write=False)
            return result.returncode == 0 and result.stdout.strip() == "4|t"

        up.until(replicated, f"{name} replays the primary's writes as a replica", deadline=DEADLINE)
        assert (pgdata / "global" / "pg_control").stat().st_ino == identity  # the same files: not cloned again
    # Nothing outlives up: PostgreSQL, which Patroni starts in a session of its own, goes too.
    up.until(lambda: not processes_under(patroni_data), "no process of the run left", deadline=30)


@pytest.mark.slow  # half a minute; etcd's members keep the same promise in make test (test_up_real_etcd.py)
def test_patroni_members_restarted_by_a_new_up_on_the_same_data_dir_come_back_with_their_data(
        tmp_path: Path, patroni_data: Path) -> None:
    """Stop ``up`` and start it again on its data directory: the members come back on their claims (the DCS too,
    at new ports), elect one primary again, and the rows written before are there."""
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    with running_up(tmp_path / "first", "--data-dir", str(patroni_data)) as up:
        up.install_crd()
        up.apply(PG)
        up.until(lambda: len(p := member_pods(up)) == 3 and all(serving(x) for x in p), "three Ready members",
                 deadline=DEADLINE)
        hosts = [p["status"]["podIP"] for p in member_pods(up)]
        up.until(lambda: psql(hosts, "CREATE TABLE IF NOT EXISTS kept (id int)").returncode == 0, "a primary")
        assert psql(hosts, "INSERT INTO kept VALUES (1), (2)").returncode == 0
    up.until(lambda: not processes_under(patroni_data), "no process of the first run left", deadline=30)

    with running_up(tmp_path / "second", "--data-dir", str(patroni_data)) as up:
        up.until(lambda: len(p := member_pods(up)) == 3 and all(serving(x) for x in p), "three Ready members again",
                 deadline=DEADLINE)
        assert sorted(p["status"]["podIP"] for p in member_pods(up)) == sorted(hosts)  # the same addresses
        up.until(lambda: len(ls := leaders(member_pods(up))) == 1 and not ls[0].startswith("?"), "one primary again",
                 deadline=DEADLINE)
        # The leader key is taken before its PostgreSQL finishes promoting: the rows are read once it takes writes.
        up.until(lambda: psql(hosts, "SELECT 1").returncode == 0, "the primary takes writes", deadline=DEADLINE)
        result = psql(hosts, "SELECT count(*) FROM kept")
        assert (result.returncode, result.stdout.strip()) == (0, "2"), result.stderr


@pytest.mark.slow  # about a minute; the operator's roll (tests/operator) keeps the switchover in make test
def test_up_alone_rolls_a_patroni_set_primary_last_after_its_own_switchover(tmp_path: Path,
                                                                             patroni_data: Path) -> None:
    """No operator: ``up``'s own quorum-aware controller asks each member at its pod IP who leads and, for
    ``rollwise.dev/leader-transfer: patroni``, sends the switchover itself before it deletes the old primary."""
    with running_up(tmp_path, "--data-dir", str(patroni_data)) as up:
        up.install_crd()
        up.apply(PG.replace('rollwise.dev/leader-transfer: "true"', "rollwise.dev/leader-transfer: patroni"))
        up.until(lambda: len(p := member_pods(up)) == 3 and all(serving(x) for x in p), "three Ready members",
                 deadline=DEADLINE)
        up.until(lambda: len(ls := leaders(member_pods(up))) == 1 and not ls[0].startswith("?"), "one primary",
                 deadline=DEADLINE)
        (primary,) = leaders(member_pods(up))
        uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in member_pods(up)}
        up.kubectl("patch", "rsts", "pg", "--type=json", "-p",
                   '[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "patroni:3.0-r1"}]')
        replaced: list[str] = []

        def rolled() -> bool:
            pods = member_pods(up)
            replaced.extend(p["metadata"]["name"] for p in pods if p["metadata"]["uid"] != uids[p["metadata"]["name"]]
                            and p["metadata"]["name"] not in replaced)
            return len(pods) == 3 and all(serving(p) and p["spec"]["containers"][0]["image"] == "patroni:3.0-r1"
                                          for p in pods)

        up.until(rolled, "every member Ready at the new image", deadline=DEADLINE, most=0.2)
        reasons = [e["reason"] for e in up.read("events")["items"]]
    assert replaced[-1] == primary and sorted(replaced) == ["pg-0", "pg-1", "pg-2"], (replaced, primary)
    assert reasons.count("LeaderTransferRequested") == 1 and "LeaderTransferTimedOut" not in reasons, reasons
