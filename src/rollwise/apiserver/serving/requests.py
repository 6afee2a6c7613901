"""Request pieces the handlers share: DeleteOptions, bodies in internal form, patches to a Scale, pod logs."""

from __future__ import annotations

from typing import Any

import jsonpatch

from rollwise.api.errors import BadRequest, FieldError, Invalid
from rollwise.apiserver.kinds.resources import Resource
from rollwise.cluster.documents import MAX_INTEGER
from rollwise.cluster.store.patching import merge_patch
from rollwise.cluster.wire import decode, encode, format_time

__all__ = ["decoded", "delete_options", "dry_run_of", "patch_plain", "pod_log", "scale_wire"]


def delete_options(body: Any, query: Any) -> dict[str, Any]:
    """DeleteOptions from the body and the query (the query wins), checked: BadRequest names the bad field."""
    options: dict[str, Any] = dict(body) if isinstance(body, dict) else {}
    if "gracePeriodSeconds" in query:
        options["gracePeriodSeconds"] = query["gracePeriodSeconds"]
    if "propagationPolicy" in query:
        options["propagationPolicy"] = query["propagationPolicy"]
    grace = options.get("gracePeriodSeconds")
    if grace is not None:
        try:
            options["gracePeriodSeconds"] = int(str(grace))
        except ValueError:
            raise BadRequest(f"gracePeriodSeconds: invalid value {grace!r}: must be an integer") from None
        if abs(options["gracePeriodSeconds"]) > MAX_INTEGER:
            raise BadRequest(f"gracePeriodSeconds: invalid value {grace!r}: must fit in 64 bits")
    if not isinstance(options.get("propagationPolicy") or "", str):
        raise BadRequest("propagationPolicy: must be a string")
    if not isinstance(options.get("preconditions") or {}, dict):
        raise BadRequest("preconditions: must be an object with uid and/or resourceVersion")
    return options


def dry_run_of(query: Any) -> bool:
    """Whether the request is a dry run. ``All`` is the only value the API server knows; any other is refused
    rather than read as "not a dry run", which would make a mistyped ``dryRun=all`` write for real."""
    values = query.getall("dryRun", [])
    unknown = [v for v in values if v != "All"]
    if unknown:
        raise Invalid(errors=[FieldError(path="dryRun", kind="Unsupported value", value=unknown[0],
                                         rule='supported values: "All"')])
    return bool(values)


def decoded(resource: Resource, body: Any) -> Any:
    """A body in internal form (float times); a JSON patch's operations are left as they are."""
    return decode(body, resource.served_key) if isinstance(body, dict) else body


def scale_wire(scale: dict[str, Any]) -> dict[str, Any]:
    return encode(scale)


def patch_plain(current: dict[str, Any], body: Any, kind: str | None) -> dict[str, Any]:
    if kind == "json" and isinstance(body, list):
        try:
            return jsonpatch.apply_patch(current, body)  # type: ignore[no-any-return]
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as err:
            raise Invalid(str(err)) from None
    if isinstance(body, dict):
        return merge_patch(current, body)  # type: ignore[no-any-return]
    raise BadRequest("unsupported patch body for the scale subresource")


def pod_log(pod: dict[str, Any], container: str | None, *, previous: bool = False) -> str:
    """The log of one container of a simulated pod: a line for each start. Which container, and whether it has a
    log yet, as the API server and kubelet decide (``registry/core/pod`` ``LogLocation``, kubelet
    ``validateContainerLogStatus``): BadRequest for a container the pod lacks, for no name when there are several,
    and for one still waiting or, with ``previous``, never restarted, in their words (``trying and failing to pull
    image`` for a bad image)."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    name = meta.get("name", "")
    names = [c.get("name") for c in spec.get("containers") or ()]
    inits = [c.get("name") for c in spec.get("initContainers") or ()]
    if not container:
        if len(names) != 1:
            more = f" or one of the init containers: [{' '.join(inits)}]" if inits else ""
            raise BadRequest(f"a container name must be specified for pod {name}, choose one of: "
                             f"[{' '.join(names)}]{more}")
        container = names[0]
    elif container not in names and container not in inits:
        raise BadRequest(f"container {container} is not valid for pod {name}")
    if not spec.get("nodeName"):
        return ""  # not scheduled: no kubelet to ask, and upstream answers with an empty log
    status = pod.get("status") or {}
    statuses = [*(status.get("containerStatuses") or ()), *(status.get("initContainerStatuses") or ())]
    mine = next((c for c in statuses if c.get("name") == container), None)
    if mine is None:
        raise BadRequest(f'container "{container}" in pod "{name}" is not available')
    state = mine.get("state") or {}
    last = (mine.get("lastState") or {}).get("terminated")
    if previous:
        if not last:
            raise BadRequest(f'previous terminated container "{container}" in pod "{name}" not found')
        state = {"terminated": last}
    ran = state.get("running") or state.get("terminated") or last
    if not ran:
        waiting = state.get("waiting")
        if waiting is None:
            raise BadRequest(f'container "{container}" in pod "{name}" is waiting to start - no logs yet')
        reason = waiting.get("reason") or ""
        raise BadRequest(f'container "{container}" in pod "{name}" is waiting to start: {_WAITING.get(reason, reason)}')
    started = ran.get("startedAt")
    if started is None:
        return ""
    return f"{format_time(float(started))} {container}: started {mine.get('image')} (simulated container)\n"


_WAITING = {"ErrImagePull": "image can't be pulled", "ImagePullBackOff": "trying and failing to pull image"}
"""The kubelet's words for a container waiting on its image (``kubelet_pods.go``); other reasons are shown as is."""
