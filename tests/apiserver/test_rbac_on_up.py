"""The operator under `rollwise up --authz rbac`, with the service account token and only the shipped RBAC: rollouts
under each strategy with zero 403s; a role without `pods delete` gives the expected 403 and a Warning event."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubectl_support import Up
from operator_support import Operator, audit_entries, get_json

SA = "system:serviceaccount:rollwise-system:rollwise"
STRATEGIES = {
    "rolling": "{type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}",
    "recreate": "{type: Recreate}",
    "enforced": "{type: EnforcedRollingUpdate}",
    "ondelete": "{type: OnDelete}",  # the operator recreates what a person deletes
}

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up("--authz", "rbac", for_operator=True),
]


def _set(name: str, strategy: str, image: str) -> str:
    return f"""\
apiVersion: apps.rollwise.dev/v1alpha1
kind: StatefulSet
metadata: {{name: {name}, namespace: default}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: {name}}}}}
  updateStrategy: {strategy}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: app, image: "{image}"}}]}}
"""


def _forbidden(up: Up) -> list[dict[str, object]]:
    return [e for e in audit_entries(up) if e.get("code") == 403]


def test_the_shipped_rbac_is_enough_and_a_missing_rule_is_a_403_and_a_warning(up: Up, tmp_path: Path) -> None:
    up.install_rollwise()
    op = Operator(up, tmp_path, SA)
    try:
        op.wait_for(r"started leading")
        for name, strategy in STRATEGIES.items():
            up.apply(_set(name, strategy, "nginx:1.27"))
        for name in STRATEGIES:
            up.kubectl("wait", "--for=condition=Ready", f"rsts/{name}", "--timeout=60s")
        for name, strategy in STRATEGIES.items():
            up.apply(_set(name, strategy, "nginx:1.28"))
        up.until(lambda: get_json(up, "rsts", "ondelete").get("status", {}).get("observedGeneration") == 2,
                 "the OnDelete set sees its new template")
        up.kubectl("delete", "pods", "-l", "app=ondelete", "--wait=false")
        for name in STRATEGIES:
            up.kubectl("wait", "--for=condition=Ready", f"rsts/{name}", "--timeout=60s")
            images = {p["spec"]["containers"][0]["image"] for p in get_json(up, "pods", "-l", f"app={name}")["items"]}
            assert images == {"nginx:1.28"}, name
        assert _forbidden(up) == []
        assert any(e["user"] == SA and e["resource"] == "pods" and e["verb"] == "delete" for e in audit_entries(up))

        role = get_json(up, "clusterrole", "rollwise-operator")
        for rule in role["rules"]:
            if rule["apiGroups"] == [""] and rule["resources"] == ["pods"]:
                rule["verbs"] = [v for v in rule["verbs"] if v != "delete"]
        up.kubectl("replace", "-f", "-", stdin=json.dumps(role))
        up.apply(_set("rolling", STRATEGIES["rolling"], "nginx:1.29"))

        def refused() -> bool:
            return any(e["user"] == SA and e["verb"] == "delete" and e["resource"] == "pods" for e in _forbidden(up))

        up.until(refused, "the operator's pod delete is refused")
        up.until(lambda: "FailedDelete" in up.kubectl("get", "events", "--field-selector",
                                                      "involvedObject.name=rolling,type=Warning").stdout,
                 "a Warning event names the failed delete")
        events = up.kubectl("get", "events", "--field-selector", "involvedObject.name=rolling,type=Warning").stdout
        assert 'cannot delete resource "pods"' in events
        assert {e["resource"] for e in _forbidden(up)} == {"pods"}
    finally:
        assert op.stop() == 0
