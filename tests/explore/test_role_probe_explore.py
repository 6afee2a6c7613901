"""The explorer with a role-probed quorum set (issue 41): members answer their role over a probe, and with
``--perturb roles`` the quorum-aware controller may decide on a faulty role source instead (one member's answer
missing, stale, or a second member saying it leads). The quorum invariants hold on every path, the budget's
leader-last rule among them; a controller that reads an unclear answer as a follower's (etcd-druid's rule for
Leases) is caught by it."""

from __future__ import annotations

import dataclasses

import pytest
from explore_sets import QUORUM, STRATEGIES, found, manifest, run
from tiers import sweep

from rollwise.api.leases import LEADER, MEMBER, format_holder
from rollwise.api.predicates import is_ready
from rollwise.api.role_probe import LEADER as PROBED_LEADER
from rollwise.api.role_probe import ProbeAnswer, read_role
from rollwise.controllers.plan import Plan
from rollwise.controllers.quorum import reconcile_quorum
from rollwise.controllers.view import SetView
from rollwise.explore import controller
from rollwise.explore.roles import faults, leader_deleted_first, probe_of_set, truthful

PROBED = {**QUORUM, "rollwise.dev/role-probe-port": "8080", "rollwise.dev/role-probe-path": "/commands/srvr",
          "rollwise.dev/role-probe-leader-json-path": ".server_stats.server_state",
          "rollwise.dev/role-probe-leader-equals": "leader"}


@pytest.mark.parametrize(("faults_per_path", "replicas"), sweep([(0, 2), (0, 3), (1, 3)], fast={(0, 2)}))
def test_a_faulty_role_source_never_breaks_quorum_nor_takes_the_leader_first(faults_per_path: int,
                                                                              replicas: int) -> None:
    """Ids: faults per path - members. Three members with a pod fault is the widest (``make test-slow``)."""
    strategy, _ = STRATEGIES["QuorumAware"]
    result = run(manifest(strategy, "Parallel", annotations=PROBED, replicas=replicas), replicas=replicas,
                 template_changes=1,
                 faults=faults_per_path, perturb="roles")
    assert result.complete, "the bounded state space must be exhausted"
    assert found(result) == {}


def _lease(pod: str, leads: bool) -> dict:
    return {"metadata": {"name": pod}, "spec": {"holderIdentity": format_holder("a1", "c1", LEADER if leads
                                                                                   else MEMBER)}}


def _pod(o: int, rev: str) -> dict:
    return {"metadata": {"name": f"web-{o}", "labels": {"controller-revision-hash": rev}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


def test_leader_last_names_a_leader_deleted_before_a_participating_outdated_member() -> None:
    sts = manifest(*STRATEGIES["QuorumAware"][:1], "Parallel", annotations=PROBED)
    sts["status"] = {"updateRevision": "new"}
    view = SetView(set=sts, pods=(_pod(0, "old"), _pod(1, "old"), _pod(2, "new")),
                   leases={"web-0": _lease("web-0", True), "web-1": _lease("web-1", False)})
    assert leader_deleted_first(view, (view.pods[0],)) == [
        "deleted web-0, the leader by its Lease, before outdated member(s) web-1"]
    assert leader_deleted_first(view, (view.pods[1],)) == []


def test_the_role_source_faults_are_one_member_each_and_the_truth_reads_as_the_leases() -> None:
    sts = manifest(*STRATEGIES["QuorumAware"][:1], "Parallel", annotations=PROBED)
    view = SetView(set=sts, pods=(_pod(0, "a"), _pod(1, "a")), now=100.0,
                   leases={"web-0": _lease("web-0", True), "web-1": _lease("web-1", False)})
    assert truthful(view)["web-0"].body == b'{"server_stats": {"server_state": "leader"}}'
    assert [words for words, _ in faults(view)] == [
        "no answer from web-0", "web-0's answer is stale (from before it led)", "web-0 leads but its readiness fails",
        "no answer from web-1", "web-1 also says it leads"]
    stale = dict(faults(view))["web-0's answer is stale (from before it led)"].probes["web-0"]
    assert isinstance(stale, ProbeAnswer) and stale.at < 100.0 - 10
    unready = dict(faults(view))["web-0 leads but its readiness fails"]
    assert [is_ready(p) for p in unready.pods] == [False, True] and unready.probes == truthful(view)


def _caught_by_the_budget(found: dict[str, str]) -> bool:
    """The budget invariant names the first of its rules a path breaks: leader last (the member its Lease names
    leader deleted while another outdated member participates), or the quorum a deletion of that leader takes
    with it when a member is already down."""
    said = found.get("budget", "")
    assert said, found
    return "the leader by its Lease, before outdated member(s)" in said or "deleted participating member(s)" in said


def _as_leases(view: SetView) -> Plan:
    """The real quorum-aware controller fed as etcd-druid is: an agent turns each probe answer into a member Lease,
    Leader or Member, so an unclear answer becomes a Member's (a follower's)."""
    probe = probe_of_set(view.set)
    if probe is None:
        return reconcile_quorum(view)
    leases = {name: _lease(name, read_role(probe, a, pod=name, now=view.now).kind == PROBED_LEADER)
              for name, a in view.probes.items()}
    notes = {k: v for k, v in view.set["metadata"]["annotations"].items() if "role-probe" not in k}
    sts = {**view.set, "metadata": {**view.set["metadata"], "annotations": notes}}
    return reconcile_quorum(dataclasses.replace(view, set=sts, leases=leases, probes={}))


@pytest.mark.parametrize("replicas", sweep([(2,), (3,)], fast={(2,)}))
def test_a_controller_reading_unclear_answers_as_a_followers_is_caught_by_leader_last(
        monkeypatch: pytest.MonkeyPatch, replicas: int) -> None:
    monkeypatch.setattr(controller, "reconcile_quorum", _as_leases)
    strategy, _ = STRATEGIES["QuorumAware"]
    result = run(manifest(strategy, "Parallel", annotations=PROBED, replicas=replicas), replicas=replicas,
                 template_changes=1,
                 perturb="roles")
    assert _caught_by_the_budget(found(result))


def _readiness_alone(view: SetView) -> Plan:
    """The real quorum-aware controller, but a member that is not Ready counts as out of the quorum whatever it
    answers: its answer is dropped before the controller reads it."""
    kept = {name: a for name, a in view.probes.items()
            if any(name == p["metadata"]["name"] and is_ready(p) for p in view.pods)}
    return reconcile_quorum(dataclasses.replace(view, probes=kept))


@pytest.mark.parametrize("replicas", sweep([(2,), (3,)], fast={(2,)}))
def test_a_controller_that_counts_a_not_ready_leader_out_of_the_quorum_is_caught_by_the_budget(
        monkeypatch: pytest.MonkeyPatch, replicas: int) -> None:
    """NATS' meta leader failed ``/healthz`` while a peer restarted, and a controller that read readiness alone
    replaced it first (DEP-07 step 2), costing an election; the readiness fault finds that."""
    monkeypatch.setattr(controller, "reconcile_quorum", _readiness_alone)
    strategy, _ = STRATEGIES["QuorumAware"]
    result = run(manifest(strategy, "Parallel", annotations=PROBED, replicas=replicas), replicas=replicas,
                 template_changes=1, perturb="roles")
    assert _caught_by_the_budget(found(result))
