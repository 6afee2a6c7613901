"""The CRD's part for role probes (``spec.roleProbe``, ``api/role_probe.py``): schema keywords and CEL rules, each
the twin of a rule of ``api.role_probe.check_role_probe`` (``api/validation_cel.TWINS``)."""

from __future__ import annotations

from typing import Any

from rollwise.api.role_probe import DEFAULT_STALE, DEFAULT_TIMEOUT, JSON_PATH_PATTERN, PATH_PATTERN, SCHEMES
from rollwise.api.validation_cel import CelRule

__all__ = ["role_probe_schema"]

_ONE_RULE = "exactly one of statusCode, or jsonPath with equals, says who leads"


def _int(description: str, low: int, high: int, default: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, "type": "integer", "format": "int32", "minimum": low,
                           "maximum": high}
    if default is not None:
        out["default"] = default
    return out


def role_probe_schema() -> dict[str, Any]:
    leader = {
        "description": "How the answer names the leader: statusCode (Patroni's GET /leader is 200 only on the "
                       "leader), or the value at jsonPath equal to equals (ZooKeeper's /commands/srvr: "
                       ".server_stats.server_state == leader; NATS' /jsz: .meta_cluster.leader == {pod}).",
        "type": "object",
        "properties": {
            "statusCode": _int("The HTTP status only the leader answers with; any other status below 500, or "
                               "503, is a follower's answer.", 100, 599),
            "jsonPath": {"description": "Where the role is in the JSON answer, as a printer column's jsonPath "
                                        "(.a.b[0].c; kubectl's braces are allowed).", "type": "string",
                         "maxLength": 256, "pattern": JSON_PATH_PATTERN},
            "equals": {"description": "The value the leader's answer has at jsonPath; {pod} stands for the "
                                      "member's pod name.", "type": "string", "minLength": 1, "maxLength": 256},
        },
        "x-kubernetes-validations": [r.as_schema() for r in (
            CelRule(rule="has(self.statusCode) || has(self.jsonPath)", message=_ONE_RULE,
                    reason="FieldValueRequired"),
            CelRule(rule="!(has(self.statusCode) && has(self.jsonPath))", message=_ONE_RULE,
                    reason="FieldValueForbidden"),
            CelRule(rule="!has(self.jsonPath) || has(self.equals)", message="the value the leader's answer has at "
                    "jsonPath ({pod}: the pod's name)", reason="FieldValueRequired", field_path=".equals"),
            CelRule(rule="!has(self.equals) || has(self.jsonPath)", message="only with jsonPath",
                    reason="FieldValueForbidden", field_path=".equals"),
        )],
    }
    return {
        "description": "Roles read from the members themselves (quorum-aware sets): the controller GETs each "
                       "member pod and reads from the answer whether it leads. An answer that is missing, late, "
                       "garbage or stale, or two members saying they lead, leaves the leader untold: no member "
                       "that might lead is deleted before the others (docs/role-probes.md).",
        "type": "object",
        "required": ["port", "leader"],
        "properties": {
            "port": _int("The member container's port to GET.", 1, 65535),
            "path": {"description": "The URL path.", "type": "string", "default": "/", "maxLength": 1024,
                     "pattern": PATH_PATTERN},
            "scheme": {"description": "HTTP or HTTPS (the certificate is not verified, as a kubelet probe's "
                                      "is not).", "type": "string", "enum": list(SCHEMES), "default": "HTTP"},
            "timeoutSeconds": _int("Seconds an answer may take; a later one is no answer.", 1, 3600,
                                   DEFAULT_TIMEOUT),
            "staleAfterSeconds": _int("Seconds an answer counts for; an older one says nothing.", 1, 86400,
                                      DEFAULT_STALE),
            "leader": leader,
        },
    }
