"""``rollwise up --process-images ''``: every pod runs in the simulated kubelet, an ``etcd:*`` one included."""

from __future__ import annotations

import time
from pathlib import Path

from kubectl_support import start_up, stop_up
from lightkube import Client
from lightkube.config.kubeconfig import KubeConfig
from lightkube.resources.apps_v1 import StatefulSet
from lightkube.resources.core_v1 import Pod

DEADLINE = 60.0


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def test_with_the_pattern_turned_off_an_etcd_set_runs_in_the_simulated_kubelet_and_starts_no_process(
        tmp_path: Path) -> None:
    up = start_up(tmp_path, "", "--process-images", "")
    try:
        client = Client(KubeConfig.from_file(up.kubeconfig), trust_env=False, field_manager="test")
        client.create(StatefulSet.from_dict({
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "etcd", "namespace": "default"},
            "spec": {"replicas": 2, "serviceName": "etcd", "selector": {"matchLabels": {"app": "etcd"}},
                     "template": {"metadata": {"labels": {"app": "etcd"}},
                                  "spec": {"containers": [{"name": "etcd", "image": "etcd:3.5.1"}]}}}}))

        def ready() -> bool:
            pods = list(client.list(Pod, namespace="default"))
            return len(pods) == 2 and all(any(c.type == "Ready" and c.status == "True"
                                              for c in p.status.conditions or []) for p in pods)

        end = time.monotonic() + DEADLINE
        while not ready():
            assert time.monotonic() < end, "the simulated kubelet did not make both pods Ready"
            time.sleep(0.1)
        assert _children(up.proc.pid) == []
    finally:
        code = stop_up(up.proc)
    assert code == 0
