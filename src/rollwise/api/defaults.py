"""API-server defaulting for StatefulSets (reference §1.1), plus rollwise's strategy extensions.

Defaulting runs before validation, so it must never raise on malformed input: a field of the wrong type is left as
it is, for validation to report with its path. Where Go would always have a struct (``spec``, ``template``,
``updateStrategy``) a missing mapping is created; where Go has a pointer, ``None`` counts as absent.
"""

from __future__ import annotations

from typing import Any

from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj
from rollwise.api.stored import stored_pod_template
from rollwise.api.strategies import (
    BLOCK_OWNERS,
    ENFORCED_BLOCK,
    ENFORCED_ROLLING_UPDATE,
    ROLLING_BLOCK,
    ROLLING_UPDATE,
)
from rollwise.api.values import clone

__all__ = [
    "apply_defaults",
    "default_image_pull_policy",
    "stored_template",
]

_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
_PROBE_DEFAULTS = (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3))


def apply_defaults(obj: Obj, *, gates: FeatureGates) -> Obj:
    """A defaulted deep copy of a StatefulSet (apps/v1 or apps.rollwise.dev/v1alpha1); idempotent, input untouched."""
    out: Obj = clone(obj)
    if not isinstance(out, dict):
        return out
    meta = _child(out, "metadata")
    if meta is not None:
        _fill(meta, "namespace", "default")
    spec = _child(out, "spec")
    if spec is not None:
        _default_spec(spec, gates=gates)
    return out


def default_image_pull_policy(image: str) -> str:
    """``Always`` for an image tagged ``latest`` or with neither tag nor digest, else ``IfNotPresent``."""
    # Upstream parses the reference: a digest without a tag leaves the tag empty, which is not "latest".
    name, at, _digest = image.partition("@")
    colon, slash = name.rfind(":"), name.rfind("/")
    tag = name[colon + 1 :] if colon > slash else ""  # a colon before the last "/" is a registry port
    if tag == "latest" or (not tag and not at):
        return "Always"
    return "IfNotPresent"


def _fill(mapping: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` when absent, null or the empty string (Go's unset string); 0 and False are real values."""
    current = mapping.get(key)
    if current is None or (isinstance(current, str) and current == ""):
        mapping[key] = value


def _child(parent: dict[str, Any], key: str) -> dict[str, Any] | None:
    """``parent[key]``, created empty when absent; None when it holds something other than a mapping."""
    if parent.get(key) is None:
        parent[key] = {}
    value = parent[key]
    return value if isinstance(value, dict) else None


def _default_spec(spec: dict[str, Any], *, gates: FeatureGates) -> None:
    # reference §1.1: SetDefaults_StatefulSet
    _fill(spec, "replicas", 1)
    _fill(spec, "podManagementPolicy", "OrderedReady")
    _fill(spec, "revisionHistoryLimit", 10)
    _fill(spec, "minReadySeconds", 0)
    strategy = _child(spec, "updateStrategy")
    if strategy is not None:
        _default_strategy(strategy, gates=gates)
    # reference §1.1: the policy object is defaulted when nil, and each field to Retain (GA 1.32, no gate).
    policy = _child(spec, "persistentVolumeClaimRetentionPolicy")
    if policy is not None:
        _fill(policy, "whenDeleted", "Retain")
        _fill(policy, "whenScaled", "Retain")
    template = _child(spec, "template")
    if template is not None:
        spec["template"] = stored_template(template)
    claims = spec.get("volumeClaimTemplates")
    if isinstance(claims, list):
        for claim in claims:
            if isinstance(claim, dict):
                _default_claim_template(claim)


def stored_template(template: dict[str, Any]) -> Obj:
    """A copy of a pod template as the API server stores it: defaulted, then in stored form (``api/stored.py``).

    Idempotent. The revision hash is taken over this, so templates that are stored alike share one revision."""
    # The stored form first too: an empty value where the pod spec belongs (``spec: []``) is dropped by it, as Go's
    # decoder leaves a nil struct, and then defaulted now rather than on the next pass.
    out = stored_pod_template(template)
    pod_spec = _child(out, "spec")
    if pod_spec is not None:
        _default_pod_spec(pod_spec)
    return stored_pod_template(out)


def _default_strategy(strategy: dict[str, Any], *, gates: FeatureGates) -> None:
    # reference §1.1 quirk: only an EMPTY type gets `rollingUpdate: {}`; an explicit `type: RollingUpdate` without
    # the block keeps it absent (and §4.5 then takes a different branch), so do not "fix" this.
    if strategy.get("type") in (None, ""):
        strategy["type"] = ROLLING_UPDATE
        if strategy.get(ROLLING_BLOCK) is None:
            strategy[ROLLING_BLOCK] = {}
    # seed 003 declares no defaulting quirk for the new type: its block is always defaulted.
    if strategy["type"] == ENFORCED_ROLLING_UPDATE and strategy.get(ENFORCED_BLOCK) is None:
        strategy[ENFORCED_BLOCK] = {}
    for key, owner in BLOCK_OWNERS:
        block = strategy.get(key)
        if not isinstance(block, dict):
            continue
        if not gates.max_unavailable:
            # reference §1.1 / KEP-961: with the gate off the API server drops the field, whatever the type.
            block.pop("maxUnavailable", None)
        if strategy["type"] != owner:
            continue  # a block under the wrong type is left for validation to forbid
        _fill(block, "partition", 0)
        if gates.max_unavailable:
            _fill(block, "maxUnavailable", 1)


def _default_pod_spec(pod_spec: dict[str, Any]) -> None:
    # The pod-template defaults the API server applies; they are part of the revision hash (reference §1.1, §3.1).
    _fill(pod_spec, "restartPolicy", "Always")
    _fill(pod_spec, "dnsPolicy", "ClusterFirst")
    _fill(pod_spec, "schedulerName", "default-scheduler")
    _fill(pod_spec, "securityContext", {})
    _fill(pod_spec, "terminationGracePeriodSeconds", 30)
    for key in ("initContainers", "containers"):
        containers = pod_spec.get(key)
        if isinstance(containers, list):
            for container in containers:
                if isinstance(container, dict):
                    _default_container(container)


def _default_container(container: dict[str, Any]) -> None:
    image = container.get("image")
    if isinstance(image, str):
        _fill(container, "imagePullPolicy", default_image_pull_policy(image))
    _fill(container, "terminationMessagePath", "/dev/termination-log")
    _fill(container, "terminationMessagePolicy", "File")
    _fill(container, "resources", {})
    ports = container.get("ports")
    if isinstance(ports, list):
        for port in ports:
            if isinstance(port, dict):
                _fill(port, "protocol", "TCP")
    for key in _PROBES:
        probe = container.get(key)
        if isinstance(probe, dict):
            for field, value in _PROBE_DEFAULTS:
                _fill(probe, field, value)


def _default_claim_template(claim: dict[str, Any]) -> None:
    # reference §1.1 / §6.1: claim templates get their type meta and volumeMode; status is deliberately not added.
    _fill(claim, "apiVersion", "v1")
    _fill(claim, "kind", "PersistentVolumeClaim")
    claim_spec = _child(claim, "spec")
    if claim_spec is not None:
        _fill(claim_spec, "volumeMode", "Filesystem")
