"""Validation of a pod template's spec and of containers: what every driver relies on to run a pod, for a
StatefulSet's template here and for bare Pods in ``validation_objects``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.validation_containers import check_container_fields
from rollwise.api.validation_rules import check_dns_label, check_enum, check_int, check_qualified_name, type_error

__all__ = ["DNS_POLICIES", "check_container", "check_container_values", "check_containers", "check_gates_update",
           "check_pod_spec", "check_scheduling_gates", "check_unique_name"]

DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")


def check_pod_spec(pod_spec: object) -> list[FieldError]:
    path = "spec.template.spec"
    if pod_spec is None:
        return [FieldError(path=path, kind="Required value", rule="a pod spec is required")]
    if not isinstance(pod_spec, Mapping):
        return [type_error(path, pod_spec, "a mapping")]
    errors: list[FieldError] = []
    restart = pod_spec.get("restartPolicy")
    if restart != "Always":
        # reference §2: a StatefulSet's pods are replaced by the controller, never left to exit.
        errors.append(FieldError(path=f"{path}.restartPolicy", kind="Unsupported value", value=restart,
                                 rule='supported values: "Always"'))
    if pod_spec.get("terminationGracePeriodSeconds") is not None:
        # a negative grace period would leave every deleted pod terminating for ever
        errors += check_int(pod_spec["terminationGracePeriodSeconds"], f"{path}.terminationGracePeriodSeconds",
                            minimum=0)
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errors.append(FieldError(path=f"{path}.activeDeadlineSeconds", kind="Forbidden",
                                 rule="activeDeadlineSeconds is not supported for StatefulSet pods"))
    # Upstream leaves the rest of the pod spec to pod creation (FailedCreate events, mid-rollout); rollwise checks
    # here, at apply, what kube-apiserver would refuse on the pods (validation_containers.py).
    if "dnsPolicy" in pod_spec:
        errors += check_enum(pod_spec["dnsPolicy"], f"{path}.dnsPolicy", DNS_POLICIES)
    return errors + check_containers(pod_spec, path)


def check_containers(pod_spec: Mapping[str, Any], path: str) -> list[FieldError]:
    """The containers and init containers of a pod spec: at least one container, each well formed, names unique
    across both lists."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for key in ("initContainers", "containers"):
        containers = pod_spec.get(key)
        if containers is None or containers == []:
            if key == "containers":
                errors.append(FieldError(path=f"{path}.containers", kind="Required value",
                                         rule="at least one container is required"))
            continue
        if not isinstance(containers, list):
            errors.append(type_error(f"{path}.{key}", containers, "a list"))
            continue
        for i, container in enumerate(containers):
            errors += check_container(container, f"{path}.{key}[{i}]", seen)
    return errors


def check_container(container: object, path: str, seen: set[str]) -> list[FieldError]:
    """A container: a unique DNS-label name, an image and the fields kube-apiserver checks on a Pod
    (``validation_containers``), for pod templates and, in ``validation_objects``, Pods."""
    if not isinstance(container, Mapping):
        return [type_error(path, container, "a mapping")]
    errors = check_unique_name(container.get("name"), f"{path}.name", seen)
    image = container.get("image")
    if image is None or image == "":
        errors.append(FieldError(path=f"{path}.image", kind="Required value", rule="an image is required"))
    elif not isinstance(image, str):
        errors.append(type_error(f"{path}.image", image, "a string"))
    return errors + check_container_fields(container, path)


def check_unique_name(name: object, path: str, seen: set[str]) -> list[FieldError]:
    """A required DNS-label name, not already in ``seen`` (which it joins)."""
    if name is None or name == "":
        return [FieldError(path=path, kind="Required value", rule="name is required")]
    errors = check_dns_label(name, path)
    if errors or not isinstance(name, str):
        return errors
    if name in seen:
        return [FieldError(path=path, kind="Duplicate value", value=name, rule="names must be unique")]
    seen.add(name)
    return []


def check_container_values(pod_spec: object, path: str) -> list[FieldError]:
    """Only the values kube-apiserver refuses in a pod's containers (``validation_containers``) and its dnsPolicy,
    for a Pod created through the API: a pod the controllers or a test write bare is not asked for more."""
    if not isinstance(pod_spec, Mapping):
        return []
    errors = check_enum(pod_spec["dnsPolicy"], f"{path}.dnsPolicy", DNS_POLICIES) if "dnsPolicy" in pod_spec else []
    for key in ("initContainers", "containers"):
        containers = pod_spec.get(key)
        for i, container in enumerate(containers if isinstance(containers, list) else ()):
            if isinstance(container, Mapping):
                errors += check_container_fields(container, f"{path}.{key}[{i}]")
    return errors


def _gates(pod_spec: object) -> list[Any]:
    gates = pod_spec.get("schedulingGates") if isinstance(pod_spec, Mapping) else None
    return gates if isinstance(gates, list) else []


def check_scheduling_gates(pod_spec: object, path: str) -> list[FieldError]:
    """A pod's ``schedulingGates`` (KEP-3521; upstream ``validateSchedulingGates`` and ``ValidatePodCreate``): each
    gate named by a unique qualified name, and no ``nodeName`` while any gate is left (a bound pod is past
    scheduling)."""
    if not isinstance(pod_spec, Mapping) or pod_spec.get("schedulingGates") is None:
        return []
    gates = pod_spec["schedulingGates"]
    if not isinstance(gates, list):
        return [type_error(f"{path}.schedulingGates", gates, "a list")]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(gates):
        where = f"{path}.schedulingGates[{i}]"
        if not isinstance(gate, Mapping):
            errors.append(type_error(where, gate, "a mapping"))
            continue
        name = gate.get("name")
        if name is None or name == "":
            errors.append(FieldError(path=f"{where}.name", kind="Required value", rule="a gate name is required"))
            continue
        found = check_qualified_name(name, f"{where}.name")
        if not found and name in seen:
            found = [FieldError(path=f"{where}.name", kind="Duplicate value", value=name,
                                rule="gate names must be unique")]
        errors += found
        seen.add(str(name))
    if gates and pod_spec.get("nodeName"):
        errors.append(FieldError(path=f"{path}.nodeName", kind="Forbidden",
                                 rule="cannot be set until all schedulingGates have been cleared"))
    return errors


def check_gates_update(new_spec: object, old_spec: object, path: str) -> list[FieldError]:
    """An update may only remove scheduling gates (upstream ``validateOnlyDeletedSchedulingGates``): a gate the old
    pod did not have is refused, whether the pod was gated or already scheduled."""
    before = {g.get("name") for g in _gates(old_spec) if isinstance(g, Mapping)}
    errors = check_scheduling_gates(new_spec, path)
    for i, gate in enumerate(_gates(new_spec)):
        name = gate.get("name") if isinstance(gate, Mapping) else None
        if isinstance(name, str) and name and name not in before:
            errors.append(FieldError(path=f"{path}.schedulingGates[{i}].name", kind="Forbidden",
                                     rule=f"only deletion is allowed, but found new scheduling gate '{name}'"))
    return errors
