"""Scenario files: the typed model and a loader that reports every problem with its field path.

The file contract is ``spec/simulate.md``. Validation happens before anything runs: a file with any problem is
rejected whole (exit 2), and nothing is simulated.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rollwise.api.defaults import apply_defaults
from rollwise.api.errors import FieldError, InvalidObject
from rollwise.api.features import FeatureGates, parse_gate_overrides
from rollwise.api.meta import Obj
from rollwise.api.validation import validate_statefulset
from rollwise.drivers.sim.expect import parse_expect
from rollwise.drivers.sim.strategy_override import StrategyOverride
from rollwise.kubelet.profiles import KubeletProfile, parse_kubelet
from rollwise.kubelet.quorum_probe import QuorumParams, parse_quorum_params

__all__ = ["STEP_KINDS", "AppModel", "Scenario", "Step", "load_scenario", "parse_scenario"]

STEP_KINDS = ("waitFor", "apply", "patch", "after", "deletePod", "podFault", "scale", "delete")
POD_FAULTS = ("crash", "unready", "recover", "fail", "kill")
WAIT_KINDS = ("rolloutComplete", "ready", "seconds")
TOP_LEVEL = ("name", "description", "kubelet", "objects", "steps", "featureGates", "expect", "limitSeconds")
APP_MODELS = ("quorum",)


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    index: int
    action: str
    args: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class AppModel:
    """An application model bound to a StatefulSet by name (``kubelet.apps``), with its checked parameters."""

    model: str
    params: QuorumParams = field(default_factory=QuorumParams)


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    name: str
    description: str = ""
    kubelet: KubeletProfile = field(default_factory=KubeletProfile)
    apps: Mapping[str, AppModel] = field(default_factory=dict)
    objects: tuple[Obj, ...] = ()
    steps: tuple[Step, ...] = ()
    gates: FeatureGates = field(default_factory=FeatureGates)
    expect: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    limit_seconds: float = 86400.0
    source: str = ""

    def checked(self) -> Scenario:
        """Re-check every manifest against the scenario's gates (after ``--feature-gates`` or ``--strategy``)."""
        errors: list[FieldError] = []
        for i, obj in enumerate(self.objects):
            check_manifest(obj, f"objects[{i}]", self.gates, errors)
        for step in self.steps:
            if step.action == "apply":
                check_manifest(step.args, f"steps[{step.index}].apply", self.gates, errors)
        if errors:
            raise InvalidObject(errors, source=self.source)
        return self

    def with_gates(self, overrides: Mapping[str, bool]) -> Scenario:
        """The same scenario with some feature gates switched (``--feature-gates``)."""
        return dataclasses.replace(self, gates=self.gates.with_overrides(overrides))

    def with_strategy(self, override: StrategyOverride) -> Scenario:
        """The same scenario with every StatefulSet's update strategy replaced (``--strategy``)."""
        objects = tuple(override.apply(o) if _is_set(o) else o for o in self.objects)
        steps = tuple(
            Step(index=s.index, action=s.action, args=override.apply(s.args))
            if s.action == "apply" and _is_set(s.args) else s
            for s in self.steps
        )
        return dataclasses.replace(self, objects=objects, steps=steps)


def _is_set(obj: Any) -> bool:
    return isinstance(obj, Mapping) and obj.get("kind") == "StatefulSet"


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file (YAML or JSON). Raises InvalidObject listing every problem."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as err:
        raise InvalidObject([FieldError(path="<file>", rule=f"cannot read: {err.strerror}", value=str(p))],
                            source=str(p)) from err
    try:
        raw = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as err:
        raise InvalidObject([FieldError(path="<file>", rule=f"not valid YAML/JSON: {_one_line(err)}",
                                        value=p.name)], source=str(p)) from err
    return parse_scenario(raw, source=str(p), default_name=p.stem)


def _one_line(err: Exception) -> str:
    return " ".join(str(err).split())


def parse_scenario(raw: Any, *, source: str = "", default_name: str = "scenario") -> Scenario:
    errors: list[FieldError] = []
    if not isinstance(raw, Mapping):
        raise InvalidObject([FieldError(path="<root>", rule="a scenario must be a mapping", value=type(raw).__name__)],
                            source=source)
    for key in raw:
        if key not in TOP_LEVEL:
            errors.append(FieldError(path=str(key), kind="Unsupported value", value=key,
                                     rule="unknown field; supported: " + ", ".join(TOP_LEVEL)))
    name = raw.get("name", default_name)
    if not isinstance(name, str) or not name:
        errors.append(FieldError(path="name", value=name, rule="must be a non-empty string"))
        name = default_name
    profile, kubelet_errors = parse_kubelet(raw.get("kubelet") or {}, path="kubelet")
    errors += kubelet_errors
    apps = _parse_apps((raw.get("kubelet") or {}).get("apps") if isinstance(raw.get("kubelet"), Mapping) else None,
                       errors)
    overrides, gate_errors = parse_gate_overrides(raw.get("featureGates") or {}, path="featureGates")
    errors += gate_errors
    gates = FeatureGates().with_overrides(overrides)
    objects = _parse_objects(raw.get("objects"), gates, errors)
    steps = _parse_steps(raw.get("steps"), gates, errors)
    expect, expect_errors = parse_expect(raw.get("expect") or {}, path="expect")
    errors += expect_errors
    limit = raw.get("limitSeconds", 86400)
    if isinstance(limit, bool) or not isinstance(limit, int | float) or limit <= 0:
        errors.append(FieldError(path="limitSeconds", value=limit, rule="must be a positive number of seconds"))
        limit = 86400
    if errors:
        raise InvalidObject(errors, source=source)
    return Scenario(name=name, description=str(raw.get("description") or ""), kubelet=profile, apps=apps,
                    objects=tuple(objects), steps=tuple(steps), gates=gates, expect=expect,
                    limit_seconds=float(limit), source=source)


def _parse_apps(raw: Any, errors: list[FieldError]) -> dict[str, AppModel]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        errors.append(FieldError(path="kubelet.apps", value=raw, rule="must be a mapping of StatefulSet name to model"))
        return {}
    out = {}
    for set_name, spec in raw.items():
        path = f"kubelet.apps.{set_name}"
        if not isinstance(spec, Mapping) or spec.get("model") not in APP_MODELS:
            got = spec.get("model") if isinstance(spec, Mapping) else spec
            errors.append(FieldError(path=f"{path}.model", kind="Unsupported value", value=got,
                                     rule="supported values: " + ", ".join(f'"{m}"' for m in APP_MODELS)))
            continue
        params, param_errors = parse_quorum_params(spec, path=path)
        errors.extend(param_errors)
        out[str(set_name)] = AppModel(model=spec["model"], params=params)
    return out


def check_manifest(obj: Any, path: str, gates: FeatureGates, errors: list[FieldError]) -> Obj | None:
    """Validate one manifest; StatefulSets get the API server's defaulting and every validation rule."""
    if not isinstance(obj, Mapping):
        errors.append(FieldError(path=path, value=type(obj).__name__, rule="must be a Kubernetes object (a mapping)"))
        return None
    for key in ("apiVersion", "kind"):
        if not isinstance(obj.get(key), str) or not obj.get(key):
            errors.append(FieldError(path=f"{path}.{key}", kind="Required value", rule=f"{key} is required"))
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping) or not meta.get("name"):
        errors.append(FieldError(path=f"{path}.metadata.name", kind="Required value", rule="name is required"))
        return None
    if obj.get("kind") == "StatefulSet":
        try:
            defaulted = apply_defaults(dict(obj), gates=gates)
        except (TypeError, AttributeError, ValueError):
            defaulted = copy.deepcopy(dict(obj))
        errors.extend(e.under(path) for e in validate_statefulset(defaulted, gates=gates))
    return copy.deepcopy(dict(obj))


def _parse_objects(raw: Any, gates: FeatureGates, errors: list[FieldError]) -> list[Obj]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors.append(FieldError(path="objects", value=type(raw).__name__, rule="must be a list of manifests"))
        return []
    out = []
    for i, obj in enumerate(raw):
        checked = check_manifest(obj, f"objects[{i}]", gates, errors)
        if checked is not None:
            out.append(checked)
    return out


def _parse_steps(raw: Any, gates: FeatureGates, errors: list[FieldError]) -> list[Step]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors.append(FieldError(path="steps", value=type(raw).__name__, rule="must be a list of steps"))
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
        checked = _check_step(action, args, f"{path}.{action}", gates, errors)
        steps.append(Step(index=i, action=action, args=checked))
    return steps


def _number(value: Any, path: str, errors: list[FieldError], *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or (positive and value == 0):
        errors.append(FieldError(path=path, value=value,
                                 rule="must be a positive number" if positive else "must be a non-negative number"))
        return 0.0
    return float(value)


def _name(value: Any, path: str, errors: list[FieldError]) -> str:
    if not isinstance(value, str) or not value:
        errors.append(FieldError(path=path, kind="Required value", rule="a name is required"))
        return ""
    return value


def _check_step(action: str, args: Any, path: str, gates: FeatureGates, errors: list[FieldError]) -> Any:
    if action == "after":
        return _number(args, path, errors)
    if action == "deletePod":
        return _name(args, path, errors)
    if action == "apply":
        return check_manifest(args, path, gates, errors)
    if not isinstance(args, Mapping):
        errors.append(FieldError(path=path, value=args, rule="must be a mapping"))
        return {}
    if action == "waitFor":
        kinds = [k for k in args if k in WAIT_KINDS]
        unknown = [k for k in args if k not in (*WAIT_KINDS, "timeout")]
        for k in unknown:
            errors.append(FieldError(path=f"{path}.{k}", kind="Unsupported value", value=k,
                                     rule="supported: " + ", ".join((*WAIT_KINDS, "timeout"))))
        if len(kinds) != 1:
            errors.append(FieldError(path=path, value=dict(args),
                                     rule="needs exactly one of: " + ", ".join(WAIT_KINDS)))
        elif kinds[0] == "seconds":
            _number(args["seconds"], f"{path}.seconds", errors)
        else:
            _name(args[kinds[0]], f"{path}.{kinds[0]}", errors)
        if "timeout" in args:
            _number(args["timeout"], f"{path}.timeout", errors, positive=True)
        return dict(args)
    if action == "patch":
        for key in ("kind", "name"):
            _name(args.get(key), f"{path}.{key}", errors)
        if not isinstance(args.get("merge"), Mapping):
            errors.append(FieldError(path=f"{path}.merge", kind="Required value",
                                     rule="a merge patch (mapping) is required"))
        return dict(args)
    if action == "podFault":
        _name(args.get("pod"), f"{path}.pod", errors)
        if args.get("fault") not in POD_FAULTS:
            errors.append(FieldError(path=f"{path}.fault", kind="Unsupported value", value=args.get("fault"),
                                     rule="supported values: " + ", ".join(f'"{f}"' for f in POD_FAULTS)))
        return dict(args)
    if action == "scale":
        _name(args.get("name"), f"{path}.name", errors)
        r = args.get("replicas")
        if isinstance(r, bool) or not isinstance(r, int) or r < 0:
            errors.append(FieldError(path=f"{path}.replicas", value=r, rule="must be greater than or equal to 0"))
        return dict(args)
    if action == "delete":
        _name(args.get("kind"), f"{path}.kind", errors)
        _name(args.get("name"), f"{path}.name", errors)
        if args.get("cascade", "background") not in ("background", "orphan"):
            errors.append(FieldError(path=f"{path}.cascade", kind="Unsupported value", value=args.get("cascade"),
                                     rule='supported values: "background", "orphan"'))
        return dict(args)
    return args  # pragma: no cover - every kind handled above
