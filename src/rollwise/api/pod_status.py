"""The shape of a pod's ``status``: what the API server refuses before it stores a pod.

kube-apiserver decodes a pod into typed Go structs, so a status of the wrong shape (``conditions: "x"``, a
container status that is a number, ``ready: "yes"``) never reaches a controller: the write is refused. rollwise's
stores hold plain JSON, so the same rule is checked here, once, and ``rollwise up`` answers a pod write of the wrong
shape with 422 Invalid naming the field path (the simulator's scenario steps are refused the same way). The
controllers still read every status defensively (``predicates``): a store written some other way may hold anything.

Checked in the internal form (times already decoded to seconds by ``cluster/wire.py``). Fields rollwise does not
know are left to strict field validation; only the type of each known field is checked here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from rollwise.api.errors import FieldError

__all__ = ["pod_status_errors"]

Check = Callable[[Any, str, list[FieldError]], None]


def _string(value: Any, path: str, errors: list[FieldError]) -> None:
    if not isinstance(value, str):
        errors.append(FieldError(path=path, value=value, rule="must be a string"))


def _boolean(value: Any, path: str, errors: list[FieldError]) -> None:
    if not isinstance(value, bool):
        errors.append(FieldError(path=path, value=value, rule="must be a boolean"))


def _integer(value: Any, path: str, errors: list[FieldError]) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**31) <= value < 2**31:
        errors.append(FieldError(path=path, value=value, rule="must be a 32-bit integer"))


def _time(value: Any, path: str, errors: list[FieldError]) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        errors.append(FieldError(path=path, value=value, rule="must be an RFC 3339 time"))


def _object(fields: Mapping[str, Check], *, required: tuple[str, ...] = ()) -> Check:
    def check(value: Any, path: str, errors: list[FieldError]) -> None:
        if not isinstance(value, dict):
            errors.append(FieldError(path=path, value=value, rule="must be an object"))
            return
        for name in required:
            if value.get(name) is None:
                errors.append(FieldError(path=f"{path}.{name}", kind="Required value", rule="must be given"))
        for name, child in value.items():
            rule = fields.get(name)
            if rule is not None and child is not None:  # null is absent, as in JSON decoding
                rule(child, f"{path}.{name}", errors)
    return check


def _list(item: Check) -> Check:
    def check(value: Any, path: str, errors: list[FieldError]) -> None:
        if not isinstance(value, list):
            errors.append(FieldError(path=path, value=value, rule="must be a list"))
            return
        for i, entry in enumerate(value):
            item(entry, f"{path}[{i}]", errors)
    return check


def _open(value: Any, path: str, errors: list[FieldError]) -> None:
    if not isinstance(value, dict):
        errors.append(FieldError(path=path, value=value, rule="must be an object"))


_CONDITION = _object({"type": _string, "status": _string, "reason": _string, "message": _string,
                      "lastTransitionTime": _time, "lastProbeTime": _time, "observedGeneration": _integer},
                     required=("type", "status"))
_STATE = _object({
    "waiting": _object({"reason": _string, "message": _string}),
    "running": _object({"startedAt": _time}),
    "terminated": _object({"exitCode": _integer, "signal": _integer, "reason": _string, "message": _string,
                           "startedAt": _time, "finishedAt": _time, "containerID": _string}),
})
_CONTAINER_STATUS = _object({
    "name": _string, "ready": _boolean, "started": _boolean, "restartCount": _integer, "image": _string,
    "imageID": _string, "containerID": _string, "state": _STATE, "lastState": _STATE, "resources": _open,
    "allocatedResources": _open,
}, required=("name",))
_IP = _object({"ip": _string})
_STATUS = _object({
    "phase": _string, "message": _string, "reason": _string, "nominatedNodeName": _string, "hostIP": _string,
    "podIP": _string, "qosClass": _string, "resize": _string, "startTime": _time, "observedGeneration": _integer,
    "conditions": _list(_CONDITION), "containerStatuses": _list(_CONTAINER_STATUS),
    "initContainerStatuses": _list(_CONTAINER_STATUS), "ephemeralContainerStatuses": _list(_CONTAINER_STATUS),
    "podIPs": _list(_IP), "hostIPs": _list(_IP),
})


def pod_status_errors(pod: Mapping[str, Any]) -> list[FieldError]:
    """Every field of ``pod["status"]`` whose value has the wrong type (empty when the status is absent)."""
    status = pod.get("status")
    if status is None:
        return []
    errors: list[FieldError] = []
    _STATUS(status, "status", errors)
    return errors
