"""What `up` seeds into a data directory it opens: rollwise's CRD and admission policy as `kubectl apply -k
deploy/crds/` leaves them, brought up to this version when an older one is stored, and left alone when current."""

from __future__ import annotations

from pathlib import Path

from rollwise.api.meta import LAST_APPLIED, annotations_of
from rollwise.apiserver.storage.bootstrap import kubernetes_service
from rollwise.apiserver.storage.store import ApiStore
from rollwise.cluster.crd.statefulset import crd
from rollwise.cluster.resources import GroupKind

CRD = GroupKind("apiextensions.k8s.io", "CustomResourceDefinition")
NAME = crd()["metadata"]["name"]


def _stored(data_dir: Path) -> dict:
    store = ApiStore(data_dir=data_dir)
    try:
        return store.cluster.get(CRD, "", NAME)
    finally:
        store.cluster.close()


def test_an_older_crd_in_a_kept_data_dir_is_brought_up_to_date_with_kubectls_record(tmp_path: Path) -> None:
    store = ApiStore(data_dir=tmp_path)
    current = store.cluster.get(CRD, "", NAME)
    older = {**current, "metadata": {**current["metadata"], "annotations": {"team": "db"}},
             "spec": {**current["spec"], "names": {**current["spec"]["names"], "shortNames": []}}}
    store.cluster.update(older, actor="system")  # as an earlier release left it: older names, no kubectl record
    store.cluster.close()

    upgraded = _stored(tmp_path)
    assert upgraded["spec"] == crd()["spec"]
    assert annotations_of(upgraded)["team"] == "db"
    assert annotations_of(upgraded)[LAST_APPLIED] == annotations_of(current)[LAST_APPLIED]
    assert _stored(tmp_path)["metadata"]["resourceVersion"] == upgraded["metadata"]["resourceVersion"], \
        "a current CRD is not written again"


SERVICE, ENDPOINTS = GroupKind("", "Service"), GroupKind("", "Endpoints")
SLICE = GroupKind("discovery.k8s.io", "EndpointSlice")


def test_the_kubernetes_service_points_at_the_server_and_follows_it_to_a_new_port(tmp_path: Path) -> None:
    store = ApiStore(data_dir=tmp_path)
    kubernetes_service(store.cluster, address="127.0.0.1", port=6443)
    svc = store.cluster.get(SERVICE, "default", "kubernetes")
    assert svc["spec"]["clusterIP"] == "10.96.0.1" and "selector" not in svc["spec"]
    assert svc["spec"]["ports"] == [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    endpoints = store.cluster.get(ENDPOINTS, "default", "kubernetes")
    assert endpoints["subsets"] == [{"addresses": [{"ip": "127.0.0.1"}],
                                     "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]
    slice_ = store.cluster.get(SLICE, "default", "kubernetes")
    assert slice_["metadata"]["labels"]["kubernetes.io/service-name"] == "kubernetes"
    assert (slice_["addressType"], slice_["endpoints"][0]["addresses"]) == ("IPv4", ["127.0.0.1"])
    versions = [store.cluster.get(gk, "default", "kubernetes")["metadata"]["resourceVersion"]
                for gk in (SERVICE, ENDPOINTS, SLICE)]
    kubernetes_service(store.cluster, address="127.0.0.1", port=6443)
    assert versions == [store.cluster.get(gk, "default", "kubernetes")["metadata"]["resourceVersion"]
                        for gk in (SERVICE, ENDPOINTS, SLICE)], "an unchanged address writes nothing"
    store.cluster.close()

    reopened = ApiStore(data_dir=tmp_path)
    kubernetes_service(reopened.cluster, address="127.0.0.1", port=7000)
    assert reopened.cluster.get(SERVICE, "default", "kubernetes")["spec"]["ports"][0]["targetPort"] == 7000
    assert reopened.cluster.get(SLICE, "default", "kubernetes")["ports"][0]["port"] == 7000
    assert reopened.cluster.get(ENDPOINTS, "default", "kubernetes")["subsets"][0]["ports"][0]["port"] == 7000
    reopened.cluster.close()
