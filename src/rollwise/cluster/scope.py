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

import re
from collections.abc import Mapping
from typing import Any

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


def _member_name(set_name: str) -> re.Pattern[str]:
    return re.compile(re.escape(set_name) + r"-[0-9]+")


async def adopt_unlabelled(kube: Any, sts: Obj) -> list[str]:
    """Label the set's unlabelled pods and claims (see the module doc); returns ``kind/name`` of each labelled.

    ``kube`` lists with a label selector (``list(kind, ns, labels=...)``) and merge-patches."""
    ns, name = namespace_of(sts), name_of(sts)
    spec = sts.get("spec") or {}
    unlabelled: dict[str, str | bool | None] = {MANAGED_BY_LABEL: False}
    patch = {"metadata": {"labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}}
    done: list[str] = []
    member = _member_name(name)
    pods, _ = await kube.list("Pod", ns, labels={**unlabelled, **((spec.get("selector") or {}).get("matchLabels")
                                                               or {})})
    for pod in pods:
        ref = controller_of(pod)
        mine = ref.get("uid") == uid_of(sts) if ref is not None else (
            member.fullmatch(name_of(pod)) is not None and selector_matches(spec.get("selector"), labels(pod)))
        if mine:
            await kube.patch("Pod", ns, name_of(pod), patch)
            done.append(f"pod/{name_of(pod)}")
    templates = [name_of(t) for t in spec.get("volumeClaimTemplates") or []]
    if templates:
        claims, _ = await kube.list("PersistentVolumeClaim", ns, labels=unlabelled)
        ours = re.compile("|".join(f"{re.escape(t)}-{re.escape(name)}-[0-9]+" for t in templates))
        for claim in claims:
            if ours.fullmatch(name_of(claim)):
                await kube.patch("PersistentVolumeClaim", ns, name_of(claim), patch)
                done.append(f"persistentvolumeclaim/{name_of(claim)}")
    return done
