"""How one server is set up: authentication, bookmarks, the audit sink and the faults it injects on purpose."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Faults", "ServerConfig"]


@dataclass(slots=True, kw_only=True)
class Faults:
    """Misbehaviour on purpose, for tests: errors at a rate, delayed watch delivery."""

    conflict_rate: float = 0.0
    error_rate: float = 0.0
    timeout_rate: float = 0.0
    watch_delay_seconds: float = 0.0
    rng: random.Random = field(default_factory=lambda: random.Random(0))


@dataclass(slots=True, kw_only=True)
class ServerConfig:
    tokens: dict[str, str] = field(default_factory=dict)  # bearer token -> user; empty: no authentication
    any_token: bool = False  # accept any bearer token as the user name
    bookmark_seconds: float = 60.0
    faults: Faults = field(default_factory=Faults)
    audit: Callable[[dict[str, Any]], None] | None = None
    debug_endpoints: bool = False
    server_address: str = "127.0.0.1:0"
    authorizer: Any = None  # apiserver.authz.RbacAuthorizer with `up --authz rbac`; None: every user may do anything
    signer: Any = None
    """apiserver.tokens.Signer: serves TokenRequest and accepts the service-account tokens it signed (None: neither)."""
    authenticate_token: Callable[[str], tuple[str, frozenset[str]] | None] | None = None
    """Set by ``make_app`` from ``signer``: a bearer token -> (user, groups), or None when it is not a valid one."""
    pod_fault: Callable[[str, str, str, str | None], Any] | None = None
    """(namespace, pod, fault, container or None) -> the pod: the kubelet takes a fault (apiserver/serving/debug.py)."""
    pod_connect: Callable[[Any, Any, str], Awaitable[Any]] | None = None
    """(request, pod, "exec" | "attach" | "portforward") -> a response, or None when the pod is not a real process
    (apiserver/serving/connect.py answers then)."""
