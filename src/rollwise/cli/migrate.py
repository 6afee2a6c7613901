"""``rollwise migrate sts/NAME``: move a plain ``apps/v1`` set under rollwise without restarting a pod (and, with
``rsts/NAME --to apps/v1``, back again: ``cli/migrate_back.py``).

PingCAP's order (``pingcap/advanced-statefulset pkg/apis/apps/v1/helper/upgrade.go``; operator-plan §2):

1. relabel the set's ControllerRevisions where they no longer match its selector (kubernetes/kubernetes#84982: a
   revision the selector misses cannot be adopted, and its history would be lost);
2. create the ``apps.rollwise.dev`` set with the same spec, and copy the revision bookkeeping of the status
   (current and update revision, collision count) so a set caught mid-rollout keeps its current revision;
3. delete the ``apps/v1`` set with ``propagationPolicy: Orphan``: the garbage collector strips its owner
   references from the pods, claims and revisions instead of deleting them;
4. the custom set's controller adopts the orphans (``ownership.claim_pods``, ``claim_revisions``).

Pods keep their UIDs because their ``controller-revision-hash`` label already names the custom set's revision: the
revision name hashes only the pod template, under the same set name. On a real cluster that holds only when
upstream's hash of the template equals ours; the command waits and reports which pods the new set owns.

Before anything is written, a field the target kind lacks is refused with its path (exit 2, nothing on stdout):
the CRD's schema for ``sts/NAME``, ``fields_apps_v1_lacks`` for ``--to apps/v1``. The hand-over itself
(``cli/handover.py``) fences the old set before anything is created or deleted, and says "none restarted" only once
the new set controls every pod under its old uid and the old set is gone.

Exit codes: 0 migrated and every pod adopted, none restarted; 1 an API error, a custom set of that name already
exists, a pod restarted (named) or the pods were not adopted within ``--timeout``; 2 invalid arguments or a field
the target kind lacks.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from rollwise.api.meta import LAST_APPLIED, Obj, name_of
from rollwise.apiserver.admission.schema import pruned_fields
from rollwise.cli.handover import (
    hand_over,
    owned,
    refuse_existing,
    refuse_unmovable,
    relabel_revisions,
    twin_of,
)
from rollwise.cli.kubetarget import add_connection_flags, parse_target, run_on_cluster
from rollwise.cli.migrate_back import APPS_V1_STRATEGIES, migrate_back
from rollwise.cli.rollout import duration
from rollwise.cluster.client.scope import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from rollwise.cluster.crd.statefulset import crd
from rollwise.cluster.resources import POD, PVC, ROLLWISE_STATEFULSET, STATEFULSET

__all__ = ["add_migrate"]

CR_API_VERSION = "apps.rollwise.dev/v1alpha1"
_DROPPED_ANNOTATIONS = (LAST_APPLIED,)


_OWNED_PATCH = {"metadata": {"labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}}


async def _claims_of(kube: Any, ns: str, sts: Obj) -> list[Obj]:
    """The set's claims: named ``<template>-<set>-<ordinal>`` for one of its volumeClaimTemplates."""
    templates = [name_of(t) for t in sts["spec"].get("volumeClaimTemplates") or []]
    if not templates:
        return []
    ours = re.compile("|".join(f"{re.escape(t)}-{re.escape(name_of(sts))}-[0-9]+" for t in templates))
    items, _ = await kube.list(PVC, ns)
    return [c for c in items if ours.fullmatch(name_of(c))]


def fields_the_custom_kind_lacks(custom: Obj) -> list[str]:
    """One line per field of ``custom`` (the twin to create) that the CRD's schema would prune, as ``path: rule``:
    an apps/v1 field rollwise's kind has no place for is refused, not dropped (the CRD rollwise ships, which
    ``rollwise run`` of this version reads)."""
    (version,) = crd()["spec"]["versions"]
    return [f"{err.path}: apps.rollwise.dev has no such field; remove it from the set first"
            for err in pruned_fields(custom, version["schema"]["openAPIV3Schema"])]


def custom_set_for(sts: Obj) -> Obj:
    """The ``apps.rollwise.dev`` twin of an ``apps/v1`` set: same name, labels, annotations and spec."""
    return twin_of(sts, api_version=CR_API_VERSION, spec=sts["spec"], dropped_annotations=_DROPPED_ANNOTATIONS)


async def _migrate(kube: Any, ns: str, name: str, timeout: float) -> int:
    sts = await kube.get(STATEFULSET, ns, name)
    problems = fields_the_custom_kind_lacks(custom_set_for(sts))
    if problems:
        for line in problems:
            print(f"error: statefulset.apps/{name}: {line}", file=sys.stderr)
        return 2
    refuse_unmovable(f"statefulset.apps/{name}", sts)
    await refuse_existing(kube, ROLLWISE_STATEFULSET, f"statefulset.apps.rollwise.dev/{name}", ns, name)
    pods = await owned(kube, POD, ns, sts)
    await relabel_revisions(kube, ns, sts)
    # The operator watches only what carries its label (cluster.client.scope): the pods and claims handed over get it.
    for pod in pods:
        await kube.patch(POD, ns, name_of(pod), _OWNED_PATCH)
    for claim in await _claims_of(kube, ns, sts):
        await kube.patch(PVC, ns, name_of(claim), _OWNED_PATCH)
    done = await hand_over(kube, old=sts, old_resource=STATEFULSET, old_label=f"statefulset.apps/{name}",
                           new=custom_set_for(sts), new_resource=ROLLWISE_STATEFULSET,
                           new_label=f"statefulset.apps.rollwise.dev/{name}", pods=pods, timeout=timeout,
                           adopter="`rollwise run`")
    return 0 if done else 1


_TO = {"apps.rollwise.dev": ROLLWISE_STATEFULSET, "apps.rollwise.dev/v1alpha1": ROLLWISE_STATEFULSET,
       "apps/v1": STATEFULSET, "apps": STATEFULSET}


def _run(args: argparse.Namespace) -> int:
    try:
        target = parse_target(args.target)
        to = _TO.get(args.to)
        if to is None:
            raise ValueError(f"--to {args.to!r}: one of apps.rollwise.dev (the default) or apps/v1")
        if target.kind == to:
            raise ValueError(f"{args.target!r} is already an {args.to} set: migrate sts/NAME moves a plain set "
                             "under rollwise, rsts/NAME --to apps/v1 moves it back")
        if args.strategy is not None and to != STATEFULSET:
            raise ValueError("--strategy applies only with --to apps/v1")
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if to == STATEFULSET:
        return run_on_cluster(args, lambda kube, ns: migrate_back(kube, ns, target.name, args.strategy, args.timeout))
    return run_on_cluster(args, lambda kube, ns: _migrate(kube, ns, target.name, args.timeout))


def add_migrate(sub: Any) -> None:
    p = sub.add_parser("migrate", help="move a StatefulSet between apps/v1 and rollwise without restarting a pod",
                       description="sts/NAME: create the apps.rollwise.dev StatefulSet with the same spec, "
                                   "orphan-delete the apps/v1 set, and wait until the operator has adopted every pod. "
                                   "rsts/NAME --to apps/v1: the same the other way, until kube-controller-manager "
                                   "has adopted every pod.")
    p.add_argument("target", metavar="sts/NAME|rsts/NAME", help="the set to move")
    p.add_argument("--to", default="apps.rollwise.dev", metavar="GROUP",
                   help="apps.rollwise.dev (default, for sts/NAME) or apps/v1 (for rsts/NAME)")
    p.add_argument("--strategy", choices=APPS_V1_STRATEGIES,
                   help="with --to apps/v1: the apps/v1 update strategy to use instead of the set's own (needed "
                        "for Recreate, EnforcedRollingUpdate and podProgressTimeoutSeconds)")
    add_connection_flags(p)
    p.add_argument("--timeout", type=duration, default=60.0,
                   help="how long to wait for the adoption, e.g. 90s or 5m (default 60s; 0: no limit)")
    p.set_defaults(run=_run)
