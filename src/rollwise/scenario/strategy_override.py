"""``--strategy TYPE[:key=value,...]``: replace every StatefulSet's update strategy (spec/simulate.md)."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.in_place import IN_PLACE_IF_POSSIBLE, POD_UPDATE_POLICIES
from rollwise.api.intstr import PERCENT
from rollwise.api.meta import Obj
from rollwise.api.strategies import (
    BLOCK_KEYS,
    KINDS,
    NAMES,
    ON_DELETE,
    QUORUM_AWARE_POLICY,
    ROLLING_BLOCK,
    ROLLING_KINDS,
    ROLLING_UPDATE,
    UPDATE_POLICY,
)
from rollwise.api.validation_rules import check_enum, check_int, check_max_unavailable

__all__ = ["CANARY", "IN_PLACE", "QUORUM_AWARE_ANNOTATION", "STRATEGY_NAMES", "StrategyOverride", "parse_strategy"]

IN_PLACE = "InPlace"
"""Shorthand for RollingUpdate with ``podUpdatePolicy: InPlaceIfPossible`` (api/in_place.py), as QuorumAware is for
OnDelete plus its annotation: what ``compare`` sets beside a recreating rollout."""
QUORUM_AWARE = QUORUM_AWARE_POLICY
CANARY = "Canary"
"""Shorthand for RollingUpdate keeping the canary ``steps`` the file gives the set (docs/canary.md): what
``compare`` sets beside a plain rolling update, which drops them."""
STRATEGY_NAMES = (*NAMES, QUORUM_AWARE, IN_PLACE, CANARY)
"""The strategy table's types (api/strategies.py), then the shorthands."""
QUORUM_AWARE_ANNOTATION = UPDATE_POLICY  # api/strategies.handed_to_quorum reads it
LEADER_TRANSFER_ANNOTATION = "rollwise.dev/leader-transfer"
_KEYS = {**dict.fromkeys(ROLLING_KINDS, ("maxUnavailable", "partition", "podProgressTimeoutSeconds",
                                           "podUpdatePolicy")),
         IN_PLACE: ("maxUnavailable", "partition", "podProgressTimeoutSeconds"),
         CANARY: ("maxUnavailable", "partition", "podProgressTimeoutSeconds"),
         QUORUM_AWARE: ("leaderTransfer",)}

_DIGITS = re.compile(r"[0-9]{1,18}")
_MINIMUM = {"partition": 0, "podProgressTimeoutSeconds": 1}


@dataclass(frozen=True, slots=True, kw_only=True)
class StrategyOverride:
    text: str
    kind: str
    options: Mapping[str, int | str] = field(default_factory=dict)

    def apply(self, obj: Obj) -> Obj:
        """A copy of the manifest with ``spec.updateStrategy`` replaced."""
        out = copy.deepcopy(dict(obj))
        spec = out.setdefault("spec", {})
        meta = out.setdefault("metadata", {})
        annotations = dict(meta.get("annotations") or {})
        annotations.pop(QUORUM_AWARE_ANNOTATION, None)
        if self.kind == QUORUM_AWARE:
            spec["updateStrategy"] = {"type": ON_DELETE}
            annotations[QUORUM_AWARE_ANNOTATION] = QUORUM_AWARE
            if "leaderTransfer" in self.options:  # docs/quorum-aware.md "Leader transfer"; absent: the file's own
                annotations[LEADER_TRANSFER_ANNOTATION] = str(self.options["leaderTransfer"])
        elif self.kind in ROLLING_KINDS:  # the options go in the type's own block
            spec["updateStrategy"] = {"type": self.kind, str(KINDS[self.kind].block): dict(self.options)}
        elif self.kind == CANARY:
            steps = next((block["steps"] for block in map((spec.get("updateStrategy") or {}).get, BLOCK_KEYS)
                          if isinstance(block, Mapping) and block.get("steps")), None)
            spec["updateStrategy"] = {"type": ROLLING_UPDATE,
                                      ROLLING_BLOCK: {**self.options, **({"steps": steps} if steps else {})}}
        elif self.kind == IN_PLACE:
            spec["updateStrategy"] = {"type": ROLLING_UPDATE,
                                      ROLLING_BLOCK: {**self.options, "podUpdatePolicy": IN_PLACE_IF_POSSIBLE}}
        else:
            spec["updateStrategy"] = {"type": self.kind}
        if annotations:
            meta["annotations"] = annotations
        else:
            meta.pop("annotations", None)
        return out


def parse_strategy(text: str, *, path: str = "--strategy") -> tuple[StrategyOverride | None, list[FieldError]]:
    """Parse ``RollingUpdate:maxUnavailable=2,partition=3`` and friends."""
    kind, _, rest = text.partition(":")
    if kind not in STRATEGY_NAMES:
        return None, [FieldError(path=path, kind="Unsupported value", value=text,
                                 rule="supported values: " + ", ".join(f'"{s}"' for s in STRATEGY_NAMES))]
    options: dict[str, int | str] = {}
    errors: list[FieldError] = []
    allowed = _KEYS.get(kind, ())
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, sep, value = item.partition("=")
        if key not in allowed or not sep:
            rule = (f"options allowed for {kind}: " + ", ".join(allowed)) if allowed else f"{kind} takes no options"
            errors.append(FieldError(path=path, value=item, rule=rule))
            continue
        if key == "leaderTransfer":  # the annotation's own values
            if value in ("true", "false"):
                options[key] = value
            else:
                errors.append(FieldError(path=path, value=item, rule='leaderTransfer must be "true" or "false"'))
            continue
        if key == "podUpdatePolicy":  # a name, not a number (api/in_place.py)
            problems = check_enum(value, key, POD_UPDATE_POLICIES)
            errors += [FieldError(path=path, value=item, rule=f"{e.path} {e.rule}") for e in problems]
            if not problems:
                options[key] = value
            continue
        parsed = _value(value)
        if parsed is None or (key != "maxUnavailable" and not isinstance(parsed, int)):
            errors.append(FieldError(path=path, value=item, rule=f"{key} must be an integer"
                                     + (" or a percentage" if key == "maxUnavailable" else "")))
            continue
        # the same rules as the field in a manifest (reference §2), reported against the flag
        problems = (check_max_unavailable(parsed, key) if key == "maxUnavailable"
                    else check_int(parsed, key, minimum=_MINIMUM[key]))
        errors += [FieldError(path=path, value=item, rule=f"{e.path} {e.rule}") for e in problems]
        if not problems:
            options[key] = parsed
    return (StrategyOverride(text=text, kind=kind, options=options) if not errors else None), errors


def _value(text: str) -> Any:
    if _DIGITS.fullmatch(text):  # str.isdigit() would let "²" through to int()
        return int(text)
    if PERCENT.match(text):
        return text
    return None
