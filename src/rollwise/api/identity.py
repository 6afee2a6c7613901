"""Pod and claim identity: names, ordinals, labels, and building a pod for an ordinal (reference §4)."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from rollwise.api.meta import Obj, labels, name_of, namespace_of, owner_reference, uid_of
from rollwise.api.ordinals import OrdinalSpan, reserved_ordinals, span_of
from rollwise.api.values import clone

__all__ = [
    "POD_INDEX_LABEL",
    "POD_NAME_LABEL",
    "REVISION_LABEL",
    "claim_name",
    "claim_names_for_pod",
    "claim_ordinal",
    "claims_for_pod",
    "identity_matches",
    "is_member_of",
    "new_pod",
    "ordinal_of",
    "ordinal_range",
    "parent_and_ordinal",
    "pod_name",
    "repair_identity",
    "revision_of",
    "storage_matches",
]

REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"

_NAME = re.compile(r"^(.*)-([0-9]+)$")
_INT32_MAX = 2**31 - 1


def pod_name(set_name: str, ordinal: int) -> str:
    """``<set>-<ordinal>``, decimal, no padding (reference §4.1)."""
    return f"{set_name}-{ordinal}"


@functools.lru_cache(maxsize=1 << 16)
def parent_and_ordinal(name: str) -> tuple[str, int]:
    """Split a pod name into (set name, ordinal); ordinal -1 when it does not parse (greedy: ``web-1-2`` → web-1, 2)."""
    m = _NAME.match(name)
    if not m:
        return "", -1
    ordinal = int(m.group(2))
    if ordinal > _INT32_MAX:
        return "", -1
    return m.group(1), ordinal


def ordinal_of(pod: Mapping[str, Any]) -> int:
    return parent_and_ordinal(name_of(pod))[1]


def is_member_of(sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """The pod's name says it belongs to this set (reference §4.4 isMemberOf)."""
    return parent_and_ordinal(name_of(pod))[0] == name_of(sts)


def ordinal_range(sts: Mapping[str, Any]) -> OrdinalSpan:
    """The ordinals the set should run: ``replicas`` of them from ``ordinals.start`` upward (reference §4.1),
    skipping ``spec.reserveOrdinals`` (api/ordinals.py). The one answer to "which ordinals does this set want":
    the controller, status, claim updates, the invariants, the explorer and ``plan`` all ask here."""
    spec = sts.get("spec", {})
    start = int((spec.get("ordinals") or {}).get("start") or 0)
    return span_of(start, int(spec.get("replicas", 1)), reserved_ordinals(spec))


def revision_of(pod: Mapping[str, Any]) -> str:
    """The revision a pod was built from: its ``controller-revision-hash`` label (the full revision name)."""
    return labels(pod).get(REVISION_LABEL, "")


def claim_name(template_name: str, set_name: str, ordinal: int) -> str:
    """``<claim template>-<set>-<ordinal>`` (reference §4.2)."""
    return f"{template_name}-{set_name}-{ordinal}"


def claim_ordinal(sts: Mapping[str, Any], name: str) -> int | None:
    """The ordinal whose claim ``name`` is, by one of the set's claim templates, or None if it is none of them."""
    for tmpl in sts.get("spec", {}).get("volumeClaimTemplates") or ():
        prefix = claim_name((tmpl.get("metadata") or {}).get("name", ""), name_of(sts), 0)[:-1]
        rest = name[len(prefix):] if name.startswith(prefix) else ""
        if rest.isdigit() and rest == str(int(rest)):
            return int(rest)
    return None


def claim_names_for_pod(sts: Mapping[str, Any], ordinal: int) -> list[str]:
    """The names of the claims a pod at ``ordinal`` needs (``claims_for_pod`` without building them: the owner
    checks of every reconcile need only the names)."""
    set_name = name_of(sts)
    return [claim_name((tmpl.get("metadata") or {}).get("name", ""), set_name, ordinal)
            for tmpl in sts["spec"].get("volumeClaimTemplates") or ()]


def claims_for_pod(sts: Mapping[str, Any], ordinal: int) -> list[Obj]:
    """The claims a pod at ``ordinal`` needs, built from volumeClaimTemplates (reference §6.1).

    Labels are the template's merged with the selector's matchLabels, and the selector wins on conflict.
    """
    out = []
    set_name = name_of(sts)
    match_labels = (sts["spec"].get("selector") or {}).get("matchLabels") or {}
    for tmpl in sts["spec"].get("volumeClaimTemplates") or ():
        claim = clone(tmpl)
        meta = dict(claim.get("metadata") or {})
        tname = meta.get("name", "")
        meta["name"] = claim_name(tname, set_name, ordinal)
        meta["namespace"] = namespace_of(sts)
        meta["labels"] = {**(meta.get("labels") or {}), **match_labels}
        for server_owned in ("uid", "resourceVersion", "creationTimestamp", "ownerReferences"):
            meta.pop(server_owned, None)
        claim["metadata"] = meta
        claim["apiVersion"] = "v1"
        claim["kind"] = "PersistentVolumeClaim"
        claim.pop("status", None)
        out.append(claim)
    return out


def new_pod(sts: Mapping[str, Any], template: Mapping[str, Any], ordinal: int, revision: str) -> Obj:
    """The pod for ``ordinal`` built from ``template`` at ``revision``: identity, storage and owner (reference §4.2).

    The pod shares the template's nested parts (a stored revision's, which never change): only the spec's own
    fields are set here, and a store copies what it keeps."""
    tmeta = template.get("metadata") or {}
    name = pod_name(name_of(sts), ordinal)
    spec = dict(template.get("spec") or {})
    spec["hostname"] = name
    service = sts["spec"].get("serviceName")
    if service:
        spec["subdomain"] = service
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace_of(sts),
            "labels": {
                **(tmeta.get("labels") or {}),
                POD_NAME_LABEL: name,
                POD_INDEX_LABEL: str(ordinal),
                REVISION_LABEL: revision,
            },
            "annotations": dict(tmeta.get("annotations") or {}),
            "ownerReferences": _controller_references(sts.get("apiVersion", "v1"), sts.get("kind", ""), name_of(sts),
                                                      uid_of(sts)),
        },
        "spec": spec,
    }
    if tmeta.get("finalizers"):
        pod["metadata"]["finalizers"] = list(tmeta["finalizers"])
    _attach_storage(sts, pod, ordinal)
    return pod


@functools.lru_cache(maxsize=256)
def _controller_references(api_version: str, kind: str, name: str, uid: str) -> list[Obj]:
    """One ``ownerReferences`` list for every pod of a set: stored objects are never changed in place (a write
    replaces the list), so the pods of a set can share it, as they share their template's parts. A pod read anew
    (the controller, the collector and the run record ask every pod for its owner) then finds it in the caches,
    where a list of its own had left them at 10,000 replicas (bench/scale.py)."""
    return [owner_reference({"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "uid": uid}})]


def _attach_storage(sts: Mapping[str, Any], pod: Obj, ordinal: int) -> None:
    """Point one volume per claim template at that ordinal's claim, replacing a template volume of the same name."""
    templates = [t.get("metadata", {}).get("name", "") for t in sts["spec"].get("volumeClaimTemplates") or ()]
    if not templates:
        return
    volumes = [v for v in pod["spec"].get("volumes") or () if v.get("name") not in templates]
    for tname in templates:
        volumes.append(
            {
                "name": tname,
                "persistentVolumeClaim": {"claimName": claim_name(tname, name_of(sts), ordinal), "readOnly": False},
            }
        )
    pod["spec"]["volumes"] = volumes


def identity_matches(sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Name, namespace and pod-name label agree with the ordinal (reference §4.3; hostname is no longer checked)."""
    name, set_name = name_of(pod), name_of(sts)
    parent, ordinal = parent_and_ordinal(name)
    return (
        ordinal >= 0
        and parent == set_name
        and name == pod_name(set_name, ordinal)
        and pod.get("metadata", {}).get("namespace") == namespace_of(sts)
        and labels(pod).get(POD_NAME_LABEL) == name
    )


def storage_matches(sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Every claim template has a pod volume of that name pointing at this ordinal's claim (reference §4.3)."""
    templates = sts["spec"].get("volumeClaimTemplates")
    ordinal = ordinal_of(pod)
    if ordinal < 0:
        return False
    if not templates:
        return True
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or ()}
    for tmpl in templates:
        tname = tmpl.get("metadata", {}).get("name", "")
        vol = volumes.get(tname)
        source = (vol or {}).get("persistentVolumeClaim")
        if not source or source.get("claimName") != claim_name(tname, name_of(sts), ordinal):
            return False
    return True


def repair_identity(sts: Mapping[str, Any], pod: Mapping[str, Any]) -> Obj:
    """A copy of the pod with its identity label, index label, namespace and volumes restored (UpdateStatefulPod).

    Only the label repair can succeed against a real API server (pod volumes are immutable); we keep both, as
    upstream does, and the memory store accepts the volume change.
    """
    fixed: Obj = clone(pod)
    ordinal = ordinal_of(fixed)
    meta = fixed.setdefault("metadata", {})
    meta["namespace"] = namespace_of(sts)
    meta["labels"] = {**(meta.get("labels") or {}), POD_NAME_LABEL: name_of(fixed), POD_INDEX_LABEL: str(ordinal)}
    fixed.setdefault("spec", {})
    _attach_storage(sts, fixed, ordinal)
    return fixed
