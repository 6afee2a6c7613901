"""API-server validation of StatefulSets, create and update (reference §2), plus rollwise's strategy extensions.

Input is a DEFAULTED object (``rollwise.api.defaults.apply_defaults``). Every problem is returned as a FieldError
with its Kubernetes-style path; a value of the wrong type is a FieldError too, never an exception, so a scenario file
or a manifest gets one complete answer. Field-level rules live in ``validation_rules``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.claim_templates import CLAIM_SPEC_FIELDS, check_claim_spec
from rollwise.api.errors import FieldError
from rollwise.api.features import MAX_UNAVAILABLE, FeatureGates
from rollwise.api.in_place import POD_UPDATE_POLICIES
from rollwise.api.lifecycle import check_lifecycle
from rollwise.api.memo import IdentityMemo
from rollwise.api.meta import Obj, selector_matches
from rollwise.api.ordinals import check_reserve_ordinals
from rollwise.api.role_probe import check_spec_role_probe
from rollwise.api.steps import check_quorum_block, check_steps
from rollwise.api.strategies import BLOCK_OWNERS, KINDS, ON_DELETE, ROLLING_BLOCK, handed_to_quorum
from rollwise.api.validation_pods import check_pod_spec, check_unique_name
from rollwise.api.validation_rules import (
    check_annotation_keys,
    check_dns_label,
    check_enum,
    check_int,
    check_label_selector,
    check_labels,
    check_max_unavailable,
    type_error,
)

__all__ = ["API_VERSIONS", "MUTABLE_SPEC_FIELDS", "SPEC_UPDATE_FORBIDDEN", "note_admitted", "structural_errors",
           "validate_statefulset"]

API_VERSIONS = ("apps/v1", "apps.rollwise.dev/v1alpha1")

# reference §2 (ValidateStatefulSetUpdate), plus progressDeadlineSeconds, paused, reserveOrdinals (OpenKruise's),
# lifecycle and roleProbe, rollwise's own mutable fields.
MUTABLE_SPEC_FIELDS = frozenset({
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
    "progressDeadlineSeconds",
    "paused",
    "reserveOrdinals",
    "lifecycle",
    "roleProbe",
}) | CLAIM_SPEC_FIELDS  # KEP-4650: claim templates change under api/claim_templates.py's rules
SPEC_UPDATE_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy',"
    " 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)

# Strategy type -> the feature gate it needs (None: always available), from the strategy table: seed 000 rejects
# Recreate while StatefulSetRecreateStrategy is off, seed 003 EnforcedRollingUpdate likewise. The table's order is
# the order the error lists them.
_STRATEGY_GATES: tuple[tuple[str, str | None], ...] = tuple((kind.name, kind.gate) for kind in KINDS.values())
_POD_MANAGEMENT_POLICIES = ("OrderedReady", "Parallel")
_RETENTION_VALUES = ("Retain", "Delete")


def validate_statefulset(obj: Obj, *, old: Obj | None = None, gates: FeatureGates) -> list[FieldError]:
    """Every problem with a defaulted StatefulSet; with ``old``, also the update rules (immutable spec fields)."""
    if not isinstance(obj, Mapping):
        return [type_error("", obj, "a mapping")]
    update = old is not None
    old_spec = _mapping(_mapping(old).get("spec"))
    errors = check_enum(obj.get("apiVersion"), "apiVersion", API_VERSIONS)
    errors += check_enum(obj.get("kind"), "kind", ("StatefulSet",))
    errors += _check_metadata(obj.get("metadata"))
    spec = obj.get("spec")
    if spec is None:
        errors.append(FieldError(path="spec", kind="Required value", rule="a StatefulSet needs a spec"))
    elif not isinstance(spec, Mapping):
        errors.append(type_error("spec", spec, "a mapping"))
    else:
        errors += _check_spec(spec, gates=gates, old_spec=old_spec, update=update, quorum=handed_to_quorum(obj))
    return errors + (_check_update(obj, _mapping(old)) if old is not None else [])


_ALL_GATES = FeatureGates()
_STRUCTURAL: IdentityMemo[list[FieldError]] = IdentityMemo()


def _anchors(sts: Obj) -> tuple[tuple[object, ...], tuple[object, ...]]:
    """What validation reads, by identity (the spec, labels and annotations) and by value (the rest)."""
    meta = sts.get("metadata") or {}
    return ((sts.get("spec"), meta.get("labels"), meta.get("annotations")),
            (meta.get("name"), meta.get("namespace"), sts.get("apiVersion"), sts.get("kind")))


def structural_errors(sts: Obj) -> list[FieldError]:
    """The set's problems as a create with every gate on sees them: what a controller refuses to act on (what the
    API server's gates allow is admission's business; with a gate off, a controller falls back as the KEPs' skew
    sections say). Memoised on the identity of what validation reads (api/memo.py): a status write makes a new
    object but shares the old ``spec``, labels and annotations, so a set reconciled on every pod event is validated
    once per spec version."""
    anchors, extra = _anchors(sts)
    return _STRUCTURAL.cached(anchors, extra, lambda: validate_statefulset(sts, gates=_ALL_GATES))


def note_admitted(sts: Obj, *, gates: FeatureGates, old: Obj | None, errors: list[FieldError]) -> None:
    """Admission validated ``sts`` (the object it hands the store, whose parts the stored one shares): a create
    with every gate on is the very check ``structural_errors`` makes, so its answer is kept for it. Updates are
    not (they tolerate what a create refuses), nor are creates under other gates."""
    if old is None and not errors and gates == _ALL_GATES:
        anchors, extra = _anchors(sts)
        _STRUCTURAL.put(anchors, extra, list(errors))


def _mapping(value: object) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one (for reading an optional, possibly malformed, old object)."""
    return value if isinstance(value, Mapping) else {}


def _check_metadata(meta: object) -> list[FieldError]:
    if meta is not None and not isinstance(meta, Mapping):
        return [type_error("metadata", meta, "a mapping")]
    meta = _mapping(meta)
    errors: list[FieldError] = []
    name = meta.get("name")
    if name is None or name == "":
        # rollwise stores have no generateName: a StatefulSet is addressed by its name everywhere.
        errors.append(FieldError(path="metadata.name", kind="Required value", rule="name is required"))
    else:
        # reference §2: a DNS-1123 label since 1.27 (#114172), because it becomes the pods' hostname prefix.
        errors += check_dns_label(name, "metadata.name")
    namespace = meta.get("namespace")
    if namespace is not None and namespace != "":
        errors += check_dns_label(namespace, "metadata.namespace")
    if meta.get("labels") is not None:
        errors += check_labels(meta["labels"], "metadata.labels")
    if meta.get("annotations") is not None:
        errors += check_annotation_keys(meta["annotations"], "metadata.annotations")
    return errors


def _check_spec(
    spec: Mapping[str, Any], *, gates: FeatureGates, old_spec: Mapping[str, Any], update: bool, quorum: bool
) -> list[FieldError]:
    errors: list[FieldError] = []
    # reference §2: counts are >= 0; revisionHistoryLimit is only type-checked (negative means "never truncate").
    for field, minimum in (("replicas", 0), ("minReadySeconds", 0), ("revisionHistoryLimit", None),
                           ("progressDeadlineSeconds", 1)):
        if spec.get(field) is not None:
            errors += check_int(spec[field], f"spec.{field}", minimum=minimum)
    paused = spec.get("paused")
    if paused is not None and not isinstance(paused, bool):
        errors.append(type_error("spec.paused", paused, "a boolean"))
    errors += check_lifecycle(spec.get("lifecycle"))
    errors += check_spec_role_probe(spec.get("roleProbe"))
    ordinals = spec.get("ordinals")
    if ordinals is not None:
        if not isinstance(ordinals, Mapping):
            errors.append(type_error("spec.ordinals", ordinals, "a mapping"))
        elif ordinals.get("start") is not None:
            errors += check_int(ordinals["start"], "spec.ordinals.start", minimum=0)
    errors += check_reserve_ordinals(spec.get("reserveOrdinals"))
    errors += check_enum(spec.get("podManagementPolicy"), "spec.podManagementPolicy", _POD_MANAGEMENT_POLICIES)
    errors += _check_strategy(spec.get("updateStrategy"), gates=gates, old=_mapping(old_spec.get("updateStrategy")),
                              quorum=quorum)
    errors += _check_retention_policy(spec.get("persistentVolumeClaimRetentionPolicy"))
    service = spec.get("serviceName")
    if service is not None and not isinstance(service, str):
        errors.append(type_error("spec.serviceName", service, "a string"))
    elif service and not update:
        # reference §2 (#130233): checked on create only; an existing invalid value is tolerated on update.
        errors += check_dns_label(service, "spec.serviceName")
    errors += _check_selector_and_template(spec.get("selector"), spec.get("template"))
    errors += _check_claim_templates(spec.get("volumeClaimTemplates"))
    errors += check_claim_spec(spec, old_spec)  # the policy, and on update no shrunk template
    return errors


def _check_strategy(strategy: object, *, gates: FeatureGates, old: Mapping[str, Any],
                    quorum: bool) -> list[FieldError]:
    path = "spec.updateStrategy"
    if strategy is None:
        return [FieldError(path=path, kind="Required value", rule="an update strategy is required")]
    if not isinstance(strategy, Mapping):
        return [type_error(path, strategy, "a mapping")]
    stype = strategy.get("type")
    errors = _check_strategy_type(stype, gates=gates, old_type=old.get("type"))
    if errors:
        return errors  # which blocks belong is only known once the type is (as upstream's switch on the type)
    for key, owner in BLOCK_OWNERS:
        block = strategy.get(key)
        if block is None:
            continue
        if stype == ON_DELETE and key == ROLLING_BLOCK and quorum:
            # A quorum-aware set's canary steps live there (api/steps.py), and nothing else of RollingUpdate's.
            errors += check_quorum_block(block, f"{path}.{key}")
        elif stype != owner:
            # reference §2: a parameter block is only allowed with its own type (upstream: OnDelete + rollingUpdate).
            errors.append(FieldError(path=f"{path}.{key}", kind="Forbidden",
                                     rule=f"only allowed for updateStrategy '{owner}'"))
        elif not isinstance(block, Mapping):
            errors.append(type_error(f"{path}.{key}", block, "a mapping"))
        else:
            errors += _check_rolling_block(block, f"{path}.{key}", gates=gates, old=_mapping(old.get(key)))
    return errors


def _check_strategy_type(stype: object, *, gates: FeatureGates, old_type: object) -> list[FieldError]:
    path = "spec.updateStrategy.type"
    # A gated type already stored stays acceptable on update (the API server's "already in use" convention), so a
    # set created while the gate was on can still be scaled after the gate is turned off.
    enabled = [t for t, gate in _STRATEGY_GATES if gate is None or gates.on(gate) or t == old_type]
    errors = check_enum(stype, path, enabled)
    if not errors:
        return errors
    gate = next((g for t, g in _STRATEGY_GATES if t == stype), None)
    if gate is not None:
        supported = ", ".join(f'"{t}"' for t in enabled)
        return [FieldError(path=path, kind="Unsupported value", value=stype,
                           rule=f"the {gate} feature gate is disabled; supported values: {supported}")]
    return errors


def _check_rolling_block(
    block: Mapping[str, Any], path: str, *, gates: FeatureGates, old: Mapping[str, Any]
) -> list[FieldError]:
    errors: list[FieldError] = []
    if block.get("partition") is not None:
        errors += check_int(block["partition"], f"{path}.partition", minimum=0)
    value = block.get("maxUnavailable")
    if value is not None:
        if not gates.max_unavailable and old.get("maxUnavailable") is None:
            # KEP-961: the field belongs to the MaxUnavailableStatefulSet gate (defaulting drops it; this catches
            # objects that were defaulted under other gates).
            errors.append(FieldError(path=f"{path}.maxUnavailable", kind="Forbidden",
                                     rule=f"requires the {MAX_UNAVAILABLE} feature gate"))
        else:
            errors += check_max_unavailable(value, f"{path}.maxUnavailable")
    if block.get("podProgressTimeoutSeconds") is not None:
        # seed 000, alternative 1: a per-pod timeout; zero would replace every pod at once, so at least 1.
        errors += check_int(block["podProgressTimeoutSeconds"], f"{path}.podProgressTimeoutSeconds", minimum=1)
    if block.get("podUpdatePolicy") is not None:
        # OpenKruise's Advanced StatefulSet names (api/in_place.py).
        errors += check_enum(block["podUpdatePolicy"], f"{path}.podUpdatePolicy", POD_UPDATE_POLICIES)
    if block.get("steps") is not None:
        errors += check_steps(block["steps"], f"{path}.steps")  # canary steps (api/steps.py)
    return errors


def _check_retention_policy(policy: object) -> list[FieldError]:
    path = "spec.persistentVolumeClaimRetentionPolicy"
    if policy is None:
        return []
    if not isinstance(policy, Mapping):
        return [type_error(path, policy, "a mapping")]
    errors: list[FieldError] = []
    for field in ("whenDeleted", "whenScaled"):
        value = policy.get(field)
        if value in _RETENTION_VALUES:
            continue
        # reference §2: anything but Retain/Delete, the empty value included, is Unsupported.
        errors.append(FieldError(path=f"{path}.{field}", kind="Unsupported value", value=value,
                                 rule='supported values: "Retain", "Delete"'))
    return errors


def _check_selector(selector: object) -> tuple[list[FieldError], Mapping[str, Any] | None]:
    """The selector's errors, and the selector itself when it is valid and non-empty (so it can be matched)."""
    path = "spec.selector"
    if selector is None:
        return [FieldError(path=path, kind="Required value", rule="a label selector is required")], None
    errors = check_label_selector(selector, path)
    if errors or not isinstance(selector, Mapping):
        return errors, None
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        # reference §2: an empty selector would match every pod in the namespace.
        return [FieldError(path=path, value=dict(selector), rule="empty selector is invalid for statefulset")], None
    return [], selector


def _check_selector_and_template(selector: object, template: object) -> list[FieldError]:
    errors, valid_selector = _check_selector(selector)
    if template is None:
        return [*errors, FieldError(path="spec.template", kind="Required value", rule="a pod template is required")]
    if not isinstance(template, Mapping):
        return [*errors, type_error("spec.template", template, "a mapping")]
    meta = template.get("metadata")
    if meta is not None and not isinstance(meta, Mapping):
        errors.append(type_error("spec.template.metadata", meta, "a mapping"))
        return errors + check_pod_spec(template.get("spec"))
    meta = _mapping(meta)
    labels = meta.get("labels")
    label_errors = check_labels(labels, "spec.template.metadata.labels") if labels is not None else []
    errors += label_errors
    if meta.get("annotations") is not None:
        errors += check_annotation_keys(meta["annotations"], "spec.template.metadata.annotations")
    if valid_selector is not None and not label_errors:
        template_labels = labels if isinstance(labels, Mapping) else {}
        if not selector_matches(valid_selector, template_labels):
            # reference §2: otherwise the set would create pods it does not own.
            errors.append(FieldError(path="spec.template.metadata.labels", value=dict(template_labels),
                                     rule="selector does not match template labels"))
    return errors + check_pod_spec(template.get("spec"))


def _check_claim_templates(claims: object) -> list[FieldError]:
    path = "spec.volumeClaimTemplates"
    if claims is None:
        return []
    if not isinstance(claims, list):
        return [type_error(path, claims, "a list")]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, claim in enumerate(claims):
        if not isinstance(claim, Mapping):
            errors.append(type_error(f"{path}[{i}]", claim, "a mapping"))
            continue
        meta = claim.get("metadata")
        if meta is not None and not isinstance(meta, Mapping):
            errors.append(type_error(f"{path}[{i}].metadata", meta, "a mapping"))
            continue
        # The claim name becomes part of each PVC name (<claim>-<set>-<ordinal>, reference §6.1).
        errors += check_unique_name(_mapping(meta).get("name"), f"{path}[{i}].metadata.name", seen)
    return errors


def _check_update(obj: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    meta, old_meta = _mapping(obj.get("metadata")), _mapping(old.get("metadata"))
    for field, default in (("name", ""), ("namespace", "default")):
        new_value, old_value = meta.get(field) or default, old_meta.get(field) or default
        if new_value != old_value:
            errors.append(FieldError(path=f"metadata.{field}", value=new_value, rule="field is immutable"))
    spec, old_spec = obj.get("spec"), old.get("spec")
    if isinstance(spec, Mapping) and isinstance(old_spec, Mapping) and _frozen(spec) != _frozen(old_spec):
        # reference §2: one error for the whole spec, with upstream's exact wording.
        errors.append(FieldError(path="spec", kind="Forbidden", rule=SPEC_UPDATE_FORBIDDEN))
    return errors


def _frozen(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The spec fields an update may not change; null counts as absent, as a nil pointer does."""
    return {k: v for k, v in spec.items() if k not in MUTABLE_SPEC_FIELDS and v is not None}
