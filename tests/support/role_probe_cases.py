"""Validation cases for ``spec.roleProbe`` (role probes, issue 41): the rows tests/api/test_validation.py adds to its
CREATE_CASES, which tests/cluster/crd/test_crd_rules.py replays through the CRD alone."""

from __future__ import annotations

from typing import Any

INVALID, REQUIRED, UNSUPPORTED, FORBIDDEN = "Invalid value", "Required value", "Unsupported value", "Forbidden"
RP = "spec.roleProbe"


def _probe(**fields: Any) -> dict[str, Any]:
    return {RP: {"port": 8008, "leader": {"statusCode": 200}, **fields}}


ROLE_PROBE_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str, str]]]] = [
    ("role-probe-patroni", _probe(path="/leader", timeoutSeconds=2, staleAfterSeconds=20), []),
    ("role-probe-zookeeper", _probe(port=8080, path="/commands/srvr", scheme="HTTP",
                                    leader={"jsonPath": ".server_stats.server_state", "equals": "leader"}), []),
    ("role-probe-nats", _probe(port=8222, path="/jsz", leader={"jsonPath": "{.meta_cluster.leader}",
                                                               "equals": "{pod}"}), []),
    ("role-probe-not-mapping", {RP: "8008"}, [(RP, INVALID, "must be a mapping")]),
    ("role-probe-no-port", {RP: {"leader": {"statusCode": 200}}}, [(f"{RP}.port", REQUIRED, "port")]),
    ("role-probe-port-zero", _probe(port=0), [(f"{RP}.port", INVALID, "from 1 to 65535")]),
    ("role-probe-port-string", _probe(port="http"), [(f"{RP}.port", INVALID, "whole number")]),
    ("role-probe-relative-path", _probe(path="leader"), [(f"{RP}.path", INVALID, "absolute URL path")]),
    ("role-probe-scheme", _probe(scheme="ftp"), [(f"{RP}.scheme", UNSUPPORTED, '"HTTP", "HTTPS"')]),
    ("role-probe-timeout-zero", _probe(timeoutSeconds=0), [(f"{RP}.timeoutSeconds", INVALID, "from 1")]),
    ("role-probe-stale-zero", _probe(staleAfterSeconds=0), [(f"{RP}.staleAfterSeconds", INVALID, "from 1")]),
    ("role-probe-no-leader-rule", {RP: {"port": 8008}}, [(f"{RP}.leader", REQUIRED, "exactly one")]),
    ("role-probe-empty-leader-rule", _probe(leader={}), [(f"{RP}.leader", REQUIRED, "exactly one")]),
    ("role-probe-two-leader-rules", _probe(leader={"statusCode": 200, "jsonPath": ".role", "equals": "master"}),
     [(f"{RP}.leader", FORBIDDEN, "exactly one")]),
    ("role-probe-status-code", _probe(leader={"statusCode": 42}), [(f"{RP}.leader.statusCode", INVALID, "100")]),
    ("role-probe-bad-json-path", _probe(leader={"jsonPath": "$.role", "equals": "master"}),
     [(f"{RP}.leader.jsonPath", INVALID, "names and [n] indexes")]),
    ("role-probe-json-path-without-equals", _probe(leader={"jsonPath": ".role"}),
     [(f"{RP}.leader.equals", REQUIRED, "the value")]),
    ("role-probe-equals-without-json-path", _probe(leader={"statusCode": 200, "equals": "x"}),
     [(f"{RP}.leader.equals", FORBIDDEN, "only with jsonPath")]),
]
