"""The reviews: resources a client creates to ask the server a question, answered at once and never stored.

``kubectl auth whoami`` creates a SelfSubjectReview (who am I), ``kubectl auth can-i`` a SelfSubjectAccessReview
(may I do this) or, with ``--list``, a SelfSubjectRulesReview (what may I do in this namespace). Their answers come
from the same authorizer that guards every request (``authz.RbacAuthorizer`` under ``up --authz rbac``); without
one every authenticated user may do everything, and the answers say so (allowed, and ``*`` rules), as a real
server in ``AlwaysAllow`` mode answers. SubjectAccessReview, LocalSubjectAccessReview and TokenReview ask the same
about another user or token.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rollwise.api.errors import BadRequest
from rollwise.apiserver.auth import authz
from rollwise.apiserver.kinds.resources import Resource
from rollwise.apiserver.serving.config import ServerConfig

__all__ = ["answer"]

_ALL_RULES = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
              "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}


def user_info(cfg: ServerConfig, user: str, given: frozenset[str] = frozenset()) -> dict[str, Any]:
    """What the authenticator knows of a user: name and groups (admin is ``system:masters``)."""
    groups = set(authz.groups_of(user, given))
    if user in authz.SUPERUSERS:
        groups.add(authz.MASTERS)
    return {"username": user, "groups": sorted(groups)}


def _allowed(cfg: ServerConfig, user: str, spec: Mapping[str, Any], namespace: str | None,
             given: frozenset[str] = frozenset()) -> dict[str, Any]:
    attrs = spec.get("resourceAttributes")
    if cfg.authorizer is None:
        return {"allowed": True}
    if not isinstance(attrs, Mapping):
        # Non-resource URLs (/healthz, /version) are open to every authenticated user here.
        return {"allowed": True} if spec.get("nonResourceAttributes") else {"allowed": False}
    req = authz.Request(user=user, verb=str(attrs.get("verb") or ""), group=str(attrs.get("group") or ""),
                        resource=str(attrs.get("resource") or ""), subresource=str(attrs.get("subresource") or ""),
                        namespace=namespace if namespace is not None else (attrs.get("namespace") or None),
                        name=attrs.get("name") or None, groups=given)
    if cfg.authorizer.allowed(req):
        return {"allowed": True, "reason": "RBAC: allowed"}
    return {"allowed": False, "reason": "no RBAC policy matched"}


def _rules(cfg: ServerConfig, user: str, namespace: str, given: frozenset[str]) -> dict[str, Any]:
    if cfg.authorizer is None or authz.is_superuser(user, given):
        return _ALL_RULES
    rules = []
    for scope, rule in cfg.authorizer.rules_of(user, given):
        if scope is None or scope == namespace:
            rules.append({k: list(rule.get(k) or ()) for k in ("verbs", "apiGroups", "resources", "resourceNames")
                          if rule.get(k) or k != "resourceNames"})
    return {"resourceRules": rules, "nonResourceRules": [], "incomplete": False}


def answer(cfg: ServerConfig, resource: Resource, body: Any, *, user: str, namespace: str | None,
           groups: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The review ``body`` answered: the body with its ``status`` (upstream returns the spec it was sent); ``groups``
    are those the authenticator gave the asking user."""
    if not isinstance(body, Mapping):
        raise BadRequest(f"the request body must be a {resource.kind} object")
    given = body.get("spec")
    spec: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    kind = resource.kind
    if kind == "SelfSubjectReview":
        status: dict[str, Any] = {"userInfo": user_info(cfg, user, groups)}
    elif kind == "SelfSubjectAccessReview":
        status = _allowed(cfg, user, spec, None, groups)
    elif kind in ("SubjectAccessReview", "LocalSubjectAccessReview"):
        asked = str(spec.get("user") or "")
        if not asked:
            raise BadRequest("spec.user: Required value: at least one of user or group must be specified")
        status = _allowed(cfg, asked, spec, namespace if kind == "LocalSubjectAccessReview" else None)
    elif kind == "SelfSubjectRulesReview":
        status = _rules(cfg, user, str(spec.get("namespace") or "default"), groups)
    else:  # TokenReview
        token = str(spec.get("token") or "")
        found = cfg.authenticate_token(token) if token and cfg.authenticate_token is not None else None
        who = cfg.tokens.get(token) or (found[0] if found else None) or (token if cfg.any_token and token else None)
        status = ({"authenticated": True, "user": user_info(cfg, who, found[1] if found else frozenset())} if who
                  else {"authenticated": False})
    meta = dict(body.get("metadata") or {}) if isinstance(body.get("metadata"), Mapping) else {}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"kind": kind, "apiVersion": resource.api_version, "metadata": meta, "spec": dict(spec),
            "status": status}
