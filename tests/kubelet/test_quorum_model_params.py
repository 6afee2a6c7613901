"""The quorum model's inputs: scenario options, probe tick arithmetic, lease identities, observing a pod."""

from __future__ import annotations

import math
from typing import Any

import pytest

from rollwise.api.leases import Holder, member_id, parse_holder
from rollwise.kubelet.quorum import (
    MemberObservation,
    QuorumParams,
    QuorumState,
    observe_pod,
    parse_quorum_params,
    step,
)
from rollwise.kubelet.quorum_probe import first_tick_index, probe_tick, tick_at, tick_matters

PATH = "kubelet.apps.etcd"


def test_all_options_parse_into_params_and_model_is_left_to_the_caller() -> None:
    raw = {"model": "quorum", "electionSeconds": 2, "leaseLagSeconds": 10, "probeInitialDelaySeconds": 0,
           "probePeriodSeconds": 2.5, "probeFailureThreshold": 3}
    assert parse_quorum_params(raw, path=PATH) == (
        QuorumParams(election_seconds=2.0, lease_lag_seconds=10.0, probe_initial_delay_seconds=0.0,
                     probe_period_seconds=2.5, probe_failure_threshold=3),
        [],
    )


@pytest.mark.parametrize("raw", [None, {}, {"model": "quorum"}], ids=["missing", "empty", "model-only"])
def test_missing_options_take_etcd_druid_defaults(raw: dict[str, Any] | None) -> None:
    params, errors = parse_quorum_params(raw, path=PATH)
    assert errors == []
    assert (params.election_seconds, params.lease_lag_seconds, params.probe_initial_delay_seconds,
            params.probe_period_seconds, params.probe_failure_threshold) == (1.0, 0.0, 15.0, 5.0, 5)


@pytest.mark.parametrize(
    ("raw", "path", "kind", "rule"),
    [
        ({"electionSeconds": "1s"}, f"{PATH}.electionSeconds", "Invalid value", "must be a number of seconds"),
        ({"electionSeconds": True}, f"{PATH}.electionSeconds", "Invalid value", "must be a number of seconds"),
        ({"leaseLagSeconds": -1}, f"{PATH}.leaseLagSeconds", "Invalid value", "must be greater than or equal to 0"),
        ({"probeInitialDelaySeconds": math.inf}, f"{PATH}.probeInitialDelaySeconds", "Invalid value",
         "must be a finite number"),
        ({"probePeriodSeconds": 0}, f"{PATH}.probePeriodSeconds", "Invalid value", "must be greater than 0"),
        ({"probeFailureThreshold": 0}, f"{PATH}.probeFailureThreshold", "Invalid value",
         "must be greater than or equal to 1"),
        ({"probeFailureThreshold": 2.5}, f"{PATH}.probeFailureThreshold", "Invalid value", "must be an integer"),
        ({"electionSecond": 1}, f"{PATH}.electionSecond", "Unsupported value", "supported values: "),
        ("quorum", PATH, "Invalid value", "must be a mapping"),
    ],
    ids=["string-seconds", "bool-seconds", "negative-lag", "infinite-delay", "zero-period", "zero-threshold",
         "fractional-threshold", "misspelt-key", "not-a-mapping"],
)
def test_bad_options_are_field_errors_with_their_paths_and_fall_back_to_defaults(
    raw: Any, path: str, kind: str, rule: str
) -> None:
    params, errors = parse_quorum_params(raw, path=PATH)
    assert [(e.path, e.kind) for e in errors] == [(path, kind)]
    assert errors[0].rule.startswith(rule)
    assert params == QuorumParams()


def test_every_bad_option_is_reported_at_once() -> None:
    raw = {"electionSeconds": -2, "probePeriodSeconds": "5", "probeFailureThreshold": 4, "extra": 1}
    params, errors = parse_quorum_params(raw, path=PATH)
    assert [e.path for e in errors] == [f"{PATH}.electionSeconds", f"{PATH}.probePeriodSeconds", f"{PATH}.extra"]
    assert params == QuorumParams(probe_failure_threshold=4)


@pytest.mark.parametrize(
    "kwargs",
    [{"election_seconds": -1.0}, {"probe_period_seconds": 0.0}, {"probe_failure_threshold": 0},
     {"lease_lag_seconds": math.nan}],
    ids=["negative-election", "zero-period", "zero-threshold", "nan-lag"],
)
def test_params_built_in_code_are_checked_too(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must be"):
        QuorumParams(**kwargs)


# --- probe arithmetic -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("anchor", "t", "after", "expected"),
    [
        (0.0, 0.0, False, 0),  # before the initial delay: the first tick
        (0.0, 15.0, False, 0),  # at a tick: that tick
        (0.0, 15.0, True, 1),  # strictly after a tick: the next
        (0.0, 15.1, False, 1),
        (10.0, 41.0, False, 4),  # 25, 30, 35, 40, [45]
        (0.1, 15.6, False, 1),  # 15.1, [20.1]: off-grid anchors
    ],
    ids=["before-delay", "on-tick", "after-tick", "between-ticks", "later", "off-grid"],
)
def test_first_tick_index_finds_the_first_tick_at_or_after_a_time(
    anchor: float, t: float, after: bool, expected: int
) -> None:
    assert first_tick_index(anchor, t, QuorumParams(), after=after) == expected


def test_tick_index_agrees_with_the_tick_expression_on_awkward_periods() -> None:
    params = QuorumParams(probe_initial_delay_seconds=0.3, probe_period_seconds=0.1)
    for k in range(200):
        t = tick_at(0.7, k, params)
        assert first_tick_index(0.7, t, params) == k
        assert first_tick_index(0.7, t, params, after=True) == k + 1


@pytest.mark.parametrize(
    ("ready", "failures", "participating", "after", "matters"),
    [
        (False, 0, True, (True, 0), True),
        (True, 0, True, (True, 0), False),
        (True, 2, True, (True, 0), True),
        (True, 0, False, (True, 1), True),
        (True, 4, False, (False, 0), True),
        (False, 0, False, (False, 0), False),
    ],
    ids=["becomes-ready", "steady-ready", "success-resets-count", "first-failure", "threshold-failure",
         "steady-unready"],
)
def test_a_tick_succeeds_while_participating_and_counts_failures_only_while_ready(
    ready: bool, failures: int, participating: bool, after: tuple[bool, int], matters: bool
) -> None:
    params = QuorumParams()
    assert probe_tick(ready=ready, failures=failures, participating=participating, params=params) == after
    assert tick_matters(ready=ready, failures=failures, participating=participating) is matters


# --- identity -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cluster", "leader", "member"),
    [("cafe", "ab12:cafe:Leader", f"{member_id('etcd-1')}:cafe:Member"),
     (None, "ab12:Leader", f"{member_id('etcd-1')}:Member")],
    ids=["three-part", "two-part-without-cluster-id"],
)
def test_leases_hold_member_cluster_role_with_the_observed_or_the_derived_member_id(
    cluster: str | None, leader: str, member: str
) -> None:
    obs = [MemberObservation(pod="etcd-0", ordinal=0, alive=True, started_at=0.0, member_id="ab12"),
           MemberObservation(pod="etcd-1", ordinal=1, alive=True, started_at=0.0)]
    out = step(obs, QuorumState.initial(), QuorumParams(election_seconds=0.0), replicas=2, now=0.0,
               cluster_id=cluster)
    assert dict(out.leases) == {"etcd-0": leader, "etcd-1": member}
    assert all(isinstance(parse_holder(h), Holder) for h in out.leases.values())


# --- observing a pod ------------------------------------------------------------------------------------------------


def _pod(state: dict[str, Any], *, deleted: float | None = None, name: str = "etcd-2") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": "u-9", "creationTimestamp": 0.0}
    if deleted is not None:
        meta["deletionTimestamp"] = deleted
    return {
        "metadata": meta,
        "spec": {"containers": [{"name": "etcd", "image": "etcd:v1"}, {"name": "backup", "image": "br:v1"}]},
        "status": {"containerStatuses": [
            {"name": "backup", "state": {"running": {"startedAt": 1.0}}},
            {"name": "etcd", "state": state},
        ]},
    }


@pytest.mark.parametrize(
    ("pod", "alive", "started", "terminating"),
    [
        (_pod({"running": {"startedAt": 6.0}}), True, 6.0, False),
        (_pod({"running": {"startedAt": 6.0}}, deleted=9.0), True, 6.0, True),
        (_pod({"waiting": {"reason": "ContainerCreating"}}), False, None, False),
        (_pod({"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": 8.0}}), False, None, False),
        ({"metadata": {"name": "etcd-2", "uid": "u-9"}, "spec": {"containers": [{"name": "etcd"}]}}, False, None,
         False),
    ],
    ids=["running", "terminating-still-runs", "creating", "exited", "no-status-yet"],
)
def test_a_pod_is_an_alive_member_while_its_first_spec_container_runs(
    pod: dict[str, Any], alive: bool, started: float | None, terminating: bool
) -> None:
    assert observe_pod(pod, member_id="m2") == MemberObservation(
        pod="etcd-2", ordinal=2, alive=alive, started_at=started, terminating=terminating, uid="u-9", member_id="m2")


def test_the_member_container_can_be_named() -> None:
    obs = observe_pod(_pod({"waiting": {"reason": "CrashLoopBackOff"}}), container="backup")
    assert (obs.alive, obs.started_at) == (True, 1.0)
