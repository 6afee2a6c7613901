"""The CEL twins of rollwise's StatefulSet validation: the rules the CRD carries, so that a real API server refuses
what ``validate_statefulset`` refuses for ``apps.rollwise.dev`` without any webhook.

One source: the patterns, limits and messages below are the ones ``validation_rules`` and ``validation`` enforce
(imported, not retyped), and ``cluster/crd/statefulset.py`` builds the CRD's ``openAPIV3Schema`` from them. ``TWINS``
says, for every rule of ``validate_statefulset`` (keyed by the FieldError's path pattern and kind), which schema keyword
or CEL rule is its twin, or why it has none; ``tests/cluster/crd/test_crd_rules.py`` runs every invalid case of the
validation tests through the CRD alone and holds the table to it.

The expressions use only standard CEL, its macros (``has``, ``all``, ``exists``, ``exists_one``) and the strings
extension (``lastIndexOf``, ``substring``), which kube-apiserver has offered since 1.25/1.27. Every list and map a
rule walks has a ``maxItems``/``maxProperties`` and every string a ``maxLength`` in the schema, so the estimated cost
of each rule is bounded by the schema rather than by the request size; the rule that pairs two lists
(``matchExpressions`` x their ``values``) is the most expensive and stays two nested walks of at most 64 items.
"""

from __future__ import annotations

from dataclasses import dataclass

from rollwise.api.claim_templates import SHRINK_RULE
from rollwise.api.steps import QUORUM_BLOCK_DEFAULTS, QUORUM_BLOCK_RULE
from rollwise.api.strategies import BLOCK_OWNERS, ON_DELETE, ROLLING_BLOCK
from rollwise.api.validation import MUTABLE_SPEC_FIELDS, SPEC_UPDATE_FORBIDDEN
from rollwise.api.validation_containers import PROBE_HANDLERS, PROBE_INTS, PROBES

__all__ = [
    "DNS_LABEL",
    "IMMUTABLE_SPEC_FIELDS",
    "LABEL_VALUE",
    "MAX_LIST",
        "TWINS",
    "CelRule",
    "Twin",
    "claim_storage_shrink_rule",
    "immutable_spec_rule",
    "key_validations",
    "max_unavailable_rule",
    "qualified_name_rule",
    "selector_matches_template_rule",
    "strategy_block_rules",
]

DNS_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
LABEL_VALUE = "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
_QUALIFIED = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
              r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
MAX_LIST = 64
"""The bound on every list and map a rule walks (selectors, containers, claim templates, labels): far above what a
StatefulSet holds, and what keeps each rule's estimated cost inside kube-apiserver's per-rule limit."""

# The declared spec fields an update may not change (reference §2); the schema prunes undeclared ones.
DECLARED_SPEC_FIELDS = ("replicas", "minReadySeconds", "revisionHistoryLimit", "progressDeadlineSeconds", "paused",
                        "lifecycle", "roleProbe",
                        "serviceName", "podManagementPolicy", "ordinals", "selector", "template",
                        "volumeClaimTemplates", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                        "volumeClaimUpdatePolicy", "reserveOrdinals")
IMMUTABLE_SPEC_FIELDS = tuple(f for f in DECLARED_SPEC_FIELDS if f not in MUTABLE_SPEC_FIELDS)


@dataclass(frozen=True, slots=True)
class CelRule:
    """One ``x-kubernetes-validations`` entry."""

    rule: str
    message: str
    reason: str = "FieldValueInvalid"
    field_path: str = ""
    message_expression: str = ""

    def as_schema(self) -> dict[str, str]:
        out = {"rule": self.rule, "message": self.message}
        if self.message_expression:
            out["messageExpression"] = self.message_expression
        if self.reason != "FieldValueInvalid":
            out["reason"] = self.reason
        if self.field_path:
            out["fieldPath"] = self.field_path
        return out


def qualified_name_rule(var: str) -> str:
    """A label or annotation key (``validation_rules.check_qualified_name``): an optional DNS-subdomain prefix of at
    most 253 characters and '/', then a name part of at most 63."""
    return (f"{var}.matches('{_QUALIFIED}') && {var}.lastIndexOf('/') <= 253"
            f" && {var}.substring({var}.lastIndexOf('/') + 1).size() <= 63")


def immutable_spec_rule() -> CelRule:
    """reference §2 (ValidateStatefulSetUpdate): one Forbidden error on ``spec`` when any field outside
    ``MUTABLE_SPEC_FIELDS`` changes, its presence included."""
    parts = [f"(has(self.{f}) == has(oldSelf.{f}) && (!has(self.{f}) || self.{f} == oldSelf.{f}))"
             for f in IMMUTABLE_SPEC_FIELDS]
    return CelRule(rule=" && ".join(parts), message=SPEC_UPDATE_FORBIDDEN, reason="FieldValueForbidden")


def _storage(var: str) -> str:
    """The template's storage request as a string (an int-or-string in the schema), or '' when it has none."""
    has = (f"has({var}.spec) && has({var}.spec.resources) && has({var}.spec.resources.requests)"
           f" && 'storage' in {var}.spec.resources.requests")
    return f"({has} ? string({var}.spec.resources.requests.storage) : '')"


def claim_storage_shrink_rule() -> CelRule:
    """``claim_templates.check_claim_template_update``: a template's storage request, matched by template name
    with the stored one, may not shrink. A transition rule on the list, since the items of a list that is not a
    ``map`` have no old self (templates are keyed by ``metadata.name``, which a list-map key cannot be); the message
    names each shrunk template's field. It needs Kubernetes' CEL quantity library (kube-apiserver's, and
    ``rollwise up``'s: apiserver/admission/cel_quantity.py)."""
    new, old = _storage("t"), _storage("o")
    shrunk = (f"oldSelf.exists(o, o.metadata.name == t.metadata.name && isQuantity({old}) && isQuantity({new})"
              f" && quantity({new}).isLessThan(quantity({old})))")
    # The message names the stored request as the previous value and the refused one after it (kube-apiserver's
    # PVC rule names neither; naming the new one as "the previous value" sent users looking for the wrong number).
    previous = f"oldSelf.filter(o, o.metadata.name == t.metadata.name).map(o, {old})[0]"
    return CelRule(rule=f"!self.exists(t, {shrunk})", message=f"spec.resources.requests.storage: {SHRINK_RULE}",
                   reason="FieldValueForbidden",
                   message_expression=(f"self.filter(t, {shrunk}).map(t, 'spec.volumeClaimTemplates[name: ' + "
                                       f"t.metadata.name + '].spec.resources.requests.storage: {SHRINK_RULE} (' + "
                                       f"{previous} + '): ' + {new}).join('; ')"))


def max_unavailable_rule() -> CelRule:
    """``validation_rules.check_max_unavailable``: an int32 of at least 1, or ``N%`` with 0 < N <= 100."""
    pct = "int(self.substring(0, self.size() - 1))"
    return CelRule(
        rule=(f"type(self) == int ? (self >= 1 && self <= 2147483647) : (self.matches('^[0-9]+%$')"
              f" && {pct} >= 1 && {pct} <= 100)"),
        message="must be greater than 0: an integer of at least 1 or a percentage from '1%' to '100%'")


def selector_matches_template_rule() -> CelRule:
    """reference §2: the selector must select the template's labels, or the set would create pods it does not own
    (``api.meta.selector_matches``)."""
    labels = "self.template.metadata.labels"
    have = "has(self.template.metadata) && has(self.template.metadata.labels)"
    has_key = f"({have} && e.key in {labels})"
    value_in = f"({has_key} && e.values.exists(v, v == {labels}[e.key]))"
    match_labels = (f"!has(self.selector.matchLabels) || self.selector.matchLabels.all(k, {have} && k in {labels}"
                    f" && {labels}[k] == self.selector.matchLabels[k])")
    match_expressions = (
        "!has(self.selector.matchExpressions) || self.selector.matchExpressions.all(e, "
        f"e.operator == 'In' ? {value_in} : e.operator == 'NotIn' ? !{value_in} : "
        f"e.operator == 'Exists' ? {has_key} : !{has_key})")
    return CelRule(rule=f"!has(self.selector) || (({match_labels}) && ({match_expressions}))",
                   message="selector does not match template labels", field_path=".template.metadata.labels")


def strategy_block_rules() -> list[CelRule]:
    """reference §2: a parameter block only with its own strategy type (upstream: OnDelete + rollingUpdate), but
    for the steps of a quorum-aware set (``api/steps.check_quorum_block``): under OnDelete, rollingUpdate holds
    nothing else of RollingUpdate's but the CRD's defaults; that the set is quorum-aware is the policy's check
    (``cluster/crd/policy.quorum_block_validation``), as no CRD rule reads annotations."""
    def default(key: str, value: object) -> str:
        at = f"self.{ROLLING_BLOCK}.{key}"
        return f"{at} == '{value}'" if isinstance(value, str) else f"type({at}) == int && {at} == {value}"
    return [CelRule(rule=f"!has(self.{block}) || self.type == '{owner}'"
                         + (f" || self.type == '{ON_DELETE}'" if block == ROLLING_BLOCK else ""),
                    message=f"only allowed for updateStrategy '{owner}'", reason="FieldValueForbidden",
                    field_path=f".{block}") for block, owner in BLOCK_OWNERS] + [
        CelRule(rule=f"!(self.type == '{ON_DELETE}' && has(self.{ROLLING_BLOCK}) && has(self.{ROLLING_BLOCK}.{key}))"
                     + (f" || {default(key, QUORUM_BLOCK_DEFAULTS[key])}" if key in QUORUM_BLOCK_DEFAULTS else ""),
                message=QUORUM_BLOCK_RULE, reason="FieldValueForbidden", field_path=f".{ROLLING_BLOCK}.{key}")
        for key in (*QUORUM_BLOCK_DEFAULTS, "podProgressTimeoutSeconds")]


# The label and annotation KEYS are checked by a ValidatingAdmissionPolicy, not by the CRD: a map's keys have no
# maxLength in a structural schema, so kube-apiserver's estimator sizes each key by the request size (3 MiB) and a
# `matches()` over every key of a map is estimated far above the 10^7 a CRD rule may cost. A policy is limited at
# run time (10^6 per expression, on the real keys) instead, so the same check fits there.
KEY_MAPS = (("spec.template.metadata.labels", "object.spec.template.metadata", "labels"),
            ("spec.template.metadata.annotations", "object.spec.template.metadata", "annotations"),
            ("spec.selector.matchLabels", "object.spec.selector", "matchLabels"),
            ("spec.lifecycle.preDelete.labelsHandler", "object.spec.lifecycle.preDelete", "labelsHandler"))


def key_validations() -> list[dict[str, str]]:
    """The policy's ``validations``: every key of each map in ``KEY_MAPS`` a qualified name
    (``validation_rules.check_qualified_name``)."""
    return [{"expression": f"{_outer(parent)}!has({parent}) || !has({parent}.{key}) || {parent}.{key}.all(k, "
                           f"{qualified_name_rule('k')})",
             "message": f"{path}: keys must be qualified names: an optional DNS subdomain prefix (at most 253 "
                        "characters) and '/', then at most 63 of [-A-Za-z0-9_.], starting and ending alphanumeric",
             "reason": "Invalid"} for path, parent, key in KEY_MAPS]


def _outer(parent: str) -> str:
    """Guards for the optional objects above ``parent`` below ``object.spec`` (``has()`` of a field of a missing
    object is an error, not false); the template and the selector are required, so only ``lifecycle`` needs one."""
    parts = parent.split(".")
    return "".join(f"!has({'.'.join(parts[:i])}) || " for i in range(3, len(parts)) if parts[2] == "lifecycle")


@dataclass(frozen=True, slots=True)
class Twin:
    """What stands for one validation rule on a cluster: ``schema`` (an OpenAPI keyword of the CRD), ``cel`` (an
    ``x-kubernetes-validations`` rule), ``policy`` (the ValidatingAdmissionPolicy beside the CRD), ``apiserver``
    (kube-apiserver checks it for every custom resource) or ``none`` (no twin, and why)."""

    how: str
    where: str


# (path pattern, error kind) of validate_statefulset -> its twin. ``[*]`` stands for any index, ``<block>`` for
# either strategy block.
TWINS: dict[tuple[str, str], Twin] = {
    ("apiVersion", "Unsupported value"): Twin("apiserver", "the URL names the version; a body that disagrees is a "
                                                           "400"),
    ("kind", "Unsupported value"): Twin("apiserver", "the URL names the kind; a body that disagrees is a 400"),
    ("metadata", "Invalid value"): Twin("apiserver", "ObjectMeta is decoded by the server, never by the schema"),
    ("metadata.name", "Required value"): Twin("apiserver", "a create without a name (or generateName) is refused"),
    ("metadata.name", "Invalid value"): Twin("schema", "metadata.name: pattern, maxLength 63 (a changed name: the "
                                                       "API server, names never change)"),
    ("metadata.namespace", "Invalid value"): Twin("apiserver", "namespaces are DNS labels everywhere"),
    ("metadata.labels", "Invalid value"): Twin("apiserver", "ObjectMeta labels are validated for every kind"),
    ("metadata.annotations", "Invalid value"): Twin("apiserver", "ObjectMeta annotations are validated for every "
                                                                 "kind"),
    ("spec", "Required value"): Twin("schema", "required: [spec] at the root"),
    ("spec", "Invalid value"): Twin("schema", "type: object"),
    ("spec", "Forbidden"): Twin("cel", "spec: transition rule over " + ", ".join(IMMUTABLE_SPEC_FIELDS)),
    ("spec.replicas", "Invalid value"): Twin("schema", "type: integer, minimum 0, maximum 2^31-1"),
    ("spec.minReadySeconds", "Invalid value"): Twin("schema", "type: integer, minimum 0"),
    ("spec.revisionHistoryLimit", "Invalid value"): Twin("schema", "type: integer"),
    ("spec.progressDeadlineSeconds", "Invalid value"): Twin("schema", "type: integer, minimum 1"),
    ("spec.paused", "Invalid value"): Twin("schema", "type: boolean"),
    ("spec.lifecycle", "Invalid value"): Twin("schema", "type: object"),
    ("spec.lifecycle.preDelete", "Invalid value"): Twin("schema", "type: object"),
    ("spec.lifecycle.preDelete", "Required value"): Twin("cel", "preDelete: a label or a finalizer named"),
    ("spec.lifecycle.preDelete.labelsHandler", "Invalid value"): Twin(
        "policy", "values: pattern in the CRD; the lifecycle-state key: a CEL rule; keys: the policy (KEY_MAPS)"),
    ("spec.lifecycle.preDelete.finalizersHandler", "Invalid value"): Twin("schema", "type: array"),
    ("spec.lifecycle.preDelete.finalizersHandler[*]", "Invalid value"): Twin("cel", "a qualified name"),
    ("spec.lifecycle.preDelete.finalizersHandler[*]", "Duplicate value"): Twin("cel", "finalizers unique"),
    ("spec.lifecycle.preDelete.timeoutSeconds", "Invalid value"): Twin("schema", "type: integer, minimum 1"),
    ("spec.roleProbe", "Invalid value"): Twin("schema", "type: object"),
    ("spec.roleProbe.port", "Invalid value"): Twin("schema", "type: integer, minimum 1, maximum 65535"),
    ("spec.roleProbe.port", "Required value"): Twin("schema", "required: [port, leader]"),
    ("spec.roleProbe.path", "Invalid value"): Twin("schema", "pattern: an absolute path, no spaces"),
    ("spec.roleProbe.scheme", "Unsupported value"): Twin("schema", "enum [HTTP, HTTPS]"),
    ("spec.roleProbe.timeoutSeconds", "Invalid value"): Twin("schema", "type: integer, minimum 1, maximum 3600"),
    ("spec.roleProbe.staleAfterSeconds", "Invalid value"): Twin("schema", "type: integer, minimum 1, maximum "
                                                                          "86400"),
    ("spec.roleProbe.leader", "Invalid value"): Twin("schema", "type: object"),
    ("spec.roleProbe.leader", "Required value"): Twin("cel", "leader: statusCode or jsonPath (required: leader)"),
    ("spec.roleProbe.leader", "Forbidden"): Twin("cel", "leader: not both statusCode and jsonPath"),
    ("spec.roleProbe.leader.statusCode", "Invalid value"): Twin("schema", "type: integer, minimum 100, maximum "
                                                                          "599"),
    ("spec.roleProbe.leader.jsonPath", "Invalid value"): Twin("schema", "pattern (api/role_probe.JSON_PATH_PATTERN)"),
    ("spec.roleProbe.leader.equals", "Required value"): Twin("cel", "leader: equals with jsonPath; minLength 1"),
    ("spec.roleProbe.leader.equals", "Forbidden"): Twin("cel", "leader: equals only with jsonPath"),
    ("spec.ordinals", "Invalid value"): Twin("schema", "type: object"),
    ("spec.ordinals.start", "Invalid value"): Twin("schema", "type: integer, minimum 0"),
    ("spec.reserveOrdinals", "Invalid value"): Twin("schema", "type: array"),
    ("spec.reserveOrdinals[*]", "Invalid value"): Twin("schema", "items: type integer, minimum 0"),
    ("spec.reserveOrdinals[*]", "Duplicate value"): Twin("schema", "x-kubernetes-list-type: set"),
    ("spec.podManagementPolicy", "Unsupported value"): Twin("schema", "enum"),
    ("spec.podManagementPolicy", "Required value"): Twin("schema", "default OrderedReady, then enum (refuses '')"),
    ("spec.updateStrategy", "Required value"): Twin("schema", "default {type: RollingUpdate}"),
    ("spec.updateStrategy", "Invalid value"): Twin("schema", "type: object"),
    ("spec.updateStrategy.type", "Unsupported value"): Twin("schema", "enum"),
    ("spec.updateStrategy.type", "Required value"): Twin("schema", "default RollingUpdate, then enum (refuses '')"),
    ("spec.updateStrategy.<block>", "Forbidden"): Twin("policy", "updateStrategy: a block only with its own type; "
                                                                 "rollingUpdate under OnDelete: the policy"),
    **{(f"spec.updateStrategy.<block>.{key}", "Forbidden"): Twin("cel", "updateStrategy: a quorum-aware set's "
                                                                       "block, only steps and the defaults")
       for key in ("partition", "podUpdatePolicy", "podProgressTimeoutSeconds")},
    ("spec.updateStrategy.<block>", "Invalid value"): Twin("schema", "type: object"),
    ("spec.updateStrategy.<block>.partition", "Invalid value"): Twin("schema", "type: integer, minimum 0"),
    ("spec.updateStrategy.<block>.maxUnavailable", "Invalid value"): Twin("cel", "int >= 1 or '1%'..'100%' "
                                                                                 "(x-kubernetes-int-or-string)"),
    ("spec.updateStrategy.<block>.maxUnavailable", "Forbidden"): Twin(
        "cel", "a quorum-aware set's block: the default only; the feature gate of apps/v1 has none (the custom "
               "kind has every field, the gates are the operator's)"),
    # canary steps (api/steps.py; the CRD's part is cluster/crd/steps.py)
    ("spec.updateStrategy.<block>.steps", "Invalid value"): Twin("schema", "type: array"),
    ("spec.updateStrategy.<block>.steps", "Too many"): Twin("schema", "maxItems"),
    ("spec.updateStrategy.<block>.steps[*]", "Invalid value"): Twin("cel", "exactly one of replicas, pause, "
                                                                          "analysis"),
    ("spec.updateStrategy.<block>.steps[*].replicas", "Invalid value"): Twin("cel", "int >= 0 or '0%'..'100%'"),
    ("spec.updateStrategy.<block>.steps[*].pause", "Invalid value"): Twin("schema", "type: object"),
    ("spec.updateStrategy.<block>.steps[*].pause.duration", "Invalid value"): Twin("cel", "int >= 0 or N(s|m|h)"),
    ("spec.updateStrategy.<block>.steps[*].analysis", "Invalid value"): Twin("schema", "type: object"),
    ("spec.updateStrategy.<block>.steps[*].analysis.templates", "Required value"): Twin(
        "schema", "required: [templates], minItems 1"),
    ("spec.updateStrategy.<block>.steps[*].analysis.templates[*].templateName", "Required value"): Twin(
        "schema", "required: [templateName], minLength 1"),
    ("spec.updateStrategy.<block>.steps[*].analysis.templates[*].templateName", "Invalid value"): Twin(
        "schema", "pattern: a DNS-1123 subdomain"),
    ("spec.updateStrategy.<block>.steps[*].analysis.args", "Invalid value"): Twin("schema", "type: array"),
    ("spec.updateStrategy.<block>.steps[*].analysis.args[*].name", "Required value"): Twin("schema",
                                                                                          "required: [name]"),
    ("spec.updateStrategy.<block>.podProgressTimeoutSeconds", "Invalid value"): Twin("schema", "type: integer, "
                                                                                               "minimum 1"),
    ("spec.persistentVolumeClaimRetentionPolicy", "Invalid value"): Twin("schema", "type: object"),
    ("spec.persistentVolumeClaimRetentionPolicy.<when>", "Unsupported value"): Twin("schema", "enum, default "
                                                                                              "Retain"),
    ("spec.serviceName", "Invalid value"): Twin("cel", "'' or a DNS-1123 label; ratcheting keeps an old value "
                                                       "acceptable on update"),
    ("spec.selector", "Required value"): Twin("schema", "required: [selector]"),
    ("spec.selector", "Invalid value"): Twin("cel", "selector: matchLabels or matchExpressions not empty"),
    ("spec.selector.matchLabels", "Invalid value"): Twin("policy", "values: pattern in the CRD; keys: the "
                                                                   "ValidatingAdmissionPolicy (KEY_MAPS)"),
    ("spec.selector.matchExpressions[*].key", "Invalid value"): Twin("cel", "a qualified name"),
    ("spec.selector.matchExpressions[*].operator", "Unsupported value"): Twin("schema", "enum"),
    ("spec.selector.matchExpressions[*].operator", "Required value"): Twin("schema", "required: [key, operator]"),
    ("spec.selector.matchExpressions[*].values", "Required value"): Twin("cel", "values with In and NotIn"),
    ("spec.selector.matchExpressions[*].values", "Forbidden"): Twin("cel", "no values with Exists and "
                                                                           "DoesNotExist"),
    ("spec.selector.matchExpressions[*].values[*]", "Invalid value"): Twin("schema", "pattern, maxLength 63"),
    ("spec.template", "Required value"): Twin("schema", "required: [selector, template]"),
    ("spec.template", "Invalid value"): Twin("schema", "type: object"),
    ("spec.template.metadata", "Invalid value"): Twin("schema", "type: object"),
    ("spec.template.metadata.labels", "Invalid value"): Twin("cel", "spec: the selector matches the template's "
                                                                    "labels; values: pattern; keys: the policy"),
    ("spec.template.metadata.annotations", "Invalid value"): Twin("policy", "keys are qualified names (KEY_MAPS)"),
    ("spec.template.spec", "Required value"): Twin("schema", "required: [spec] in template"),
    ("spec.template.spec", "Invalid value"): Twin("schema", "type: object"),
    ("spec.template.spec.restartPolicy", "Unsupported value"): Twin("schema", "enum [Always], default Always"),
    ("spec.template.spec.terminationGracePeriodSeconds", "Invalid value"): Twin("schema", "minimum 0"),
    ("spec.template.spec.activeDeadlineSeconds", "Forbidden"): Twin("cel", "pod spec: no activeDeadlineSeconds"),
    ("spec.template.spec.<containers>", "Required value"): Twin("schema", "required: [containers], minItems 1"),
    ("spec.template.spec.<containers>", "Invalid value"): Twin("schema", "type: array"),
    ("spec.template.spec.<containers>[*]", "Invalid value"): Twin("schema", "type: object"),
    ("spec.template.spec.<containers>[*].name", "Required value"): Twin("schema", "required: [name, image]"),
    ("spec.template.spec.<containers>[*].name", "Invalid value"): Twin("schema", "pattern, maxLength 63"),
    ("spec.template.spec.<containers>[*].name", "Duplicate value"): Twin(
        "cel", "x-kubernetes-list-type: map keyed by name within a list; pod spec rule across both lists"),
    ("spec.template.spec.<containers>[*].image", "Required value"): Twin("schema", "required: [name, image], "
                                                                                   "minLength 1"),
    ("spec.template.spec.<containers>[*].image", "Invalid value"): Twin("schema", "type: string"),
    ("spec.template.spec.dnsPolicy", "Unsupported value"): Twin("schema", "enum"),
    ("spec.template.spec.dnsPolicy", "Required value"): Twin("schema", "enum (refuses '')"),
    ("spec.volumeClaimTemplates", "Invalid value"): Twin("schema", "type: array"),
    ("spec.volumeClaimTemplates[*]", "Invalid value"): Twin("schema", "type: object"),
    ("spec.volumeClaimTemplates[*].metadata", "Invalid value"): Twin("schema", "type: object"),
    ("spec.volumeClaimTemplates[*].metadata.name", "Required value"): Twin("schema", "required: [metadata], "
                                                                                     "required: [name]"),
    ("spec.volumeClaimTemplates[*].metadata.name", "Invalid value"): Twin("schema", "pattern, maxLength 63"),
    ("spec.volumeClaimTemplates[*].metadata.name", "Duplicate value"): Twin("cel", "volumeClaimTemplates: names "
                                                                                   "unique"),
    ("spec.volumeClaimUpdatePolicy", "Unsupported value"): Twin("schema", "enum"),
    ("spec.volumeClaimTemplates[*].spec.resources.requests.storage", "Forbidden"): Twin(
        "cel", "volumeClaimTemplates: transition rule, quantity(new).isLessThan(quantity(old)) by template name "
               "(Kubernetes' quantity library; the message names the template)"),
}


def _container_twins() -> dict[tuple[str, str], Twin]:
    """The twins of ``validation_containers`` (``cluster/crd/containers.py``), for both container lists."""
    c = "spec.template.spec.<containers>[*]"
    rows = {
        (f"{c}.{key}", kind): Twin("schema", "enum" if kind == "Unsupported value" else "enum (refuses '')")
        for key in ("imagePullPolicy", "terminationMessagePolicy", "ports[*].protocol")
        for kind in ("Unsupported value", "Required value")
    } | {
        (f"{c}.ports", "Invalid value"): Twin("schema", "type: array"),
        (f"{c}.ports[*]", "Invalid value"): Twin("schema", "type: object"),
        (f"{c}.ports[*].containerPort", "Required value"): Twin("schema", "required: [containerPort], minimum 1"),
        (f"{c}.ports[*].containerPort", "Invalid value"): Twin("schema", "minimum 1, maximum 65535"),
        (f"{c}.ports[*].hostPort", "Invalid value"): Twin("schema", "minimum 0, maximum 65535"),
        (f"{c}.ports[*].name", "Invalid value"): Twin("cel", "an IANA service name; maxLength 15"),
        (f"{c}.ports[*].name", "Duplicate value"): Twin("cel", "ports: names unique"),
        (f"{c}.env", "Invalid value"): Twin("schema", "type: array"),
        (f"{c}.env[*]", "Invalid value"): Twin("schema", "type: object"),
        (f"{c}.env[*].name", "Required value"): Twin("schema", "required: [name], minLength 1"),
        (f"{c}.env[*].name", "Invalid value"): Twin("schema", "pattern: printable ASCII but '='"),
        (f"{c}.env[*].valueFrom", "Invalid value"): Twin("cel", "env item: no valueFrom with a value"),
        (f"{c}.resources.requests[*]", "Invalid value"): Twin(
            "none", "a rule comparing two quantity maps key by key is estimated above a CRD rule's cost limit "
                    "(keys without maxLength); validate and up refuse it, a cluster at pod creation"),
    }
    for probe in PROBES:
        p = f"{c}.{probe}"
        rows |= {(p, "Invalid value"): Twin("schema", "type: object"),
                 (p, "Required value"): Twin("cel", "probe: a handler"),
                 **{(f"{p}.{h}", "Forbidden"): Twin("cel", "probe: at most one handler") for h in PROBE_HANDLERS},
                 **{(f"{p}.{key}", "Invalid value"): Twin("schema", "type: integer, minimum 0")
                    for key in PROBE_INTS},
                 **{(f"{p}.{h}.port", kind): Twin("cel", "a port number or an IANA service name; required: [port]")
                    for h in ("httpGet", "tcpSocket") for kind in ("Invalid value", "Required value")},
                 (f"{p}.httpGet.scheme", "Unsupported value"): Twin("schema", "enum"),
                 (f"{p}.httpGet.scheme", "Required value"): Twin("schema", "enum (refuses '')")}
        if probe != "readinessProbe":
            rows[(f"{p}.successThreshold", "Invalid value")] = Twin("cel", "successThreshold at most 1")
    return rows


TWINS |= _container_twins()
