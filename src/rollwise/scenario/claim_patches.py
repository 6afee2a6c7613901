"""A scenario's patch steps that shrink a claim template are refused when the file is read (``rollwise validate``,
``simulate``), with the step's path: the API server would refuse the step (KEP-4650's update rule,
``api/claim_templates.py``), and a run would only report it as a rejected step halfway through.

The sets are followed as the steps write them (objects, then each ``apply`` and ``patch`` in order); only the claim
template rule is judged here, the other update rules stay the run's (a scenario may mean a step to be rejected).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rollwise.api.claim_templates import check_claim_template_update
from rollwise.api.errors import FieldError
from rollwise.api.meta import Obj
from rollwise.cluster.store.patching import merge_patch
from rollwise.scenario.step_schema import Step

__all__ = ["check_claim_patches"]


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or "default"), str(meta.get("name"))


def check_claim_patches(objects: Sequence[Obj], steps: Sequence[Step], errors: list[FieldError]) -> None:
    sets: dict[tuple[str, str], Mapping[str, Any]] = {
        _key(o): o for o in objects if o.get("kind") == "StatefulSet"}
    for step in steps:
        args = step.args
        if not isinstance(args, Mapping) or (args.get("kind") != "StatefulSet" and step.action == "patch"):
            continue
        if step.action == "apply":
            if args.get("kind") == "StatefulSet":
                sets[_key(args)] = args
            continue
        if step.action != "patch":
            continue
        key = (str(args.get("namespace") or "default"), str(args.get("name")))
        merge = args.get("merge")
        current = sets.get(key)
        if current is None or not isinstance(merge, Mapping):
            continue
        patched = merge_patch(current, merge)
        spec, old_spec = patched.get("spec"), current.get("spec")
        if isinstance(spec, Mapping) and isinstance(old_spec, Mapping):
            errors += [e.under(f"steps[{step.index}].patch.merge") for e in check_claim_template_update(spec, old_spec)]
        sets[key] = patched
