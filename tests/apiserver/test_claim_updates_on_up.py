"""KEP-4650 claim template updates on `rollwise up` with the real kubectl: an InPlace set's grown template expands
every claim (`kubectl get pvc` shows the new capacity) and no pod is replaced; a claim whose StorageClass does not
allow expansion is refused with kube-apiserver's 403 and the set's condition names it; an apps/v1 shrink is
refused with the field path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubectl_support import Up, statefulset
from operator_support import audit_entries, last_audit_time, leading_operator, pod_writes_since, running_up_for_operator

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(crd=True),
]

FIXED_CLASS = """apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fixed}
provisioner: example.com/disk
allowVolumeExpansion: false
"""


def _custom(name: str, *, storage_class: str = "") -> str:
    manifest = statefulset(name, replicas=2).replace("apiVersion: apps/v1", "apiVersion: apps.rollwise.dev/v1alpha1")
    manifest = manifest.replace(f"  serviceName: {name}\n", f"  serviceName: {name}\n  volumeClaimUpdatePolicy: "
                                                            "InPlace\n")
    if storage_class:
        manifest = manifest.replace("      accessModes: [ReadWriteOnce]",
                                    f"      accessModes: [ReadWriteOnce]\n      storageClassName: {storage_class}")
    return manifest


def _grow(storage: str, storage_class: str = "") -> str:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}
    if storage_class:
        spec["storageClassName"] = storage_class
    return json.dumps({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": spec}]}})


def _pods(up: Up, app: str) -> dict[str, str]:
    items = up.read("pods", "-l", f"app={app}")["items"]
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in items}


def test_a_grown_template_expands_every_claim_and_replaces_no_pod(up: Up) -> None:
    up.apply(_custom("db"))
    up.kubectl("wait", "--for=condition=Ready", "rsts/db", "--timeout=60s")
    before = _pods(up, "db")
    since = last_audit_time(up)
    up.kubectl("patch", "rsts", "db", "--type=merge", "-p", _grow("2Gi"))
    for claim in ("data-db-1", "data-db-0"):
        up.kubectl("wait", "--for=jsonpath={.status.capacity.storage}=2Gi", f"pvc/{claim}", "--timeout=60s")
    table = up.kubectl("get", "pvc", "data-db-0", "data-db-1").stdout.splitlines()
    assert table[0].split()[:4] == ["NAME", "STATUS", "VOLUME", "CAPACITY"]
    assert [row.split()[3] for row in table[1:]] == ["2Gi", "2Gi"]
    assert _pods(up, "db") == before  # same pods, same uids
    assert pod_writes_since(up, since) == [], "no pod created or deleted"
    up.until(lambda: up.read("rsts", "db")["status"].get(
        "volumeClaimTemplates") == [{"name": "data", "compatibleReplicas": 2, "updatingReplicas": 0,
                                     "overSizedReplicas": 0, "totalCapacity": "4Gi"}], "the set reports 2 claims")


def test_a_class_without_expansion_is_refused_and_named_in_the_condition(up: Up) -> None:
    up.apply(FIXED_CLASS)
    up.apply(_custom("fx", storage_class="fixed"))
    up.kubectl("wait", "--for=condition=Ready", "rsts/fx", "--timeout=60s")
    direct = up.kubectl("patch", "pvc", "data-fx-0", "--type=merge", "-p",
                        '{"spec":{"resources":{"requests":{"storage":"3Gi"}}}}', check=False)
    assert direct.returncode == 1
    assert ('persistentvolumeclaims "data-fx-0" is forbidden: only dynamically provisioned pvc can be resized and '
            "the storageclass that provisions the pvc must support resize") in direct.stderr
    up.kubectl("patch", "rsts", "fx", "--type=merge", "-p", _grow("2Gi", "fixed"))
    up.kubectl("wait", "--for=jsonpath={.status.conditions[?(@.type=='Progressing')].reason}=ClaimResizeRefused",
               "rsts/fx", "--timeout=60s")
    status = up.read("rsts", "fx")["status"]
    [progressing] = [c for c in status["conditions"] if c["type"] == "Progressing"]
    assert progressing["status"] == "False"
    assert progressing["message"].startswith("claim data-fx-1 (StorageClass fixed) cannot expand to 2Gi: ")
    capacity = up.kubectl("get", "pvc", "data-fx-1", "-o", "jsonpath={.status.capacity.storage}").stdout
    assert capacity == "1Gi"


def test_an_apps_v1_shrink_is_refused_with_the_field_path(up: Up) -> None:
    up.apply(statefulset("web", replicas=1))
    shrunk = up.kubectl("patch", "sts", "web", "--type=merge", "-p", _grow("500Mi"), check=False)
    assert shrunk.returncode == 1
    assert ("spec.volumeClaimTemplates[0].spec.resources.requests.storage: Forbidden: may not be less than the "
            "previous value") in shrunk.stderr


def test_the_operator_expands_the_claims_of_a_custom_set(tmp_path: Path) -> None:
    """`rollwise run` (`up` leaves the custom kind to it) decides the expansions; `up`'s storage carries them out."""

    with running_up_for_operator(tmp_path) as server:
        server.install_rollwise()
        with leading_operator(server, tmp_path, "op-a"):
            server.apply(_custom("db"))
            server.kubectl("wait", "--for=condition=Ready", "rsts/db", "--timeout=60s")
            before = _pods(server, "db")
            since = last_audit_time(server)
            server.kubectl("patch", "rsts", "db", "--type=merge", "-p", _grow("3Gi"))
            for claim in ("data-db-1", "data-db-0"):
                server.kubectl("wait", "--for=jsonpath={.status.capacity.storage}=3Gi", f"pvc/{claim}",
                               "--timeout=60s")
            assert _pods(server, "db") == before
            assert pod_writes_since(server, since) == []
    patches = [e for e in audit_entries(server) if e["verb"] == "patch" and e["resource"] == "persistentvolumeclaims"]
    assert {e["user"] for e in patches} == {"op-a"} and len(patches) == 2
