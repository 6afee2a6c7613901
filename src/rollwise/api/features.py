"""Feature gates as a frozen value passed in, never a global (STYLE: feature gates are inputs)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from rollwise.api.errors import FieldError

__all__ = ["GATE_NAMES", "FeatureGates", "parse_gate_flags", "parse_gate_flags_any", "parse_gate_overrides"]

MAX_UNAVAILABLE = "MaxUnavailableStatefulSet"  # KEP-961
RECREATE = "StatefulSetRecreateStrategy"  # KEP-3541 (current)
ENFORCED_ROLLING_UPDATE = "EnforcedRollingUpdateInStatefulSet"  # KEP-3541 (earlier draft)
QUORUM_AWARE = "QuorumAwareUpdatesWithOnDelete"  # etcd-druid DEP-07

GATE_NAMES = (MAX_UNAVAILABLE, RECREATE, ENFORCED_ROLLING_UPDATE, QUORUM_AWARE)


@dataclass(frozen=True, slots=True)
class FeatureGates:
    """Which of the seeds' gates are on. All default to on: rollwise exists to offer them."""

    enabled: frozenset[str] = field(default_factory=lambda: frozenset(GATE_NAMES))

    def on(self, name: str) -> bool:
        return name in self.enabled

    def with_overrides(self, overrides: Mapping[str, bool]) -> FeatureGates:
        on = set(self.enabled)
        for name, value in overrides.items():
            (on.add if value else on.discard)(name)
        return replace(self, enabled=frozenset(on))

    @property
    def max_unavailable(self) -> bool:
        return MAX_UNAVAILABLE in self.enabled

    @property
    def recreate(self) -> bool:
        return RECREATE in self.enabled

    @property
    def quorum_aware(self) -> bool:
        return QUORUM_AWARE in self.enabled


def parse_gate_overrides(raw: object, *, path: str) -> tuple[dict[str, bool], list[FieldError]]:
    """Check a ``featureGates:`` mapping: known names only, boolean values only."""
    if not isinstance(raw, Mapping):
        return {}, [FieldError(path=path, rule="must be a mapping of gate name to true/false", value=raw)]
    out: dict[str, bool] = {}
    errors: list[FieldError] = []
    for name, value in raw.items():
        if name not in GATE_NAMES:
            errors.append(
                FieldError(path=f"{path}.{name}", kind="Unsupported value", value=name,
                           rule="supported values: " + ", ".join(f'"{g}"' for g in GATE_NAMES))
            )
        elif not isinstance(value, bool):
            errors.append(FieldError(path=f"{path}.{name}", value=value, rule="must be true or false"))
        else:
            out[name] = value
    return out, errors


def parse_gate_flags_any(text: str) -> tuple[dict[str, bool], list[FieldError]]:
    """``--feature-gates=Name=false,Other=true`` as Kubernetes components split it, any names (the caller knows
    which gates its release has)."""
    out: dict[str, bool] = {}
    errors: list[FieldError] = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name or value.lower() not in ("true", "false"):
            errors.append(FieldError(path="--feature-gates", value=item, rule="must be Name=true or Name=false"))
            continue
        out[name] = value.lower() == "true"
    return out, errors


def parse_gate_flags(text: str) -> tuple[dict[str, bool], list[FieldError]]:
    """Parse ``--feature-gates=Name=false,Other=true`` the way Kubernetes components do."""
    raw: dict[str, object] = {}
    errors: list[FieldError] = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or value.lower() not in ("true", "false"):
            errors.append(FieldError(path="--feature-gates", value=item, rule="must be Name=true or Name=false"))
            continue
        raw[name] = value.lower() == "true"
    gates, more = parse_gate_overrides(raw, path="--feature-gates")
    return gates, errors + more
