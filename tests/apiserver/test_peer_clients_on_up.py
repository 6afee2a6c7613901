"""The official Python client (``kubernetes``) and lightkube against a real `rollwise up`, doing what their own e2e
suites check of a cluster (docs/peer-suites.md lists those suites and their results): the built-in kinds a
1.37 server serves, a Deployment that becomes Available, a Service's status, a Node's well-known labels, Status
bodies as kube-apiserver writes them, server-side apply that drops a key its applier stopped sending, and exec into
a simulated pod answered with a Status that says why."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kubectl_support import Up
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream
from lightkube import ApiError, Client
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import ConfigMap, Node
from server_support import DEADLINE

pytestmark = pytest.mark.up(shared=True)


@pytest.fixture(scope="module")
def api(shared_up: Up) -> k8s.ApiClient:
    return k8s_config.new_client_from_config(config_file=str(shared_up.kubeconfig))


@pytest.fixture(scope="module")
def lk(shared_up: Up) -> Client:
    from lightkube import KubeConfig

    return Client(KubeConfig.from_file(shared_up.kubeconfig), field_manager="peer-test", trust_env=False)


def _until(predicate: object, what: str) -> None:
    end = time.monotonic() + DEADLINE * 3
    while time.monotonic() < end:
        if callable(predicate) and predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"never: {what}")


def test_the_python_client_creates_and_reads_daemonsets_jobs_and_replication_controllers(api: k8s.ApiClient) -> None:
    labels = {"app": "peer"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}}
    apps, batch, core = k8s.AppsV1Api(api), k8s.BatchV1Api(api), k8s.CoreV1Api(api)
    apps.create_namespaced_daemon_set("default", {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {
        "name": "ds"}, "spec": {"selector": {"matchLabels": labels}, "template": template}})
    assert apps.read_namespaced_daemon_set("ds", "default").spec.update_strategy.type == "RollingUpdate"
    job_template = {"spec": {**template["spec"], "restartPolicy": "Never"}}
    batch.create_namespaced_job("default", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                                            "spec": {"template": job_template}})
    assert batch.read_namespaced_job("j", "default").spec.backoff_limit == 6
    core.create_namespaced_replication_controller("default", {"apiVersion": "v1", "kind": "ReplicationController",
                                                              "metadata": {"name": "rc"},
                                                              "spec": {"replicas": 2, "template": template}})
    rc = core.read_namespaced_replication_controller("rc", "default")
    assert rc.spec.selector == labels
    _until(lambda: (core.read_namespaced_replication_controller("rc", "default").status.ready_replicas or 0) == 2,
           "the replication controller's two pods are ready")


def test_a_conflict_is_a_status_in_kube_apiservers_field_order(api: k8s.ApiClient) -> None:
    registration = k8s.ApiregistrationV1Api(api)
    body = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {
        "name": "v1alpha1.peer.example.com"}, "spec": {"group": "peer.example.com", "version": "v1alpha1",
                                                       "groupPriorityMinimum": 100, "versionPriority": 10}}
    registration.create_api_service(body)
    with pytest.raises(ApiException) as err:
        registration.create_api_service(body)
    assert err.value.body == (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
        '"apiservices.apiregistration.k8s.io \\"v1alpha1.peer.example.com\\" already exists",'
        '"reason":"AlreadyExists","details":{"name":"v1alpha1.peer.example.com","group":"apiregistration.k8s.io",'
        '"kind":"apiservices"},"code":409}\n')


def test_a_service_has_a_status_and_a_cluster_ip(api: k8s.ApiClient) -> None:
    svc = k8s.CoreV1Api(api).create_namespaced_service("default", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    assert svc.status.load_balancer is not None
    assert svc.spec.cluster_ip and svc.spec.ports[0].target_port == 80


def test_a_deployment_becomes_available_and_rolls_to_a_new_template(lk: Client) -> None:
    spec = {"replicas": 2, "selector": {"matchLabels": {"app": "d"}}, "template": {
        "metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1.26"}]}}}
    lk.create(Deployment.from_dict({"metadata": {"name": "d"}, "spec": spec}))
    lk.wait(Deployment, "d", for_conditions=["Available"])
    lk.patch(Deployment, "d", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
    _until(lambda: (lk.get(Deployment, "d").status.updatedReplicas or 0) == 2
           and (lk.get(Deployment, "d").status.replicas or 0) == 2
           and (lk.get(Deployment, "d").status.availableReplicas or 0) == 2, "the rollout finished")
    progressing = next(c for c in lk.get(Deployment, "d").status.conditions if c.type == "Progressing")
    assert progressing.reason == "NewReplicaSetAvailable"


def test_the_node_carries_the_well_known_labels_and_node_info(lk: Client) -> None:
    node = next(iter(lk.list(Node)))
    assert node.metadata.labels["kubernetes.io/os"] == node.status.nodeInfo.operatingSystem
    assert node.metadata.labels["kubernetes.io/hostname"] == node.metadata.name
    assert node.status.allocatable["pods"]


def test_server_side_apply_drops_what_its_only_applier_stopped_sending(lk: Client) -> None:
    def cm(**data: str) -> ConfigMap:
        return ConfigMap(apiVersion="v1", kind="ConfigMap", metadata=ObjectMeta(name="owned"), data=data)

    lk.apply(cm(a="1", b="2"))
    applied = lk.apply(cm(b="3", c="4"))
    assert applied.data == {"b": "3", "c": "4"}
    with pytest.raises(ApiError) as conflict:
        lk.apply(cm(b="9"), field_manager="someone-else")
    assert conflict.value.status.code == 409 and "peer-test" in str(conflict.value.status.message)
    forced = lk.apply(cm(b="9"), field_manager="someone-else", force=True)
    assert forced.data["b"] == "9"
    managers = {e.manager: e.operation for e in forced.metadata.managedFields}
    assert managers == {"peer-test": "Apply", "someone-else": "Apply"}


def test_exec_into_a_simulated_pod_is_a_status_that_says_why(api: k8s.ApiClient) -> None:
    core = k8s.CoreV1Api(api)
    core.create_namespaced_pod("default", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sim"},
                                           "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}})
    with pytest.raises(ApiException) as err:
        stream(core.connect_get_namespaced_pod_exec, "sim", "default", command=["true"], stdout=True,
               stderr=False, stdin=False, tty=False)
    assert "400" in str(err.value) and "simulated" in str(err.value)


def test_whoami_and_can_i_answer_for_the_caller(up: Up, tmp_path: Path) -> None:
    who = json.loads(up.kubectl("auth", "whoami", "-o", "json").stdout)
    assert who["status"]["userInfo"]["username"] == "admin"
    assert "system:masters" in who["status"]["userInfo"]["groups"]
    assert up.kubectl("auth", "can-i", "create", "deployments").stdout.strip() == "yes"
