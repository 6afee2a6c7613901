"""Phases A-C of a reconcile: create and repair in-range pods, fix condemned claims, scale down (reference §5.3-5.5).

``OrderedReady`` (monotonic) stops at the first pod that is not healthy and creates or deletes one pod per
reconcile; ``Parallel`` does everything at once and never waits on health.
"""

from __future__ import annotations

from rollwise.api import predicates as p
from rollwise.api.identity import (
    identity_matches,
    new_pod,
    ordinal_of,
    pod_name,
    repair_identity,
    revision_of,
    storage_matches,
)
from rollwise.api.meta import Obj, name_of
from rollwise.api.revisions import template_of
from rollwise.api.strategies import ROLLING_KINDS, ROLLING_UPDATE
from rollwise.controllers.plan import CreatePod, UpdatePod
from rollwise.controllers.statefulset.claims import (
    claims_blocking_creation,
    create_missing_claims,
    fix_claim_owners,
    stale_claim,
)
from rollwise.controllers.statefulset.context import Sync

__all__ = [
    "first_unavailable",
    "outdated_wait_note",
    "process_condemned",
    "process_replicas",
    "replacement_is_outdated",
    "revision_for_new_pod",
]


def revision_for_new_pod(sync: Sync, ordinal: int) -> Obj:
    """Current revision below the partition, update revision otherwise (reference §4.5 newVersionedStatefulSetPod).

    With ``type: RollingUpdate`` and no ``rollingUpdate`` block, ordinals below ``start + status.currentReplicas``
    come back at the current revision (upstream quirk, kept). OnDelete and Recreate always use the update revision.
    """
    if sync.create_at_current:
        return sync.current_revision  # a paused Recreate that has not begun (pause.py)
    if sync.update_type not in ROLLING_KINDS:
        return sync.update_revision
    block = sync.strategy_block
    if block is None:
        current_replicas = int((sync.sts.get("status") or {}).get("currentReplicas") or 0)
        if sync.position(ordinal) < current_replicas:
            return sync.current_revision
    elif sync.position(ordinal) < sync.floor:
        return sync.current_revision
    return sync.update_revision


def replacement_is_outdated(sync: Sync, pod: Obj) -> bool:
    """Deleting this outdated pod would bring it back at a revision other than the update revision.

    Without a ``rollingUpdate`` block, an ordinal below ``start + status.currentReplicas`` is recreated at the
    current revision (reference §4.5). Once the pod is gone, that count is the number of other pods at the current
    revision that are not terminating (status.py). When the ordinal is still below it, an update that deletes the
    pod only gets the same outdated pod back, not yet available, and would delete it again: a livelock. Such a pod
    waits until the current-revision pods above it are replaced; no controller churns a pod it just created.

    A pod that is not available at a third revision (a broken template since replaced) is not held: it comes back
    at the current revision, which heals it, and from then on it is held as any current pod is. Holding it instead
    would deadlock a budgeted rollout, since the broken pod spends the budget the pods above it would need.
    """
    if sync.update_type not in ROLLING_KINDS or sync.strategy_block is not None:
        return False
    if sync.current_name == sync.update_name:
        return False
    if revision_of(pod) != sync.current_name and not sync.available(pod):
        return False
    quiet = sync.quiet_outdated_alive()  # quiet pods at the current revision, not deleted by this plan
    remaining = quiet + sum(1 for other in sync.loud_pods()
                            if not sync.terminating(other) and revision_of(other) == sync.current_name)
    if not sync.terminating(pod) and revision_of(pod) == sync.current_name:
        remaining -= 1  # the pod itself, counted above whether quiet or loud
    return sync.position(ordinal_of(pod)) < remaining


def first_unavailable(sync: Sync) -> Obj | None:
    """The first unavailable pod: lowest in-range index, else lowest condemned ordinal (reference §5.3, #130909).

    One notion of "unavailable" for both the choice and the block check: bug #123918 came from mixing two.
    """
    for index in sync.touched():  # quiet pods are available
        pod = sync.replicas[index]
        if sync.unavailable(pod):
            return pod
    for pod in reversed(sync.condemned):
        if sync.unavailable(pod):
            return pod
    return None


def process_replicas(sync: Sync) -> bool:
    """Phase A over in-range ordinals, ascending. Returns True when a monotonic set must stop this reconcile."""
    for index in sync.touched():  # a quiet pod passes without an action or a stop (census.py)
        stop = _process_replica(sync, index, sync.replicas[index])
        if stop and sync.monotonic:
            return True
    return False


def _process_replica(sync: Sync, index: int, pod: Obj | None) -> bool:
    ordinal = sync.ordinal(index)
    name = pod_name(name_of(sync.sts), ordinal)
    if pod is not None and (p.is_failed(pod) or p.is_succeeded(pod)):
        # Since ~1.27: delete, wait until the pod is gone, recreate on a later reconcile (reference §5.4 step 1).
        if not sync.terminating(pod):
            sync.delete(pod, f"pod {name} is {pod['status']['phase']}; it will be recreated")
        sync.wait(name, "to be replaced: it is " + pod["status"]["phase"])
        return True
    if pod is None:
        if sync.monotonic and sync.broken_below is not None:
            # EnforcedRollingUpdate keeps going past a broken outdated pod, but ordered creation stays ordered:
            # nothing new appears above it until it is replaced. Not an exit, so the update can replace it.
            sync.wait(name, f"to be created once {sync.broken_below} is replaced")
            return False
        stale = stale_claim(sync, ordinal, name)
        if stale is not None:
            sync.wait(name, f"claim {stale} still belongs to an earlier {name}; waiting for garbage collection")
            return True
        blocker = claims_blocking_creation(sync, ordinal)
        if blocker is not None:
            sync.wait(name, f"cannot create: {blocker}")
            return True
        revision = revision_for_new_pod(sync, ordinal)
        sync.actions.extend(create_missing_claims(sync, ordinal, name))
        new = new_pod(sync.sts, template_of(revision), ordinal, name_of(revision))
        sync.actions.append(CreatePod(pod=new, ordinal=ordinal, revision=name_of(revision),
                                      reason=f"ordinal {ordinal} is missing"))
        if sync.monotonic:
            sync.wait(name, "to be created and become Running and Ready")
        return True
    if p.is_pending(pod):
        # reference §6.1: a claim deleted under a pod that cannot start is recreated.
        sync.actions.extend(create_missing_claims(sync, ordinal, name))
    if sync.terminating(pod):
        if cause := sync.going_cause(pod, "to finish terminating"):
            sync.wait(name, cause)
            return True
        # Only marked PreparingDelete (hooks.py): it still runs, so ordered creation goes on past it while it is
        # healthy; a pre-delete hook may take long, and the pods above it must not wait for that.
        return not sync.health(pod)[1]
    healthy = sync.health(pod)[1]
    if sync.monotonic and not healthy:
        if not (sync.tolerates_broken_outdated and sync.outdated(pod)):
            sync.wait_for_unavailable(index, pod, outdated_wait_note(sync, index, pod))
            return True
        sync.broken_below = sync.broken_below or name
    if not identity_matches(sync.sts, pod) or not storage_matches(sync.sts, pod):
        sync.actions.append(UpdatePod(pod=repair_identity(sync.sts, pod), reason=f"repair identity of {name}"))
    return False


def process_condemned(sync: Sync) -> bool:
    """Phases B and C: fix claims of condemned pods, then delete them, highest ordinal first (reference §5.5).

    Monotonic: one deletion per reconcile, each after the previous one finished terminating, and an unhealthy
    condemned pod is deleted only if it is the first unavailable pod. Parallel: all at once, whatever their health.
    """
    for pod in sync.condemned:
        sync.actions.extend(fix_claim_owners(sync, pod, condemned=True))
    first = first_unavailable(sync)
    for pod in sync.condemned:
        name = name_of(pod)
        if sync.terminating(pod):
            if sync.monotonic:
                if cause := sync.going_cause(pod, "to finish terminating (scale-down)"):
                    sync.wait(name, cause)
                return True
            continue
        if sync.monotonic and sync.unavailable(pod) and pod is not first and not sync.tolerates_broken_outdated:
            sync.wait(name, "to become available before scale-down: "
                      + p.unavailable_cause(pod, sync.min_ready_seconds, sync.now))
            return True
        if not sync.disrupt(pod, f"scale down: ordinal of {name} is out of range"):
            return True  # a PodDisruptionBudget holds the scale-in (the wait names it)
        if sync.monotonic:
            return True
    return False


def outdated_wait_note(sync: Sync, index: int, pod: Obj) -> str:
    """What a wait on an outdated broken pod under RollingUpdate and OrderedReady tells the person on call.

    Upstream's trap (kubernetes#67250, reference §5.8): a broken template is rolled out, the highest pod never
    becomes Ready, and after the template is fixed that pod is *outdated* but still not Ready. OrderedReady waits for
    it before anything else, and RollingUpdate replaces an outdated pod only through that same ordered walk, so
    nothing moves until someone acts. The behaviour is upstream's and kept; the condition says so, with the ways
    out: delete the pod, or a strategy that replaces it (EnforcedRollingUpdate, podProgressTimeoutSeconds).

    The text to add to the wait for ``pod`` (not available, blocking ordered progress), or "" when the rollout
    itself will replace it or the pod is not the rollout's to replace."""
    if sync.update_type != ROLLING_UPDATE or not sync.outdated(pod):
        return ""
    block = sync.strategy_block or {}
    if index < sync.floor or replacement_is_outdated(sync, pod):
        return ""  # the rollout leaves it at its revision by design (below the partition, reference §4.5)
    if p.classify_container(pod) == p.CONTAINER_TRANSIENT and not p.is_failing(pod):
        return ""  # still starting: nothing to explain yet
    name = name_of(pod)
    timeout = block.get("podProgressTimeoutSeconds")
    if timeout:
        return (f"; {name} is at older revision {revision_of(pod) or '(none)'}: podProgressTimeoutSeconds replaces "
                f"it once it has not been Ready for {timeout} s")
    return (f"; {name} is at older revision {revision_of(pod) or '(none)'}, which RollingUpdate will not replace "
            f"while it is not available (kubernetes#67250): delete the pod (kubectl delete pod {name}), or use "
            f"updateStrategy.type EnforcedRollingUpdate or rollingUpdate.podProgressTimeoutSeconds")
