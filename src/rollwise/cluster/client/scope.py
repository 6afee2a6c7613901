"""What the operator watches: only what rollwise owns, not every Pod, claim and Lease of the cluster.

* Pods and PersistentVolumeClaims the custom-set controller creates carry ``rollwise.dev/managed-by: rollwise``
  (``stamp``), and its informers select that label, so 10,000 pods of other teams cost nothing. The quorum-aware
  companion acts on pods kube-controller-manager creates (unlabelled), so with it on, the Pod informer selects
  every StatefulSet pod (``statefulset.kubernetes.io/pod-name``) instead: still no Deployment's, Job's or bare pod.
* Member Leases carry ``rollwise.dev/member-of: <set>`` (as the process kubelet and the lab write them).
* ``adopt_unlabelled`` keeps adoption working: a pod the set already controls or an orphan named like one of its
  members, and a claim named like one of its claims, get the label, and so come into the caches (pods made by an
  older rollwise, or by hand). ``rollwise migrate`` labels what it hands over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rollwise.api.errors import NotFound
from rollwise.api.meta import Obj, controller_of, labels, name_of, namespace_of, selector_matches, uid_of

__all__ = ["MANAGED_BY_LABEL", "MANAGED_BY_VALUE", "MEMBER_OF_LABEL", "Selector", "adopt_unlabelled",
           "informer_selectors", "selector_text", "stamp"]

MANAGED_BY_LABEL = "rollwise.dev/managed-by"
MANAGED_BY_VALUE = "rollwise"
MEMBER_OF_LABEL = "rollwise.dev/member-of"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
_STAMPED_KINDS = ("Pod", "PersistentVolumeClaim")

Selector = Mapping[str, str | bool | None]
"""Label key -> the value to equal; None: the key exists; False: the key is absent."""

OWNED: Selector = {MANAGED_BY_LABEL: MANAGED_BY_VALUE}


def informer_selectors(controllers: tuple[str, ...]) -> dict[str, Selector | None]:
    """Per shared kind, the label selector its informer lists and watches with (None: every object)."""
    return {
        "Pod": {POD_NAME_LABEL: None} if "quorum" in controllers else OWNED,
        "PersistentVolumeClaim": OWNED,
        "Lease": {MEMBER_OF_LABEL: None},
        "ControllerRevision": None,  # one or a few per StatefulSet of the cluster: not worth a label
        "PodDisruptionBudget": None,  # few, and written by application teams: no label of ours
    }


def selector_text(selector: Selector) -> str:
    return ",".join(key if value is None else f"!{key}" if value is False else f"{key}={value}"
                    for key, value in selector.items())


def stamp(obj: Obj) -> Obj:
    """``obj`` with the managed-by label when it is a kind the operator watches by it (a copy; else ``obj``)."""
    if obj.get("kind") not in _STAMPED_KINDS or labels(obj).get(MANAGED_BY_LABEL) == MANAGED_BY_VALUE:
        return obj
    meta = dict(obj.get("metadata") or {})
    meta["labels"] = {**(meta.get("labels") or {}), MANAGED_BY_LABEL: MANAGED_BY_VALUE}
    return {**obj, "metadata": meta}


async def adopt_unlabelled(kube: Any, sets: Sequence[Obj]) -> list[str]:
    """Label the unlabelled pods and claims of ``sets`` (all of one namespace; see the module doc); returns
    ``kind/name`` of each labelled.

    One list of the namespace's unlabelled pods (and one of its claims, when a set has claim templates) serves
    every set: after ``kubectl apply`` of a thousand sets, a list per set would make the API server scan the
    namespace a thousand times. A single set lists with its selector too, so the server sends only its pods.
    ``kube`` lists with a label selector (``list(kind, ns, labels=...)``) and merge-patches."""
    if not sets:
        return []
    ns = namespace_of(sets[0])
    unlabelled: dict[str, str | bool | None] = {MANAGED_BY_LABEL: False}
    patch = {"metadata": {"labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}}
    done: list[str] = []
    only = ((sets[0].get("spec") or {}).get("selector") or {}).get("matchLabels") or {} if len(sets) == 1 else {}
    pods, _ = await kube.list("Pod", ns, labels={**unlabelled, **only})
    by_uid = {uid_of(sts): sts for sts in sets}
    by_name = {name_of(sts): sts for sts in sets}
    for pod in pods:
        if _member_of(pod, by_uid, by_name) and await _label(kube, "Pod", ns, name_of(pod), patch):
            done.append(f"pod/{name_of(pod)}")
    claim_names = {f"{name_of(t)}-{name_of(sts)}" for sts in sets
                   for t in (sts.get("spec") or {}).get("volumeClaimTemplates") or [] if isinstance(t, Mapping)}
    if claim_names:
        claims, _ = await kube.list("PersistentVolumeClaim", ns, labels=unlabelled)
        for claim in claims:
            stem, ordinal = _stem_and_ordinal(name_of(claim))
            if ordinal and stem in claim_names and await _label(kube, "PersistentVolumeClaim", ns, name_of(claim),
                                                                patch):
                done.append(f"persistentvolumeclaim/{name_of(claim)}")
    return done


async def _label(kube: Any, kind: str, ns: str, name: str, patch: Obj) -> bool:
    """Patch the label on; False when the object went away since the list (nothing left to label)."""
    try:
        await kube.patch(kind, ns, name, patch)
    except NotFound:
        return False
    return True


def _member_of(pod: Obj, by_uid: Mapping[str, Obj], by_name: Mapping[str, Obj]) -> bool:
    """One of the sets controls the pod, or the pod is an orphan named like a set's member (``<set>-<ordinal>``)
    and matching that set's selector."""
    ref = controller_of(pod)
    if ref is not None:
        return ref.get("uid") in by_uid
    stem, ordinal = _stem_and_ordinal(name_of(pod))
    sts = by_name.get(stem) if ordinal else None
    return sts is not None and selector_matches((sts.get("spec") or {}).get("selector"), labels(pod))


def _stem_and_ordinal(name: str) -> tuple[str, str]:
    """``("web", "3")`` for ``web-3``; the ordinal is empty when the name does not end in ``-<digits>``."""
    stem, _, tail = name.rpartition("-")
    return (stem, tail) if stem and tail.isascii() and tail.isdigit() else (name, "")
