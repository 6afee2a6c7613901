"""What the operator watches, against `rollwise up`: `--namespaces a,b` reconciles the sets of those namespaces
only (each watched on its own and merged), and a matching unlabelled orphan is still adopted (labelled first)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from kubectl_support import Up, namespace
from operator_support import WEB, get_json, leading_operator

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True),
]


def _ready(up: Up, ns: str) -> bool:
    status = get_json(up, "rsts", "web", "-n", ns).get("status") or {}
    return status.get("readyReplicas") == 3


def test_namespaces_limits_the_operator_to_those_namespaces(up: Up, tmp_path: Path) -> None:
    up.install_rollwise()
    for ns in ("team-a", "team-b", "team-c"):
        namespace(up, ns)
        up.apply(WEB.replace("namespace: default", f"namespace: {ns}"))
    with leading_operator(up, tmp_path, "op-a", "--namespaces", "team-a,team-b"):
        up.until(lambda: _ready(up, "team-a") and _ready(up, "team-b"), "both watched namespaces roll out")
        time.sleep(1.0)  # what a wrongly-scoped operator would have done by now, it would have started
        assert get_json(up, "pods", "-n", "team-c")["items"] == [], "team-c is not watched"
        assert not get_json(up, "rsts", "web", "-n", "team-c").get("status")


ORPHAN = """\
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: default, labels: {app: web}}
spec: {containers: [{name: app, image: "nginx:1.27"}]}
"""


def test_a_matching_unlabelled_orphan_is_labelled_and_adopted(up: Up, tmp_path: Path) -> None:
    up.install_rollwise()
    up.apply(ORPHAN)
    uid = get_json(up, "pod", "web-0")["metadata"]["uid"]
    with leading_operator(up, tmp_path, "op-a", "--controllers", "statefulset"):
        up.apply(WEB)

        seen: list[dict[str, Any]] = []

        def adopted() -> bool:
            pod = get_json(up, "pod", "web-0", check=False)
            refs = [r for r in (pod.get("metadata") or {}).get("ownerReferences") or [] if r.get("controller")]
            if refs and refs[0]["apiVersion"] == "apps.rollwise.dev/v1alpha1":
                seen.append(pod)
            return bool(seen)

        # The adopted pod carries no revision label, so the rollout may replace it right after adoption (as
        # upstream would): what the test pins is the pod as first seen adopted.
        up.until(adopted, "the custom set adopts the unlabelled orphan web-0")
        pod = seen[0]
        assert pod["metadata"]["uid"] == uid
        assert pod["metadata"]["labels"]["rollwise.dev/managed-by"] == "rollwise"
