"""Pre-delete hooks in the reconcile: what becomes of pods marked PreparingDelete (issue 28; api/lifecycle.py).

``Sync.disrupt`` marks a hooked pod instead of deleting it (``MarkPreparingDelete``, through the one executor). This
phase, run before the strategy on every reconcile, follows the marked pods:

- released (it carries none of the hook's labels and finalizers, or the set no longer has a hook): deleted, once
  every PodDisruptionBudget selecting it allows it, as any voluntary deletion;
- Failed or Succeeded: deleted at once, as phase A replaces any such pod (nothing is left to drain);
- still hooked: a wait naming the pod and what it carries; past ``timeoutSeconds`` the rollout halts
  (Progressing=False, reason ``PreDeleteHookTimeout``) and no voluntary deletion starts until the hook is released
  or the timeout raised. The pod is never deleted on the timeout: a person decides (release it, or delete it).

A marked pod stays marked: it is deleted once released even if the set has since paused, been reverted or scaled
back up (what is under way finishes; un-marking a pod an agent may be draining would race it).
"""

from __future__ import annotations

from rollwise.api import predicates as p
from rollwise.api.lifecycle import PRE_DELETE_HOOK_TIMEOUT, hook_held, marked_at
from rollwise.api.meta import name_of
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
        held = hook_held(sync.hook, pod)
        if not held:
            if sync.admit(pod, "to be deleted"):
                sync.delete(pod, f"pre-delete hook of {name} released: the pod was PreparingDelete")
            continue
        since = marked_at(pod)
        timeout = sync.hook.timeout if sync.hook is not None else None
        cause = sync.hook_cause(pod)
        if timeout is not None and since is not None and sync.now >= since + timeout:
            timed_out.append(f"{name} still carries {', '.join(held)} {round(sync.now - since, 3):g} s after it was "
                             f"marked PreparingDelete (timeoutSeconds {timeout:g})")
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
