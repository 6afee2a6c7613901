"""A pod template as the API server stores it: what a client reads back, and what upstream's revision hash sees.

Upstream decodes a manifest into Go structs and encodes them again, so two manifests that differ only in how they
are written are stored as one: resource quantities in their canonical form (``0.5`` and ``500m`` are both
``500m``), and fields tagged ``omitempty`` dropped when they hold their zero value (``env: []`` is stored as no
``env`` at all). A revision hashed over anything else replaces every pod for a change that changes nothing
(reference §3.1: the hash is over the stored template). Defaults are the other half (``api/defaults.py``).

Only what Go's encoder would drop is dropped: nulls, empty lists (every list in a pod template is ``omitempty``
except ``containers``), empty maps where the Go type is a map (a struct such as ``resources: {}`` or a pointer to
one such as ``securityContext: {}`` is kept), and ``false``/``0`` in the non-pointer fields that are ``omitempty``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rollwise.api.meta import Obj
from rollwise.api.quantity import canonical_quantity
from rollwise.api.values import SCALARS, clone

__all__ = ["stored_pod_template"]

_KEEP_EMPTY_LIST = frozenset({"containers"})
"""``PodSpec.Containers`` has no ``omitempty``: ``containers: []`` is stored (and rejected by validation)."""
_MAP_FIELDS = frozenset({"labels", "annotations", "nodeSelector", "limits", "requests", "overhead"})
"""Keys whose Go type is a map in a pod template; ``omitempty`` drops them when empty."""
_ZERO_OMITTED = {
    # non-pointer bools and ints tagged omitempty (k8s.io/api core/v1 types.go)
    "hostNetwork": False, "hostPID": False, "hostIPC": False, "stdin": False, "stdinOnce": False, "tty": False,
    "readOnly": False, "initialDelaySeconds": 0, "hostPort": 0,
}
_RESOURCE_LISTS = ("limits", "requests")


def stored_pod_template(template: Mapping[str, Any]) -> Obj:
    """A copy of the template in its stored form: canonical quantities, omitempty fields dropped.

    Quantities that do not parse are left as written, for validation to report with their path.
    """
    out: Obj = _without_empty(template)
    spec = out.get("spec")
    if isinstance(spec, dict):
        _canonical_pod_spec(spec)
    return out


def _without_empty(value: Any) -> Any:
    """A deep copy of ``value`` (as ``values.clone`` makes it) without what Go's encoder would drop."""
    t = type(value)
    if t is dict or (t is not list and isinstance(value, Mapping)):
        kept: dict[str, Any] = {}
        for key, raw in value.items():
            item = raw if type(raw) in SCALARS else _without_empty(raw)
            if item is None or _omitted(key, item):
                continue
            kept[key] = item
        return kept
    if t is list or t is tuple:
        return [_without_empty(item) for item in value]
    return value if t in SCALARS else clone(value)


def _omitted(key: str, item: Any) -> bool:
    if isinstance(item, list):
        return not item and key not in _KEEP_EMPTY_LIST
    if isinstance(item, dict):
        return not item and key in _MAP_FIELDS
    zero = _ZERO_OMITTED.get(key, ...)
    return zero is not ... and type(item) is type(zero) and item == zero


def _canonical(value: Any) -> Any:
    try:
        return canonical_quantity(value)
    except ValueError:
        return value


def _canonical_resource_list(resources: Any) -> None:
    """Every quantity of a ResourceList (``limits``, ``requests``, ``overhead``) in canonical form."""
    if isinstance(resources, dict):
        for name, value in resources.items():
            resources[name] = _canonical(value)


def _canonical_requirements(requirements: Any) -> None:
    if isinstance(requirements, dict):
        for key in _RESOURCE_LISTS:
            _canonical_resource_list(requirements.get(key))


def _canonical_divisor(holder: Any) -> None:
    """``resourceFieldRef.divisor`` (downward API) is a quantity too."""
    ref = holder.get("resourceFieldRef") if isinstance(holder, dict) else None
    if isinstance(ref, dict) and "divisor" in ref:
        ref["divisor"] = _canonical(ref["divisor"])


def _each(items: Any, apply: Callable[[dict[str, Any]], None]) -> None:
    if isinstance(items, list):
        for item in items:
            if isinstance(item, dict):
                apply(item)


def _canonical_container(container: dict[str, Any]) -> None:
    _canonical_requirements(container.get("resources"))
    _each(container.get("env"), lambda env: _canonical_divisor(env.get("valueFrom")))


def _canonical_volume(volume: dict[str, Any]) -> None:
    empty_dir = volume.get("emptyDir")
    if isinstance(empty_dir, dict) and "sizeLimit" in empty_dir:
        empty_dir["sizeLimit"] = _canonical(empty_dir["sizeLimit"])
    downward = volume.get("downwardAPI")
    if isinstance(downward, dict):
        _each(downward.get("items"), _canonical_divisor)
    projected = volume.get("projected")
    if isinstance(projected, dict):
        _each(projected.get("sources"), lambda source: _each(
            (source.get("downwardAPI") or {}).get("items") if isinstance(source.get("downwardAPI"), dict) else None,
            _canonical_divisor))
    ephemeral = volume.get("ephemeral")
    claim = ephemeral.get("volumeClaimTemplate") if isinstance(ephemeral, dict) else None
    claim_spec = claim.get("spec") if isinstance(claim, dict) else None
    if isinstance(claim_spec, dict):
        _canonical_requirements(claim_spec.get("resources"))


def _canonical_pod_spec(spec: dict[str, Any]) -> None:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        _each(spec.get(key), _canonical_container)
    _each(spec.get("volumes"), _canonical_volume)
    _canonical_resource_list(spec.get("overhead"))
    _canonical_requirements(spec.get("resources"))
