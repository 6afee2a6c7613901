"""``rollwise up --kube-version/--feature-gates/--proposals``: an apps/v1 StatefulSet judged as one release's API
server judges it (``rollwise.api.versions``).

- ``--proposals on`` (the default): the seeds' proposals stay usable on apps/v1 (trying them is the point of a lab),
  the store and the controllers run with every seed's gate on, and every write that uses one gets a
  ``Warning: 299`` header per use saying what a real server of that release does with it and that
  ``apps.rollwise.dev`` is the way on a cluster (kubectl prints ``Warning: ...`` on stderr).
- ``--proposals off``: the server is that release's: gates as the release and ``--feature-gates`` set them; a
  gated field a disabled gate covers is dropped on create (unless already in use), a value the release does not
  support is a 422, and a field no release has is an unknown field (``fieldValidation=Strict``: 422 naming it;
  ``Warn``: dropped with a warning; ``Ignore``: dropped).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.errors import FieldError, Invalid
from rollwise.api.features import ENFORCED_ROLLING_UPDATE, MAX_UNAVAILABLE, RECREATE, FeatureGates
from rollwise.api.meta import Obj, name_of
from rollwise.api.validation import SPEC_UPDATE_FORBIDDEN
from rollwise.api.versions import (
    DROPPED,
    FORBIDDEN_UPDATE,
    UNKNOWN_FIELD,
    UNSUPPORTED_VALUE,
    KubeRelease,
    parse_kube_version,
    proposal_uses,
    warning,
)
from rollwise.cluster.resources import STATEFULSET, GroupKind

__all__ = ["Versioning"]


@dataclass(frozen=True, slots=True)
class Versioning:
    release: KubeRelease
    proposals: bool = True

    @classmethod
    def default(cls) -> Versioning:
        release, _ = parse_kube_version("1.37", {})
        assert release is not None
        return cls(release)

    def gates(self) -> FeatureGates:
        """The gates the store's admission and the controllers run with."""
        if self.proposals:
            return FeatureGates()
        return FeatureGates().with_overrides({MAX_UNAVAILABLE: self.release.on(MAX_UNAVAILABLE),
                                              RECREATE: self.release.on(RECREATE), ENFORCED_ROLLING_UPDATE: False})

    def admit(self, gk: GroupKind, new: Obj, old: Obj | None) -> Obj:
        """``--proposals off``: the release's answer to what the set uses beyond it (drop, or 422)."""
        if self.proposals or gk != STATEFULSET:
            return new
        uses = proposal_uses(new, old, self.release)
        if any(u.answer == FORBIDDEN_UPDATE for u in uses):
            # every release's ValidateStatefulSetUpdate: one Forbidden error on the whole spec
            forbidden = [FieldError(path="spec", kind="Forbidden", rule=SPEC_UPDATE_FORBIDDEN)]
            raise Invalid(f'StatefulSet.apps "{name_of(new)}" is invalid: {forbidden[0]}', errors=forbidden)
        refused = [u for u in uses if u.answer == UNSUPPORTED_VALUE]
        if refused:
            supported = ", ".join(f'"{t}"' for t in self.release.strategy_types())
            errors = [FieldError(path=u.path, kind="Unsupported value", value=u.value,
                                 rule=f"supported values: {supported}") for u in refused]
            raise Invalid(f'StatefulSet.apps "{name_of(new)}" is invalid: ' + "; ".join(map(str, errors)),
                          errors=errors)
        for use in uses:
            if use.answer in (DROPPED, UNKNOWN_FIELD):
                _drop(new, use.path)
        return new

    def unknown_fields(self, gk: GroupKind, body: Any) -> list[FieldError]:
        """``--proposals off``: the fields of a request body (an object or a merge patch) no release has."""
        if self.proposals or gk != STATEFULSET or not isinstance(body, Mapping):
            return []
        return [FieldError(path=u.path, kind="Unsupported value", value=u.path.rsplit(".", 1)[-1],
                           rule="unknown field") for u in proposal_uses(body, None, self.release)
                if u.answer == UNKNOWN_FIELD]

    def warnings(self, gk: GroupKind, stored: Obj, body: Any) -> list[str]:
        """``--proposals on``: one warning per use in the stored set, on every write (no "already in use": no real
        server ever took it). maxUnavailable only when the request itself names it: with every gate on,
        defaulting adds ``maxUnavailable: 1`` to sets that never asked for it."""
        if not self.proposals or gk != STATEFULSET:
            return []
        return [warning(u, self.release) for u in proposal_uses(stored, None, self.release)
                if u.answer != DROPPED or _mentions(body, "maxUnavailable")]


def _drop(obj: Obj, path: str) -> None:
    *parents, leaf = path.split(".")
    node: Any = obj
    for key in parents:
        node = node.get(key) if isinstance(node, Mapping) else None
    if isinstance(node, dict):
        node.pop(leaf, None)


def _mentions(value: Any, key: str) -> bool:
    if isinstance(value, Mapping):
        return key in value or any(_mentions(v, key) for v in value.values())
    if isinstance(value, list):
        return any(_mentions(v, key) for v in value)
    return False
