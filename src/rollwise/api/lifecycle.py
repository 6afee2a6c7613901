"""Pre-delete hooks (``spec.lifecycle.preDelete``): the pure rules (issue 28).

OpenKruise's lifecycle hooks, in rollwise's words. A hook names labels (``labelsHandler: {KEY: VALUE}``) and
finalizers (``finalizersHandler: [NAME, ...]``) that an application's own agent puts on its pods — in the pod
template, or by a webhook or the agent itself once the pod runs. While a pod carries any of them (a label with that
very value, or the finalizer) it is *hooked*: before the controller deletes it voluntarily (a rollout step under any
strategy, Recreate, a progress-timeout replacement, a scale-in), it marks the pod with the label
``rollwise.dev/lifecycle-state: PreparingDelete`` and the annotation ``rollwise.dev/lifecycle-state-at`` (when, in
seconds), then waits. The agent watches for the mark, drains (hands its work over, flushes, deregisters) and removes
the hook's labels and finalizers; the controller then deletes the pod.

A pod that carries none of them is deleted at once: nothing registered to drain it (OpenKruise deletes an unhooked
pod directly too). Once marked, a pod is going: it counts unavailable against the rollout's budget from the mark,
no step is taken on it again, and it is deleted once released even if the rollout that chose it has since paused
or been reverted (what is under way finishes). A Failed pod is replaced without the hook: it has nothing left to
drain.

``timeoutSeconds``: after that long marked and still hooked, the rollout halts (Progressing=False, reason
``PreDeleteHookTimeout``) naming the pod and what it still carries; the controller never deletes it silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.meta import Obj, format_time
from rollwise.api.validation_rules import check_int, check_labels, type_error

__all__ = [
    "LIFECYCLE_AT_ANNOTATION",
    "LIFECYCLE_STATE_LABEL",
    "PREPARING_DELETE",
    "PRE_DELETE_HOOK_TIMEOUT",
    "PreDeleteHook",
    "check_lifecycle",
    "hook_held",
    "hook_on_no_pod",
    "hook_wait",
    "is_preparing_delete",
    "marked_at",
    "pre_delete_hook",
    "release_patch",
    "released",
    "stated_time",
]

LIFECYCLE_STATE_LABEL = "rollwise.dev/lifecycle-state"
PREPARING_DELETE = "PreparingDelete"
LIFECYCLE_AT_ANNOTATION = "rollwise.dev/lifecycle-state-at"
"""When the controller marked the pod PreparingDelete: seconds, as every time in rollwise (``repr`` of a float)."""
PRE_DELETE_HOOK_TIMEOUT = "PreDeleteHookTimeout"
"""The Progressing condition's reason while a marked pod outstays ``timeoutSeconds``."""


class PreDeleteHook:
    """A set's ``spec.lifecycle.preDelete``, read once (a malformed one reads as no hook: validation refuses it)."""

    __slots__ = ("finalizers", "labels", "timeout")

    def __init__(self, labels: Mapping[str, str], finalizers: Sequence[str], timeout: float | None) -> None:
        self.labels = labels
        self.finalizers = finalizers
        self.timeout = timeout

    def describe(self) -> str:
        """The hook in words: ``label drain=pending, finalizer example.com/drain``."""
        parts = [f"label {k}={v}" for k, v in sorted(self.labels.items())]
        parts += [f"finalizer {f}" for f in self.finalizers]
        return ", ".join(parts)


def pre_delete_hook(sts: Obj) -> PreDeleteHook | None:
    """The set's pre-delete hook, or None when it has none (or names no label and no finalizer)."""
    lifecycle = sts["spec"].get("lifecycle")
    if not isinstance(lifecycle, Mapping):
        return None
    pre = lifecycle.get("preDelete")
    if not isinstance(pre, Mapping):
        return None
    labels = pre.get("labelsHandler")
    labels = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}
    finalizers = pre.get("finalizersHandler")
    finalizers = [str(f) for f in finalizers] if isinstance(finalizers, list) else []
    if not labels and not finalizers:
        return None
    timeout = pre.get("timeoutSeconds")
    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0:
        timeout = None
    return PreDeleteHook(labels, finalizers, None if timeout is None else float(timeout))


def hook_held(hook: PreDeleteHook | None, pod: Mapping[str, Any]) -> list[str]:
    """What of the hook the pod still carries (``label K=V``, ``finalizer F``); empty: released (or no hook)."""
    if hook is None:
        return []
    meta = pod.get("metadata") or {}
    have = meta.get("labels") or {}
    held = [f"label {k}={v}" for k, v in sorted(hook.labels.items()) if have.get(k) == v]
    fins = meta.get("finalizers") or ()
    held += [f"finalizer {f}" for f in hook.finalizers if f in fins]
    return held


def hook_wait(hook: PreDeleteHook | None, pod: Mapping[str, Any], *, since: float | None = None) -> str:
    """The controller's wait on a pod marked PreparingDelete: what of its hook it still carries, and since when
    (``since``: when it was marked, if not from the pod's annotation)."""
    held = hook_held(hook, pod)
    at = marked_at(pod) if since is None else since
    # When, not for how long: an elapsed time changed the message, so the status, on every reconcile, and each
    # status write woke the controller into the next (issue 38). The mark's time changes only with the mark.
    how_long = f" (PreparingDelete since {stated_time(at)})" if at is not None else " (PreparingDelete)"
    if not held:
        return "to be deleted: its pre-delete hook is released" + how_long
    return f"to be released by its pre-delete hook: still carries {', '.join(held)}{how_long}"


def stated_time(t: float) -> str:
    """A moment as a status message states it: ``metav1.Time``'s form (``api.meta.format_time``, the one rule the
    wire codec writes times with), so a message that names a moment reads the same on every reconcile."""
    return format_time(t)


def released(hook: PreDeleteHook | None, pod: Mapping[str, Any]) -> bool:
    return not hook_held(hook, pod)


def release_patch(hook: PreDeleteHook | None, pod: Mapping[str, Any]) -> dict[str, Any] | None:
    """The merge patch an application's agent sends once it has drained the pod: the hook's labels and finalizers
    removed, the pod's uid as precondition. None when the pod carries none of them."""
    if not hook_held(hook, pod) or hook is None:
        return None
    meta = pod.get("metadata") or {}
    have = meta.get("labels") or {}
    patch: dict[str, Any] = {"uid": meta.get("uid")} if meta.get("uid") else {}
    gone = {k: None for k, v in hook.labels.items() if have.get(k) == v}
    if gone:
        patch["labels"] = gone
    fins = list(meta.get("finalizers") or ())
    if any(f in fins for f in hook.finalizers):
        patch["finalizers"] = [f for f in fins if f not in hook.finalizers] or None
    return {"metadata": patch}


def is_preparing_delete(pod: Mapping[str, Any]) -> bool:
    labels = (pod.get("metadata") or {}).get("labels")
    return isinstance(labels, Mapping) and labels.get(LIFECYCLE_STATE_LABEL) == PREPARING_DELETE


def marked_at(pod: Mapping[str, Any]) -> float | None:
    """When the pod was marked PreparingDelete (None: unknown, e.g. marked by hand without the annotation)."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(LIFECYCLE_AT_ANNOTATION)
    if not isinstance(raw, str):
        return None
    try:
        return float(raw)
    except ValueError:
        return None


def check_lifecycle(lifecycle: object, path: str = "spec.lifecycle") -> list[FieldError]:
    """``spec.lifecycle``: only ``preDelete``, with a label map, a list of finalizer names (qualified names, no
    duplicates), at least one of them, and a positive ``timeoutSeconds``."""
    if lifecycle is None:
        return []
    if not isinstance(lifecycle, Mapping):
        return [type_error(path, lifecycle, "a mapping")]
    errors: list[FieldError] = []
    for key in lifecycle:
        if key != "preDelete":
            errors.append(FieldError(path=f"{path}.{key}", kind="Unsupported value", value=key,
                                     rule='unknown field; supported: "preDelete"'))
    pre = lifecycle.get("preDelete")
    if pre is None:
        return errors
    where = f"{path}.preDelete"
    if not isinstance(pre, Mapping):
        return [*errors, type_error(where, pre, "a mapping")]
    for key in pre:
        if key not in ("labelsHandler", "finalizersHandler", "timeoutSeconds"):
            errors.append(FieldError(path=f"{where}.{key}", kind="Unsupported value", value=key,
                                     rule='unknown field; supported: "finalizersHandler", "labelsHandler", '
                                          '"timeoutSeconds"'))
    labels = pre.get("labelsHandler")
    if labels is not None:
        errors += check_labels(labels, f"{where}.labelsHandler")
        if isinstance(labels, Mapping) and LIFECYCLE_STATE_LABEL in labels:
            errors.append(FieldError(path=f"{where}.labelsHandler", value=LIFECYCLE_STATE_LABEL,
                                     rule="must not name the controller's own lifecycle-state label"))
    finalizers = pre.get("finalizersHandler")
    if finalizers is not None:
        errors += _check_finalizers(finalizers, f"{where}.finalizersHandler")
    if not labels and not finalizers:
        errors.append(FieldError(path=where, kind="Required value",
                                 rule="must name at least one label (labelsHandler) or finalizer (finalizersHandler)"))
    if pre.get("timeoutSeconds") is not None:
        errors += check_int(pre["timeoutSeconds"], f"{where}.timeoutSeconds", minimum=1)
    return errors


def _check_finalizers(finalizers: object, path: str) -> list[FieldError]:
    if not isinstance(finalizers, list):
        return [type_error(path, finalizers, "a list of finalizer names")]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, name in enumerate(finalizers):
        at = f"{path}[{i}]"
        # A finalizer is a qualified name, as a label key is (kube-apiserver's ValidateFinalizerName).
        errors += check_labels({name: ""}, at) if isinstance(name, str) else [type_error(at, name, "a string")]
        if isinstance(name, str):
            if name in seen:
                errors.append(FieldError(path=at, kind="Duplicate value", value=name, rule="must be unique"))
            seen.add(name)
    return errors


def hook_on_no_pod(sts: Mapping[str, Any]) -> str | None:
    """What to warn of when the hook names labels but no pod of the template carries any of them, and no finalizer:
    the pods start unhooked, so each is deleted at once unless an agent labels it before a rollout reaches it (what
    ``kubectl label`` or the application does; nothing in the set makes it so). None when a pod starts hooked, or
    when the set has no such hook. Not an error: registering at run time is a way to use the hook."""
    spec = sts.get("spec")
    hook = pre_delete_hook(dict(sts)) if isinstance(spec, Mapping) else None
    if hook is None or hook.finalizers or not hook.labels:
        return None
    template = spec.get("template") if isinstance(spec, Mapping) else None
    meta = template.get("metadata") if isinstance(template, Mapping) else None
    carried = meta.get("labels") if isinstance(meta, Mapping) else None
    carried = carried if isinstance(carried, Mapping) else {}
    if any(k in carried and str(carried[k]) == v for k, v in hook.labels.items()):
        return None
    wanted = " or ".join(f"{k}={v}" for k, v in sorted(hook.labels.items()))
    return (f"no pod of spec.template carries {wanted}: each is deleted without waiting unless something labels it "
            f"first (add the label to spec.template.metadata.labels to hook every pod from its start)")
