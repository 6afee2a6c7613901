"""Builders for API objects in tests: a StatefulSet like upstream's ``newStatefulSet``, and pods in given states."""

from __future__ import annotations

import copy
from typing import Any

from rollwise.api.defaults import apply_defaults
from rollwise.api.features import FeatureGates
from rollwise.api.identity import new_pod
from rollwise.api.meta import Obj
from rollwise.api.revisions import new_revision, template_of


def make_set(
    name: str = "foo",
    *,
    replicas: int = 3,
    policy: str = "OrderedReady",
    strategy: dict[str, Any] | None = None,
    min_ready_seconds: int = 0,
    image: str = "nginx",
    claims: bool = True,
    retention: tuple[str, str] | None = None,
    start: int | None = None,
    gates: FeatureGates | None = None,
    **spec: Any,
) -> Obj:
    """Upstream test conventions (reference §8): selector {foo: bar}, one container, claim template ``datadir``."""
    sts: Obj = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "generation": 1,
                     "resourceVersion": "1"},
        "spec": {
            "replicas": replicas,
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"foo": "bar"}},
            "serviceName": "governingsvc",
            "minReadySeconds": min_ready_seconds,
            "revisionHistoryLimit": 2,
            "template": {
                "metadata": {"labels": {"foo": "bar"}},
                "spec": {"containers": [{"name": "nginx", "image": image}]},
            },
            **spec,
        },
    }
    if strategy is not None:
        sts["spec"]["updateStrategy"] = strategy
    if claims:
        sts["spec"]["volumeClaimTemplates"] = [
            {"metadata": {"name": "datadir"}, "spec": {"resources": {"requests": {"storage": "1"}}}}
        ]
    if retention is not None:
        sts["spec"]["persistentVolumeClaimRetentionPolicy"] = {"whenScaled": retention[0], "whenDeleted": retention[1]}
    if start is not None:
        sts["spec"]["ordinals"] = {"start": start}
    return apply_defaults(sts, gates=gates or FeatureGates())


def revision_for(sts: Obj, number: int = 1) -> Obj:
    rev = new_revision(sts, number=number, collision_count=0)
    rev["metadata"]["uid"] = f"uid-{rev['metadata']['name']}"
    rev["metadata"]["creationTimestamp"] = float(number)
    return rev


def make_pod(
    sts: Obj,
    ordinal: int,
    *,
    revision: Obj | None = None,
    phase: str = "Running",
    ready: bool = True,
    ready_since: float = -90.0,
    terminating: bool = False,
    uid: str | None = None,
) -> Obj:
    """A pod of the set at ``ordinal`` in the given state (its Ready condition changed at ``ready_since``)."""
    rev = revision or revision_for(sts)
    pod = new_pod(sts, template_of(rev), ordinal, rev["metadata"]["name"])
    pod["metadata"]["uid"] = uid or f"uid-{pod['metadata']['name']}"
    pod["metadata"]["ownerReferences"][0]["uid"] = sts["metadata"]["uid"]
    pod["metadata"]["resourceVersion"] = "1"
    pod["metadata"]["creationTimestamp"] = -100.0
    if terminating:
        pod["metadata"]["deletionTimestamp"] = -1.0
    pod["status"] = pod_status(phase=phase, ready=ready, ready_since=ready_since)
    return pod


def pod_status(*, phase: str, ready: bool, ready_since: float = -90.0) -> Obj:
    status: Obj = {"phase": phase}
    if phase == "Running":
        status["conditions"] = [
            {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": ready_since}
        ]
        status["containerStatuses"] = [{"name": "nginx", "ready": ready, "restartCount": 0,
                                        "state": {"running": {"startedAt": -100.0}}}]
    return status


def with_image(sts: Obj, image: str) -> Obj:
    out = copy.deepcopy(sts)
    out["spec"]["template"]["spec"]["containers"][0]["image"] = image
    out["metadata"]["generation"] += 1
    return out


def pdb(name: str = "foo-pdb", **spec: Any) -> dict[str, Any]:
    """A PodDisruptionBudget over :func:`make_set`'s pods (``foo: bar``), with ``spec`` as given."""
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"foo": "bar"}}, **spec}}
