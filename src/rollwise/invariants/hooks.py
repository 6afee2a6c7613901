"""The pre-delete-hook rule: the StatefulSet controller never deletes a pod voluntarily while it still carries its
set's pre-delete hook — a label of ``labelsHandler`` with that value, or a finalizer of ``finalizersHandler``
(api/lifecycle.py, issue 28). Voluntary: a pod that has not Failed or Succeeded (replacing a Failed pod is not: it has
nothing left to drain). The hook is judged on the pod as the deletion met it (the truth, where it differs from the
controller's view), so a stale cache that still shows the hook released is caught too."""

from __future__ import annotations

from rollwise.api import predicates as p
from rollwise.api.lifecycle import hook_held, pre_delete_hook
from rollwise.api.meta import name_of
from rollwise.invariants.decision import Decision

__all__ = ["pre_delete_hook_held"]


def pre_delete_hook_held(d: Decision) -> list[str]:
    if d.quorum:
        return []
    hook = pre_delete_hook(d.state.set)
    if hook is None:
        return []
    return [f"{name_of(pod)} deleted while it still carries its pre-delete hook ({', '.join(held)})"
            for pod in d.deleted() if not (p.is_failed(pod) or p.is_succeeded(pod))
            and (held := hook_held(hook, pod))]
