"""Violations the explorer found, each at its smallest bounds. Fixed ones are regression tests now; open ones stay
visible as strict xfails naming the invariant (when the defect is fixed the test passes, strict turns that into a
failure, and the mark goes).

Each docstring gives the shortest trace as the explorer printed it before the fix, in words."""

from __future__ import annotations

from explore_sets import QUORUM, STRATEGIES, found, manifest, run

from rollwise.api.features import FeatureGates
from rollwise.explore import Bounds, initial_node
from rollwise.explore.search import follow


def test_claim_survives_a_scale_down_reversed_while_the_pod_terminates() -> None:
    """1. controller creates web-0, web-1; 2. user scales to 1; 3. controller deletes web-1 (and points the claim
    at the pod, whenScaled Delete); 4. user scales back to 2; 5. controller reconciles; 6. web-1 finishes
    terminating: the garbage collector deletes data-web-1, whose ordinal is in range again."""
    strategy, _ = STRATEGIES["RollingUpdate"]
    result = run(manifest(strategy, "Parallel", replicas=2), replicas=2, template_changes=0, user_actions=2)
    assert "claims" not in found(result)


def test_rolling_update_without_a_block_does_not_churn_a_recreated_pod() -> None:
    """1. controller creates web-0, web-1; 2-5. web-1 starts and turns Ready; 6. user changes the template;
    7. controller deletes web-0 (outdated, never started); 8. web-0 finishes terminating; 9. controller recreates
    web-0 at the current revision (upstream's rule without a rollingUpdate block: ordinal < currentReplicas);
    10. controller deletes web-0 again as outdated and unavailable — and round and round (liveness too)."""
    result = run(manifest({"type": "RollingUpdate"}, "Parallel", replicas=2), replicas=2, template_changes=1)
    assert not {"no-churn", "liveness"} & set(found(result))


def test_enforced_rolling_update_completes_after_a_fix_that_arrives_while_creating() -> None:
    """1. controller creates web-0; 2. web-0 starts; 3. user sets a broken image; 4. controller reconciles;
    5. web-0 turns Ready; 6. controller creates web-1 at the broken revision; 7. user restores the good image;
    then web-1's pull fails and nothing replaces it: OrderedReady waits for web-1, the update never starts."""
    strategy, _ = STRATEGIES["EnforcedRollingUpdate"]
    result = run(manifest(strategy, "OrderedReady"), replicas=3, template_changes=2)
    assert "liveness" not in found(result)


def test_quorum_aware_controller_keeps_quorum_while_a_member_has_no_status_yet() -> None:
    """web-0 and web-1 participate, web-2 was just created and has no container status yet (Unknown: skipped by
    step 2); the user changes the template; the quorum-aware controller deletes follower web-1 in step 4, leaving
    1 of the 2 participating members a 3-member quorum needs."""
    result = run(manifest({"type": "OnDelete"}, "OrderedReady", annotations=QUORUM), replicas=3, template_changes=1)
    assert "budget" not in found(result)


def test_quorum_aware_rollout_completes_after_a_fix_that_arrives_while_creating() -> None:
    """The user breaks the template while web-1 is being created and fixes it again: web-1 runs the broken image
    and never pulls it. The StatefulSet controller (OrderedReady) waits for web-1 to be Ready before creating
    web-2; the quorum-aware controller waits for web-2 to exist before replacing anything: stuck for ever."""
    result = run(manifest({"type": "OnDelete"}, "OrderedReady", annotations=QUORUM), replicas=3, template_changes=2)
    assert "liveness" not in found(result)


def test_quorum_aware_controller_does_not_delete_a_member_created_at_the_update_revision() -> None:
    """Found with --perturb crash,burst (3 members): the StatefulSet controller creates web-2 at the new revision
    and crashes before its status write, so status.updateRevision still names the old one; web-2 starts; the
    quorum-aware controller reads the revision from the status, takes web-2 for outdated and deletes it."""
    bounds = Bounds(replicas=3, template_changes=1, faults=0, user_actions=0,
                    perturbations=frozenset({"crash", "burst"}))
    obj = manifest({"type": "OnDelete"}, "OrderedReady", annotations=QUORUM)
    path = follow(initial_node(obj, gates=FeatureGates(), bounds=bounds), bounds, [
        "statefulset-controller: reconciles (creates web-0)",
        "kubelet: container creating web-0",
        "kubelet: container starts web-0",
        "kubelet: readiness passes web-0",
        "statefulset-controller: reconciles (creates web-1)",
        "kubelet: container creating web-1",
        "kubelet: container starts web-1",
        "kubelet: readiness passes web-1",
        "user: changes the template web (image app:v1-next, good)",
        "statefulset-controller: crashes mid-plan (after 3 of 4 actions; creates web-2)",
        "kubelet: container creating web-2",
        "kubelet: container starts web-2",
        "quorum-aware-controller: reconciles",
    ])
    assert {name for _, problems in path for name in problems} == set()


def test_replacing_a_pod_built_from_the_old_template_is_not_churn() -> None:
    """Parallel, ``type: RollingUpdate`` without a block, 2 replicas, one fault and one user action: 7. user
    changes the template; 9. web-0 fails; 10-11. controller deletes it and recreates it at the *current* revision
    (ordinal < status.currentReplicas, reference §4.5); 13. user deletes web-1; 14. controller deletes web-0 as
    outdated and unavailable, its replacement now at the update revision (upstream's phase 1, §5.8). The pod was
    built from the old template, so replacing it is the rollout's step: no-churn judged it as built from the new."""
    result = run(manifest({"type": "RollingUpdate"}, "Parallel", replicas=2), replicas=2, faults=1, user_actions=1)
    assert result.complete
    assert found(result) == {}
