"""`rollwise migrate sts/NAME` against `rollwise up --controllers=-apps.rollwise.dev` with the operator running:
the plain set's pods move under the custom set without a restart, and the next change rolls through it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubectl_support import Up, statefulset
from operator_support import get_json, leading_operator, migrate

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True),
]


def _pods(up: Up) -> list[dict[str, Any]]:
    return get_json(up, "pods", "-l", "app=web")["items"]  # type: ignore[no-any-return]


def test_migrate_moves_pods_under_the_custom_set_without_restarts_and_it_rolls_next(up: Up, tmp_path: Path) -> None:
    up.install_rollwise()
    with leading_operator(up, tmp_path, "op-a"):
        up.apply(statefulset("web", replicas=3, image="nginx:1.26"))
        up.kubectl("wait", "sts/web", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
        up.until(lambda: (s := get_json(up, "sts", "web")["status"]).get("currentRevision") == s.get(
            "updateRevision"), "the plain set settles")
        before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in _pods(up)}
        claims = {c["metadata"]["name"]: c["metadata"]["uid"] for c in get_json(up, "pvc")["items"]}
        assert len(before) == 3 and len(claims) == 3

        done = migrate(up, "sts/web")
        assert done.returncode == 0, done.stderr
        assert "adopted 3 pods" in done.stdout

        cr = get_json(up, "rsts", "web")
        pods = _pods(up)
        assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods} == before, "no pod was restarted"
        for pod in pods:
            (ref,) = [r for r in pod["metadata"]["ownerReferences"] if r.get("controller")]
            assert (ref["apiVersion"], ref["uid"]) == ("apps.rollwise.dev/v1alpha1", cr["metadata"]["uid"])
        assert {c["metadata"]["name"]: c["metadata"]["uid"] for c in get_json(up, "pvc")["items"]} == claims
        assert get_json(up, "sts")["items"] == []
        again = migrate(up, "sts/web")
        assert again.returncode == 1 and "NotFound" in again.stderr

        up.kubectl("patch", "rsts", "web", "--type=merge", "-p",
                   json.dumps({"spec": {"template": {"spec": {"containers": [{"name": "app",
                                                                              "image": "nginx:1.27"}]}}}}))
        up.kubectl("wait", "--for=condition=Ready", "rsts/web", "--timeout=60s")
        pods = _pods(up)
        assert sorted(p["spec"]["containers"][0]["image"] for p in pods) == ["nginx:1.27"] * 3
        assert {c["metadata"]["name"]: c["metadata"]["uid"] for c in get_json(up, "pvc")["items"]} == claims
