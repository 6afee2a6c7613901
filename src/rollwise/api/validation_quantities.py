"""Resource quantities in the places rollwise reads them: containers' ``resources`` (pods and pod templates) and
claims' ``resources`` (PersistentVolumeClaims and a StatefulSet's ``volumeClaimTemplates``). Each value must parse
as upstream's ``resource.ParseQuantity`` would (``rollwise.api.quantity``) and be non-negative (upstream
``ValidateResourceQuantityValue``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.quantity import parse_quantity

__all__ = ["check_quantities"]


def check_quantities(obj: Mapping[str, Any]) -> list[FieldError]:
    """Every malformed or negative quantity of a Pod, PersistentVolumeClaim or StatefulSet, with its path."""
    errors: list[FieldError] = []
    for path, resources in _resources(obj):
        if not isinstance(resources, Mapping):
            continue  # the field schema and validation name a resources block of the wrong shape
        for key in ("limits", "requests"):
            amounts = resources.get(key)
            if amounts is None:
                continue
            if not isinstance(amounts, Mapping):
                errors.append(FieldError(path=f"{path}.{key}", value=amounts, rule="must be a mapping of "
                                         "resource name to quantity"))
                continue
            for name, value in amounts.items():
                errors += _check_quantity(value, f"{path}.{key}.{name}")
    return errors


def _check_quantity(value: Any, path: str) -> list[FieldError]:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return [FieldError(path=path, value=value, rule="must be a quantity such as 500m, 2Gi or 1")]
    try:
        amount = parse_quantity(value)
    except (ValueError, ArithmeticError) as err:
        return [FieldError(path=path, value=value, rule=str(err).split(": ", 1)[-1])]
    if amount < 0:
        return [FieldError(path=path, value=value, rule="must be greater than or equal to 0")]
    return []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _containers(pod_spec: Any, path: str) -> Iterator[tuple[str, Any]]:
    for key in ("initContainers", "containers"):
        containers = _mapping(pod_spec).get(key)
        if isinstance(containers, list):
            for i, c in enumerate(containers):
                if isinstance(c, Mapping) and "resources" in c:
                    yield f"{path}.{key}[{i}].resources", c["resources"]


def _resources(obj: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    kind = obj.get("kind")
    spec = _mapping(obj.get("spec"))
    if kind == "Pod":
        yield from _containers(spec, "spec")
    elif kind == "PersistentVolumeClaim" and "resources" in spec:
        yield "spec.resources", spec["resources"]
    elif kind == "StatefulSet":
        yield from _containers(_mapping(spec.get("template")).get("spec"), "spec.template.spec")
        claims = spec.get("volumeClaimTemplates")
        for i, claim in enumerate(claims if isinstance(claims, list) else ()):
            claim_spec = _mapping(_mapping(claim).get("spec"))
            if "resources" in claim_spec:
                yield f"spec.volumeClaimTemplates[{i}].spec.resources", claim_spec["resources"]
