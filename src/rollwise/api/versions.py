"""What an apps/v1 StatefulSet may hold on a given Kubernetes release, and which of the seeds' proposals a set uses.

A real kube-apiserver of each release, with its feature gates (anchors-2026 §1.1, reference §1.1 and §2):

- KEP-961 ``maxUnavailable`` (gate ``MaxUnavailableStatefulSet``): alpha, off by default, up to 1.34; beta and on in
  1.35.0 to 1.35.3; turned off by default in 1.35.4 and 1.36 after regression #137409 (k/k #137904, #137926); on
  again from 1.37 (k/k #139466). With the gate off the server drops the field on create, unless the stored object
  already uses it.
- KEP-3541 ``Recreate`` (gate ``StatefulSetRecreateStrategy``): alpha in 1.37, off by default; no such gate or value
  before 1.37, where ``type: Recreate`` is an unsupported value (422).
- ``EnforcedRollingUpdate``, ``podProgressTimeoutSeconds``, ``progressDeadlineSeconds`` (seeds 000 and 003) and
  ``paused`` (Deployment's field, which apps/v1 StatefulSets lack) and ``lifecycle`` (OpenKruise's pre-delete
  hooks): in no release. A server does not know the fields
  (``fieldValidation=Strict`` refuses them, ``Warn`` and ``Ignore`` drop them) and answers 422 for the strategy
  type.

``proposal_uses`` lists where a set goes beyond its release; ``rollwise up`` turns each into a ``Warning: 299``
header (``--proposals on``) or into the real server's answer (``--proposals off``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.features import MAX_UNAVAILABLE, RECREATE
from rollwise.api.strategies import ENFORCED_BLOCK, ENFORCED_ROLLING_UPDATE, ON_DELETE, ROLLING_BLOCK, ROLLING_UPDATE
from rollwise.api.strategies import RECREATE as RECREATE_TYPE

__all__ = ["DEFAULT_KUBE_VERSION", "KubeRelease", "ProposalUse", "parse_kube_version", "proposal_uses"]

DEFAULT_KUBE_VERSION = "1.37"
OLDEST, NEWEST = (1, 31), (1, 37)
_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")

# How a real server answers a use of each kind: the field is dropped (a gate off), not known to it at all, or an
# enum value it does not support.
DROPPED, UNKNOWN_FIELD, UNSUPPORTED_VALUE = "dropped", "unknown field", "unsupported value"
FORBIDDEN_UPDATE = "forbidden update"
"""A change every release's ``ValidateStatefulSetUpdate`` refuses (KEP-4650's mutable claim templates)."""


@dataclass(frozen=True, slots=True)
class KubeRelease:
    """A Kubernetes release and the StatefulSet gates its API server was started with."""

    major: int
    minor: int
    patch: int = 0
    overrides: Mapping[str, bool] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    def known_gates(self) -> tuple[str, ...]:
        """The StatefulSet gates this release's kube-apiserver knows (a flag naming another is refused)."""
        return (MAX_UNAVAILABLE, RECREATE) if (self.major, self.minor) >= (1, 37) else (MAX_UNAVAILABLE,)

    def default_on(self, gate: str) -> bool:
        if gate == MAX_UNAVAILABLE:
            if (self.major, self.minor) == (1, 35):
                return self.patch < 4  # 1.35.4 turned it off (k/k #137926)
            return (self.major, self.minor) >= (1, 37)
        return False  # StatefulSetRecreateStrategy: alpha in 1.37

    def on(self, gate: str) -> bool:
        if gate not in self.known_gates():
            return False
        return self.overrides.get(gate, self.default_on(gate))

    def strategy_types(self) -> tuple[str, ...]:
        return (ROLLING_UPDATE, ON_DELETE, *((RECREATE_TYPE,) if self.on(RECREATE) else ()))


def parse_kube_version(text: str, gate_flags: Mapping[str, bool]) -> tuple[KubeRelease | None, list[FieldError]]:
    """``--kube-version`` (``1.36``, ``v1.35.4``) and the ``--feature-gates`` it is started with; the errors a real
    component would refuse to start with (a release rollwise does not model, a gate the release does not know)."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        return None, [FieldError(path="--kube-version", value=text, rule="must be MAJOR.MINOR or MAJOR.MINOR.PATCH, "
                                                                         "e.g. 1.36 or v1.35.4")]
    major, minor, patch = int(match[1]), int(match[2]), int(match[3] or 0)
    if not OLDEST <= (major, minor) <= NEWEST:
        return None, [FieldError(path="--kube-version", value=text, rule=f"rollwise models releases "
                                 f"{OLDEST[0]}.{OLDEST[1]} to {NEWEST[0]}.{NEWEST[1]}")]
    release = KubeRelease(major, minor, patch)
    errors = [FieldError(path="--feature-gates", value=name, kind="Unsupported value",
                         rule=f"unrecognized feature gate: Kubernetes {release.name} knows "
                              + ", ".join(release.known_gates()) + " (the seeds' proposals are --proposals)")
              for name in gate_flags if name not in release.known_gates()]
    return KubeRelease(major, minor, patch, dict(gate_flags)), errors


@dataclass(frozen=True, slots=True)
class ProposalUse:
    """One place where a set holds what its release's API server does not take, and how that server answers."""

    path: str
    value: Any
    answer: str  # DROPPED, UNKNOWN_FIELD or UNSUPPORTED_VALUE
    why: str


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def proposal_uses(obj: Mapping[str, Any], old: Mapping[str, Any] | None, release: KubeRelease) -> list[ProposalUse]:
    """Every use in an apps/v1 StatefulSet of a field or value its release refuses or drops. ``old``: the stored
    object on an update, whose gated values stay acceptable (the API server's "already in use" rule)."""
    spec = _mapping(obj.get("spec"))
    old_strategy = _mapping(_mapping(_mapping(old).get("spec")).get("updateStrategy"))
    strategy = _mapping(spec.get("updateStrategy"))
    uses: list[ProposalUse] = []
    if "progressDeadlineSeconds" in spec:
        uses.append(ProposalUse("spec.progressDeadlineSeconds", spec["progressDeadlineSeconds"], UNKNOWN_FIELD,
                                "a proposal (KEP-3541's progress deadline), in no Kubernetes release"))
    if "paused" in spec:
        uses.append(ProposalUse("spec.paused", spec["paused"], UNKNOWN_FIELD,
                                "a proposal (Deployment's pause for StatefulSets), in no Kubernetes release"))
    if "lifecycle" in spec:
        uses.append(ProposalUse("spec.lifecycle", spec["lifecycle"], UNKNOWN_FIELD,
                                "a proposal (OpenKruise's pre-delete hooks for StatefulSets), in no Kubernetes "
                                "release"))
    stype = strategy.get("type")
    if stype == ENFORCED_ROLLING_UPDATE:
        uses.append(ProposalUse("spec.updateStrategy.type", stype, UNSUPPORTED_VALUE,
                                "a proposal (KEP-3541, seed 003), in no Kubernetes release"))
    elif stype == RECREATE_TYPE and not release.on(RECREATE) and old_strategy.get("type") != stype:
        why = (f"alpha behind the {RECREATE} feature gate, off" if RECREATE in release.known_gates()
               else "not in this release (alpha from 1.37, KEP-3541)")
        uses.append(ProposalUse("spec.updateStrategy.type", stype, UNSUPPORTED_VALUE, why))
    if ENFORCED_BLOCK in strategy:
        uses.append(ProposalUse(f"spec.updateStrategy.{ENFORCED_BLOCK}", strategy[ENFORCED_BLOCK],
                                UNKNOWN_FIELD, "a proposal (seed 003), in no Kubernetes release"))
    block = _mapping(strategy.get(ROLLING_BLOCK))
    if "podProgressTimeoutSeconds" in block:
        uses.append(ProposalUse("spec.updateStrategy.rollingUpdate.podProgressTimeoutSeconds",
                                block["podProgressTimeoutSeconds"], UNKNOWN_FIELD,
                                "a proposal (KEP-3541, seed 000), in no Kubernetes release"))
    if "podUpdatePolicy" in block:
        uses.append(ProposalUse("spec.updateStrategy.rollingUpdate.podUpdatePolicy", block["podUpdatePolicy"],
                                UNKNOWN_FIELD, "OpenKruise's in-place update, in no Kubernetes release"))
    if "steps" in block:
        uses.append(ProposalUse("spec.updateStrategy.rollingUpdate.steps", block["steps"], UNKNOWN_FIELD,
                                "canary steps (Argo Rollouts' and OpenKruise's names), in no Kubernetes release"))
    if "reserveOrdinals" in spec:
        uses.append(ProposalUse("spec.reserveOrdinals", spec["reserveOrdinals"], UNKNOWN_FIELD,
                                "OpenKruise's reserved ordinals, in no Kubernetes release"))
    if "volumeClaimUpdatePolicy" in spec:
        uses.append(ProposalUse("spec.volumeClaimUpdatePolicy", spec["volumeClaimUpdatePolicy"], UNKNOWN_FIELD,
                                "a proposal (KEP-4650, provisional), in no Kubernetes release"))
    old_spec = _mapping(_mapping(old).get("spec"))
    if old is not None and spec.get("volumeClaimTemplates") != old_spec.get("volumeClaimTemplates"):
        uses.append(ProposalUse("spec.volumeClaimTemplates", None, FORBIDDEN_UPDATE,
                                "a proposal (KEP-4650, provisional): no release lets claim templates change"))
    if ("maxUnavailable" in block and not release.on(MAX_UNAVAILABLE)
            and _mapping(old_strategy.get(ROLLING_BLOCK)).get("maxUnavailable") is None):
        uses.append(ProposalUse("spec.updateStrategy.rollingUpdate.maxUnavailable", block["maxUnavailable"],
                                DROPPED, f"the {MAX_UNAVAILABLE} feature gate (KEP-961) is off in this release"))
    return uses


def warning(use: ProposalUse, release: KubeRelease) -> str:
    """The ``Warning: 299`` text for one use under ``--proposals on``."""
    answer = {DROPPED: "drops it", UNKNOWN_FIELD: "does not know the field",
              UNSUPPORTED_VALUE: "refuses it (422)", FORBIDDEN_UPDATE: "refuses the change (422)"}[use.answer]
    return (f"{use.path}: a Kubernetes {release.name} API server {answer}: {use.why}; rollwise up keeps it "
            f"(--proposals on); on a cluster, use apps.rollwise.dev/v1alpha1 StatefulSet")
