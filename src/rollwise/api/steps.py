"""Canary steps (``spec.updateStrategy.rollingUpdate.steps``): their shape, their validation and their reading.

Names and meaning follow Argo Rollouts' canary strategy (``strategy.canary.steps``, docs ``features/canary``) and
OpenKruise Rollout's StatefulSet batches (``replicas: 1``, ``replicas: "50%"``), which move a partition:

- ``replicas: N`` or ``replicas: "P%"`` (of ``spec.replicas``, rounded up, as OpenKruise rounds a batch): this many
  pods at the update revision, highest ordinals first. A later, smaller step does not take pods back (that is an
  abort): the count in force is the largest so far, as a partition only moves down.
- ``pause: {duration: D}``: D seconds (an integer, or ``"30s"``, ``"5m"``, ``"1h"``, as Argo's ``pause.duration``);
  ``pause: {}``: until ``rollwise rollout promote``.
- ``analysis: {templates: [{templateName: NAME}], args: [{name, value}]}``: run the templates as one AnalysisRun
  and pass once it succeeds (controllers/statefulset/analysis.py creates it and reads its phase).

After the last step, the rest of the pods are updated. Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.in_place import RECREATE_POLICY
from rollwise.api.strategies import ROLLING_BLOCK, handed_to_quorum, strategy_block
from rollwise.api.validation_rules import is_int, type_error

__all__ = [
    "MAX_STEPS",
    "QUORUM_BLOCK_DEFAULTS",
    "QUORUM_BLOCK_RULE",
    "STEP_KINDS",
    "NothingToPromote",
    "Step",
    "canary_limit",
    "check_quorum_block",
    "check_steps",
    "floor_at_step",
    "parse_duration",
    "promoted_status",
    "recorded_floor",
    "set_steps",
    "steps_of",
    "target_replicas",
    "wanted_at_step",
]

STEP_KINDS = ("replicas", "pause", "analysis")
MAX_STEPS = 64
"""Far above any canary; bounds the CRD's CEL rules over the list."""
_DURATION = re.compile(r"([0-9]+)(s|m|h)?")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600}
_PERCENT = re.compile(r"([0-9]+)%")
_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DURATION_RULE = "must be a whole number of seconds, or a number with the unit s, m or h (30s, 5m, 1h)"
REPLICAS_RULE = "must be an integer of at least 0 or a percentage of replicas ('0%' to '100%')"
ONE_OF_RULE = "must have exactly one of replicas, pause, analysis"


@dataclass(frozen=True, slots=True)
class Step:
    """One step, read from a valid spec: ``kind`` is one of ``STEP_KINDS``."""

    kind: str
    replicas: int | str | None = None
    duration: int | None = None
    """A timed pause's seconds; None for ``pause: {}`` (until promoted)."""
    templates: tuple[str, ...] = ()
    """An analysis step's AnalysisTemplate names, in order."""
    args: tuple[tuple[str, str], ...] = ()
    """An analysis step's arguments, (name, value), in order."""

    def describe(self) -> str:
        if self.kind == "replicas":
            return f"replicas {self.replicas}"
        if self.kind == "pause":
            return "pause until promoted" if self.duration is None else f"pause {self.duration}s"
        return "analysis"


def parse_duration(value: object) -> int | None:
    """Seconds of a pause's ``duration``, or None when it is not one (an integer >= 0, or ``30s``/``5m``/``1h``)."""
    if is_int(value):
        return int(value) if int(value) >= 0 else None  # type: ignore[call-overload]
    if isinstance(value, str):
        match = _DURATION.fullmatch(value)
        if match is not None:
            return int(match[1]) * _UNITS[match[2] or ""]
    return None


def target_replicas(value: int | str | None, replicas: int) -> int:
    """The pods a ``replicas`` step brings to the update revision: a percentage of ``replicas`` rounded up, never
    above ``replicas``."""
    if isinstance(value, str):
        match = _PERCENT.fullmatch(value)
        count = math.ceil(int(match[1]) * replicas / 100) if match is not None else 0
    else:
        count = int(value or 0)
    return max(0, min(count, replicas))


def wanted_at_step(steps: Sequence[Step], index: int, replicas: int) -> int:
    """The pods step ``index`` (before the last is done) has at the update revision: the largest replicas step so
    far (a later, smaller one takes none back; that is an abort)."""
    return max((target_replicas(s.replicas, replicas) for s in steps[:index + 1] if s.kind == "replicas"),
               default=0)


def floor_at_step(steps: Sequence[Step], index: int, replicas: int, spec_floor: int) -> int:
    """The effective partition at step ``index``: the spec's once past the last step, else what the largest
    replicas step so far leaves below it (a partition only moves down), never below the spec's."""
    if index >= len(steps):
        return spec_floor
    return max(spec_floor, replicas - wanted_at_step(steps, index, replicas))


def set_steps(sts: Mapping[str, Any], update_type: str | None = None) -> tuple[Step, ...]:
    """The set's canary steps: those of the strategy block in effect (``update_type``, the declared one when not
    given); a quorum-aware set (``type: OnDelete``, which has no block of its own) keeps them in
    ``rollingUpdate.steps``, which validation allows there for that alone."""
    strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
    if handed_to_quorum(sts):
        block = strategy.get(ROLLING_BLOCK)
        return steps_of(block if isinstance(block, Mapping) else None)
    return steps_of(strategy_block(strategy, update_type))


def _recorded_index(status: Mapping[str, Any]) -> int:
    recorded = status.get("currentStepIndex")
    return recorded if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded >= 0 else 0


def canary_limit(sts: Mapping[str, Any]) -> int | None:
    """How many members a quorum-aware set may have at the update revision at the step its status records, or
    None when its steps cap nothing: no steps, no rollout under way, past the last step, ``promote --full``, an
    abort (its status makes the stable revision the update revision). The quorum-aware controller picks which
    members (followers first, the leader last), so a step caps a count where a rolling update's moves a partition."""
    steps = set_steps(sts)
    status = sts.get("status") or {}
    if not steps or status.get("currentRevision") == status.get("updateRevision") or status.get("promoteFull") \
            or status.get("abort") is True:
        return None
    index = _recorded_index(status)
    if index >= len(steps):
        return None
    replicas = (sts.get("spec") or {}).get("replicas", 1)
    return wanted_at_step(steps, index, replicas if is_int(replicas) else 1)


def recorded_floor(sts: Mapping[str, Any], block: Mapping[str, Any] | None, spec_floor: int) -> int:
    """The effective partition of the step the set's status records (``limits_of``; the invariants judge with it):
    the spec's without steps, with no rollout under way, or after ``promote --full``."""
    steps = steps_of(block)
    status = sts.get("status") or {}
    if not steps or status.get("currentRevision") == status.get("updateRevision") or status.get("promoteFull"):
        return spec_floor
    index = _recorded_index(status)
    replicas = (sts.get("spec") or {}).get("replicas", 1)
    return floor_at_step(steps, index, replicas if is_int(replicas) else 1, spec_floor)


def steps_of(block: Mapping[str, Any] | None) -> tuple[Step, ...]:
    """The steps of a strategy block (``rollingUpdate``), read from a valid spec; () without any."""
    raw = block.get("steps") if block is not None else None
    if not isinstance(raw, list):
        return ()
    out: list[Step] = []
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        if "replicas" in item:
            out.append(Step("replicas", replicas=item["replicas"]))
        elif "pause" in item:
            pause = item["pause"] if isinstance(item["pause"], Mapping) else {}
            out.append(Step("pause", duration=parse_duration(pause.get("duration"))))
        elif "analysis" in item:
            out.append(_analysis_step(item["analysis"]))
    return tuple(out)


def _analysis_step(raw: object) -> Step:
    body = raw if isinstance(raw, Mapping) else {}
    templates = tuple(str(ref["templateName"]) for ref in body.get("templates") or ()
                      if isinstance(ref, Mapping) and ref.get("templateName"))
    args = tuple((str(arg["name"]), str(arg.get("value", ""))) for arg in body.get("args") or ()
                 if isinstance(arg, Mapping) and arg.get("name"))
    return Step("analysis", templates=templates, args=args)


def check_steps(value: object, path: str) -> list[FieldError]:
    """Every problem with a ``steps`` list, each with its field path."""
    if not isinstance(value, list):
        return [type_error(path, value, "a list")]
    if len(value) > MAX_STEPS:
        return [FieldError(path=path, kind="Too many", rule=f"must have at most {MAX_STEPS} items")]
    errors: list[FieldError] = []
    for i, step in enumerate(value):
        at = f"{path}[{i}]"
        if not isinstance(step, Mapping):
            errors.append(type_error(at, step, "a mapping"))
            continue
        kinds = [k for k in STEP_KINDS if k in step]
        if len(kinds) != 1:
            errors.append(FieldError(path=at, value=dict(step), rule=ONE_OF_RULE))
            continue
        errors += _CHECKS[kinds[0]](step[kinds[0]], f"{at}.{kinds[0]}")
    return errors


def _check_replicas(value: object, path: str) -> list[FieldError]:
    if is_int(value) and int(value) >= 0:  # type: ignore[call-overload]
        return []
    if isinstance(value, str) and (match := _PERCENT.fullmatch(value)) is not None and int(match[1]) <= 100:
        return []
    return [FieldError(path=path, value=value, rule=REPLICAS_RULE)]


def _check_pause(value: object, path: str) -> list[FieldError]:
    if not isinstance(value, Mapping):
        return [type_error(path, value, "a mapping ({} waits until promoted; {duration: 30s} waits 30 s)")]
    if value.get("duration") is not None and parse_duration(value["duration"]) is None:
        return [FieldError(path=f"{path}.duration", value=value["duration"], rule=DURATION_RULE)]
    return []


def _check_analysis(value: object, path: str) -> list[FieldError]:
    """Argo's inline analysis step: ``templates`` (at least one ``templateName``) and optional ``args``."""
    if not isinstance(value, Mapping):
        return [type_error(path, value, "a mapping")]
    templates = value.get("templates")
    if not isinstance(templates, list) or not templates:
        return [FieldError(path=f"{path}.templates", kind="Required value",
                           rule="at least one template ({templateName: NAME}) is required")]
    errors: list[FieldError] = []
    for i, ref in enumerate(templates):
        name = ref.get("templateName") if isinstance(ref, Mapping) else None
        if not isinstance(name, str) or not name:
            errors.append(FieldError(path=f"{path}.templates[{i}].templateName", kind="Required value",
                                     rule="the name of an AnalysisTemplate in the set's namespace is required"))
        elif len(name) > 253 or _NAME.fullmatch(name) is None:
            errors.append(FieldError(path=f"{path}.templates[{i}].templateName", value=name,
                                     rule="must be a lowercase RFC 1123 subdomain (an object name)"))
    errors += _check_args(value.get("args"), f"{path}.args")
    return errors


def _check_args(args: object, path: str) -> list[FieldError]:
    if args is None:
        return []
    if not isinstance(args, Sequence) or isinstance(args, str):
        return [type_error(path, args, "a list")]
    return [FieldError(path=f"{path}[{i}].name", kind="Required value", rule="an argument needs a name")
            for i, arg in enumerate(args) if not isinstance(arg, Mapping) or not arg.get("name")]


_CHECKS = {"replicas": _check_replicas, "pause": _check_pause, "analysis": _check_analysis}

QUORUM_BLOCK_DEFAULTS: Mapping[str, object] = {"partition": 0, "maxUnavailable": 1, "podUpdatePolicy": RECREATE_POLICY}
"""What a ``rollingUpdate`` block holds besides its steps once the CRD's schema has defaulted it: the only values of
RollingUpdate's own fields a quorum-aware set's block may carry."""
QUORUM_BLOCK_RULE = ("a quorum-aware set (type OnDelete) carries rollingUpdate for its steps alone: the quorum-aware "
                     "controller picks the members (followers first, the leader last; the batch is the annotation "
                     "rollwise.dev/max-unavailable-members)")


def check_quorum_block(block: object, path: str) -> list[FieldError]:
    """A quorum-aware set's ``rollingUpdate`` (it is ``type: OnDelete``): its ``steps``, and nothing of
    RollingUpdate's own, whose partition and budget mean nothing where the quorum-aware controller picks which
    member goes (seed 001); the defaults the CRD fills in pass."""
    if not isinstance(block, Mapping):
        return [type_error(path, block, "a mapping")]
    errors: list[FieldError] = []
    for key, value in block.items():
        if key == "steps":
            errors += check_steps(value, f"{path}.steps")
        elif key not in QUORUM_BLOCK_DEFAULTS or value != QUORUM_BLOCK_DEFAULTS[key]:
            errors.append(FieldError(path=f"{path}.{key}", kind="Forbidden", rule=QUORUM_BLOCK_RULE))
    return errors


class NothingToPromote(ValueError):
    """``promote`` on a set whose rollout has no step left to skip (kubectl-argo-rollouts refuses the same way)."""


def promoted_status(sts: Mapping[str, Any], *, full: bool) -> dict[str, Any]:
    """The status ``rollwise rollout promote`` writes through the status subresource, as Argo's promote patches
    ``status.currentStepIndex`` (past the step it stands at) or ``status.promoteFull``
    (``pkg/kubectl-argo-rollouts/cmd/promote``). The controller reads both (controllers/statefulset/steps.py); the
    write carries the resourceVersion it read, so a step the controller moved past meanwhile is not skipped too."""
    status = dict(sts.get("status") or {})
    steps = set_steps(sts)  # rollingUpdate or enforcedRollingUpdate (a quorum-aware set: rollingUpdate)
    name = (sts.get("metadata") or {}).get("name", "")
    if not steps:
        raise NothingToPromote(f"{name} has no canary steps (spec.updateStrategy.rollingUpdate.steps)")
    index = status.get("currentStepIndex")
    if status.get("currentRevision") == status.get("updateRevision") or not isinstance(index, int) \
            or index >= len(steps) or status.get("promoteFull") is True:
        raise NothingToPromote(f"{name} has no rollout under way to promote")
    if full:
        status["promoteFull"] = True
    else:
        status["currentStepIndex"] = index + 1
        status.pop("pauseStartTime", None)
    return status
