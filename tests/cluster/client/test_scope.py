"""What the operator watches (`cluster.scope`): the label on what it creates, the selectors per kind, and the
sweep that labels a set's unlabelled pods and claims so that adoption still works."""

from __future__ import annotations

import asyncio
from typing import Any

from rollwise.api.errors import NotFound
from rollwise.cluster.client.scope import (
    MANAGED_BY_LABEL,
    adopt_unlabelled,
    informer_selectors,
    selector_text,
    stamp,
)

OWNED = "rollwise.dev/managed-by=rollwise"


def test_pods_and_claims_the_operator_creates_carry_the_label_and_nothing_else_changes() -> None:
    pod = {"kind": "Pod", "metadata": {"name": "web-0", "labels": {"app": "web"}}}
    stamped = stamp(pod)
    assert stamped["metadata"]["labels"] == {"app": "web", MANAGED_BY_LABEL: "rollwise"}
    assert pod["metadata"]["labels"] == {"app": "web"}, "a copy: the controller's object is not changed"
    assert stamp({"kind": "PersistentVolumeClaim", "metadata": {"name": "d"}})["metadata"]["labels"] == {
        MANAGED_BY_LABEL: "rollwise"}
    revision = {"kind": "ControllerRevision", "metadata": {"name": "web-1"}}
    assert stamp(revision) is revision


def test_informers_select_only_what_rollwise_owns() -> None:
    alone = {k: selector_text(v) if v else None for k, v in informer_selectors(("statefulset",)).items()}
    assert alone == {"Pod": OWNED, "PersistentVolumeClaim": OWNED, "Lease": "rollwise.dev/member-of",
                     "ControllerRevision": None, "PodDisruptionBudget": None}
    with_companion = informer_selectors(("statefulset", "quorum"))
    assert selector_text(with_companion["Pod"] or {}) == "statefulset.kubernetes.io/pod-name"
    assert selector_text({"a": False, "b": None, "c": "d"}) == "!a,b,c=d"


class FakeKube:
    def __init__(self, objects: list[dict[str, Any]]) -> None:
        self.objects = objects
        self.patched: list[tuple[str, str]] = []
        self.selectors: list[dict[str, Any]] = []
        self.gone: set[str] = set()

    async def list(self, kind: str, namespace: str, *, labels: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        self.selectors.append(dict(labels))

        def fits(o: dict[str, Any]) -> bool:
            have = o["metadata"].get("labels") or {}
            return all((k not in have) if v is False else have.get(k) == v for k, v in labels.items())
        return [o for o in self.objects if o["kind"] == kind and fits(o)], "1"

    async def patch(self, kind: str, namespace: str, name: str, merge: dict[str, Any]) -> dict[str, Any]:
        if name in self.gone:
            raise NotFound(f"{kind} {name} not found")
        self.patched.append((kind, name))
        return {}


def _obj(kind: str, name: str, labels: dict[str, str], owner: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": labels}
    if owner:
        meta["ownerReferences"] = [{"kind": "StatefulSet", "name": "x", "uid": owner, "controller": True}]
    return {"kind": kind, "metadata": meta}


def test_the_sweep_labels_the_sets_own_and_orphaned_members_and_claims_and_nothing_else() -> None:
    sts = {"metadata": {"name": "web", "namespace": "default", "uid": "u-web"},
           "spec": {"selector": {"matchLabels": {"app": "web"}},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}}]}}
    kube = FakeKube([
        _obj("Pod", "web-0", {"app": "web"}, owner="u-web"),  # made by an older rollwise
        _obj("Pod", "web-1", {"app": "web"}),  # an orphan named like a member: adoptable
        _obj("Pod", "web-canary", {"app": "web"}),  # matches the selector, not a member's name
        _obj("Pod", "web-2", {"app": "web"}, owner="u-other"),  # another controller's
        _obj("Pod", "web-3", {"app": "web", MANAGED_BY_LABEL: "rollwise"}),  # already labelled
        _obj("PersistentVolumeClaim", "data-web-0", {}),
        _obj("PersistentVolumeClaim", "data-webx-0", {}),
        _obj("PersistentVolumeClaim", "logs-web-0", {}),
    ])
    done = asyncio.run(adopt_unlabelled(kube, [sts]))
    assert done == ["pod/web-0", "pod/web-1", "persistentvolumeclaim/data-web-0"]
    assert kube.selectors[0] == {MANAGED_BY_LABEL: False, "app": "web"}, "the server filters: no foreign pod comes"


def test_one_sweep_of_many_sets_lists_the_namespace_once_and_labels_each_sets_own() -> None:
    def sts(name: str, templates: list[str]) -> dict[str, Any]:
        return {"metadata": {"name": name, "namespace": "default", "uid": f"u-{name}"},
                "spec": {"selector": {"matchLabels": {"app": name}},
                         "volumeClaimTemplates": [{"metadata": {"name": t}} for t in templates]}}
    sets = [sts(f"s{i}", ["data"] if i % 2 else []) for i in range(50)] + [sts("web", ["data", "logs"])]
    kube = FakeKube([
        _obj("Pod", "s7-0", {"app": "s7"}, owner="u-s7"),
        _obj("Pod", "s8-2", {"app": "s8"}),  # an orphan named like s8's member, with s8's labels
        _obj("Pod", "s9-1", {"app": "s8"}),  # named like s9's, labelled like s8's: neither set's
        _obj("Pod", "web-0", {"app": "web"}, owner="u-gone"),  # controlled by a set not in the sweep
        _obj("Pod", "web-x", {"app": "web"}),
        _obj("Pod", "s10-01", {"app": "s10"}),  # the name's tail is digits: s10's member name
        _obj("PersistentVolumeClaim", "data-s7-0", {}),
        _obj("PersistentVolumeClaim", "data-s8-0", {}),  # s8 has no claim templates
        _obj("PersistentVolumeClaim", "logs-web-3", {}),
        _obj("PersistentVolumeClaim", "logs-web-", {}),
    ])
    kube.gone = {"s7-1"}  # listed, then deleted before its patch: skipped, the sweep goes on
    kube.objects.append(_obj("Pod", "s7-1", {"app": "s7"}, owner="u-s7"))
    done = asyncio.run(adopt_unlabelled(kube, sets))
    assert done == ["pod/s7-0", "pod/s8-2", "pod/s10-01", "persistentvolumeclaim/data-s7-0",
                    "persistentvolumeclaim/logs-web-3"]
    assert kube.selectors == [{MANAGED_BY_LABEL: False}, {MANAGED_BY_LABEL: False}], "one list of each kind"
