"""An update that changes nothing writes nothing on `rollwise up`, as on kube-apiserver: the real kubectl applies an
unchanged manifest (server-side) and patches values to what they already are; the object keeps its resourceVersion,
kubectl says "(no change)" and a lightkube watch open beside it hears nothing until a real change, which still bumps
the version and arrives as the first event (kube-apiserver's storage: ``GuaranteedUpdate`` in
k8s.io/apiserver/pkg/storage/etcd3/store.go returns the stored object when the updated one encodes the same)."""

from __future__ import annotations

import json
import threading
from queue import Queue
from typing import Any

import httpx2
import pytest
from kubectl_support import DEADLINE, Up
from lightkube import Client, KubeConfig
from lightkube.resources.core_v1 import ConfigMap

pytestmark = pytest.mark.kubectl

SETTINGS = """apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: {app: web}
data:
  mode: fast
  level: "3"
"""


def _version(up: Up) -> str:
    obj: dict[str, Any] = json.loads(up.kubectl("get", "configmap", "settings", "-o", "json").stdout)
    return str(obj["metadata"]["resourceVersion"])


def _watch_from(up: Up, version: str) -> Queue[tuple[str, str, dict[str, str]]]:
    """A lightkube watch of the ConfigMaps from ``version``, its events queued by a daemon thread (it ends with up)."""
    events: Queue[tuple[str, str, dict[str, str]]] = Queue()
    client = Client(KubeConfig.from_file(up.kubeconfig), trust_env=False)

    def follow() -> None:
        try:
            for kind, cm in client.watch(ConfigMap, namespace="default", resource_version=version,
                                         server_timeout=300):
                assert cm.metadata is not None
                events.put((kind, str(cm.metadata.resourceVersion), dict(cm.data or {})))
        except httpx2.TransportError:
            return  # up stopped at the end of the test, and the watch with it


    threading.Thread(target=follow, daemon=True).start()
    return events


def test_an_unchanged_apply_or_patch_keeps_the_resource_version_and_wakes_no_watcher(up: Up) -> None:
    up.apply(SETTINGS, "--server-side")
    before = _version(up)
    events = _watch_from(up, before)

    assert "serverside-applied" in up.apply(SETTINGS, "--server-side")
    merge = up.kubectl("patch", "configmap", "settings", "--type=merge", "-p", '{"data":{"mode":"fast"}}')
    strategic = up.kubectl("patch", "configmap", "settings", "-p", '{"metadata":{"labels":{"app":"web"}}}')
    assert "(no change)" in merge.stdout and "(no change)" in strategic.stdout
    assert _version(up) == before

    changed = up.kubectl("patch", "configmap", "settings", "--type=merge", "-p", '{"data":{"mode":"slow"}}')
    assert "(no change)" not in changed.stdout
    after = _version(up)
    assert int(after) > int(before)
    # The watch's first event is the real change: none came for the applies and patches before it.
    assert events.get(timeout=DEADLINE) == ("MODIFIED", after, {"mode": "slow", "level": "3"})
