"""ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1, GA since 1.30) and their bindings, evaluated on
every write as kube-apiserver evaluates them, with the same CEL runtime as CRD rules (``cel_rules``).

For each binding whose policy exists: the policy's ``matchConstraints`` and the binding's ``matchResources``
(``resourceRules`` by group, version, resource and operation, ``excludeResourceRules``, ``objectSelector`` and
``namespaceSelector`` by ``matchLabels``/``matchExpressions``) must match; then every ``matchConditions``
expression must be true; then ``variables`` are computed in order and each ``validations`` expression must be true.
A false one is a denial (``validationActions: [Deny]``: the write fails with the validation's ``reason``, Invalid
(422) by default, and the message ``ValidatingAdmissionPolicy 'P' with binding 'B' denied request: MESSAGE``) or a
warning (``Warn``); ``Audit`` is recorded nowhere here. An expression that fails to evaluate denies under
``failurePolicy: Fail`` (the default) and is skipped under ``Ignore``. Expressions see ``object``, ``oldObject``
(null on create), ``request`` (operation, name, namespace, kind, resource, userInfo), ``namespaceObject`` and
``variables``; ``params`` is always null (``paramKind`` is not supported: such a binding is skipped, and says so in
a warning).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.errors import ApiStatusError, FieldError, Forbidden, Invalid
from rollwise.api.meta import Obj, name_of, selector_matches
from rollwise.apiserver.admission.cel_rules import CelError, check_compiles, evaluate
from rollwise.cluster.resources import GroupKind

__all__ = ["BINDING", "POLICY", "PolicyRequest", "check_policy", "policy_verdict"]

POLICY = GroupKind("admissionregistration.k8s.io", "ValidatingAdmissionPolicy")
BINDING = GroupKind("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding")
NAMES = ("object", "oldObject", "request", "params", "namespaceObject", "variables", "authorizer")
_CODES: Mapping[str, Callable[[str], ApiStatusError]] = {"Forbidden": Forbidden, "Invalid": Invalid}


@dataclass(frozen=True, slots=True)
class PolicyRequest:
    """One write as the policies see it."""

    operation: str  # CREATE, UPDATE, DELETE
    group: str
    version: str
    resource: str  # plural, with "/sub" for a subresource
    kind: str
    namespace: str
    name: str
    user: str
    obj: Obj | None
    old: Obj | None
    namespace_obj: Obj | None = None
    _cache: dict[str, Any] = field(default_factory=dict, compare=False)

    def cel(self) -> dict[str, Any]:
        return {"operation": self.operation, "name": self.name, "namespace": self.namespace,
                "kind": {"group": self.group, "version": self.version, "kind": self.kind},
                "resource": {"group": self.group, "version": self.version,
                             "resource": self.resource.split("/")[0]},
                "subResource": self.resource.partition("/")[2], "userInfo": {"username": self.user},
                "dryRun": False}


def check_policy(policy: Mapping[str, Any]) -> list[FieldError]:
    """The expressions of a policy that do not compile (kube-apiserver reports them in the policy's status; here
    the policy is refused, which says it sooner)."""
    spec = policy.get("spec") if isinstance(policy.get("spec"), Mapping) else {}
    assert isinstance(spec, Mapping)
    errors: list[FieldError] = []
    for key, attr in (("validations", "expression"), ("matchConditions", "expression"),
                      ("variables", "expression"), ("validations", "messageExpression")):
        for i, item in enumerate(spec.get(key) or ()):
            text = item.get(attr) if isinstance(item, Mapping) else None
            if text is None and attr == "messageExpression":
                continue
            if not isinstance(text, str) or not text:
                errors.append(FieldError(path=f"spec.{key}[{i}].{attr}", kind="Required value", rule="required"))
                continue
            try:
                check_compiles(text, NAMES)
            except CelError as err:
                errors.append(FieldError(path=f"spec.{key}[{i}].{attr}", value=text,
                                         rule=f"compilation failed: {err}"))
    return errors


def _matches_rules(rules: Any, req: PolicyRequest) -> bool:
    for rule in rules if isinstance(rules, list) else ():
        if not isinstance(rule, Mapping):
            continue
        ok = (_in(req.group, rule.get("apiGroups")) and _in(req.version, rule.get("apiVersions"))
              and _in(req.operation, rule.get("operations"))
              and (_in(req.resource, rule.get("resources")) or (
                  "/" not in req.resource and _in(req.resource, rule.get("resources"))))
              and (not rule.get("resourceNames") or req.name in rule["resourceNames"]))
        if ok:
            return True
    return False


def _in(value: str, allowed: Any) -> bool:
    items = allowed if isinstance(allowed, list) else []
    return "*" in items or value in items or (value.partition("/")[2] != "" and "*/" + value.partition("/")[2]
                                                                           in items)


def _selected(selector: Any, labels: Mapping[str, Any]) -> bool:
    return not isinstance(selector, Mapping) or not selector or selector_matches(selector, labels)


def _labels(obj: Obj | None) -> Mapping[str, Any]:
    meta = (obj or {}).get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def _matches(constraints: Any, req: PolicyRequest, *, required: bool) -> bool:
    if not isinstance(constraints, Mapping):
        return not required
    if "resourceRules" in constraints and not _matches_rules(constraints.get("resourceRules"), req):
        return False
    if required and "resourceRules" not in constraints:
        return False
    if _matches_rules(constraints.get("excludeResourceRules"), req):
        return False
    if not _selected(constraints.get("objectSelector"), _labels(req.obj or req.old)):
        return False
    return not req.namespace or _selected(constraints.get("namespaceSelector"), _labels(req.namespace_obj))


def policy_verdict(policies: list[Obj], bindings: list[Obj], req: PolicyRequest) -> list[str]:
    """The warnings of the ``Warn`` bindings; raises the denial of the first ``Deny`` binding that fails."""
    by_name = {name_of(p): p for p in policies}
    warnings: list[str] = []
    for binding in sorted(bindings, key=name_of):
        bspec = binding.get("spec") if isinstance(binding.get("spec"), Mapping) else {}
        assert isinstance(bspec, Mapping)
        policy = by_name.get(str(bspec.get("policyName") or ""))
        if policy is None:
            continue
        spec = policy.get("spec") if isinstance(policy.get("spec"), Mapping) else {}
        assert isinstance(spec, Mapping)
        if not _matches(spec.get("matchConstraints"), req, required=True) or not _matches(
                bspec.get("matchResources"), req, required=False):
            continue
        actions = bspec.get("validationActions") or ["Deny"]
        where = f"ValidatingAdmissionPolicy '{name_of(policy)}' with binding '{name_of(binding)}'"
        if spec.get("paramKind"):
            warnings.append(f"{where}: paramKind is not supported by rollwise up; the policy was not evaluated")
            continue
        failure = _failure(spec, req)
        if failure is None:
            continue
        message, reason = failure
        if "Warn" in actions:
            warnings.append(f"Validation failed for {where}: {message}")
        if "Deny" in actions:
            denial = f"{where} denied request: {message}"
            if reason == "Invalid":
                # kube-apiserver's shape: one cause with an empty field, so kubectl prints "is invalid: : ..."
                raise Invalid(denial, errors=[FieldError(path="", kind="", rule=denial)])
            raise _CODES.get(reason, Invalid)(denial)
    return warnings


def _failure(spec: Mapping[str, Any], req: PolicyRequest) -> tuple[str, str] | None:
    """(message, reason) of the first failing validation, or None when the request passes."""
    ignore = spec.get("failurePolicy") == "Ignore"
    data: dict[str, Any] = {"object": req.obj, "oldObject": req.old, "request": req.cel(), "params": None,
                            "namespaceObject": req.namespace_obj, "authorizer": None}
    variables: dict[str, Any] = {}
    data["variables"] = variables
    for cond in spec.get("matchConditions") or ():
        result, error = evaluate(str(cond.get("expression", "")), data, NAMES)
        if error is not None:
            return None if ignore else (f"expression '{cond.get('name')}' resulted in error: {error}", "Invalid")
        if result is not True:
            return None
    for var in spec.get("variables") or ():
        result, error = evaluate(str(var.get("expression", "")), data, NAMES)
        variables[str(var.get("name"))] = result if error is None else None
    for check in spec.get("validations") or ():
        expression = str(check.get("expression", ""))
        result, error = evaluate(expression, data, NAMES)
        if error is not None:
            if ignore:
                continue
            return f"expression '{expression}' resulted in error: {error}", "Invalid"
        if result is True:
            continue
        message = str(check.get("message") or f"failed expression: {expression}")
        if check.get("messageExpression"):
            custom, _ = evaluate(str(check["messageExpression"]), data, NAMES)
            if isinstance(custom, str) and custom.strip():
                message = custom
        return message, str(check.get("reason") or "Invalid")
    return None
