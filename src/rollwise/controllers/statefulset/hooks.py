"""Pre-delete hooks in the reconcile: what becomes of pods marked PreparingDelete (issue 28; api/lifecycle.py).

``Sync.disrupt`` marks a hooked pod instead of deleting it (``MarkPreparingDelete``, through the one executor). This
phase, run before the strategy on every reconcile, follows the marked pods:

- released (it carries none of the hook's labels and finalizers, or the set no longer has a hook): deleted, once
  every PodDisruptionBudget selecting it allows it, as any voluntary deletion;
- Failed or Succeeded: deleted at once, as phase A replaces any such pod (nothing is left to drain);
- still hooked: a wait naming the pod and what it carries; past ``timeoutSeconds`` the rollout halts
  (Progressing=False, reason ``PreDeleteHookTimeout``) and no voluntary deletion starts until the hook is released
  or the timeout raised. The pod is never deleted on the timeout: a person decides (release it, or delete it).

A marked pod is deleted once released even if the set has since paused (what is under way finishes). One the
controller would no longer delete — the partition now covers it, the set was reverted to its revision, or a
scale-in was undone — has its mark cleared (``ClearPreparingDelete``), released or not: it is a pod like any other
again, and its agent, seeing the mark go, returns it to service (and puts its hook back).
"""

from __future__ import annotations

from rollwise.api import predicates as p
from rollwise.api.identity import ordinal_of
from rollwise.api.lifecycle import PRE_DELETE_HOOK_TIMEOUT, hook_held, hook_wait, marked_at, stated_time
from rollwise.api.meta import Obj, name_of
from rollwise.api.strategies import RECREATE, ROLLING_KINDS
from rollwise.controllers.statefulset.context import Sync

__all__ = ["finish_pre_delete"]


def finish_pre_delete(sync: Sync) -> None:
    if not sync.marked:
        return
    timed_out: list[str] = []
    for pod in sync.unquiet_pods():
        name = name_of(pod)
        if name not in sync.marked or pod["metadata"].get("deletionTimestamp") is not None or name in sync.deleted:
            continue
        if p.is_failed(pod) or p.is_succeeded(pod):
            sync.delete(pod, f"pod {name} is {pod['status']['phase']} (it was PreparingDelete); it will be recreated")
            continue
        if not _still_going(sync, pod):
            sync.unmark(pod)
            continue
        held = hook_held(sync.hook, pod)
        if not held:
            if not _fits_budget(sync, pod):
                sync.wait(name, f"to be deleted: its pre-delete hook is released, but it became available while it "
                                f"drained and more than maxUnavailable ({sync.budget}) pods would then be unavailable")
            elif sync.admit(pod, "to be deleted"):
                sync.delete(pod, f"pre-delete hook of {name} released: the pod was PreparingDelete")
            continue
        since = marked_at(pod)
        timeout = sync.hook.timeout if sync.hook is not None else None
        cause = hook_wait(sync.hook, pod)
        if timeout is not None and since is not None and sync.now >= since + timeout:
            # Moments, not how long ago: the halt's message must read the same on every reconcile (issue 38).
            timed_out.append(f"{name} still carries {', '.join(held)}: marked PreparingDelete at "
                             f"{stated_time(since)}, timeoutSeconds ({timeout:g}) passed at "
                             f"{stated_time(since + timeout)}")
            cause += f"; its timeoutSeconds ({timeout:g}) passed: the rollout is halted ({PRE_DELETE_HOOK_TIMEOUT})"
        elif timeout is not None and since is not None:
            sync.requeue_at(since + timeout)
        sync.wait(name, cause)
    if timed_out:
        message = "pre-delete hook not released: " + "; ".join(timed_out)
        sync.hook_halted = f"{PRE_DELETE_HOOK_TIMEOUT}: {timed_out[0].split(' ', 1)[0]}'s pre-delete hook"
        sync.halted, sync.halt_reason = message, PRE_DELETE_HOOK_TIMEOUT
        if sync.old_condition_reason("Progressing") != PRE_DELETE_HOOK_TIMEOUT:
            sync.event(PRE_DELETE_HOOK_TIMEOUT, message, warning=True)


def _fits_budget(sync: Sync, pod: Obj) -> bool:
    """Whether deleting this released pod keeps a rolling update within maxUnavailable, counting pods as they are.

    The rollout counted the pod unavailable from its mark, so the budget was spent then. But a pod marked while it
    was not available (a rolling update replaces those at no cost) may have become available while it drained;
    deleting it then takes an available pod, and with others unavailable meanwhile that may exceed the budget. So
    such a pod goes only when the pods that really are unavailable (a mark alone does not count) leave room."""
    if sync.update_type not in ROLLING_KINDS or not sync.health(pod)[1]:
        return True
    index = sync.position(ordinal_of(pod))
    if not 0 <= index < len(sync.replicas) or sync.replicas[index] is not pod:
        return True  # condemned: a scale-in, which the budget does not bound
    others = 0
    for i in sync.touched():  # quiet pods are available
        if i == index:
            continue
        other = sync.replicas[i]
        if other is None or other["metadata"].get("deletionTimestamp") is not None \
                or name_of(other) in sync.deleted or not sync.health(other)[1]:
            others += 1
    return others + 1 <= sync.budget


def _still_going(sync: Sync, pod: Obj) -> bool:
    """Whether the controller would still delete this marked pod: a condemned one (a scale-in); an outdated one
    the strategy replaces (from the partition up under a rolling update, any under Recreate); one at the update
    revision that podProgressTimeoutSeconds is replacing (not available, from the partition up). Not one the
    partition now covers, nor one at the update revision again (a revert), nor one back in range (a scale-in
    undone): its mark is cleared, and the partition's and no-churn's promises hold as for any pod."""
    index = sync.position(ordinal_of(pod))
    if not 0 <= index < len(sync.replicas) or sync.replicas[index] is not pod:
        return True
    rolling = sync.update_type in ROLLING_KINDS
    if rolling and index < sync.floor:
        return False
    if sync.outdated(pod):
        return rolling or sync.update_type == RECREATE
    return rolling and not sync.health(pod)[1] and bool((sync.strategy_block or {}).get("podProgressTimeoutSeconds"))
