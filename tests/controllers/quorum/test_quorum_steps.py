"""DEP-07's procedure, one reconcile at a time (seed 001 "Pod Update Procedure"; reference §1.2, §1.3)."""

from __future__ import annotations

import pytest
from quorum_views import NEW, OLD, deleted, lease, leases_for, member, quorum_set, view_of

from rollwise.api.predicates import CONTAINER_ALIVE, CONTAINER_DEAD, CONTAINER_TRANSIENT
from rollwise.controllers.plan import DeletePod, EmitEvent, Plan
from rollwise.controllers.quorum import (
    DELETE_EVENT,
    LEASE_TEMPLATE,
    MEMBER_CONTAINER,
    REQUEUE_SECONDS,
    Settings,
    reconcile_quorum,
)
from rollwise.controllers.quorum.members import roster_of

# -- engagement --------------------------------------------------------------------------------------------------


def _being_deleted() -> dict[str, object]:
    sts = quorum_set()
    sts["metadata"]["deletionTimestamp"] = 5.0
    return sts


@pytest.mark.parametrize(
    ("sts", "gate"),
    [
        (quorum_set(), False),
        (quorum_set(strategy="RollingUpdate"), True),
        (quorum_set(policy=None), True),
        (quorum_set(policy="Manual"), True),
        (quorum_set(update=None), True),
        (_being_deleted(), True),
    ],
    ids=["gate-off", "rolling-update-strategy", "no-policy-annotation", "other-policy-value", "no-update-revision",
         "set-being-deleted"],
)
def test_controller_is_inert_unless_every_engagement_condition_holds(sts: dict[str, object], gate: bool) -> None:
    pods = [member(0, "CrashLoopBackOff"), member(1), member(2)]
    assert reconcile_quorum(view_of(sts, pods, gate=gate)) == Plan()


@pytest.mark.parametrize("api_version", ["apps/v1", "apps.rollwise.dev/v1alpha1"])
def test_both_api_versions_engage(api_version: str) -> None:
    plan = reconcile_quorum(view_of(quorum_set(api_version=api_version), [member(0), member(1), member(2)]))
    assert deleted(plan) == ["etcd-2"]


# -- classification as the controller uses it --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "health", "participating", "words"),
    [
        ("ready", CONTAINER_ALIVE, True, "container etcd is running and ready"),
        ("unready", CONTAINER_ALIVE, False, "container etcd is running but not ready"),
        ("terminated", CONTAINER_DEAD, False, "container etcd terminated (Error)"),
        ("CrashLoopBackOff", CONTAINER_DEAD, False, "container etcd is CrashLoopBackOff"),
        ("RunContainerError", CONTAINER_DEAD, False, "container etcd is RunContainerError"),
        ("ImagePullBackOff", CONTAINER_DEAD, False, "container etcd is ImagePullBackOff"),
        ("ErrImagePull", CONTAINER_DEAD, False, "container etcd is ErrImagePull"),
        ("CreateContainerConfigError", CONTAINER_DEAD, False, "container etcd is CreateContainerConfigError"),
        ("creating", CONTAINER_TRANSIENT, False, "container etcd is ContainerCreating"),
        ("initializing", CONTAINER_TRANSIENT, False, "container etcd is PodInitializing"),
        ("other-waiting", CONTAINER_TRANSIENT, False, "container etcd is SomethingNew"),
        ("unknown", None, False, "container etcd has no status yet"),
    ],
    ids=["running-ready", "running-unready", "terminated", "crash-loop", "run-error", "image-pull-backoff",
         "err-image-pull", "config-error", "creating", "initializing", "other-waiting-defensive", "no-status"],
)
def test_member_container_classification_and_participation(
    state: str, health: str | None, participating: bool, words: str
) -> None:
    roster = roster_of(view_of(quorum_set(), [member(0, state)]), Settings(container="etcd"))
    m = roster.members[0]
    assert (m.health, m.participating, m.state) == (health, participating, words)


@pytest.mark.parametrize(
    ("pod", "participating"),
    [
        (member(0, "ready", sidecar="CrashLoopBackOff"), True),
        (member(0, "unready", sidecar="ready", pod_ready=True), False),
        (member(0, "ready", pod_ready=False), True),
    ],
    ids=["sidecar-dead-is-ignored", "pod-ready-but-etcd-not", "etcd-ready-pod-condition-false"],
)
def test_participation_is_the_member_containers_ready_flag_only(pod: dict[str, object], participating: bool) -> None:
    roster = roster_of(view_of(quorum_set(), [pod]), Settings(container="etcd"))
    assert roster.members[0].participating is participating


def test_member_container_annotation_selects_which_container_is_classified() -> None:
    sts = quorum_set(notes={MEMBER_CONTAINER: "backup-restore"})
    pods = [member(0, "ready", sidecar="CrashLoopBackOff"), member(1), member(2)]
    plan = reconcile_quorum(view_of(sts, pods))
    assert deleted(plan) == ["etcd-0"]
    assert "container backup-restore is CrashLoopBackOff" in plan.of_type(DeletePod)[0].reason


# -- step 1 ------------------------------------------------------------------------------------------------------


def test_step1_all_members_at_update_revision_deletes_nothing_and_needs_no_requeue() -> None:
    plan = reconcile_quorum(view_of(quorum_set(), [member(o, "unready", rev=NEW) for o in range(3)]))
    assert deleted(plan) == [] and plan.requeue_after is None and plan.blocked == ()


# -- step 2 ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        (["unready", "creating", "CrashLoopBackOff"], "etcd-2"),
        (["CrashLoopBackOff", "unready", "creating"], "etcd-0"),
        (["unready", "creating", "ready"], "etcd-1"),
        (["initializing", "unready", "ready"], "etcd-0"),
        (["unready", "ready", "unready"], "etcd-2"),
        (["terminated", "ImagePullBackOff", "ready"], "etcd-1"),
        (["unready", "ready", "unknown"], "etcd-0"),
        (["unready", "unready", "unready"], "etcd-2"),
    ],
    ids=["dead-beats-transient-and-alive", "dead-at-ordinal-0", "transient-beats-alive",
         "pod-initializing-is-transient", "alive-unready-tie-highest-ordinal", "dead-tie-highest-ordinal",
         "unknown-is-skipped", "quorum-lost-all-unready-highest-first"],
)
def test_step2_picks_dead_then_transient_then_alive_unready(states: list[str], expected: str) -> None:
    plan = reconcile_quorum(view_of(quorum_set(), [member(o, s) for o, s in enumerate(states)],
                                    leases_for(3, leader=1)))
    assert deleted(plan) == [expected]
    assert plan.of_type(DeletePod)[0].unless_leader is None
    assert plan.requeue_after == REQUEUE_SECONDS


def test_step2_explains_the_choice_in_the_event_and_the_delete_reason() -> None:
    plan = reconcile_quorum(view_of(quorum_set(), [member(0, "CrashLoopBackOff"), member(1), member(2)]))
    event, delete = plan.actions[0], plan.actions[1]
    assert isinstance(event, EmitEvent) and isinstance(delete, DeletePod)
    assert event.event_reason == DELETE_EVENT
    assert event.message == "step 2: etcd-0 is not participating (container etcd is CrashLoopBackOff)"
    assert delete.reason == event.message
    assert (delete.name, delete.namespace, delete.uid, delete.revision) == ("etcd-0", "default", "uid-etcd-0-etcd-old",
                                                                           OLD)


def test_step2_runs_before_step3_so_a_broken_outdated_member_is_replaced_while_an_updated_one_rejoins() -> None:
    pods = [member(0, "CrashLoopBackOff"), member(1), member(2, "unready", rev=NEW)]
    assert deleted(reconcile_quorum(view_of(quorum_set(), pods))) == ["etcd-0"]


def test_only_one_deletion_per_reconcile_even_with_many_broken_members() -> None:
    pods = [member(o, "CrashLoopBackOff") for o in range(5)]
    assert deleted(reconcile_quorum(view_of(quorum_set(5), pods))) == ["etcd-4"]


# -- step 3 ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("state", ["unready", "CrashLoopBackOff", "creating", "unknown"])
def test_step3_holds_while_an_updated_member_is_not_participating(state: str) -> None:
    pods = [member(0), member(1), member(2, state, rev=NEW)]
    plan = reconcile_quorum(view_of(quorum_set(), pods, leases_for(3, leader=0)))
    assert deleted(plan) == []
    assert [b.pod for b in plan.blocked] == ["etcd-2"]
    assert "updated but not participating" in plan.blocked[0].cause
    assert plan.requeue_after == REQUEUE_SECONDS


# -- step 4 ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "leader", "expected"),
    [(3, 2, "etcd-1"), (3, 1, "etcd-2"), (3, 0, "etcd-2"), (5, 4, "etcd-3"), (5, 0, "etcd-4"), (5, 2, "etcd-4")],
    ids=["3-leader-highest", "3-leader-middle", "3-leader-lowest", "5-leader-highest", "5-leader-lowest",
         "5-leader-middle"],
)
def test_step4_deletes_a_follower_before_the_leader(replicas: int, leader: int, expected: str) -> None:
    plan = reconcile_quorum(view_of(quorum_set(replicas), [member(o) for o in range(replicas)],
                                    leases_for(replicas, leader)))
    assert deleted(plan) == [expected]
    delete = plan.of_type(DeletePod)[0]
    assert delete.unless_leader == expected, "the executor must re-read this follower's Lease before deleting"
    assert delete.reason.startswith(f"step 4: {expected} is a participating follower")


def test_step4_deletes_the_leader_last_and_without_a_role_recheck() -> None:
    pods = [member(0, rev=NEW), member(1), member(2, rev=NEW)]
    plan = reconcile_quorum(view_of(quorum_set(), pods, leases_for(3, leader=1)))
    assert deleted(plan) == ["etcd-1"]
    delete = plan.of_type(DeletePod)[0]
    assert delete.unless_leader is None
    assert delete.reason == "step 4: etcd-1 is the leader, updated last (lease etcd-1 says Leader)"


@pytest.mark.parametrize(
    ("etcd2_lease", "words"),
    [(None, "lease etcd-2 missing, treated as follower"),
     (lease("etcd-2", "a:b:c:d"), "unreadable"),
     (lease("etcd-2", "aa:bb:Candidate"), "names no known role, treated as follower"),
     (lease("etcd-2", "aa:Member"), "lease etcd-2 says Member")],
    ids=["missing-lease", "malformed-holder", "unknown-role", "two-part-member"],
)
def test_an_unreadable_role_counts_as_follower(etcd2_lease: dict[str, object] | None, words: str) -> None:
    leases = leases_for(3, leader=0)
    del leases["etcd-2"]
    if etcd2_lease is not None:
        leases["etcd-2"] = etcd2_lease
    pods = [member(0), member(1, rev=NEW), member(2)]
    plan = reconcile_quorum(view_of(quorum_set(), pods, leases))
    assert deleted(plan) == ["etcd-2"]
    assert words in plan.of_type(DeletePod)[0].reason
    assert plan.of_type(DeletePod)[0].unless_leader == "etcd-2"


def test_lease_template_names_the_lease_that_holds_the_role() -> None:
    sts = quorum_set(notes={LEASE_TEMPLATE: "{pod}-member"})
    leases = {**leases_for(3, leader=2, template="{pod}-member"), **leases_for(3, leader=1)}  # decoys by pod name
    plan = reconcile_quorum(view_of(sts, [member(o) for o in range(3)], leases))
    assert deleted(plan) == ["etcd-1"]
    assert plan.of_type(DeletePod)[0].unless_leader == "etcd-1-member"


@pytest.mark.parametrize(
    ("state", "leader"),
    [("ready", 0), ("ready", None), ("CrashLoopBackOff", 0)],
    ids=["ready-leader", "ready-no-lease", "crashed"],
)
def test_single_member_set_deletes_its_one_outdated_pod_and_waits(state: str, leader: int | None) -> None:
    view = view_of(quorum_set(1), [member(0, state)], leases_for(1, leader) if leader is not None else {})
    plan = reconcile_quorum(view)
    assert deleted(plan) == ["etcd-0"]
    assert plan.of_type(DeletePod)[0].unless_leader is None
    assert plan.requeue_after == REQUEUE_SECONDS
    after = reconcile_quorum(view_of(quorum_set(1), [member(0, state, terminating=True)]))
    assert deleted(after) == [] and [b.pod for b in after.blocked] == ["etcd-0"]


def test_outdated_members_of_unknown_state_are_waited_for_not_deleted() -> None:
    pods = [member(0, "unknown"), member(1, rev=NEW), member(2, rev=NEW)]
    plan = reconcile_quorum(view_of(quorum_set(), pods))
    assert deleted(plan) == []
    assert [b.pod for b in plan.blocked] == ["etcd-0"] and "state unknown" in plan.blocked[0].cause


# -- the top gate ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pods", "replicas", "blocked", "cause"),
    [
        ([member(0, "CrashLoopBackOff"), member(1), member(2, "ready", rev=NEW, terminating=True)], 3, ["etcd-2"],
         "terminating"),
        ([member(0), member(1, terminating=True), member(2)], 3, ["etcd-1"], "terminating"),
        ([member(0), member(2)], 3, ["etcd-1"], "not yet recreated (2 of 3 members exist)"),
        ([member(0), member(1, "CrashLoopBackOff", terminating=True)], 3, ["etcd-1", "etcd-2"], None),
        ([member(0), member(1), member(2)], 5, ["etcd-3", "etcd-4"], "not yet recreated (3 of 5 members exist)"),
        ([member(0), member(1), member(2), member(3, rev=NEW, terminating=True)], 3, ["etcd-3"], "terminating"),
    ],
    ids=["updated-pod-terminating", "outdated-pod-terminating", "pod-missing", "terminating-and-missing", "scale-up",
         "condemned-pod-terminating"],
)
def test_top_gate_holds_while_a_pod_is_terminating_or_missing(
    pods: list[dict[str, object]], replicas: int, blocked: list[str], cause: str | None
) -> None:
    plan = reconcile_quorum(view_of(quorum_set(replicas), pods))
    assert deleted(plan) == []
    assert [b.pod for b in plan.blocked] == blocked
    assert cause is None or all(b.cause == cause for b in plan.blocked)
    assert plan.requeue_after == REQUEUE_SECONDS


@pytest.mark.parametrize("state", ["CrashLoopBackOff", "ErrImagePull", "unready", "terminated"])
def test_step2_replaces_a_broken_member_without_waiting_for_a_missing_ordinal(state: str) -> None:
    # OrderedReady: etcd-2 is created only once etcd-1 is Ready, which etcd-1 on its broken (now outdated) template
    # never is. Replacing a member that does not participate cannot cost quorum, so it need not wait.
    plan = reconcile_quorum(view_of(quorum_set(), [member(0, rev=NEW), member(1, state)]))
    assert deleted(plan) == ["etcd-1"]


def test_a_missing_ordinal_still_holds_the_deletion_of_a_participating_member() -> None:
    plan = reconcile_quorum(view_of(quorum_set(), [member(0), member(1, rev=NEW)]))
    assert deleted(plan) == []
    assert [b.pod for b in plan.blocked] == ["etcd-2"]


# -- quorum ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "states", "expected"),
    [
        (3, ["ready", "ready", "unknown"], []),
        (3, ["ready", "unknown", "unknown"], []),
        (3, ["ready", "ready", "ready"], ["etcd-2"]),
        (5, ["ready", "ready", "ready", "unknown", "unknown"], []),
        (5, ["ready", "ready", "ready", "ready", "unknown"], ["etcd-3"]),
        (2, ["ready", "unknown"], []),
        (2, ["ready", "ready"], ["etcd-1"]),
    ],
    ids=["3-one-unknown", "3-two-unknown", "3-all", "5-two-unknown", "5-one-unknown", "2-one-unknown", "2-all"],
)
def test_step4_never_leaves_fewer_participating_members_than_a_quorum(
        replicas: int, states: list[str], expected: list[str]) -> None:
    # Unknown (no container status yet) is skipped by step 2 and may never join: a 3-member set with two
    # participating has no member to spare. A 1- or 2-member set has no headroom at all; it needs every other member.
    pods = [member(o, s) for o, s in enumerate(states)]
    plan = reconcile_quorum(view_of(quorum_set(replicas), pods))
    assert deleted(plan) == expected
    if not expected:
        assert "to be deleted when quorum allows" in plan.blocked[0].cause


@pytest.mark.parametrize("notes", [{"rollwise.dev/max-unavailable-members": "auto"},
                                   {"rollwise.dev/max-unavailable-members": "2"}])
def test_a_batch_never_takes_a_set_below_quorum(notes: dict[str, str]) -> None:
    pods = [member(o, "unknown" if o == 4 else "ready") for o in range(5)]
    assert len(deleted(reconcile_quorum(view_of(quorum_set(5, notes=notes), pods)))) == 1
    pods = [member(o, "unknown" if o >= 3 else "ready") for o in range(5)]
    assert deleted(reconcile_quorum(view_of(quorum_set(5, notes=notes), pods))) == []


# -- the StatefulSet controller's status -----------------------------------------------------------------------------


def test_a_status_that_has_not_observed_the_current_generation_is_not_acted_on() -> None:
    # The StatefulSet controller created etcd-2 at the new revision and crashed before its status write:
    # status.updateRevision still names the old one, so etcd-2 looks outdated.
    sts = quorum_set(update=OLD)
    sts["metadata"]["generation"] = 2
    sts["status"]["observedGeneration"] = 1
    pods = [member(0), member(1), member(2, rev=NEW)]
    plan = reconcile_quorum(view_of(sts, pods))
    assert deleted(plan) == []
    assert "status is for generation 1, the set is at generation 2" in plan.blocked[0].cause
    assert plan.requeue_after == REQUEUE_SECONDS
    sts["status"] = {**sts["status"], "observedGeneration": 2, "updateRevision": NEW}
    assert deleted(reconcile_quorum(view_of(sts, pods))) == ["etcd-1"]


def test_pods_are_found_by_selector_and_name_not_by_owner() -> None:
    stranger = member(0, "CrashLoopBackOff")
    stranger["metadata"]["labels"]["app"] = "other"
    padded = member(1, "CrashLoopBackOff", name="etcd-01")
    foreign = member(2, "CrashLoopBackOff", name="etcdx-2")
    pods = [stranger, padded, foreign, member(0), member(1), member(2, "unready")]
    plan = reconcile_quorum(view_of(quorum_set(), pods))
    assert deleted(plan) == ["etcd-2"]

