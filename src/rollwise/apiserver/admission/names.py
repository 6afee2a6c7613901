"""The API server's rule for object names: a DNS-1123 subdomain for most resources, a path segment for RBAC."""

from __future__ import annotations

import re
from typing import Any

from rollwise.api.errors import FieldError, Invalid

__all__ = ["check_name"]

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_PATH_SEGMENT_GROUPS = ("rbac.authorization.k8s.io",)  # RBAC names are path segments (system:controller:...)


def check_name(group: str, kind: str, name: Any) -> None:
    """The API server's name rule: a DNS-1123 subdomain for most resources, a path segment for RBAC."""
    if not name:
        return  # the store reports a missing name with its own field error
    text = str(name)
    if group in _PATH_SEGMENT_GROUPS:
        ok = text not in (".", "..") and "/" not in text and "%" not in text
        rule = 'may not be "." or ".." and may not contain "/" or "%"'
    else:
        ok = len(text) <= 253 and _DNS_SUBDOMAIN.match(text) is not None
        rule = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                "must start and end with an alphanumeric character")
    if not ok:
        raise Invalid(f'{kind} "{text}" is invalid: metadata.name: Invalid value: "{text}": {rule}',
                      errors=[FieldError(path="metadata.name", value=text, rule=rule)])
