"""What a fresh (or reopened) ``up`` store holds before any client writes: the project's CRD and admission policy,
the initial namespaces, the node, the built-in PriorityClasses, a ``default`` service account in every namespace,
and the ``default/kubernetes`` Service with its Endpoints and EndpointSlice once the server's address is known."""

from __future__ import annotations

from rollwise.api.errors import NotFound
from rollwise.api.meta import LAST_APPLIED, Obj, annotations_of, last_applied_configuration, name_of
from rollwise.apiserver.admission.chain import NAMESPACE, NODE_NAME
from rollwise.apiserver.admission.plugins import PRIORITY_CLASS, SYSTEM_PRIORITY_CLASSES
from rollwise.apiserver.kinds.node import node_object
from rollwise.cluster.crd.analysis import analysis_crds
from rollwise.cluster.crd.policy import policy as rollwise_policy
from rollwise.cluster.crd.statefulset import crd as rollwise_crd
from rollwise.cluster.operator_namespace import namespace_manifest
from rollwise.cluster.resources import NODE, GroupKind
from rollwise.cluster.store.memory import MemoryCluster

__all__ = ["INITIAL_NAMESPACES", "KUBERNETES_SERVICE_IP", "PROTECTED_NAMESPACES", "default_service_account",
           "install_rollwise_crd", "kubernetes_service", "seed_cluster"]

INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
PROTECTED_NAMESPACES = INITIAL_NAMESPACES[:3]
"""The namespaces the API server refuses to delete."""
SERVICE_ACCOUNT = GroupKind("", "ServiceAccount")
SERVICE = GroupKind("", "Service")
ENDPOINTS = GroupKind("", "Endpoints")
KUBERNETES_SERVICE_IP = "10.96.0.1"
"""The first address of the service range, which kube-apiserver keeps for its own Service."""


def _exists(cluster: MemoryCluster, gk: GroupKind, namespace: str, name: str) -> bool:
    try:
        cluster.get(gk, namespace, name)
    except NotFound:
        return False
    return True


def install_rollwise_crd(cluster: MemoryCluster) -> None:
    """The project's CRDs (the custom StatefulSet, AnalysisTemplate and AnalysisRun) and its
    ValidatingAdmissionPolicy, as ``kubectl apply -k deploy/crds/`` would leave them:
    created when missing, brought up to this version's schema and rules when older ones are stored (a data
    directory kept across upgrades), and with kubectl's record of what it applied, so that the user's own
    ``kubectl apply`` of the same files (docs/install.md) finds them unchanged instead of warning that the record is
    missing."""
    for manifest in (rollwise_crd(), *analysis_crds(), *rollwise_policy()):
        gk = GroupKind(manifest["apiVersion"].rpartition("/")[0], manifest["kind"])
        record = last_applied_configuration(manifest)
        try:
            stored = cluster.get(gk, "", name_of(manifest))
        except NotFound:
            cluster.create(_with_record(manifest, record), actor="system")
            continue
        if stored.get("spec") != manifest["spec"] or annotations_of(stored).get(LAST_APPLIED) != record:
            cluster.update({**_with_record(stored, record), "spec": manifest["spec"]}, actor="system")


def _with_record(obj: Obj, record: str) -> Obj:
    annotations = {**annotations_of(obj), LAST_APPLIED: record}
    return {**obj, "metadata": {**obj["metadata"], "annotations": annotations}}


def default_service_account(cluster: MemoryCluster, namespace: str) -> None:
    """The service account controller's part: every namespace has a ``default`` account."""
    if not _exists(cluster, SERVICE_ACCOUNT, namespace, "default"):
        cluster.create({"apiVersion": "v1", "kind": "ServiceAccount",
                        "metadata": {"name": "default", "namespace": namespace}},
                       actor="system:serviceaccount:kube-system:service-account-controller")


def seed_cluster(cluster: MemoryCluster, *, now: float) -> None:
    """The initial namespaces, the node, the system PriorityClasses, and each namespace's default service account,
    where missing.

    The operator's namespace too (``rollwise-system``): ``rollwise run`` takes its leader-election Lease there by
    default, and ``up``'s controllers stand down while it leads (local/standdown.py), so the documented ``up`` +
    ``rollwise run`` needs no other step. It is created as ``kubectl apply -k deploy/`` leaves it, kubectl's record
    included, so docs/install.md's apply finds it without a "missing the last-applied annotation" warning."""
    for ns in INITIAL_NAMESPACES:
        if not _exists(cluster, NAMESPACE, "", ns):
            cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, actor="system")
    operator = namespace_manifest()
    if not _exists(cluster, NAMESPACE, "", name_of(operator)):
        cluster.create(_with_record(operator, last_applied_configuration(operator)), actor="system")
    if not _exists(cluster, NODE, "", NODE_NAME):
        cluster.create(node_object(NODE_NAME, now=now), actor="system")
    for name, value, description in SYSTEM_PRIORITY_CLASSES:
        if not _exists(cluster, PRIORITY_CLASS, "", name):
            cluster.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                            "value": value, "globalDefault": False, "description": description,
                            "preemptionPolicy": "PreemptLowerPriority"}, actor="system:apiserver")
    for namespace in cluster.list(NAMESPACE):
        default_service_account(cluster, name_of(namespace))


def _kubernetes_objects(address: str, port: int) -> list[Obj]:
    """The Service, Endpoints and EndpointSlice kube-apiserver keeps for itself (pkg/controlplane/controller/
    kubernetesservice and the endpoint reconciler): port 443 named https to the server's own address and port, no
    selector, the Endpoints not mirrored, the slice named after the Service."""
    meta = {"name": "kubernetes", "namespace": "default"}
    port_entry = {"name": "https", "port": port, "protocol": "TCP"}
    return [
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {**meta, "labels": {"component": "apiserver", "provider": "kubernetes"}},
         "spec": {"type": "ClusterIP", "clusterIP": KUBERNETES_SERVICE_IP, "clusterIPs": [KUBERNETES_SERVICE_IP],
                  "sessionAffinity": "None",
                  "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}]}},
        {"apiVersion": "v1", "kind": "Endpoints",
         "metadata": {**meta, "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
         "subsets": [{"addresses": [{"ip": address}], "ports": [port_entry]}]},
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {**meta, "labels": {"kubernetes.io/service-name": "kubernetes"}},
         "addressType": "IPv6" if ":" in address else "IPv4",
         "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
         "ports": [port_entry]},
    ]


def kubernetes_service(cluster: MemoryCluster, *, address: str, port: int) -> None:
    """``default/kubernetes`` and its endpoints, created when missing and pointed at ``address:port`` when a
    reopened store still names an earlier port, as the API server's reconciler does at every start."""
    for want in _kubernetes_objects(address, port):
        gk = GroupKind(want["apiVersion"].rpartition("/")[0], want["kind"])
        try:
            stored = cluster.get(gk, "default", "kubernetes")
        except NotFound:
            cluster.create(want, actor="system:apiserver")
            continue
        body = {k: v for k, v in want.items() if k not in ("apiVersion", "kind", "metadata")}
        if gk == SERVICE:
            spec = stored.get("spec") or {}
            if spec.get("ports") == want["spec"]["ports"]:
                continue
            body = {"spec": {**spec, "ports": want["spec"]["ports"]}}
        elif all(stored.get(k) == v for k, v in body.items()):
            continue
        cluster.update({**stored, **body}, actor="system:apiserver")
