"""The StatefulSet resources a driver runs: the built-in ``apps/v1`` kind and the project's
``apps.rollwise.dev/v1alpha1`` CRD, which share one spec and one controller but are different resources."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any

from rollwise.api.errors import NotFound
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.cluster.protocol import Cluster
from rollwise.cluster.resources import ROLLWISE_STATEFULSET, STATEFULSET, STATEFULSET_KINDS, GroupKind, group_of

__all__ = ["SetKey", "all_sets", "find_set", "set_key", "set_resource"]

SetKey = tuple[GroupKind, str, str]
"""``(resource, namespace, name)`` of a StatefulSet: what a controller's work queue holds."""


def set_resource(obj: Mapping[str, Any]) -> GroupKind:
    """The StatefulSet resource of a set, or of an owner reference to one (by its ``apiVersion``)."""
    return ROLLWISE_STATEFULSET if group_of(str(obj.get("apiVersion") or "")) == ROLLWISE_STATEFULSET.group \
        else STATEFULSET


def set_key(sts: Obj) -> SetKey:
    return set_resource(sts), namespace_of(sts), name_of(sts)


def all_sets(cluster: Cluster, namespace: str | None = None) -> builtins.list[Obj]:
    """Every StatefulSet of both resources, by namespace and name (the built-in kind first on a tie)."""
    lists = [found for gk in STATEFULSET_KINDS if (found := cluster.list(gk, namespace))]
    if len(lists) == 1:
        return lists[0]  # the usual case: one resource holds every set, already in order
    return sorted([s for found in lists for s in found], key=lambda s: (namespace_of(s), name_of(s)))


def find_set(cluster: Cluster, namespace: str, name: str) -> Obj:
    """The set of that name, of either resource (the built-in kind first). NotFound if neither has it."""
    for gk in STATEFULSET_KINDS:
        try:
            return cluster.get(gk, namespace, name)
        except NotFound:
            continue
    raise NotFound(f'StatefulSet "{name}" not found')
