"""When the quorum-aware controller engages, and the per-set annotations that tune it.

seed 001 (DEP-07) hands a set to the controller through ``spec.updateStrategy.type: OnDelete`` and the operator's
feature gate; rollwise adds the annotation ``rollwise.dev/update-policy: QuorumAware`` so that a plain OnDelete
set stays under manual control (spec "The quorum-aware controller").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.errors import FieldError
from rollwise.api.handover import leaves_pods_alone
from rollwise.api.meta import annotations_of
from rollwise.api.role_probe import RoleProbe, check_role_probe, probe_of
from rollwise.api.strategies import QUORUM_AWARE_POLICY, UPDATE_POLICY, handed_to_quorum
from rollwise.api.validation_rules import check_labels
from rollwise.controllers.view import SetView

__all__ = [
    "AUTO",
    "DEFAULT_LEADER_VALUE",
    "DEFAULT_LEASE_TEMPLATE",
    "DEFAULT_TRANSFER_TIMEOUT",
    "LEADER_TRANSFER",
    "LEADER_TRANSFER_TIMEOUT",
    "LEADER_VALUE",
    "LEASE_TEMPLATE",
    "MAX_UNAVAILABLE_MEMBERS",
    "MEMBER_CONTAINER",
    "PATRONI",
    "QUORUM_AWARE_POLICY",
    "ROLE_LABEL",
    "UPDATE_POLICY",
    "Settings",
    "engaged",
    "handed_to_quorum",
    "read_settings",
]

MEMBER_CONTAINER = "rollwise.dev/member-container"
LEASE_TEMPLATE = "rollwise.dev/member-lease-template"
MAX_UNAVAILABLE_MEMBERS = "rollwise.dev/max-unavailable-members"
ROLE_LABEL = "rollwise.dev/role-label"
LEADER_VALUE = "rollwise.dev/leader-value"
LEADER_TRANSFER = "rollwise.dev/leader-transfer"
LEADER_TRANSFER_TIMEOUT = "rollwise.dev/leader-transfer-timeout-seconds"
DEFAULT_TRANSFER_TIMEOUT = 30.0
PATRONI = "patroni"
"""``rollwise.dev/leader-transfer: patroni``: rollwise answers its own hand-over request with Patroni's
``POST /switchover``, sent to the leader's pod at the role probe's port (runtime/hand_overs.py); no agent needed."""
"""How long the controller waits for a requested hand-over before it deletes the leader anyway."""

AUTO = "auto"
DEFAULT_LEASE_TEMPLATE = "{pod}"
DEFAULT_LEADER_VALUE = "leader"

_PLACEHOLDER = "{pod}"
# A Lease name is a DNS-1123 subdomain; the template is checked with a stand-in pod name.
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_POSITIVE_INT = re.compile(r"[1-9][0-9]{0,8}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """The controller's knobs for one set, defaults filled in.

    ``max_unavailable``: None is DEP-07's one deletion per reconcile; an int or ``"auto"`` lets step 4 delete a
    batch of participating followers. ``role_label`` None: roles come from member Leases (reference §1.4).
    """

    container: str
    lease_template: str = DEFAULT_LEASE_TEMPLATE
    max_unavailable: int | str | None = None
    role_label: str | None = None
    leader_value: str = DEFAULT_LEADER_VALUE
    leader_transfer: bool = False
    """Ask the leader to hand over (``rollwise.api.leader_transfer``) before deleting it."""
    hand_over: str | None = None
    """Who answers that request: None, the member's agent; ``patroni``, rollwise's driver through Patroni's API."""
    transfer_timeout: float = DEFAULT_TRANSFER_TIMEOUT
    probe: RoleProbe | None = None
    """Roles from asking each member over HTTP (``api/role_probe.py``) instead of Leases or a label."""

    def lease_name(self, pod: str) -> str:
        """The member Lease of ``pod``: the template with ``{pod}`` replaced (default: the pod's own name)."""
        return self.lease_template.replace(_PLACEHOLDER, pod)


def engaged(view: SetView) -> bool:
    """Handed to the controller (``handed_to_quorum``), the gate on, an update revision known, and the set not being
    deleted.

    reference §1.2 guards: wrong strategy or empty ``status.updateRevision`` → nothing to do.
    """
    sts = view.set
    return (
        handed_to_quorum(sts)
        and view.gates.quorum_aware
        and bool((sts.get("status") or {}).get("updateRevision"))
        and not leaves_pods_alone(sts)  # being deleted or handed over (api/handover.py)
    )


def _path(key: str) -> str:
    return f"metadata.annotations[{key}]"


def read_settings(sts: Mapping[str, Any]) -> tuple[Settings, list[FieldError]]:
    """The set's settings and every invalid annotation; an invalid value falls back to its default in ``Settings``
    (the caller must not act on a set with errors)."""
    notes = annotations_of(sts)
    errors: list[FieldError] = []
    pod_spec = ((sts.get("spec") or {}).get("template") or {}).get("spec") or {}
    containers = [str(c.get("name", "")) for c in pod_spec.get("containers") or ()]
    container = containers[0] if containers else ""
    if MEMBER_CONTAINER in notes:
        wanted = notes[MEMBER_CONTAINER]
        if wanted in containers:
            container = wanted
        else:
            errors.append(FieldError(path=_path(MEMBER_CONTAINER), value=wanted,
                                     rule="must name a container of spec.template.spec.containers"))
    elif not container:
        errors.append(FieldError(path="spec.template.spec.containers", kind="Required value",
                                 rule="the member container defaults to the first container, and there is none"))

    template = notes.get(LEASE_TEMPLATE, DEFAULT_LEASE_TEMPLATE)
    if not isinstance(template, str) or _PLACEHOLDER not in template \
            or not _SUBDOMAIN.fullmatch(template.replace(_PLACEHOLDER, "p-0")):
        errors.append(FieldError(path=_path(LEASE_TEMPLATE), value=template,
                                 rule="must contain {pod} and give a lowercase RFC 1123 subdomain, e.g. {pod}-member"))
        template = DEFAULT_LEASE_TEMPLATE

    max_unavailable: int | str | None = None
    if MAX_UNAVAILABLE_MEMBERS in notes:
        raw = notes[MAX_UNAVAILABLE_MEMBERS]
        if raw == AUTO:
            max_unavailable = AUTO
        elif isinstance(raw, str) and _POSITIVE_INT.fullmatch(raw):
            max_unavailable = int(raw)
        else:
            errors.append(FieldError(path=_path(MAX_UNAVAILABLE_MEMBERS), value=raw,
                                     rule='must be an integer of at least 1 or "auto"'))

    role_label = notes.get(ROLE_LABEL)
    leader_value = notes.get(LEADER_VALUE, DEFAULT_LEADER_VALUE)
    if role_label is not None:
        # check_labels speaks the Kubernetes wording for a label key and a label value.
        bad = check_labels({role_label: ""}, _path(ROLE_LABEL)) + check_labels({"k": leader_value}, _path(LEADER_VALUE))
        if leader_value == "":
            bad.append(FieldError(path=_path(LEADER_VALUE), kind="Required value",
                                  rule="the leader's label value must not be empty"))
        errors += bad
        if bad:
            role_label = None
    elif LEADER_VALUE in notes:
        # A leader value without a label key means the user meant label roles; falling back to Leases silently
        # could delete the real leader early, so it is reported instead.
        errors.append(FieldError(path=_path(LEADER_VALUE), value=leader_value,
                                 rule=f"has no effect without {ROLE_LABEL}"))
    if role_label is None:
        leader_value = DEFAULT_LEADER_VALUE

    leader_transfer = notes.get(LEADER_TRANSFER, "false")
    if leader_transfer not in ("true", "false", PATRONI):
        errors.append(FieldError(path=_path(LEADER_TRANSFER), value=leader_transfer, kind="Unsupported value",
                                 rule=f'must be "true", "false" or "{PATRONI}"'))
    timeout = DEFAULT_TRANSFER_TIMEOUT
    if LEADER_TRANSFER_TIMEOUT in notes:
        raw = notes[LEADER_TRANSFER_TIMEOUT]
        if isinstance(raw, str) and _POSITIVE_INT.fullmatch(raw):
            timeout = float(raw)
        else:
            errors.append(FieldError(path=_path(LEADER_TRANSFER_TIMEOUT), value=raw,
                                     rule="must be a whole number of seconds, at least 1"))

    probe = None
    raw_probe, probe_path = probe_of(sts)
    if raw_probe is not None:
        probe, bad = check_role_probe(raw_probe, probe_path)
        errors += bad
        if role_label is not None:
            # One role source: a label and a probe that disagree would leave the leader to chance.
            errors.append(FieldError(path=_path(ROLE_LABEL), value=role_label, kind="Forbidden",
                                     rule=f"roles come from the role probe ({probe_path('')}); use one of the two"))

    if leader_transfer == PATRONI and raw_probe is None:
        # The switchover goes to Patroni's REST API, which is where the role probe asks.
        errors.append(FieldError(path=_path(LEADER_TRANSFER), value=leader_transfer, kind="Invalid value",
                                 rule="needs a role probe on Patroni's REST API (spec.roleProbe, or the "
                                      "rollwise.dev/role-probe-* annotations on apps/v1)"))
    settings = Settings(container=container, lease_template=template, max_unavailable=max_unavailable,
                        role_label=role_label, leader_value=leader_value,
                        leader_transfer=leader_transfer in ("true", PATRONI),
                        hand_over=PATRONI if leader_transfer == PATRONI and probe is not None else None,
                        transfer_timeout=timeout, probe=probe)
    return settings, errors
