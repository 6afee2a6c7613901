"""The CRD's part for a container's fields kube-apiserver validates on a Pod (``api/validation_containers.py``):
schema keywords and CEL rules built from the same constants, each the twin of a rule there
(``api/validation_cel.TWINS``). Other container fields are kept as written."""

from __future__ import annotations

from typing import Any

from rollwise.api.validation_cel import MAX_LIST, CelRule
from rollwise.api.validation_containers import (
    ENV_NAME_PATTERN,
    PORT_NAME_MAX_LENGTH,
    PORT_NAME_PATTERN,
    PORT_NAME_RULE,
    PROBE_HANDLERS,
    PROBE_INTS,
    PROBES,
    PROTOCOLS,
    PULL_POLICIES,
    SCHEMES,
    TERMINATION_MESSAGE_POLICIES,
    VALUE_FROM_RULE,
)

__all__ = ["container_field_schemas"]

_INT32_MAX = 2**31 - 1
_PORT_NAME_CEL = f"self.matches('{PORT_NAME_PATTERN}') && self.matches('[a-z]') && !self.contains('--')"


def _rules(*rules: CelRule) -> dict[str, Any]:
    return {"x-kubernetes-validations": [r.as_schema() for r in rules]}


def _enum(description: str, values: tuple[str, ...]) -> dict[str, Any]:
    return {"description": description, "type": "string", "enum": list(values)}


def _number(description: str, minimum: int, maximum: int = _INT32_MAX) -> dict[str, Any]:
    return {"description": description, "type": "integer", "format": "int32", "minimum": minimum,
            "maximum": maximum}


def _kept(description: str) -> dict[str, Any]:
    return {"description": description, "type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _port_name(description: str) -> dict[str, Any]:
    return {"description": description, "type": "string", "maxLength": PORT_NAME_MAX_LENGTH} | _rules(
        CelRule(rule=f"self == '' || ({_PORT_NAME_CEL})", message=PORT_NAME_RULE))


def _ports() -> dict[str, Any]:
    port = {"description": "A port the container exposes.", "type": "object", "required": ["containerPort"],
            "x-kubernetes-preserve-unknown-fields": True, "properties": {
                "containerPort": _number("The port number on the pod's IP: 1 to 65535.", 1, 65535),
                "hostPort": _number("The port number on the node (0: none).", 0, 65535),
                "protocol": _enum("TCP (the default), UDP or SCTP.", PROTOCOLS),
                "name": _port_name("An IANA service name (at most 15 of [-a-z0-9], with a letter), unique within "
                                   "the container; Services and probes may refer to the port by it."),
            }}
    # maxItems bounds the uniqueness rule's estimated cost (a walk of the list per item), as for every list a
    # rule walks (validation_cel.MAX_LIST).
    return {"description": "The ports the container exposes.", "type": "array", "maxItems": MAX_LIST,
            "items": port} | _rules(
        CelRule(rule="self.all(p, !has(p.name) || p.name == '' || self.exists_one(q, has(q.name) && "
                     "q.name == p.name))",
                message="port names must be unique within a container", reason="FieldValueDuplicate"))


def _env() -> dict[str, Any]:
    var = {"description": "An environment variable.", "type": "object", "required": ["name"],
           "x-kubernetes-preserve-unknown-fields": True, "properties": {
               "name": {"description": "The variable's name: printable ASCII characters other than '='.",
                        "type": "string", "minLength": 1, "pattern": ENV_NAME_PATTERN},
               "value": {"description": "The value, or empty with valueFrom.", "type": "string"},
               "valueFrom": _kept("Where the value comes from (a field, a resource, a ConfigMap or Secret key)."),
           }} | _rules(CelRule(rule="!has(self.valueFrom) || !has(self.value) || self.value.size() == 0",
                               message=VALUE_FROM_RULE, field_path=".valueFrom"))
    return {"description": "Environment variables of the container.", "type": "array", "items": var}


def _action_port() -> dict[str, Any]:
    return {"description": "A port number (1 to 65535) or the name of a container port.",
            "x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}],
            "maxLength": PORT_NAME_MAX_LENGTH} | _rules(
        CelRule(rule=f"type(self) == int ? (self >= 1 && self <= 65535) : ({_PORT_NAME_CEL})",
                message="must be a port number between 1 and 65535 or an IANA service name"))


def _probe(which: str) -> dict[str, Any]:
    handlers = "[" + ", ".join(f"has(self.{h})" for h in PROBE_HANDLERS) + "].filter(x, x).size()"
    rules = [CelRule(rule=f"{handlers} >= 1", message="must specify a handler type", reason="FieldValueRequired"),
             CelRule(rule=f"{handlers} <= 1", message="may not specify more than 1 handler type",
                     reason="FieldValueForbidden")]
    if which != "readinessProbe":
        rules.append(CelRule(rule="!has(self.successThreshold) || self.successThreshold <= 1", message="must be 1",
                             field_path=".successThreshold"))
    properties: dict[str, Any] = {h: _kept(f"The probe's {h} handler.") for h in PROBE_HANDLERS}
    properties["httpGet"] = _kept("An HTTP GET the probe makes.") | {"required": ["port"], "properties": {
        "port": _action_port(), "scheme": _enum("HTTP (the default) or HTTPS.", SCHEMES)}}
    properties["tcpSocket"] = _kept("A TCP connection the probe opens.") | {"required": ["port"],
                                                                             "properties": {"port": _action_port()}}
    properties |= {key: _number(f"The probe's {key} (at least 0).", 0) for key in PROBE_INTS}
    return _kept(f"The container's {which}: exactly one handler (" + ", ".join(PROBE_HANDLERS) + ").") | {
        "properties": properties} | _rules(*rules)


def container_field_schemas() -> dict[str, Any]:
    """The properties a container's schema adds to its name, image and resources."""
    return {
        "imagePullPolicy": _enum("Always, IfNotPresent or Never.", PULL_POLICIES),
        "terminationMessagePolicy": _enum("File or FallbackToLogsOnError.", TERMINATION_MESSAGE_POLICIES),
        "ports": _ports(),
        "env": _env(),
        **{probe: _probe(probe) for probe in PROBES},
    }
