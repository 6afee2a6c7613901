"""Strict field validation: a field the schema does not know is refused with its path, as ``kubectl``'s
``--validate=strict`` (the API server's ``fieldValidation=Strict``) does, instead of being dropped silently.

The schemas cover the kinds rollwise creates or reads: StatefulSet (``apps/v1`` and ``apps.rollwise.dev/v1alpha1``),
Pod, PersistentVolumeClaim, Service, Lease, ControllerRevision and the analysis kinds (whose specs
``api/analysis_validation.py`` checks field by field). Their fields follow the Kubernetes 1.32 API
reference; sub-objects rollwise never reads (affinity, probes, volumes' sources, security contexts, status) are
open (``ANY``): their inner fields are not checked. Other kinds are not known here (``KNOWN_KINDS``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.errors import FieldError

__all__ = ["APPS_V1_STATEFULSET_SPEC", "KNOWN_KINDS", "pruned_of_unknown_fields", "pruned_to_schema",
           "unknown_fields"]

ANY: Mapping[str, Any] = {}
"""An open sub-object: any fields."""


class ListOf:
    """A list whose items follow ``item``."""

    __slots__ = ("item",)

    def __init__(self, item: Mapping[str, Any]) -> None:
        self.item = item


Schema = Mapping[str, Any]  # field -> None (a leaf), ANY, a nested Schema, or ListOf(Schema)


def _fields(*names: str, **nested: Any) -> Schema:
    return {**dict.fromkeys(names), **nested}


OWNER_REFERENCE = _fields("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")
OBJECT_META = _fields(
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers",
    labels=ANY, annotations=ANY, ownerReferences=ListOf(OWNER_REFERENCE), managedFields=ListOf(ANY),
)
LABEL_SELECTOR = _fields(matchLabels=ANY, matchExpressions=ListOf(_fields("key", "operator", "values")))
RESOURCES = _fields(limits=ANY, requests=ANY, claims=ListOf(ANY))
CONTAINER = _fields(
    "name", "image", "command", "args", "workingDir", "terminationMessagePath", "terminationMessagePolicy",
    "imagePullPolicy", "stdin", "stdinOnce", "tty", "restartPolicy",
    ports=ListOf(_fields("name", "hostPort", "containerPort", "protocol", "hostIP")),
    envFrom=ListOf(ANY), env=ListOf(_fields("name", "value", valueFrom=ANY)), resources=RESOURCES,
    resizePolicy=ListOf(ANY), volumeMounts=ListOf(ANY), volumeDevices=ListOf(ANY), livenessProbe=ANY,
    readinessProbe=ANY, startupProbe=ANY, lifecycle=ANY, securityContext=ANY,
)
POD_SPEC = _fields(
    "restartPolicy", "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "serviceAccountName",
    "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork", "hostPID", "hostIPC",
    "shareProcessNamespace", "hostname", "subdomain", "schedulerName", "priorityClassName", "priority",
    "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "setHostnameAsFQDN", "hostUsers",
    volumes=ListOf(ANY), initContainers=ListOf(CONTAINER), containers=ListOf(CONTAINER),
    ephemeralContainers=ListOf(ANY), nodeSelector=ANY, securityContext=ANY, imagePullSecrets=ListOf(ANY),
    affinity=ANY, tolerations=ListOf(ANY), hostAliases=ListOf(ANY), dnsConfig=ANY, readinessGates=ListOf(ANY),
    overhead=ANY, topologySpreadConstraints=ListOf(ANY), os=ANY, schedulingGates=ListOf(ANY),
    resourceClaims=ListOf(ANY), resources=RESOURCES,
)
POD_TEMPLATE = _fields(metadata=OBJECT_META, spec=POD_SPEC)
PVC_SPEC = _fields(
    "accessModes", "volumeName", "storageClassName", "volumeMode", "volumeAttributesClassName",
    selector=LABEL_SELECTOR, resources=RESOURCES, dataSource=ANY, dataSourceRef=ANY,
)
PVC_TEMPLATE = _fields("apiVersion", "kind", metadata=OBJECT_META, spec=PVC_SPEC, status=ANY)
_STEP = _fields("replicas", pause=_fields("duration"),
                analysis=_fields(templates=ListOf(_fields("templateName")), args=ListOf(_fields("name", "value"))))
_ROLLING = _fields("partition", "maxUnavailable", "podProgressTimeoutSeconds", "podUpdatePolicy", steps=ListOf(_STEP))
STATEFULSET_SPEC = _fields(
    "replicas", "serviceName", "podManagementPolicy", "revisionHistoryLimit", "minReadySeconds",
    "progressDeadlineSeconds", "paused", "volumeClaimUpdatePolicy", "reserveOrdinals",
    selector=LABEL_SELECTOR, template=POD_TEMPLATE, volumeClaimTemplates=ListOf(PVC_TEMPLATE),
    updateStrategy=_fields("type", rollingUpdate=_ROLLING, enforcedRollingUpdate=_ROLLING),
    persistentVolumeClaimRetentionPolicy=_fields("whenDeleted", "whenScaled"), ordinals=_fields("start"),
    lifecycle=_fields(preDelete=_fields("labelsHandler", "finalizersHandler", "timeoutSeconds")),
    roleProbe=_fields("port", "path", "scheme", "timeoutSeconds", "staleAfterSeconds",
                      leader=_fields("statusCode", "jsonPath", "equals")),
)
APPS_V1_STATEFULSET_SPEC: Schema = {
    **{k: v for k, v in STATEFULSET_SPEC.items()
       if k not in ("progressDeadlineSeconds", "paused", "volumeClaimUpdatePolicy", "reserveOrdinals", "lifecycle",
                    "roleProbe")},
    "updateStrategy": _fields("type", rollingUpdate=_fields("partition", "maxUnavailable")),
}
"""What kube-apiserver's apps/v1 StatefulSetSpec holds (with KEP-961's ``maxUnavailable``): the spec above less
rollwise's own fields (``rollwise migrate --to apps/v1`` refuses or drops them, cli/migrate_back.py)."""
SERVICE_SPEC = _fields(
    "clusterIP", "clusterIPs", "type", "externalIPs", "sessionAffinity", "loadBalancerIP",
    "loadBalancerSourceRanges", "externalName", "externalTrafficPolicy", "healthCheckNodePort",
    "publishNotReadyAddresses", "ipFamilies", "ipFamilyPolicy", "allocateLoadBalancerNodePorts",
    "loadBalancerClass", "internalTrafficPolicy", "trafficDistribution",
    ports=ListOf(_fields("name", "protocol", "appProtocol", "port", "targetPort", "nodePort")), selector=ANY,
    sessionAffinityConfig=ANY,
)
LEASE_SPEC = _fields("holderIdentity", "leaseDurationSeconds", "acquireTime", "renewTime", "leaseTransitions",
                     "strategy", "preferredHolder")


def _object(*names: str, **parts: Any) -> Schema:
    return _fields("apiVersion", "kind", *names, metadata=OBJECT_META, **parts)


KNOWN_KINDS: Mapping[str, Schema] = {
    "StatefulSet": _object(spec=STATEFULSET_SPEC, status=ANY),
    "Pod": _object(spec=POD_SPEC, status=ANY),
    "PersistentVolumeClaim": _object(spec=PVC_SPEC, status=ANY),
    "Service": _object(spec=SERVICE_SPEC, status=ANY),
    "Lease": _object(spec=LEASE_SPEC),
    "ControllerRevision": _object("revision", data=ANY),
    # the analysis kinds' specs are checked field by field in api/analysis_validation.py
    "AnalysisTemplate": _object(spec=ANY),
    "AnalysisRun": _object(spec=ANY, status=ANY),
}


def unknown_fields(obj: Any, *, kind: str | None = None) -> list[FieldError]:
    """Every field of ``obj`` its kind's schema does not know (``kind`` defaults to ``obj["kind"]``); nothing for
    kinds outside ``KNOWN_KINDS``. Values of the wrong shape are left to validation."""
    return pruned_of_unknown_fields(obj, kind=kind)[1]


def pruned_of_unknown_fields(obj: Any, *, kind: str | None = None, patch: bool = False,
                             ) -> tuple[Any, list[FieldError]]:
    """``obj`` without the fields its kind's schema does not know (a copy; ``obj`` itself is not changed), and
    those fields. ``patch`` reads ``obj`` as a merge or strategic merge patch: its directives (``$patch``,
    ``$setElementOrder/...``, ``$retainKeys``, ``$deleteFromPrimitiveList/...``) are kept and not checked."""
    schema = KNOWN_KINDS.get(kind or (obj.get("kind") if isinstance(obj, Mapping) else None) or "")
    if schema is None:
        return obj, []
    errors: list[FieldError] = []
    return _walk(obj, schema, "", errors, patch), errors


def pruned_to_schema(value: Any, schema: Schema, *, path: str) -> tuple[Any, list[FieldError]]:
    """``value`` (found at ``path``) without the fields ``schema`` lacks, and those fields, as
    ``pruned_of_unknown_fields`` does for a whole object of a known kind."""
    errors: list[FieldError] = []
    return _walk(value, schema, path, errors, False), errors


def _walk(value: Any, schema: Any, path: str, errors: list[FieldError], patch: bool) -> Any:
    if isinstance(schema, ListOf):
        if isinstance(value, list):
            return [_walk(item, schema.item, f"{path}[{i}]", errors, patch) for i, item in enumerate(value)]
        return value
    if schema is None or schema is ANY or not isinstance(value, Mapping):
        return value
    out: dict[Any, Any] = {}
    for key, child in value.items():
        child_path = f"{path}.{key}" if path else str(key)
        if patch and isinstance(key, str) and key.startswith("$"):
            out[key] = child
        elif key not in schema:
            errors.append(FieldError(path=child_path, kind="Unsupported value", value=key,
                                     rule='unknown field (strict field validation; check the spelling)'))
        else:
            out[key] = _walk(child, schema[key], child_path, errors, patch)
    return out
