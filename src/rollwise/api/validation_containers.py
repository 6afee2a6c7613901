"""A container's fields as kube-apiserver validates them on a Pod (``pkg/apis/core/validation/validation.go``:
``validatePullPolicy``, ``validateContainerPorts``, ``ValidateEnv``, ``ValidateResourceRequirements``,
``validateProbe``), in their words: the rules a user is likely to break and a cluster would refuse.

Upstream checks them when a Pod is created, so a StatefulSet with ``imagePullPolicy: Alwayz`` is accepted and only
fails as ``FailedCreate`` events mid-rollout (``ValidatePodTemplateSpecForStatefulSet`` leaves the pod spec to a
TODO). rollwise checks them where the template is written, for both kinds and for bare Pods, from this one module:
``validation_pods.check_container`` calls it, and ``cluster/crd/statefulset.py`` builds the CRD's enums, patterns and
CEL rules from the same constants (``validation_cel.TWINS`` names each twin).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.quantity import parse_quantity
from rollwise.api.validation_rules import check_enum, check_int, is_int, type_error

__all__ = [
    "ENV_NAME_PATTERN",
    "ENV_NAME_RULE",
    "PORT_NAME_MAX_LENGTH",
    "PORT_NAME_PATTERN",
    "PORT_NAME_RULE",
    "PROBES",
    "PROBE_HANDLERS",
    "PROBE_INTS",
    "PROTOCOLS",
    "PULL_POLICIES",
    "SCHEMES",
    "TERMINATION_MESSAGE_POLICIES",
    "VALUE_FROM_RULE",
    "check_container_fields",
]

PULL_POLICIES = ("Always", "IfNotPresent", "Never")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
PROTOCOLS = ("TCP", "UDP", "SCTP")
SCHEMES = ("HTTP", "HTTPS")
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
PROBE_INTS = ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold")
"""The probe's counts, each at least 0 (upstream defaults the zeros before it validates)."""

PORT_NAME_MAX_LENGTH = 15
PORT_NAME_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
PORT_NAME_RULE = ("must be an IANA_SVC_NAME: at most 15 characters of [-a-z0-9], with at least one letter, not "
                  "starting or ending with '-' and without '--'")
ENV_NAME_PATTERN = "^[ -<>-~]+$"
"""Printable ASCII but '=' (upstream's RelaxedEnvironmentVariableValidation, on by default since 1.32)."""
ENV_NAME_RULE = "a valid environment variable name must consist only of printable ASCII characters other than '='"
VALUE_FROM_RULE = "may not be specified when `value` is not empty"
_PORT_NAME = re.compile(PORT_NAME_PATTERN.strip("^$"))
_ENV_NAME = re.compile(ENV_NAME_PATTERN.strip("^$"))


def check_container_fields(container: Mapping[str, Any], path: str) -> list[FieldError]:
    """Everything of a container but its name and image (``validation_pods.check_container``)."""
    errors: list[FieldError] = []
    for key, supported in (("imagePullPolicy", PULL_POLICIES), ("terminationMessagePolicy",
                                                                TERMINATION_MESSAGE_POLICIES)):
        if key in container:
            errors += check_enum(container[key], f"{path}.{key}", supported)
    errors += _each(container.get("ports"), f"{path}.ports", _check_ports)
    errors += _each(container.get("env"), f"{path}.env", _check_env)
    errors += _check_resources(container.get("resources"), f"{path}.resources")
    for probe in PROBES:
        if container.get(probe) is not None:
            errors += _check_probe(container[probe], f"{path}.{probe}", probe)
    return errors


def _each(items: object, path: str, check: Any) -> list[FieldError]:
    if items is None:
        return []
    if not isinstance(items, list):
        return [type_error(path, items, "a list")]
    return list(check(items, path))


def port_name_errors(name: object, path: str) -> list[FieldError]:
    """An IANA service name (upstream ``IsValidPortName``)."""
    if not isinstance(name, str):
        return [type_error(path, name, "a string")]
    if len(name) > PORT_NAME_MAX_LENGTH or not _PORT_NAME.fullmatch(name) or "--" in name \
            or not re.search("[a-z]", name):
        return [FieldError(path=path, value=name, rule=PORT_NAME_RULE)]
    return []


def _port_number(value: object, path: str, *, minimum: int) -> list[FieldError]:
    if not is_int(value):
        return [type_error(path, value, "an integer")]
    assert isinstance(value, int)
    if not minimum <= value <= 65535:
        return [FieldError(path=path, value=value, rule=f"must be between {minimum} and 65535, inclusive")]
    return []


def _check_ports(ports: list[Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        at = f"{path}[{i}]"
        if not isinstance(port, Mapping):
            errors.append(type_error(at, port, "a mapping"))
            continue
        if port.get("name") not in (None, ""):
            found = port_name_errors(port["name"], f"{at}.name")
            if not found and port["name"] in names:
                found = [FieldError(path=f"{at}.name", kind="Duplicate value", value=port["name"],
                                    rule="port names must be unique within a container")]
            errors += found
            if isinstance(port["name"], str):
                names.add(port["name"])
        if port.get("containerPort") in (None, 0):
            errors.append(FieldError(path=f"{at}.containerPort", kind="Required value", rule="a port is required"))
        else:
            errors += _port_number(port["containerPort"], f"{at}.containerPort", minimum=1)
        if port.get("hostPort") is not None:
            errors += _port_number(port["hostPort"], f"{at}.hostPort", minimum=0)
        if "protocol" in port:
            errors += check_enum(port["protocol"], f"{at}.protocol", PROTOCOLS)
    return errors


def _check_env(env: list[Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, var in enumerate(env):
        at = f"{path}[{i}]"
        if not isinstance(var, Mapping):
            errors.append(type_error(at, var, "a mapping"))
            continue
        name = var.get("name")
        if name is None or name == "":
            errors.append(FieldError(path=f"{at}.name", kind="Required value", rule="a name is required"))
        elif not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
            errors.append(FieldError(path=f"{at}.name", value=name, rule=ENV_NAME_RULE))
        if var.get("value") not in (None, "") and var.get("valueFrom") is not None:
            errors.append(FieldError(path=f"{at}.valueFrom", value="", rule=VALUE_FROM_RULE))
    return errors


def _amount(value: object) -> Any:
    try:
        return parse_quantity(value)  # type: ignore[arg-type]
    except (ValueError, ArithmeticError, TypeError):
        return None  # a malformed quantity is reported by validation_quantities


def _check_resources(resources: object, path: str) -> list[FieldError]:
    """A request above its limit (upstream: "must be less than or equal to cpu limit of 500m")."""
    if not isinstance(resources, Mapping):
        return []
    limits, requests = resources.get("limits"), resources.get("requests")
    if not isinstance(limits, Mapping) or not isinstance(requests, Mapping):
        return []
    errors: list[FieldError] = []
    for name, request in requests.items():
        if name not in limits:
            continue
        asked, most = _amount(request), _amount(limits[name])
        if asked is not None and most is not None and asked > most:
            errors.append(FieldError(path=f"{path}.requests[{name}]", value=request,
                                     rule=f"must be less than or equal to {name} limit of {limits[name]}"))
    return errors


def _check_probe(probe: object, path: str, which: str) -> list[FieldError]:
    if not isinstance(probe, Mapping):
        return [type_error(path, probe, "a mapping")]
    errors: list[FieldError] = []
    handlers = [h for h in PROBE_HANDLERS if probe.get(h) is not None]
    if not handlers:
        errors.append(FieldError(path=path, kind="Required value", rule="must specify a handler type"))
    elif len(handlers) > 1:
        errors.append(FieldError(path=f"{path}.{handlers[1]}", kind="Forbidden",
                                 rule="may not specify more than 1 handler type"))
    for key in PROBE_INTS:
        if probe.get(key) is not None:
            errors += check_int(probe[key], f"{path}.{key}", minimum=0)
    if which != "readinessProbe" and is_int(probe.get("successThreshold")) and probe["successThreshold"] not in (0, 1):
        errors.append(FieldError(path=f"{path}.successThreshold", value=probe["successThreshold"], rule="must be 1"))
    for handler in ("httpGet", "tcpSocket"):
        action = probe.get(handler)
        if isinstance(action, Mapping):
            errors += _probe_port(action.get("port"), f"{path}.{handler}.port")
            if handler == "httpGet" and "scheme" in action:
                errors += check_enum(action["scheme"], f"{path}.{handler}.scheme", SCHEMES)
    return errors


def _probe_port(port: object, path: str) -> list[FieldError]:
    """A port number or the name of a container port (upstream ``ValidatePortNumOrName``: a string is a name,
    even "80")."""
    if port is None:
        return [FieldError(path=path, kind="Required value", rule="a port is required")]
    if isinstance(port, str):
        return port_name_errors(port, path)
    return _port_number(port, path, minimum=1)
