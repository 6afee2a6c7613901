"""Role probes (issue 41): the rule that reads a member's role from its answer, the settings on both kinds, and the
decision: an unknown role (no answer, garbage, a stale answer) or two members saying they lead never lets a member
that might be the leader go before the others (DEP-07 step 4, follower before leader)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from quorum_views import NEW, NOW, World, deleted, member, quorum_set, view_of

from rollwise.api.role_probe import (
    FOLLOWER,
    LEADER,
    UNKNOWN,
    ProbeAnswer,
    RoleProbe,
    check_role_probe,
    parse_json_path,
    read_role,
)
from rollwise.cli import main
from rollwise.controllers.quorum import reconcile_quorum
from rollwise.controllers.quorum.settings import read_settings

ZK = RoleProbe(port=8080, path="/commands/srvr", json_path=".server_stats.server_state", equals="leader")
NATS = RoleProbe(port=8222, path="/jsz", json_path="{.meta_cluster.leader}", equals="{pod}")
PATRONI = RoleProbe(port=8008, path="/leader", status_code=200)

PATRONI_NOTES = {"rollwise.dev/role-probe-port": "8008", "rollwise.dev/role-probe-path": "/leader",
                 "rollwise.dev/role-probe-leader-status-code": "200"}


def _json(doc: object, *, at: float = NOW, status: int = 200) -> ProbeAnswer:
    return ProbeAnswer(at=at, status=status, body=json.dumps(doc).encode())


def _zk(state: str, *, at: float = NOW) -> ProbeAnswer:
    return _json({"command": "srvr", "server_stats": {"server_state": state}}, at=at)


@pytest.mark.parametrize(("probe", "answer", "pod", "kind"), [
    (PATRONI, ProbeAnswer(at=NOW, status=200), "pg-0", LEADER),
    (PATRONI, ProbeAnswer(at=NOW, status=503), "pg-1", FOLLOWER),
    (PATRONI, ProbeAnswer(at=NOW, status=500), "pg-1", UNKNOWN),
    (ZK, _zk("leader"), "zk-0", LEADER),
    (ZK, _zk("follower"), "zk-1", FOLLOWER),
    (ZK, _json({"command": "srvr"}), "zk-1", UNKNOWN),
    (ZK, ProbeAnswer(at=NOW, status=200, body=b"<html>not json"), "zk-1", UNKNOWN),
    (ZK, _json({"server_stats": {"server_state": {"nested": 1}}}), "zk-1", UNKNOWN),
    (ZK, _zk("leader") and ProbeAnswer(at=NOW, status=404, body=b"{}"), "zk-1", UNKNOWN),
    (NATS, _json({"meta_cluster": {"leader": "nats-2"}}), "nats-2", LEADER),
    (NATS, _json({"meta_cluster": {"leader": "nats-2"}}), "nats-0", FOLLOWER),
    (ZK, ProbeAnswer(at=NOW, error="timed out after 1s"), "zk-0", UNKNOWN),
    (ZK, None, "zk-0", UNKNOWN),
    (ZK, _zk("follower", at=NOW - 11), "zk-0", UNKNOWN),
], ids=["status-leader", "status-503-follower", "status-500-unknown", "json-leader", "json-follower",
        "json-path-missing", "garbage-body", "not-a-single-value", "json-404-unknown", "nats-pod-name-leader",
        "nats-other-pod-follower", "timeout-unknown", "never-probed-unknown", "stale-unknown"])
def test_a_role_is_read_from_the_answer_and_anything_unclear_is_unknown(probe: RoleProbe, answer: ProbeAnswer | None,
                                                                         pod: str, kind: str) -> None:
    assert read_role(probe, answer, pod=pod, now=NOW).kind == kind


def test_the_json_path_is_the_printer_column_form_braces_optional() -> None:
    assert parse_json_path(".server_stats.server_state") == ("server_stats", "server_state")
    assert parse_json_path("{.members[2].role}") == ("members", 2, "role")
    for bad in ("server_state", ".a..b", "{.a", ".a[*]", "$.a", ".a[?(@.x)]", ""):
        assert parse_json_path(bad) is None, bad


def _errors(raw: object) -> list[str]:
    return [str(e) for e in check_role_probe(raw, lambda f: f"spec.roleProbe.{f}" if f else "spec.roleProbe")[1]]


def test_invalid_probe_fields_are_named_by_their_path_and_rule() -> None:
    assert _errors({"port": 0, "scheme": "ftp", "path": "leader", "leader": {"statusCode": 200, "jsonPath": ".a"},
                    "timeoutSeconds": "1"}) == [
        "spec.roleProbe.port: Invalid value: 0: must be a whole number from 1 to 65535",
        'spec.roleProbe.timeoutSeconds: Invalid value: "1": must be a whole number from 1 to 3600',
        'spec.roleProbe.path: Invalid value: "leader": must be an absolute URL path (starting with /, no spaces)',
        'spec.roleProbe.scheme: Unsupported value: "ftp": supported values: "HTTP", "HTTPS"',
        "spec.roleProbe.leader: Forbidden: exactly one of statusCode, or jsonPath with equals, says who leads",
        "spec.roleProbe.leader.equals: Required value: the value the leader's answer has at jsonPath ({pod}: the "
        "pod's name)"]
    assert _errors({"port": 8080}) == [
        "spec.roleProbe.leader: Required value: exactly one of statusCode, or jsonPath with equals, says who leads"]
    assert _errors({"port": 8080, "leader": {"jsonPath": "a.b", "equals": "x"}}) == [
        'spec.roleProbe.leader.jsonPath: Invalid value: "a.b": must be a path of names and [n] indexes, e.g. '
        '.server_stats.server_state or {.meta_cluster.leader}']
    assert _errors({"port": 8222, "path": "/jsz", "leader": {"jsonPath": ".meta_cluster.leader",
                                                             "equals": "{pod}"}}) == []


def test_both_kinds_read_the_same_probe_annotations_on_apps_v1_fields_on_the_custom_kind() -> None:
    settings, errors = read_settings(quorum_set(notes=PATRONI_NOTES))
    assert errors == [] and settings.probe == PATRONI
    custom = quorum_set(api_version="apps.rollwise.dev/v1alpha1")
    custom["spec"]["roleProbe"] = {"port": 8008, "path": "/leader", "leader": {"statusCode": 200}}
    settings, errors = read_settings(custom)
    assert errors == [] and settings.probe == PATRONI
    bad = quorum_set(notes={**PATRONI_NOTES, "rollwise.dev/role-probe-port": "http",
                            "rollwise.dev/role-label": "role"})
    assert [str(e) for e in read_settings(bad)[1]] == [
        'metadata.annotations[rollwise.dev/role-probe-port]: Invalid value: "http": must be a whole number from 1 '
        'to 65535',
        'metadata.annotations[rollwise.dev/role-label]: Forbidden: roles come from the role probe '
        '(metadata.annotations[rollwise.dev/role-probe-port]); use one of the two']


def _probed(answers: dict[str, ProbeAnswer], pods: list | None = None, *, replicas: int = 3):
    sts = quorum_set(replicas, notes=PATRONI_NOTES)
    pods = pods if pods is not None else [member(o) for o in range(replicas)]
    return replace(view_of(sts, pods), probes=answers)


def _status(code: int, at: float = NOW) -> ProbeAnswer:
    return ProbeAnswer(at=at, status=code)


def test_a_clear_answer_takes_followers_first_and_the_leader_last() -> None:
    plan = reconcile_quorum(_probed({"etcd-0": _status(503), "etcd-1": _status(503), "etcd-2": _status(200)}))
    assert deleted(plan) == ["etcd-1"]
    only_leader_left = [member(0, rev=NEW), member(1, rev=NEW), member(2)]
    plan = reconcile_quorum(_probed({"etcd-0": _status(503), "etcd-1": _status(503), "etcd-2": _status(200)},
                                    only_leader_left))
    assert deleted(plan) == ["etcd-2"]


@pytest.mark.parametrize("unclear", [
    ProbeAnswer(at=NOW, error="timed out after 1s"), ProbeAnswer(at=NOW, status=500), _status(503, at=NOW - 30),
    ProbeAnswer(at=NOW, error="not an HTTP answer: BadStatusLine"), None,
], ids=["timeout", "server-error", "stale", "garbage", "never-answered"])
def test_an_unknown_role_is_never_taken_for_a_follower(unclear: ProbeAnswer | None) -> None:
    """etcd-2 leads; etcd-0 cannot be heard clearly. The self-declared follower etcd-1 goes; etcd-0 and the leader
    are held, and once they are the only outdated ones left, nothing is deleted."""
    answers = {"etcd-1": _status(503), "etcd-2": _status(200)}
    if unclear is not None:
        answers["etcd-0"] = unclear
    assert deleted(reconcile_quorum(_probed(answers))) == ["etcd-1"]
    left = [member(0), member(1, rev=NEW), member(2)]
    plan = reconcile_quorum(_probed(answers, left))
    assert deleted(plan) == []
    assert [b.pod for b in plan.blocked] == ["etcd-0", "etcd-2"]
    assert "might be the leader, which cannot be told (role unknown: etcd-0 (" in plan.blocked[0].cause


@pytest.mark.parametrize("unclear", [ProbeAnswer(at=NOW, error="timed out after 1s"), _status(200, at=NOW - 30)],
                         ids=["timeout", "stale"])
def test_when_the_leader_itself_is_unclear_no_participating_member_goes(unclear: ProbeAnswer) -> None:
    answers = {"etcd-0": _status(503), "etcd-1": _status(503), "etcd-2": unclear}
    assert deleted(reconcile_quorum(_probed(answers))) == []


def test_an_unknown_role_elsewhere_keeps_the_claimed_leader_too() -> None:
    """etcd-2 says it leads, but etcd-0 (updated) cannot be heard: the leader cannot be told, so etcd-2 waits."""
    left = [member(0, rev=NEW), member(1, rev=NEW), member(2)]
    plan = reconcile_quorum(_probed({"etcd-0": ProbeAnswer(at=NOW, status=200, body=b""),
                                     "etcd-1": _status(503), "etcd-2": _status(200)} | {
        "etcd-0": ProbeAnswer(at=NOW, error="connection refused")}, left))
    assert deleted(plan) == []


def test_two_members_saying_they_lead_are_both_held() -> None:
    answers = {"etcd-0": _status(200), "etcd-1": _status(503), "etcd-2": _status(200)}
    assert deleted(reconcile_quorum(_probed(answers))) == ["etcd-1"]
    left = [member(0), member(1, rev=NEW), member(2)]
    plan = reconcile_quorum(_probed(answers, left))
    assert deleted(plan) == []
    assert "2 members say they lead: etcd-0, etcd-2" in plan.blocked[0].cause


def test_a_not_ready_member_that_answers_it_leads_is_not_replaced_first_but_goes_last() -> None:
    """NATS' /healthz fails on its voting meta leader while a peer catches up. The leader etcd-2 answers, clearly and
    now, that it leads but is not Ready; the updated etcd-0 is rejoining. DEP-07's step 2 would replace the member
    that is not Ready first: here it waits for the rejoining one, then (the quorum counted by readiness alone, two
    of three) for the leader's readiness before a follower goes, and the leader, Ready or not, goes last."""
    answers = {"etcd-0": _status(503), "etcd-1": _status(503), "etcd-2": _status(200)}
    rejoining = [member(0, "unready", rev=NEW), member(1), member(2, "unready")]
    plan = reconcile_quorum(_probed(answers, rejoining))
    assert deleted(plan) == [] and [b.pod for b in plan.blocked] == ["etcd-0"]
    rejoined = [member(0, rev=NEW), member(1), member(2, "unready")]
    plan = reconcile_quorum(_probed(answers, rejoined))
    assert deleted(plan) == [] and "2 of 3 members participate (etcd-2 not participating)" in plan.blocked[0].cause
    assert deleted(reconcile_quorum(_probed(answers, [member(0, rev=NEW), member(1), member(2)]))) == ["etcd-1"]
    plan = reconcile_quorum(_probed(answers, [member(0, rev=NEW), member(1, rev=NEW), member(2, "unready")]))
    assert deleted(plan) == ["etcd-2"]
    # Its readiness alone, with no clear answer that it leads, is what step 2 replaces first, as before.
    unclear = {**answers, "etcd-2": ProbeAnswer(at=NOW, error="timed out after 1s")}
    assert deleted(reconcile_quorum(_probed(unclear, rejoining))) == ["etcd-2"]


def test_a_probe_that_names_no_leader_deletes_no_participating_member() -> None:
    """A probe at the wrong path answers 404 on every member: each reads as "not the leader", so none is trusted."""
    plan = reconcile_quorum(_probed({f"etcd-{o}": _status(404) for o in range(3)}))
    assert deleted(plan) == [] and "no participating member says it leads" in plan.blocked[0].cause
    assert [b.pod for b in plan.blocked] == ["etcd-0", "etcd-1", "etcd-2"]


def test_a_held_wait_writes_its_condition_once() -> None:
    """The wait's words carry no times: a reconcile of the same answers an instant later writes nothing."""
    left = [member(0, rev=NEW), member(1, rev=NEW), member(2)]
    answers = {"etcd-0": _status(503), "etcd-1": _status(503), "etcd-2": _status(200, at=NOW - 30)}
    world = World(quorum_set(notes=PATRONI_NOTES), left)
    first = reconcile_quorum(replace(world.view(), probes=answers))
    world.sts["status"] = next(a.status for a in first.actions if hasattr(a, "status"))
    world.now = NOW + 5
    again = reconcile_quorum(replace(world.view(), probes=answers))
    assert again.actions == ()


_MANIFEST = """apiVersion: {api}
kind: StatefulSet
metadata:
  name: pg
  annotations: {{rollwise.dev/update-policy: QuorumAware{notes}}}
spec:
  replicas: 3
  updateStrategy: {{type: OnDelete}}
{probe}  selector: {{matchLabels: {{app: pg}}}}
  template:
    metadata: {{labels: {{app: pg}}}}
    spec: {{containers: [{{name: postgres, image: "spilo:15"}}]}}
"""


@pytest.mark.parametrize(("api", "notes", "probe", "problems"), [
    ("apps.rollwise.dev/v1alpha1", "", "  roleProbe: {port: 8008, path: leader, leader: {statusCode: 200}}\n",
     ['spec.roleProbe.path: Invalid value: "leader": must be an absolute URL path (starting with /, no spaces)']),
    ("apps/v1", ', rollwise.dev/role-probe-port: "http", rollwise.dev/role-probe-leader-status-code: "200"', "",
     ['metadata.annotations[rollwise.dev/role-probe-port]: Invalid value: "http": must be a whole number from 1 '
      'to 65535']),
], ids=["custom-kind-field", "apps-v1-annotation"])
def test_validate_names_each_bad_probe_setting_once_with_its_path(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  api: str, notes: str, probe: str,
                                                                  problems: list[str]) -> None:
    path = tmp_path / "pg.yaml"
    path.write_text(_MANIFEST.format(api=api, notes=notes, probe=probe))
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert [line.strip() for line in err.splitlines()[1:]] == problems
