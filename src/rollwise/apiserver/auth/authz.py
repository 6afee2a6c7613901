"""RBAC-lite (``up --authz rbac``): enough of Kubernetes' RBAC authorizer to prove that the operator's shipped
role is sufficient, and that a missing rule fails as on a real cluster (operator-plan §6, §7 WI-C).

Upstream (``plugin/pkg/auth/authorizer/rbac/rbac.go``, ``rbac/v1/evaluation_helpers.go``): a request is allowed
when some rule of a role bound to the user (or one of its groups) matches its API group, resource (with
subresource, ``pods/status``; ``*`` and ``*/status`` as wildcards), verb and, when the rule names them, the
object's name. ClusterRoleBindings apply everywhere; RoleBindings only in their namespace, to a Role of that
namespace or a ClusterRole. There is no deny rule, no aggregation and no escalation check.

Users: ``admin`` (up's own token) and any member of ``system:masters`` (a client certificate's organization) may
do anything; a certificate's other organizations are groups RBAC bindings may name; a service account's user
``system:serviceaccount:<ns>:<sa>`` has the groups ``system:serviceaccounts``, ``system:serviceaccounts:<ns>`` and
``system:authenticated``; any other user only ``system:authenticated``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rollwise.api.meta import Obj

__all__ = ["RbacAuthorizer", "Request", "forbidden_message", "groups_of", "is_superuser", "verb_of"]

SUPERUSERS = frozenset({"admin"})
MASTERS = "system:masters"
SA_PREFIX = "system:serviceaccount:"

Lister = Callable[[str, str | None], list[Obj]]
"""(plural in rbac.authorization.k8s.io, namespace or None) -> objects."""


def verb_of(method: str, *, named: bool, watch: bool) -> str:
    """The RBAC verb of an HTTP request on a resource path (upstream ``request.RequestInfoFactory``)."""
    if method == "GET":
        return "get" if named else ("watch" if watch else "list")
    if method == "DELETE":
        return "delete" if named else "deletecollection"
    return {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())


@dataclass(frozen=True, slots=True)
class Request:
    user: str
    verb: str
    group: str
    resource: str
    subresource: str
    namespace: str | None
    name: str | None
    groups: frozenset[str] = frozenset()
    """Groups the authenticator gave beyond those the name implies (a client certificate's organizations)."""


def _subject_matches(subject: Mapping[str, Any], user: str, groups: frozenset[str], binding_ns: str | None) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return name == user
    if kind == "Group":
        return name in groups
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_ns
        return user == f"{SA_PREFIX}{ns}:{name}"
    return False


def _rule_matches(rule: Mapping[str, Any], req: Request) -> bool:
    verbs = rule.get("verbs") or []
    if "*" not in verbs and req.verb not in verbs:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and req.group not in groups:
        return False
    combined = f"{req.resource}/{req.subresource}" if req.subresource else req.resource
    resources = rule.get("resources") or []
    if not ("*" in resources or combined in resources
            or (req.subresource and f"*/{req.subresource}" in resources)):
        return False
    names = rule.get("resourceNames") or []
    return not names or (req.name is not None and req.name in names)


def groups_of(user: str, given: frozenset[str] = frozenset()) -> frozenset[str]:
    """The groups the authenticator puts a user in: those it ``given`` and those the name implies."""
    groups = {"system:authenticated", *given}
    if user.startswith(SA_PREFIX):
        ns = user[len(SA_PREFIX):].split(":", 1)[0]
        groups |= {"system:serviceaccounts", f"system:serviceaccounts:{ns}"}
    return frozenset(groups)


class RbacAuthorizer:
    def __init__(self, lister: Lister) -> None:
        self.lister = lister

    def rules_of(self, user: str, given: frozenset[str] = frozenset()) -> Iterable[tuple[str | None,
                                                                                        Mapping[str, Any]]]:
        """(namespace the rule is limited to or None, rule) for every role bound to the user."""
        return self._rules(user, given)

    def _rules(self, user: str, given: frozenset[str]) -> Iterable[tuple[str | None, Mapping[str, Any]]]:
        """(namespace the rule is limited to or None, rule) for every role bound to the user or its groups."""
        groups = groups_of(user, given)
        cluster_roles = {r["metadata"]["name"]: r for r in self.lister("clusterroles", None)}
        roles = {(r["metadata"].get("namespace"), r["metadata"]["name"]): r for r in self.lister("roles", None)}
        bindings = [(None, b) for b in self.lister("clusterrolebindings", None)]
        bindings += [(b["metadata"].get("namespace"), b) for b in self.lister("rolebindings", None)]
        for scope, binding in bindings:
            if not any(_subject_matches(s, user, groups, scope) for s in binding.get("subjects") or []):
                continue
            ref = binding.get("roleRef") or {}
            role = cluster_roles.get(ref.get("name")) if ref.get("kind") == "ClusterRole" or scope is None \
                else roles.get((scope, ref.get("name")))
            for rule in (role or {}).get("rules") or []:
                yield scope, rule

    def allowed(self, req: Request) -> bool:
        if is_superuser(req.user, req.groups) or _basic_user(req):
            return True
        return any((scope is None or scope == req.namespace) and _rule_matches(rule, req)
                   for scope, rule in self._rules(req.user, req.groups))


_SELF_REVIEWS = {("authentication.k8s.io", "selfsubjectreviews"), ("authorization.k8s.io", "selfsubjectaccessreviews"),
                 ("authorization.k8s.io", "selfsubjectrulesreviews")}


def _basic_user(req: Request) -> bool:
    """The bootstrap policy's ``system:basic-user`` role, bound to every authenticated user: ask who it is and what
    it may do (``kubectl auth whoami``, ``kubectl auth can-i``)."""
    return req.verb == "create" and (req.group, req.resource) in _SELF_REVIEWS


def is_superuser(user: str, given: frozenset[str] = frozenset()) -> bool:
    """``admin`` (up's token) and any member of ``system:masters`` may do anything, as on a cluster."""
    return user in SUPERUSERS or MASTERS in given


def forbidden_message(req: Request) -> str:
    """Upstream's wording (``apiserver/pkg/endpoints/handlers/responsewriters/errors.go`` ``ForbiddenStatus``)."""
    resource = f"{req.resource}/{req.subresource}" if req.subresource else req.resource
    what = f'{resource} "{req.name}"' if req.name else resource
    where = f' in the namespace "{req.namespace}"' if req.namespace else " at the cluster scope"
    return (f'{what} is forbidden: User "{req.user}" cannot {req.verb} resource "{resource}" in API group '
            f'"{req.group}"{where}')
