"""`kubectl exec` under `rollwise up`: into a member run as a real etcd process it runs the command (stdin, stdout,
exit codes through the websocket protocol); into a simulated pod it is refused with a Status that says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubectl_support import Up
from member_marks import needs_etcd

MEMBER = """apiVersion: apps/v1
kind: StatefulSet
metadata: {name: etcd}
spec:
  replicas: 1
  serviceName: etcd-peer
  selector: {matchLabels: {app: etcd}}
  template:
    metadata: {labels: {app: etcd}}
    spec:
      containers:
      - name: etcd
        image: "etcd:3.5.1"
        readinessProbe: {exec: {command: [etcdctl, endpoint, health]}, periodSeconds: 1}
"""


def _member_serving(up: Up) -> None:
    up.apply(MEMBER)
    up.kubectl("rollout", "status", "sts/etcd", "--timeout=90s")


pytestmark = [
    pytest.mark.kubectl,
    *needs_etcd,
    pytest.mark.up(shared=True, setup=_member_serving),
]


def test_etcdctl_in_a_member_reports_that_member(up: Up) -> None:
    out = up.kubectl("exec", "etcd-0", "--", "etcdctl", "endpoint", "status").stdout
    endpoint = up.kubectl("exec", "etcd-0", "--", "sh", "-c", "echo $ETCDCTL_ENDPOINTS").stdout.strip()
    assert out.startswith(endpoint.removeprefix("http://")) and "3.5.1" in out


def test_exec_carries_stdin_and_the_exit_code(up: Up) -> None:
    assert up.kubectl("exec", "-i", "etcd-0", "--", "cat", stdin="hello\n").stdout == "hello\n"
    failed = up.kubectl("exec", "etcd-0", "--", "sh", "-c", "exit 3", check=False)
    assert failed.returncode == 3


def test_exec_into_a_simulated_pod_says_its_containers_are_simulated(up: Up, tmp_path: Path) -> None:
    up.kubectl("run", "sim", "--image=busybox:1", "--restart=Never")
    refused = up.kubectl("exec", "sim", "--", "true", check=False)
    assert refused.returncode != 0 and "simulated" in refused.stderr and "not find" not in refused.stderr
