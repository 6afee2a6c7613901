"""One manifest, checked as the API server with strict field validation would, plus what rollwise adds:

- every kind rollwise creates or reads (``CHECKED_KINDS``) gets its unknown fields named and its validation run;
  other kinds are not checked (``validate`` says so) — rollwise neither stores nor reads them;
- a feature gate that is off while its field or type is used is refused naming the gate (README "Feature gates"),
  where the upstream API server would drop the field silently;
- the quorum-aware controller's annotations are checked as the controller reads them, so an impossible value
  (``max-unavailable-members: "0"``) is refused when the file is read, not found by the controller mid-run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from rollwise.api.defaults import apply_defaults
from rollwise.api.errors import FieldError
from rollwise.api.features import MAX_UNAVAILABLE, QUORUM_AWARE, FeatureGates
from rollwise.api.field_schema import KNOWN_KINDS, unknown_fields
from rollwise.api.meta import Obj
from rollwise.api.numbers import describe_type
from rollwise.api.strategies import BLOCK_KEYS
from rollwise.api.validation import validate_statefulset
from rollwise.api.validation_objects import check_object_references, validate_object
from rollwise.api.validation_quantities import check_quantities
from rollwise.api.values import clone
from rollwise.controllers.quorum.settings import QUORUM_AWARE_POLICY, UPDATE_POLICY, read_settings

__all__ = ["CHECKED_KINDS", "check_manifest"]

CHECKED_KINDS = tuple(KNOWN_KINDS)
_QUORUM_ANNOTATIONS = "rollwise.dev/"


def check_manifest(obj: Any, path: str, gates: FeatureGates, errors: list[FieldError], *,
                   copy: bool = True) -> Obj | None:
    """Append every problem of one manifest (paths under ``path``) to ``errors``; a copy of it when it has a kind
    and a name (so later checks, such as duplicates, can use it), else None (always None with ``copy=False``, for
    a caller that only checks)."""
    if not isinstance(obj, Mapping):
        errors.append(FieldError(path=path or "<root>", value=describe_type(obj),
                                 rule="must be a Kubernetes object (a mapping)"))
        return None
    kind = obj.get("kind")
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    found: list[FieldError] = []
    if isinstance(kind, str) and kind in KNOWN_KINDS:
        found += unknown_fields(obj)
        found += _validate(obj, kind, gates)
        found += check_object_references(meta)
        found += check_quantities(obj)
    else:  # a kind rollwise does not store or read: only what every object needs
        for key in ("apiVersion", "kind"):
            _required_string(obj.get(key), key, found)
        if meta is not None and not isinstance(meta, Mapping):
            found.append(FieldError(path="metadata", value=describe_type(meta), rule="must be a mapping"))
        else:
            _required_string(name, "metadata.name", found)
    errors.extend(e.under(path) if path else e for e in found)
    named = isinstance(name, str) and bool(name) and isinstance(kind, str) and bool(kind)
    return clone(obj) if named and copy else None


def _required_string(value: Any, path: str, errors: list[FieldError]) -> None:
    if value is None or value == "":
        errors.append(FieldError(path=path, kind="Required value", rule=f"{path.rsplit('.', 1)[-1]} is required"))
    elif not isinstance(value, str):
        errors.append(FieldError(path=path, value=value, rule=f"must be a string, not {describe_type(value)}"))


def _validate(obj: Mapping[str, Any], kind: str, gates: FeatureGates) -> list[FieldError]:
    if kind != "StatefulSet":
        return validate_object(obj)
    errors = _gated_fields(obj, gates)
    try:
        defaulted = apply_defaults(dict(obj), gates=gates)
    except (TypeError, AttributeError, ValueError):
        defaulted = clone(obj)  # validation reports the malformed part by its path
    errors += validate_statefulset(defaulted, gates=gates)
    meta = obj.get("metadata")
    notes = meta.get("annotations") if isinstance(meta, Mapping) else None
    if isinstance(notes, Mapping) and any(isinstance(k, str) and k.startswith(_QUORUM_ANNOTATIONS) for k in notes):
        errors += _quorum_annotations(defaulted, notes, gates)
    return errors


def _gated_fields(obj: Mapping[str, Any], gates: FeatureGates) -> list[FieldError]:
    """KEP-961: ``maxUnavailable`` needs its gate; the API server would drop it, rollwise refuses it by name."""
    strategy = (obj.get("spec") or {}).get("updateStrategy") if isinstance(obj.get("spec"), Mapping) else None
    if gates.max_unavailable or not isinstance(strategy, Mapping):
        return []
    return [FieldError(path=f"spec.updateStrategy.{block}.maxUnavailable", kind="Forbidden",
                       rule=f"the {MAX_UNAVAILABLE} feature gate is disabled")
            for block in BLOCK_KEYS
            if isinstance(strategy.get(block), Mapping) and strategy[block].get("maxUnavailable") is not None]


def _quorum_annotations(sts: Mapping[str, Any], notes: Mapping[str, Any], gates: FeatureGates) -> list[FieldError]:
    errors: list[FieldError] = []
    if notes.get(UPDATE_POLICY) == QUORUM_AWARE_POLICY and not gates.quorum_aware:
        errors.append(FieldError(path=f"metadata.annotations[{UPDATE_POLICY}]", kind="Forbidden",
                                 rule=f"the {QUORUM_AWARE} feature gate is disabled"))
    with contextlib.suppress(TypeError, AttributeError, ValueError):  # a malformed template is named already
        # The annotations' problems; spec.roleProbe's are validation's (validate_statefulset names them once).
        errors += [e for e in read_settings(sts)[1] if not e.path.startswith("spec.")]
    return errors
