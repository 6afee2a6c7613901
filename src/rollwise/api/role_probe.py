"""Role probes: the quorum-aware controller asks each member who leads, over HTTP, instead of reading a Lease or a
label an agent publishes (issue 41). The pure half: the settings (``spec.roleProbe`` on the custom kind,
``rollwise.dev/role-probe-*`` annotations on ``apps/v1``), their validation with field paths, and the rule that
reads one member's role from its answer.

Every store people run already says who leads, to anyone who asks (reference store-roles.md): Patroni's
``GET /leader`` answers 200 only on the leader (503 on a replica); ZooKeeper's AdminServer ``GET /commands/srvr``
has ``server_stats.server_state`` (``leader``, ``follower``); NATS' ``GET /jsz`` has ``meta_cluster.leader``, the
meta leader's server name. So a rule is either a status code, or a JSON path whose value must equal a string
(``{pod}`` stands for the member's pod name, as NATS names its servers after the pods).

The JSON path is written as a CRD's ``additionalPrinterColumns[].jsonPath`` is (``.status.replicas``): a dot, then
names and ``[n]`` indexes. It is kubectl's ``-o jsonpath`` without the braces, which are accepted too, so an
expression tried with ``kubectl get --raw ... | jq`` or ``-o jsonpath='{...}'`` can be pasted as it is. Filters and
wildcards are refused: a role rule must name one value.

What is never a follower's answer (``read_role`` says ``unknown``): no answer (a timeout, a refused connection), a
server error other than 503, a body that is not JSON or lacks the path, and an answer older than
``staleAfterSeconds``. How unknown roles hold the rollout is the controller's rule (controllers/quorum/members.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.validation_rules import type_error

__all__ = [
    "ANNOTATIONS",
    "FOLLOWER",
    "LEADER",
    "SCHEMES",
    "UNKNOWN",
    "ProbeAnswer",
    "Role",
    "RoleProbe",
    "check_role_probe",
    "check_spec_role_probe",
    "parse_json_path",
    "probe_of",
    "read_role",
]

LEADER, FOLLOWER, UNKNOWN = "leader", "follower", "unknown"
SCHEMES = ("HTTP", "HTTPS")
DEFAULT_TIMEOUT = 1
"""Seconds, as a Kubernetes probe's ``timeoutSeconds`` defaults."""
DEFAULT_STALE = 10
"""Seconds an answer counts: etcd-druid's member Leases are renewed every 10 s (reference §1.4)."""
POD_PLACEHOLDER = "{pod}"
_PREFIX = "rollwise.dev/role-probe-"

# Annotation on apps/v1 -> the field of spec.roleProbe it stands for (the leader rule's fields under ``leader``).
ANNOTATIONS: dict[str, str] = {
    f"{_PREFIX}port": "port",
    f"{_PREFIX}path": "path",
    f"{_PREFIX}scheme": "scheme",
    f"{_PREFIX}timeout-seconds": "timeoutSeconds",
    f"{_PREFIX}stale-after-seconds": "staleAfterSeconds",
    f"{_PREFIX}leader-status-code": "leader.statusCode",
    f"{_PREFIX}leader-json-path": "leader.jsonPath",
    f"{_PREFIX}leader-equals": "leader.equals",
}
_INTS = {"port": (1, 65535), "timeoutSeconds": (1, 3600), "staleAfterSeconds": (1, 86400),
         "leader.statusCode": (100, 599)}
_STEP = re.compile(r"\.([A-Za-z0-9_-]+)|\[([0-9]+)\]")
_STEPS = r"(\.[A-Za-z0-9_-]+|\[[0-9]+\])+"
JSON_PATH_PATTERN = rf"^(\{{{_STEPS}\}}|{_STEPS})$"
"""The JSON path's grammar, for the CRD's schema: the same language ``parse_json_path`` reads."""
PATH_PATTERN = r"^/[^\s]*$"
"""The URL path: absolute, no spaces."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RoleProbe:
    """One set's role probe, validated: GET ``scheme://<member>:port/path``; a leader when the answer's status is
    ``status_code``, or when the value at ``json_path`` equals ``equals`` (``{pod}`` replaced)."""

    port: int
    path: str = "/"
    scheme: str = "HTTP"
    timeout_seconds: float = DEFAULT_TIMEOUT
    stale_seconds: float = DEFAULT_STALE
    status_code: int | None = None
    json_path: str | None = None
    equals: str | None = None

    def rule(self) -> str:
        """The rule in words, for messages: ``status 200`` or ``.server_stats.server_state == "leader"``."""
        if self.status_code is not None:
            return f"status {self.status_code}"
        return f'{self.json_path} == "{self.equals}"'


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeAnswer:
    """What one GET of a member brought back, and when (the driver's clock): a status and body, or an error."""

    at: float
    status: int | None = None
    body: bytes = b""
    error: str | None = None
    """Why there is no answer: ``timed out after 1s``, ``connection refused``, ``no address``."""


@dataclass(frozen=True, slots=True)
class Role:
    """A member's role as read from its answer: ``leader``, ``follower`` or ``unknown``, and why, in words."""

    kind: str
    why: str


def parse_json_path(text: str) -> tuple[str | int, ...] | None:
    """The steps of a JSON path (names and indexes), or None when it is not one (see the module's grammar)."""
    inner = text[1:-1] if text.startswith("{") and text.endswith("}") else text
    if not inner or "{" in inner or "}" in inner:
        return None
    steps: list[str | int] = []
    at = 0
    while at < len(inner):
        m = _STEP.match(inner, at)
        if m is None:
            return None
        steps.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        at = m.end()
    return tuple(steps)


def _value_at(doc: object, steps: tuple[str | int, ...]) -> tuple[bool, object]:
    for step in steps:
        if isinstance(doc, list) and isinstance(step, int) and step < len(doc):
            doc = doc[step]
            continue
        if not (isinstance(doc, dict) and isinstance(step, str) and step in doc):
            return False, None
        doc = doc[step]
    return True, doc


def _text(value: object) -> str | None:
    """A JSON scalar as the text it compares as (``true``, ``3``, ``leader``); None for objects, lists, null."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    return None


def read_role(probe: RoleProbe, answer: ProbeAnswer | None, *, pod: str, now: float) -> Role:
    """One member's role from its last answer. Anything but a clear, fresh answer is ``unknown``, never a follower."""
    if answer is None:
        return Role(UNKNOWN, "not probed yet")
    if now - answer.at > probe.stale_seconds:
        return Role(UNKNOWN, f"last answer older than {probe.stale_seconds:g}s (stale)")
    if answer.status is None:
        return Role(UNKNOWN, f"probe failed: {answer.error or 'no answer'}")
    if probe.status_code is not None:
        if answer.status == probe.status_code:
            return Role(LEADER, f"probe answered {answer.status}")
        if answer.status >= 500 and answer.status != 503:
            # 503 is how Patroni's /leader (and health endpoints) say "not me"; other 5xx say nothing of the role.
            return Role(UNKNOWN, f"probe answered {answer.status}, a server error")
        return Role(FOLLOWER, f"probe answered {answer.status}, not {probe.status_code}")
    if not 200 <= answer.status < 300:
        return Role(UNKNOWN, f"probe answered {answer.status}")
    try:
        doc = json.loads(answer.body)
    except (ValueError, UnicodeDecodeError):
        return Role(UNKNOWN, "probe answer is not JSON")
    found, value = _value_at(doc, parse_json_path(probe.json_path or "") or ())
    if not found:
        return Role(UNKNOWN, f"probe answer has no {probe.json_path}")
    text = _text(value)
    if text is None:
        return Role(UNKNOWN, f"probe answer's {probe.json_path} is not a single value")
    wanted = (probe.equals or "").replace(POD_PLACEHOLDER, pod)
    if text == wanted:
        return Role(LEADER, f'probe says {probe.json_path} is "{text}"')
    return Role(FOLLOWER, f'probe says {probe.json_path} is "{text}", not "{wanted}"')


def probe_of(sts: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, Callable[[str], str]]:
    """The set's probe settings as ``spec.roleProbe``'s shape, and how to name a field's path in an error: the
    custom kind's ``spec.roleProbe`` first; else the ``apps/v1`` annotations, gathered into the same shape (paths
    name the annotation). None when the set has neither."""
    spec = sts.get("spec") or {}
    if isinstance(spec, Mapping) and spec.get("roleProbe") is not None:
        return spec["roleProbe"], lambda field: f"spec.roleProbe.{field}" if field else "spec.roleProbe"
    notes = (sts.get("metadata") or {}).get("annotations") or {}
    if not any(key in notes for key in ANNOTATIONS):
        return None, str
    raw: dict[str, Any] = {}
    for key, field in ANNOTATIONS.items():
        if key in notes:
            value: Any = notes[key]
            if field in _INTS and isinstance(value, str) and value.isdigit():
                value = int(value)
            head, _, tail = field.partition(".")
            if tail:
                raw.setdefault(head, {})[tail] = value
            else:
                raw[field] = value
    by_field = {field: key for key, field in ANNOTATIONS.items()}

    def path(field: str) -> str:
        key = by_field.get(field) or (by_field["leader.statusCode"] if field == "leader" else by_field["port"])
        return f"metadata.annotations[{key}]"
    return raw, path


def check_spec_role_probe(raw: object) -> list[FieldError]:
    """``spec.roleProbe`` of the custom kind, as the API server validates it (absent: nothing to check)."""
    if raw is None:
        return []
    return check_role_probe(raw, lambda field: f"spec.roleProbe.{field}" if field else "spec.roleProbe")[1]


def check_role_probe(raw: object, path: Callable[[str], str]) -> tuple[RoleProbe | None, list[FieldError]]:
    """The probe, and every problem with it, each at its field's path (``path(field)``)."""
    if not isinstance(raw, Mapping):
        return None, [type_error(path(""), raw, "a mapping")]
    errors: list[FieldError] = []
    ints: dict[str, int] = {}
    leader = raw.get("leader")
    leader = leader if isinstance(leader, Mapping) else {}
    for field, (low, high) in _INTS.items():
        value = leader.get("statusCode") if field == "leader.statusCode" else raw.get(field)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            errors.append(FieldError(path=path(field), value=value, rule=f"must be a whole number from {low} to "
                                                                          f"{high}"))
        else:
            ints[field] = value
    if raw.get("port") is None:
        errors.append(FieldError(path=path("port"), kind="Required value", rule="the member's port to probe"))
    probe_path = raw.get("path", "/")
    if not isinstance(probe_path, str) or not re.fullmatch(PATH_PATTERN[1:-1], probe_path):
        errors.append(FieldError(path=path("path"), value=probe_path, rule="must be an absolute URL path "
                                                                           "(starting with /, no spaces)"))
    scheme = raw.get("scheme", "HTTP")
    if scheme not in SCHEMES:
        errors.append(FieldError(path=path("scheme"), kind="Unsupported value", value=scheme,
                                 rule='supported values: "HTTP", "HTTPS"'))
    if "leader" in raw and not isinstance(raw["leader"], Mapping):
        errors.append(type_error(path("leader"), raw["leader"], "a mapping"))
    json_path, equals = leader.get("jsonPath"), leader.get("equals")
    has_status = leader.get("statusCode") is not None
    if has_status == (json_path is not None):
        errors.append(FieldError(path=path("leader"), kind="Required value" if not has_status else "Forbidden",
                                 rule="exactly one of statusCode, or jsonPath with equals, says who leads"))
    if json_path is not None and (not isinstance(json_path, str) or parse_json_path(json_path) is None):
        errors.append(FieldError(path=path("leader.jsonPath"), value=json_path,
                                 rule="must be a path of names and [n] indexes, e.g. .server_stats.server_state "
                                      "or {.meta_cluster.leader}"))
    if json_path is not None and (not isinstance(equals, str) or equals == ""):
        errors.append(FieldError(path=path("leader.equals"), kind="Required value",
                                 rule="the value the leader's answer has at jsonPath ({pod}: the pod's name)"))
    if equals is not None and json_path is None:
        errors.append(FieldError(path=path("leader.equals"), kind="Forbidden", rule="only with jsonPath"))
    if errors:
        return None, errors
    return RoleProbe(port=ints["port"], path=str(probe_path), scheme=str(scheme),
                     timeout_seconds=ints.get("timeoutSeconds", DEFAULT_TIMEOUT),
                     stale_seconds=ints.get("staleAfterSeconds", DEFAULT_STALE),
                     status_code=ints.get("leader.statusCode"), json_path=json_path, equals=equals), []
