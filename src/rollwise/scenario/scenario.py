"""Scenario files: the typed model and a loader that reports every problem with its field path.

The file contract is ``spec/simulate.md``. Validation happens before anything runs: a file with any problem is
rejected whole (exit 2), and nothing is simulated.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rollwise.api.errors import FieldError, InvalidObject
from rollwise.api.features import FeatureGates, parse_gate_overrides
from rollwise.api.meta import Obj
from rollwise.api.numbers import MAX_SECONDS, check_number, describe_type
from rollwise.cluster.documents import read_one_document
from rollwise.kubelet.profiles import KubeletProfile, parse_kubelet
from rollwise.kubelet.quorum_probe import QuorumParams, parse_quorum_params
from rollwise.scenario.analyses import RecordedAnalyses, parse_analyses
from rollwise.scenario.claim_patches import check_claim_patches
from rollwise.scenario.expect import parse_expect
from rollwise.scenario.manifests import check_manifest as check_one_manifest
from rollwise.scenario.step_schema import STEP_KINDS, Step, check_replicas_cap, parse_steps
from rollwise.scenario.strategy_override import StrategyOverride

__all__ = ["STEP_KINDS", "AppModel", "Scenario", "Step", "load_scenario", "parse_apps", "parse_scenario", "set_label"]

TOP_LEVEL = ("name", "description", "kubelet", "objects", "steps", "featureGates", "expect", "limitSeconds",
             "analyses")
APP_MODELS = ("quorum",)


def set_label(namespace: str, name: str, ambiguous: frozenset[str]) -> str:
    """How the summary, ``expect:`` and the tables name a set: by name, or by ``namespace/name`` when sets of that
    name live in several namespaces (``ambiguous``), so two sets never share a row."""
    return f"{namespace}/{name}" if name in ambiguous else name


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
    ambiguous_sets: frozenset[str] = frozenset()
    """StatefulSet names used in more than one namespace: the summary and ``expect:`` key those sets
    ``namespace/name``, every other set by its name alone."""
    analyses: RecordedAnalyses = field(default_factory=RecordedAnalyses)
    """What each AnalysisTemplate's metrics measure in the simulator (scenario/analyses.py)."""

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
    return parse_scenario(read_one_document(p), source=str(p), default_name=p.stem)


def parse_scenario(raw: Any, *, source: str = "", default_name: str = "scenario") -> Scenario:
    errors: list[FieldError] = []
    if not isinstance(raw, Mapping):
        raise InvalidObject([FieldError(path="<root>", rule="a scenario must be a mapping", value=describe_type(raw))],
                            source=source)
    if "kind" in raw or "apiVersion" in raw:
        raise InvalidObject([FieldError(path="kind", value=raw.get("kind"), rule="this is a Kubernetes manifest, not a "
                                        "scenario; list it under objects: of a scenario (rollwise validate checks "
                                        "manifests)")], source=source)
    for key in raw:
        if key not in TOP_LEVEL:
            errors.append(FieldError(path=str(key), kind="Unsupported value", value=key,
                                     rule="unknown field; supported: " + ", ".join(TOP_LEVEL)))
    name = raw.get("name", default_name)
    if not isinstance(name, str) or not name:
        errors.append(FieldError(path="name", value=name, rule="must be a non-empty string"
                                 + ("" if isinstance(name, str) else f", not {describe_type(name)}")))
        name = default_name
    description = raw.get("description", "")
    if description is not None and not isinstance(description, str):
        errors.append(FieldError(path="description", value=describe_type(description), rule="must be a string"))
        description = ""
    profile, kubelet_errors = parse_kubelet(raw.get("kubelet") or {}, path="kubelet")
    errors += kubelet_errors
    apps = parse_apps((raw.get("kubelet") or {}).get("apps") if isinstance(raw.get("kubelet"), Mapping) else None,
                       errors)
    overrides, gate_errors = parse_gate_overrides(raw.get("featureGates") or {}, path="featureGates")
    errors += gate_errors
    gates = FeatureGates().with_overrides(overrides)
    indexed = _parse_objects(raw.get("objects"), gates, errors)
    steps = parse_steps(raw.get("steps"), gates, errors,
                        lambda obj, path, errs: check_manifest(obj, path, gates, errs))
    expect, expect_errors = parse_expect(raw.get("expect") or {}, path="expect")
    errors += expect_errors
    ambiguous = _check_set_names(indexed, steps, expect, apps, errors)
    check_claim_patches([obj for _, obj in indexed], steps, errors)  # KEP-4650: no shrunk claim template
    analyses = parse_analyses(raw.get("analyses"), errors)
    _check_templates(analyses, [obj for _, obj in indexed], steps, errors)
    limit = raw.get("limitSeconds", 86400)
    limit_errors = check_number(limit, "limitSeconds", minimum=0, exclusive_minimum=True, maximum=MAX_SECONDS,
                                what="a number of seconds")
    if limit_errors:
        errors += limit_errors
        limit = 86400
    if errors:
        raise InvalidObject(errors, source=source)
    return Scenario(name=name, description=description or "", kubelet=profile, apps=apps,
                    objects=tuple(obj for _, obj in indexed), steps=tuple(steps), gates=gates, expect=expect,
                    limit_seconds=float(limit), source=source, ambiguous_sets=ambiguous, analyses=analyses)


def parse_apps(raw: Any, errors: list[FieldError]) -> dict[str, AppModel]:
    """``kubelet.apps``: StatefulSet name -> its application model (``rollwise up --kubelet`` reads it too)."""
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
    """One manifest of a scenario: the API server's checks (``scenario.manifests``) and the simulator's size cap."""
    checked = check_one_manifest(obj, path, gates, errors)
    if checked is not None and checked.get("kind") == "StatefulSet" and isinstance(checked.get("spec"), Mapping):
        check_replicas_cap(checked["spec"].get("replicas"), f"{path}.spec.replicas", errors)
    return checked


def _check_unique(objects: list[tuple[int, Obj]], errors: list[FieldError]) -> None:
    """Two objects with the same kind, namespace and name: the second create would fail, so refuse the file."""
    seen: dict[tuple[str, str, str], int] = {}
    for i, obj in objects:
        meta = obj.get("metadata") or {}
        key = (str(obj.get("kind")), str(meta.get("namespace") or "default"), str(meta.get("name")))
        if key in seen:
            errors.append(FieldError(path=f"objects[{i}].metadata.name", kind="Duplicate value", value=key[2],
                                     rule=f"objects[{seen[key]}] is already a {key[0]} of this name in namespace "
                                          f"{key[1]}"))
        else:
            seen[key] = i


def _parse_objects(raw: Any, gates: FeatureGates, errors: list[FieldError]) -> list[tuple[int, Obj]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors.append(FieldError(path="objects", value=describe_type(raw), rule="must be a list of manifests"))
        return []
    out = []
    for i, obj in enumerate(raw):
        checked = check_manifest(obj, f"objects[{i}]", gates, errors)
        if checked is not None:
            out.append((i, checked))
    _check_unique(out, errors)
    return out


def _check_set_names(objects: list[tuple[int, Obj]], steps: list[Step], expect: Mapping[str, Any],
                     apps: Mapping[str, Any], errors: list[FieldError]) -> frozenset[str]:
    """The set names used in several namespaces (the summary keys those sets ``namespace/name``, see
    ``set_label``); ``expect:`` and ``kubelet.apps`` must name sets the scenario creates, as the summary keys
    them: a typo would otherwise surface only at the end (an expectation about no set fails with exit 1) or never
    (a model bound to nothing)."""
    manifests = [(f"objects[{i}]", obj) for i, obj in objects]
    manifests += [(f"steps[{s.index}].apply", s.args) for s in steps if s.action == "apply" and s.args is not None]
    namespaces: dict[str, set[str]] = {}
    for _, m in manifests:
        meta = m.get("metadata") or {}
        if m.get("kind") == "StatefulSet":
            namespaces.setdefault(str(meta.get("name")), set()).add(str(meta.get("namespace") or "default"))
    ambiguous = frozenset(name for name, spaces in namespaces.items() if len(spaces) > 1)
    keys = {set_label(ns, name, ambiguous) for name, spaces in namespaces.items() for ns in spaces}
    known = ", ".join(sorted(keys)) or "none"
    for section, named in (("expect", expect), ("kubelet.apps", apps)):
        for key in named:
            if key in ambiguous:
                spaces = sorted(namespaces[key])
                errors.append(FieldError(path=f"{section}.{key}", kind="Invalid value", value=key,
                                         rule=f"StatefulSets named {key} live in namespaces {', '.join(spaces)}: "
                                              f"name one as {spaces[0]}/{key}"
                                              + ("" if section == "expect" else "; a model binds to a set whose "
                                                 "name is used in one namespace only")))
            elif key not in keys:
                errors.append(FieldError(path=f"{section}.{key}", kind="Not found", value=key,
                                         rule=f"no StatefulSet of this name in objects or apply steps (sets: {known})"))
    return ambiguous


def _check_templates(analyses: RecordedAnalyses, objects: list[Obj], steps: list[Step],
                     errors: list[FieldError]) -> None:
    """Each recorded template is an AnalysisTemplate the scenario creates: a typo would otherwise replay nothing."""
    manifests = [*objects, *(s.args for s in steps if s.action == "apply" and s.args is not None)]
    known = sorted({str((m.get("metadata") or {}).get("name")) for m in manifests
                    if m.get("kind") == "AnalysisTemplate"})
    for name in analyses.templates:
        if name not in known:
            errors.append(FieldError(path=f"analyses.{name}", kind="Not found", value=name,
                                     rule="no AnalysisTemplate of this name in objects or apply steps (templates: "
                                          f"{', '.join(known) or 'none'})"))
