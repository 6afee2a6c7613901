"""Field-level validation rules in the Kubernetes wording (reference §2). Each returns FieldErrors and never raises.

``validation.py`` walks a StatefulSet and calls these; they know nothing about StatefulSets. Patterns are matched
with ``fullmatch`` on purpose: ``re.match(r"...$")`` would accept a trailing newline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rollwise.api.errors import FieldError

__all__ = [
    "DNS1123_LABEL_MAX_LENGTH",
    "check_annotation_keys",
    "check_dns_label",
    "check_dns_subdomain",
    "check_enum",
    "check_int",
    "check_label_selector",
    "check_labels",
    "check_max_unavailable",
    "check_qualified_name",
    "is_int",
    "type_error",
]

DNS1123_LABEL_MAX_LENGTH = 63
_DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_PERCENT = re.compile(r"[0-9]+%")

_DNS_LABEL_RULE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end"
    " with an alphanumeric character (e.g. 'my-name' or '123-abc', regex used for validation is"
    " '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_NAME_PART_RULE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an"
    " alphanumeric character (e.g. 'MyName' or 'my.name', regex used for validation is"
    " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_SUBDOMAIN_RULE = "must be a lowercase RFC 1123 subdomain of at most 253 characters"
_PREFIX_RULE = f"prefix part {_SUBDOMAIN_RULE}"
_LABEL_VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start"
    " and end with an alphanumeric character (regex used for validation is"
    " '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_PERCENT_RULE = "must be an integer or a percentage such as '25%' (regex used for validation is '[0-9]+%')"
_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def is_int(value: object) -> bool:
    """An integer in the JSON sense: ``True`` and ``3.0`` are not."""
    return isinstance(value, int) and not isinstance(value, bool)


def type_error(path: str, value: object, expected: str) -> FieldError:
    """A value of the wrong JSON type, reported instead of raised."""
    return FieldError(path=path, value=value, rule=f"must be {expected}")


def _quoted(values: Sequence[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def check_int(value: object, path: str, *, minimum: int | None = None) -> list[FieldError]:
    """An int32 (every count in the StatefulSet API is one), at least ``minimum`` when given."""
    if isinstance(value, bool) or not isinstance(value, int):
        return [type_error(path, value, "an integer")]
    if not _INT32_MIN <= value <= _INT32_MAX:
        return [FieldError(path=path, value=value, rule="must fit in a 32-bit signed integer")]
    if minimum is not None and value < minimum:
        rule = "must be greater than 0" if minimum == 1 else f"must be greater than or equal to {minimum}"
        return [FieldError(path=path, value=value, rule=rule)]
    return []


def check_enum(value: object, path: str, supported: Sequence[str]) -> list[FieldError]:
    """One of ``supported``: missing is Required, anything else Unsupported, both listing the choices."""
    if value is None or value == "":
        return [FieldError(path=path, kind="Required value", rule=f"supported values: {_quoted(supported)}")]
    if value not in supported:
        return [FieldError(path=path, kind="Unsupported value", value=value,
                           rule=f"supported values: {_quoted(supported)}")]
    return []


def check_dns_label(value: object, path: str) -> list[FieldError]:
    """A DNS-1123 label: at most 63 of ``[a-z0-9-]``, starting and ending alphanumeric (reference §2)."""
    if not isinstance(value, str):
        return [type_error(path, value, "a string")]
    errors = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        rule = f"must be no more than {DNS1123_LABEL_MAX_LENGTH} characters"
        errors.append(FieldError(path=path, value=value, rule=rule))
    if not _DNS1123_LABEL.fullmatch(value):
        errors.append(FieldError(path=path, value=value, rule=_DNS_LABEL_RULE))
    return errors


def check_dns_subdomain(value: object, path: str) -> list[FieldError]:
    """A DNS-1123 subdomain, the name rule of most objects (upstream ``IsDNS1123Subdomain``): at most 253 characters
    of dot-separated labels."""
    if not isinstance(value, str):
        return [type_error(path, value, "a string")]
    if len(value) > _DNS1123_SUBDOMAIN_MAX_LENGTH or not _DNS1123_SUBDOMAIN.fullmatch(value):
        return [FieldError(path=path, value=value, rule=_SUBDOMAIN_RULE)]
    return []


def check_qualified_name(key: object, path: str) -> list[FieldError]:
    """A label or annotation key: an optional DNS-subdomain prefix and '/', then a name part of at most 63."""
    if not isinstance(key, str):
        return [type_error(path, key, "a string key")]
    prefix, slash, name = key.rpartition("/")
    errors = []
    if slash and (len(prefix) > _DNS1123_SUBDOMAIN_MAX_LENGTH or not _DNS1123_SUBDOMAIN.fullmatch(prefix)):
        errors.append(FieldError(path=path, value=key, rule=_PREFIX_RULE))
    if len(name) > DNS1123_LABEL_MAX_LENGTH:
        errors.append(FieldError(path=path, value=key, rule="name part must be no more than 63 characters"))
    if not _QUALIFIED_NAME.fullmatch(name):
        errors.append(FieldError(path=path, value=key, rule=_NAME_PART_RULE))
    return errors


def _check_label_value(value: object, path: str) -> list[FieldError]:
    if not isinstance(value, str):
        return [type_error(path, value, "a string")]
    errors = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        errors.append(FieldError(path=path, value=value, rule="must be no more than 63 characters"))
    if not _LABEL_VALUE.fullmatch(value):
        errors.append(FieldError(path=path, value=value, rule=_LABEL_VALUE_RULE))
    return errors


def check_labels(labels: object, path: str) -> list[FieldError]:
    """A label map: qualified-name keys and label values (at most 63 characters, alphanumeric ends)."""
    if not isinstance(labels, Mapping):
        return [type_error(path, labels, "a mapping of string to string")]
    errors: list[FieldError] = []
    for key, value in labels.items():
        errors += check_qualified_name(key, path)
        errors += _check_label_value(value, path)
    return errors


def check_annotation_keys(annotations: object, path: str) -> list[FieldError]:
    """An annotation map: qualified-name keys and string values."""
    if not isinstance(annotations, Mapping):
        return [type_error(path, annotations, "a mapping of string to string")]
    errors: list[FieldError] = []
    for key, value in annotations.items():
        errors += check_qualified_name(key, path)
        if not isinstance(value, str):
            errors.append(type_error(f"{path}[{key}]", value, "a string"))
    return errors


def check_label_selector(selector: object, path: str) -> list[FieldError]:
    """A strict LabelSelector: valid matchLabels; known operators; values with In/NotIn only, never empty there."""
    if not isinstance(selector, Mapping):
        return [type_error(path, selector, "a mapping")]
    errors: list[FieldError] = []
    match_labels = selector.get("matchLabels")
    if match_labels is not None:
        errors += check_labels(match_labels, f"{path}.matchLabels")
    expressions = selector.get("matchExpressions")
    if expressions is None:
        return errors
    if not isinstance(expressions, list):
        return [*errors, type_error(f"{path}.matchExpressions", expressions, "a list")]
    for i, expr in enumerate(expressions):
        errors += _check_requirement(expr, f"{path}.matchExpressions[{i}]")
    return errors


def _check_requirement(expr: object, path: str) -> list[FieldError]:
    if not isinstance(expr, Mapping):
        return [type_error(path, expr, "a mapping")]
    errors = check_qualified_name(expr.get("key"), f"{path}.key")
    operator, values = expr.get("operator"), expr.get("values")
    errors += check_enum(operator, f"{path}.operator", _OPERATORS)
    if values is not None and not isinstance(values, list):
        return [*errors, type_error(f"{path}.values", values, "a list")]
    if operator in ("In", "NotIn") and not values:
        errors.append(FieldError(path=f"{path}.values", kind="Required value",
                                 rule="must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist") and values:
        errors.append(FieldError(path=f"{path}.values", kind="Forbidden",
                                 rule="may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    for j, value in enumerate(values or ()):
        errors += _check_label_value(value, f"{path}.values[{j}]")
    return errors


def check_max_unavailable(value: object, path: str) -> list[FieldError]:
    """An int of at least 1, or a percentage ``N%`` with 0 < N <= 100; no bound against replicas (reference §2)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            return [FieldError(path=path, value=value, rule="must be greater than 0")]
        return check_int(value, path)
    if not isinstance(value, str):
        return [type_error(path, value, "an integer or a percentage string")]
    if not _PERCENT.fullmatch(value):
        return [FieldError(path=path, value=value, rule=_PERCENT_RULE)]
    percent = int(value[:-1])
    if percent == 0:
        return [FieldError(path=path, value=value, rule="must be greater than 0")]
    if percent > 100:
        return [FieldError(path=path, value=value, rule="must not be greater than 100%")]
    return []
