"""RBAC-lite: rules matched on group, resource/subresource, verb and name; bindings scoped as upstream's."""

from __future__ import annotations

from typing import Any

import pytest

from rollwise.apiserver.auth.authz import RbacAuthorizer, Request, forbidden_message, verb_of
from rollwise.cli.manifests import rbac

SA = "system:serviceaccount:rollwise-system:rollwise"


def _authorizer(objects: list[dict[str, Any]]) -> RbacAuthorizer:
    plural = {"Role": "roles", "RoleBinding": "rolebindings", "ClusterRole": "clusterroles",
              "ClusterRoleBinding": "clusterrolebindings"}

    def lister(kind: str, namespace: str | None) -> list[dict[str, Any]]:
        return [o for o in objects if plural.get(o["kind"]) == kind
                and (namespace is None or o["metadata"].get("namespace") == namespace)]

    return RbacAuthorizer(lister)


SHIPPED = _authorizer(rbac("rollwise-system"))


def _req(verb: str, group: str, resource: str, sub: str = "", ns: str | None = "default", name: str | None = "x",
         user: str = SA) -> Request:
    return Request(user=user, verb=verb, group=group, resource=resource, subresource=sub, namespace=ns, name=name)


@pytest.mark.parametrize(("req", "allowed"), [
    (_req("delete", "", "pods"), True),
    (_req("create", "", "pods", name=None), True),
    (_req("update", "apps.rollwise.dev", "statefulsets", "status"), True),
    (_req("update", "apps.rollwise.dev", "statefulsets", "finalizers"), True),
    (_req("update", "apps", "statefulsets", "status"), False),  # the companion never writes apps/v1 status
    (_req("patch", "apps", "statefulsets"), True),
    (_req("delete", "apps", "statefulsets"), False),
    (_req("get", "", "secrets"), False),
    (_req("update", "coordination.k8s.io", "leases", ns="rollwise-system", name="rollwise"), True),
    (_req("update", "coordination.k8s.io", "leases", ns="rollwise-system", name="other"), False),
    (_req("update", "coordination.k8s.io", "leases", ns="default", name="rollwise"), False),  # a Role's namespace
    (_req("create", "coordination.k8s.io", "leases", ns="rollwise-system", name=None), True),
    (_req("delete", "", "pods", user="system:serviceaccount:other:rollwise"), False),
    (_req("delete", "", "pods", user="admin"), True),
])
def test_the_shipped_role_allows_what_the_operator_needs_and_nothing_more(req: Request, allowed: bool) -> None:
    assert SHIPPED.allowed(req) is allowed


def test_wildcards_and_groups_match_as_upstream() -> None:
    role = {"kind": "ClusterRole", "metadata": {"name": "r"},
            "rules": [{"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["*"]}]}
    binding = {"kind": "ClusterRoleBinding", "metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "r"},
               "subjects": [{"kind": "Group", "name": "system:serviceaccounts:team"}]}
    a = _authorizer([role, binding])
    assert a.allowed(_req("update", "apps", "statefulsets", "status", user="system:serviceaccount:team:x"))
    assert not a.allowed(_req("update", "apps", "statefulsets", user="system:serviceaccount:team:x"))
    assert not a.allowed(_req("update", "apps", "statefulsets", "status", user="system:serviceaccount:ops:x"))


@pytest.mark.parametrize(("method", "named", "watch", "verb"), [
    ("GET", True, False, "get"), ("GET", False, False, "list"), ("GET", False, True, "watch"),
    ("POST", False, False, "create"), ("PUT", True, False, "update"), ("PATCH", True, False, "patch"),
    ("DELETE", True, False, "delete"), ("DELETE", False, False, "deletecollection"),
])
def test_http_methods_map_to_rbac_verbs(method: str, named: bool, watch: bool, verb: str) -> None:
    assert verb_of(method, named=named, watch=watch) == verb


def test_forbidden_message_reads_as_upstream() -> None:
    assert forbidden_message(_req("delete", "", "pods", name="web-0")) == (
        'pods "web-0" is forbidden: User "system:serviceaccount:rollwise-system:rollwise" cannot delete resource '
        '"pods" in API group "" in the namespace "default"')
