"""The defaults kube-apiserver writes into the built-in kinds beyond StatefulSet and Pod, at create and update.

Upstream's ``pkg/apis/<group>/v1/defaults.go`` per kind: what `kubectl get -o yaml` shows on a real cluster right
after a create (a Deployment's strategy and progress deadline, a Service's cluster IP and ``status.loadBalancer``,
a Job's backoff limit, a template's DNS policy, ...). A hook never overwrites what the client sent.
"""

from __future__ import annotations

import ipaddress
import itertools
from collections.abc import Callable
from typing import Any

from rollwise.api.defaults import default_image_pull_policy
from rollwise.api.meta import Obj
from rollwise.cluster.resources import GroupKind

__all__ = ["kind_hooks", "pod_template_defaults"]

Admit = Callable[[Obj, Obj | None], Obj]
_SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")


def _spec(obj: Obj) -> dict[str, Any]:
    spec = obj.get("spec")
    spec = dict(spec) if isinstance(spec, dict) else {}
    obj["spec"] = spec
    return spec


def _fill(mapping: dict[str, Any], **values: Any) -> None:
    for key, value in values.items():
        mapping.setdefault(key, value)


def pod_template_defaults(template: Any) -> Any:
    """A pod template's defaults (``SetDefaults_PodSpec`` and ``SetDefaults_Container``), in place and returned."""
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        return template
    spec = template["spec"] = dict(template["spec"])
    _fill(spec, restartPolicy="Always", terminationGracePeriodSeconds=30, dnsPolicy="ClusterFirst",
          schedulerName="default-scheduler", securityContext={})
    for key in ("containers", "initContainers"):
        items = spec.get(key)
        if not isinstance(items, list):
            continue
        out = []
        for given in items:
            if not isinstance(given, dict):
                out.append(given)
                continue
            c = dict(given)
            if c.get("image"):
                c.setdefault("imagePullPolicy", default_image_pull_policy(str(c["image"])))
            _fill(c, terminationMessagePath="/dev/termination-log", terminationMessagePolicy="File", resources={})
            if isinstance(c.get("ports"), list):
                c["ports"] = [{**p, "protocol": p.get("protocol", "TCP")} if isinstance(p, dict) else p
                              for p in c["ports"]]
            out.append(c)
        spec[key] = out
    return template


def _deployment(new: Obj, old: Obj | None) -> Obj:
    spec = _spec(new)
    _fill(spec, replicas=1, revisionHistoryLimit=10, progressDeadlineSeconds=600)
    strategy = spec["strategy"] = dict(spec.get("strategy") or {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        strategy["rollingUpdate"] = {"maxSurge": "25%", "maxUnavailable": "25%", **(strategy.get("rollingUpdate")
                                                                                    or {})}
    pod_template_defaults(spec.get("template"))
    return new


def _replicaset(new: Obj, old: Obj | None) -> Obj:
    spec = _spec(new)
    spec.setdefault("replicas", 1)
    pod_template_defaults(spec.get("template"))
    return new


def _replication_controller(new: Obj, old: Obj | None) -> Obj:
    spec = _spec(new)
    spec.setdefault("replicas", 1)
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if labels:
        spec.setdefault("selector", dict(labels))
        meta = new["metadata"]
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
    pod_template_defaults(spec.get("template"))
    return new


def _daemonset(new: Obj, old: Obj | None) -> Obj:
    spec = _spec(new)
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = spec["updateStrategy"] = dict(spec.get("updateStrategy") or {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        strategy["rollingUpdate"] = {"maxUnavailable": 1, "maxSurge": 0, **(strategy.get("rollingUpdate") or {})}
    pod_template_defaults(spec.get("template"))
    return new


def _job_spec(spec: dict[str, Any]) -> None:
    _fill(spec, parallelism=1, completions=1, backoffLimit=6, completionMode="NonIndexed", suspend=False,
          podReplacementPolicy="TerminatingOrFailed", manualSelector=spec.get("manualSelector", False))
    if spec.get("manualSelector") is False:
        spec.pop("manualSelector")
    pod_template_defaults(spec.get("template"))


def _job(new: Obj, old: Obj | None) -> Obj:
    _job_spec(_spec(new))
    return new


def _cronjob(new: Obj, old: Obj | None) -> Obj:
    spec = _spec(new)
    _fill(spec, concurrencyPolicy="Allow", suspend=False, successfulJobsHistoryLimit=3, failedJobsHistoryLimit=1)
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict) and isinstance(job_template.get("spec"), dict):
        job_template = spec["jobTemplate"] = {**job_template, "spec": dict(job_template["spec"])}
        _job_spec(job_template["spec"])
    return new


class _ClusterIPs:
    """A stand-in service IP allocator: the next free address of the service range, per store."""

    def __init__(self) -> None:
        self._next = itertools.count(10)

    def __call__(self, new: Obj, old: Obj | None) -> Obj:
        spec = _spec(new)
        old_spec = (old or {}).get("spec") or {}
        _fill(spec, type="ClusterIP", sessionAffinity="None", internalTrafficPolicy="Cluster",
              ipFamilies=["IPv4"], ipFamilyPolicy="SingleStack")
        if spec["type"] != "ExternalName":
            if old_spec.get("clusterIP") and not spec.get("clusterIP"):
                spec["clusterIP"] = old_spec["clusterIP"]
            if not spec.get("clusterIP"):
                spec["clusterIP"] = str(_SERVICE_CIDR[next(self._next)])
            if spec["clusterIP"] != "None":
                spec.setdefault("clusterIPs", [spec["clusterIP"]])
        if isinstance(spec.get("ports"), list):
            spec["ports"] = [{"protocol": "TCP", **p, "targetPort": p.get("targetPort", p.get("port"))}
                             if isinstance(p, dict) else p for p in spec["ports"]]
        if spec["type"] in ("NodePort", "LoadBalancer"):
            spec.setdefault("externalTrafficPolicy", "Cluster")
        new["status"] = (old or {}).get("status") or new.get("status") or {"loadBalancer": {}}
        return new


def _ingress(new: Obj, old: Obj | None) -> Obj:
    new["status"] = (old or {}).get("status") or new.get("status") or {"loadBalancer": {}}
    return new


def _network_policy(new: Obj, old: Obj | None) -> Obj:
    spec = _spec(new)
    if "policyTypes" not in spec:
        spec["policyTypes"] = ["Ingress", *(["Egress"] if spec.get("egress") else [])]
    return new


def _hpa(new: Obj, old: Obj | None) -> Obj:
    spec = _spec(new)
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 80}}}]
    return new


def _persistent_volume(new: Obj, old: Obj | None) -> Obj:
    spec = _spec(new)
    _fill(spec, persistentVolumeReclaimPolicy="Retain", volumeMode="Filesystem")
    if old is None:
        new["status"] = {"phase": "Available" if not spec.get("claimRef") else "Bound"}
    return new


def _storage_class(new: Obj, old: Obj | None) -> Obj:
    _fill(new, reclaimPolicy="Delete", volumeBindingMode="Immediate")
    return new


def _priority_class(new: Obj, old: Obj | None) -> Obj:
    new.setdefault("preemptionPolicy", "PreemptLowerPriority")
    return new


def _api_service(new: Obj, old: Obj | None) -> Obj:
    """An aggregated API's availability, as the aggregator's controller reports it: a local group is served by
    kube-apiserver itself; a remote one needs its Service, and nothing behind a Service answers here."""
    service = _spec(new).get("service")
    if not service:
        cond = {"type": "Available", "status": "True", "reason": "Local", "message": "Local APIServices are always "
                "available"}
    else:
        cond = {"type": "Available", "status": "False", "reason": "ServiceNotFound",
                "message": f'service/{service.get("name")} in "{service.get("namespace")}" is not present'}
    new["status"] = {"conditions": [cond]}
    return new


def kind_hooks() -> dict[GroupKind, Admit]:
    """Resource -> its defaulting hook."""
    return {
        GroupKind("apps", "Deployment"): _deployment,
        GroupKind("apps", "ReplicaSet"): _replicaset,
        GroupKind("apps", "DaemonSet"): _daemonset,
        GroupKind("", "ReplicationController"): _replication_controller,
        GroupKind("batch", "Job"): _job,
        GroupKind("batch", "CronJob"): _cronjob,
        GroupKind("", "Service"): _ClusterIPs(),
        GroupKind("networking.k8s.io", "Ingress"): _ingress,
        GroupKind("networking.k8s.io", "NetworkPolicy"): _network_policy,
        GroupKind("autoscaling", "HorizontalPodAutoscaler"): _hpa,
        GroupKind("", "PersistentVolume"): _persistent_volume,
        GroupKind("storage.k8s.io", "StorageClass"): _storage_class,
        GroupKind("scheduling.k8s.io", "PriorityClass"): _priority_class,
        GroupKind("apiregistration.k8s.io", "APIService"): _api_service,
    }
