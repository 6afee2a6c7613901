"""A pod status of the wrong shape is refused by ``rollwise up`` as kube-apiserver refuses it (a typed decode):
422 Invalid naming the field path, through real ``kubectl``, and nothing is stored."""

from __future__ import annotations

import pytest
from kubectl_support import Up

pytestmark = pytest.mark.kubectl

POD = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: app, image: "nginx:1.27"}]
"""

CASES = [
    ('{"status": {"conditions": "x"}}', "status.conditions: Invalid value: \"x\": must be a list"),
    ('{"status": {"conditions": [{"type": "Ready", "status": 5}]}}', "status.conditions[0].status"),
    ('{"status": {"containerStatuses": [7]}}', "status.containerStatuses[0]: Invalid value: 7: must be an object"),
    ('{"status": {"containerStatuses": [{"name": "app", "ready": "yes"}]}}', "status.containerStatuses[0].ready"),
    ('{"status": {"containerStatuses": [{"name": "app", "state": {"waiting": "x"}}]}}',
     "status.containerStatuses[0].state.waiting"),
    ('{"status": {"phase": ["Running"]}}', "status.phase: Invalid value"),
]


def test_a_pod_status_of_the_wrong_shape_is_422_with_the_field_path(up: Up) -> None:
    up.apply(POD)
    before = up.read("pod", "p")
    for patch, words in CASES:
        done = up.kubectl("patch", "pod", "p", "--subresource=status", "--type=merge", "-p", patch, check=False)
        assert done.returncode == 1, (patch, done.stdout)
        assert "is invalid" in done.stderr and words in done.stderr, (patch, done.stderr)
        assert done.stdout == ""
    after = up.read("pod", "p")
    assert not isinstance((after.get("status") or {}).get("conditions"), str), "nothing refused was stored"
    assert before["metadata"]["uid"] == after["metadata"]["uid"]
    good = up.kubectl("patch", "pod", "p", "--subresource=status", "--type=merge", "-p",
                      '{"status": {"conditions": [{"type": "Example", "status": "True"}]}}', check=False)
    assert good.returncode == 0, good.stderr
