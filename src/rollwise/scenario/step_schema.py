"""The ``steps:`` schema (spec/simulate.md): every step kind with the fields it takes; anything else is named.

Checked when the file is read, so a typo (``scale: {replica: 3}``) is exit 2 before anything runs, not a step the
run silently skips.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.features import FeatureGates
from rollwise.api.numbers import MAX_SECONDS, check_number, describe_type
from rollwise.api.validation_rules import check_dns_label

__all__ = ["MAX_SIMULATED_REPLICAS", "POD_FAULTS", "STEP_KINDS", "WAIT_KINDS", "Step", "check_replicas_cap",
           "parse_steps"]

STEP_KINDS = ("waitFor", "apply", "patch", "after", "deletePod", "podFault", "scale", "delete", "releaseHook",
              "promote", "abort", "retry")
POD_FAULTS = ("crash", "unready", "recover", "fail", "kill")
WAIT_KINDS = ("rolloutComplete", "ready", "seconds")
# The simulator keeps every pod in memory and steps each one; bench/scale.py runs 5,000 replicas in about 8 s.
# Beyond this a run would take minutes and gigabytes, so a larger count is refused with this limit named.
MAX_SIMULATED_REPLICAS = 10_000

_FIELDS = {
    "waitFor": (*WAIT_KINDS, "timeout", "namespace"),
    "patch": ("kind", "name", "namespace", "merge"),
    "podFault": ("pod", "fault"),
    "scale": ("name", "namespace", "replicas"),
    "delete": ("kind", "name", "namespace", "cascade"),
    "promote": ("name", "namespace", "full"),  # rollwise rollout promote [--full] (api/steps.py)
    "abort": ("name", "namespace"),  # rollwise rollout abort (api/abort.py)
    "retry": ("name", "namespace"),  # rollwise rollout retry
}
_REQUIRED = {"patch": ("kind", "name", "merge"), "podFault": ("pod", "fault"), "scale": ("name", "replicas"),
             "delete": ("kind", "name"), "promote": ("name",), "abort": ("name",), "retry": ("name",)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    index: int
    action: str
    args: Any


ManifestCheck = Callable[[Any, str, list[FieldError]], Any]


def parse_steps(raw: Any, gates: FeatureGates, errors: list[FieldError], check_manifest: ManifestCheck) -> list[Step]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors.append(FieldError(path="steps", value=describe_type(raw), rule="must be a list of steps"))
        return []
    steps = []
    for i, item in enumerate(raw):
        path = f"steps[{i}]"
        if not isinstance(item, Mapping) or len(item) != 1:
            errors.append(FieldError(path=path, value=item, rule="each step is a mapping with exactly one of: "
                                     + ", ".join(STEP_KINDS)))
            continue
        (action, args), = item.items()
        if action not in STEP_KINDS:
            errors.append(FieldError(path=f"{path}.{action}", kind="Unsupported value", value=action,
                                     rule="supported steps: " + ", ".join(STEP_KINDS)))
            continue
        checked = _check_step(action, args, f"{path}.{action}", errors, check_manifest)
        steps.append(Step(index=i, action=action, args=checked))
    return steps


def check_replicas_cap(value: Any, path: str, errors: list[FieldError]) -> None:
    """A replica count the simulator can hold (the API's own int32 rule is checked by validation)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > MAX_SIMULATED_REPLICAS:
        errors.append(FieldError(path=path, value=value, rule=f"the simulator runs at most {MAX_SIMULATED_REPLICAS}"
                                 " replicas per StatefulSet (MAX_SIMULATED_REPLICAS)"))


def _seconds(value: Any, path: str, errors: list[FieldError], *, positive: bool = False) -> float:
    problems = check_number(value, path, minimum=0, exclusive_minimum=positive, maximum=MAX_SECONDS,
                            what="a number of seconds")
    errors += problems
    return 0.0 if problems else float(value)


def _name(value: Any, path: str, errors: list[FieldError], *, dns: bool = False) -> str:
    if value is None or value == "":
        errors.append(FieldError(path=path, kind="Required value", rule="a name is required"))
        return ""
    if not isinstance(value, str):
        errors.append(FieldError(path=path, value=value, rule=f"must be a string, not {describe_type(value)}"))
        return ""
    if dns:
        errors.extend(check_dns_label(value, path))
    return value


def _known_fields(action: str, args: Mapping[str, Any], path: str, errors: list[FieldError]) -> None:
    allowed = _FIELDS[action]
    for key in args:
        if key not in allowed:
            errors.append(FieldError(path=f"{path}.{key}", kind="Unsupported value", value=key,
                                     rule=f"unknown field; {action} takes: " + ", ".join(allowed)))
    for key in _REQUIRED.get(action, ()):
        if key not in args:
            errors.append(FieldError(path=f"{path}.{key}", kind="Required value", rule=f"{action} needs {key}"))


def _check_step(action: str, args: Any, path: str, errors: list[FieldError], check_manifest: ManifestCheck) -> Any:
    if action == "after":
        return _seconds(args, path, errors)
    if action in ("deletePod", "releaseHook"):
        return _name(args, path, errors)
    if action == "apply":
        return check_manifest(args, path, errors)
    if not isinstance(args, Mapping):
        errors.append(FieldError(path=path, value=describe_type(args), rule="must be a mapping"))
        return {}
    _known_fields(action, args, path, errors)
    if "namespace" in args:
        _name(args["namespace"], f"{path}.namespace", errors, dns=True)
    if action == "waitFor":
        kinds = [k for k in args if k in WAIT_KINDS]
        if len(kinds) != 1:
            errors.append(FieldError(path=path, value=dict(args),
                                     rule="needs exactly one of: " + ", ".join(WAIT_KINDS)))
        elif kinds[0] == "seconds":
            _seconds(args["seconds"], f"{path}.seconds", errors)
        else:
            _name(args[kinds[0]], f"{path}.{kinds[0]}", errors)
        if "timeout" in args:
            _seconds(args["timeout"], f"{path}.timeout", errors, positive=True)
    elif action == "patch":
        _check_patch(args, path, errors)
    elif action == "podFault":
        _name(args.get("pod"), f"{path}.pod", errors)
        if "fault" in args and args["fault"] not in POD_FAULTS:
            errors.append(FieldError(path=f"{path}.fault", kind="Unsupported value", value=args.get("fault"),
                                     rule="supported values: " + ", ".join(f'"{f}"' for f in POD_FAULTS)))
    elif action == "scale":
        _name(args.get("name"), f"{path}.name", errors)
        if "replicas" in args:
            problems = check_number(args["replicas"], f"{path}.replicas", minimum=0, integer=True)
            errors += problems
            if not problems:
                check_replicas_cap(args["replicas"], f"{path}.replicas", errors)
    elif action == "delete":
        _name(args.get("kind"), f"{path}.kind", errors)
        _name(args.get("name"), f"{path}.name", errors)
        if args.get("cascade", "background") not in ("background", "orphan"):
            errors.append(FieldError(path=f"{path}.cascade", kind="Unsupported value", value=args.get("cascade"),
                                     rule='supported values: "background", "orphan"'))
    elif action in ("promote", "abort", "retry"):
        _name(args.get("name"), f"{path}.name", errors)
        if not isinstance(args.get("full", False), bool):
            errors.append(FieldError(path=f"{path}.full", value=args.get("full"), rule="must be true or false"))
    return dict(args)


def _check_patch(args: Mapping[str, Any], path: str, errors: list[FieldError]) -> None:
    _name(args.get("kind"), f"{path}.kind", errors)
    _name(args.get("name"), f"{path}.name", errors)
    merge = args.get("merge")
    if "merge" in args and not isinstance(merge, Mapping):
        errors.append(FieldError(path=f"{path}.merge", value=describe_type(merge),
                                 rule="a merge patch (a mapping) is required"))
        return
    if args.get("kind") == "StatefulSet" and isinstance(merge, Mapping) and isinstance(merge.get("spec"), Mapping):
        check_replicas_cap(merge["spec"].get("replicas"), f"{path}.merge.spec.replicas", errors)
