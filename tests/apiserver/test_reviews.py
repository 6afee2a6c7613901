"""The reviews behind `kubectl auth whoami` and `kubectl auth can-i`, answered from the authorizer that guards
every request: truthful under RBAC, everything allowed without one."""

from __future__ import annotations

from typing import Any

from rollwise.apiserver.auth import reviews
from rollwise.apiserver.auth.authz import RbacAuthorizer
from rollwise.apiserver.kinds.resources import BUILTINS
from rollwise.apiserver.serving.config import ServerConfig

SA = "system:serviceaccount:ops:reader"
ROLES: dict[str, list[dict[str, Any]]] = {
    "clusterroles": [],
    "roles": [{"metadata": {"name": "pod-reader", "namespace": "ops"},
               "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}],
    "clusterrolebindings": [],
    "rolebindings": [{"metadata": {"name": "b", "namespace": "ops"},
                      "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "ops"}],
                      "roleRef": {"kind": "Role", "name": "pod-reader"}}],
}


def _review(kind: str) -> Any:
    return next(r for r in BUILTINS if r.kind == kind)


def _rbac() -> ServerConfig:
    return ServerConfig(authorizer=RbacAuthorizer(lambda plural, _ns: ROLES[plural]))


def _can(cfg: ServerConfig, user: str, verb: str, namespace: str) -> bool:
    body = {"spec": {"resourceAttributes": {"verb": verb, "resource": "pods", "namespace": namespace}}}
    return bool(reviews.answer(cfg, _review("SelfSubjectAccessReview"), body, user=user,
                               namespace=None)["status"]["allowed"])


def test_can_i_follows_the_role_bindings_under_rbac() -> None:
    cfg = _rbac()
    assert _can(cfg, SA, "list", "ops")
    assert not _can(cfg, SA, "delete", "ops")
    assert not _can(cfg, SA, "list", "default")
    assert _can(cfg, "admin", "delete", "default")


def test_without_an_authorizer_every_user_may_do_everything() -> None:
    assert _can(ServerConfig(), SA, "delete", "default")


def test_whoami_names_the_user_and_its_groups() -> None:
    status = reviews.answer(ServerConfig(), _review("SelfSubjectReview"), {}, user=SA, namespace=None)["status"]
    assert status["userInfo"] == {"username": SA, "groups": sorted(
        ["system:authenticated", "system:serviceaccounts", "system:serviceaccounts:ops"])}


def test_can_i_list_shows_the_rules_of_the_namespace() -> None:
    body = {"spec": {"namespace": "ops"}}
    rules = reviews.answer(_rbac(), _review("SelfSubjectRulesReview"), body, user=SA, namespace=None)["status"]
    assert rules["resourceRules"] == [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]
    elsewhere = reviews.answer(_rbac(), _review("SelfSubjectRulesReview"), {"spec": {"namespace": "x"}}, user=SA,
                               namespace=None)["status"]
    assert elsewhere["resourceRules"] == []
