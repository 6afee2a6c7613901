"""Bound service-account tokens: ``POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token`` (TokenRequest,
``kubectl create token``) and the authenticator that accepts them, as kube-apiserver does (pkg/serviceaccount/
jwt.go and claims.go, pkg/registry/core/serviceaccount/storage/token.go).

- A token is a JWT (ES256 here) signed with ``up``'s service-account key: issuer
  ``https://kubernetes.default.svc.cluster.local``, subject ``system:serviceaccount:<ns>:<name>``, the requested
  audiences (default: the API server's), ``iat``/``nbf``/``exp`` and the ``kubernetes.io`` claim naming the
  account (and its uid) and the object it is bound to.
- ``expirationSeconds`` defaults to 3600 and may not be under 600 (422). ``boundObjectRef`` names a Pod, Secret or
  Node that must exist (404), with the given uid if one is given (409).
- A token authenticates while it has not expired, its audiences include the API server's, its account still exists
  with the same uid, and the object it is bound to still exists with the same uid and is not being deleted. The
  user is the subject, in ``system:serviceaccounts``, ``system:serviceaccounts:<ns>`` and ``system:authenticated``.
- The request is authorized as ``create`` on ``serviceaccounts/token`` and audited like any write.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from aiohttp import web
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from rollwise.api.errors import ApiStatusError, BadRequest, Conflict, FieldError, Invalid, NotFound
from rollwise.api.meta import Obj, uid_of
from rollwise.apiserver.kinds.resources import Resource
from rollwise.apiserver.serving.config import ServerConfig
from rollwise.apiserver.serving.http import json_reply, read_body
from rollwise.apiserver.serving.status import error_status
from rollwise.apiserver.storage.store import ApiStore

__all__ = ["ISSUER", "TOKEN_PATH", "Signer", "add_token_route"]

TOKEN_PATH = "/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"
ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_SECONDS, MIN_SECONDS, MAX_SECONDS = 3600, 600, 2**32
_BOUND_KINDS = {"Pod": "Pod", "Secret": "Secret", "Node": "Node"}
Lookup = Callable[[str, str, str], Obj | None]
"""(kind, namespace, name) -> the stored object, or None."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Signer:
    """Signs and verifies tokens with one P-256 key (the ``sa.key`` of ``up``'s credentials)."""

    def __init__(self, key_pem: bytes) -> None:
        key = serialization.load_pem_private_key(key_pem, password=None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        self._key = key
        der = key.public_key().public_bytes(serialization.Encoding.DER,
                                            serialization.PublicFormat.SubjectPublicKeyInfo)
        digest = hashes.Hash(hashes.SHA256())
        digest.update(der)
        self.kid = _b64(digest.finalize())  # as upstream names a key: a hash of its public part

    def sign(self, claims: Mapping[str, Any]) -> str:
        header = _b64(json.dumps({"alg": "ES256", "kid": self.kid}, separators=(",", ":")).encode())
        body = _b64(json.dumps(claims, separators=(",", ":")).encode())
        r, s = decode_dss_signature(self._key.sign(f"{header}.{body}".encode(), ec.ECDSA(hashes.SHA256())))
        return f"{header}.{body}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"

    def claims(self, token: str) -> dict[str, Any] | None:
        """The claims of a token this key signed; None for anything else."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            header, signature = json.loads(_unb64(parts[0])), _unb64(parts[2])
            if header.get("alg") != "ES256" or len(signature) != 64:
                return None
            der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
            self._key.public_key().verify(der, f"{parts[0]}.{parts[1]}".encode(), ec.ECDSA(hashes.SHA256()))
            claims = json.loads(_unb64(parts[1]))
        except (ValueError, InvalidSignature, AttributeError, UnicodeDecodeError):
            return None
        return claims if isinstance(claims, dict) else None

    def authenticate(self, token: str, now: float, lookup: Lookup) -> tuple[str, frozenset[str]] | None:
        """(user, groups) of a valid token (see the module's docstring); None when it is not one."""
        claims = self.claims(token)
        if claims is None or claims.get("iss") != ISSUER:
            return None
        exp, nbf = claims.get("exp"), claims.get("nbf", 0)
        if not isinstance(exp, int) or not isinstance(nbf, int) or now >= exp or now < nbf:
            return None
        audiences = claims.get("aud")
        if ISSUER not in (audiences if isinstance(audiences, list) else [audiences]):
            return None
        info = claims.get("kubernetes.io")
        if not isinstance(info, dict) or not isinstance(info.get("serviceaccount"), dict):
            return None
        namespace, account = str(info.get("namespace") or ""), info["serviceaccount"]
        if not _current(lookup("ServiceAccount", namespace, str(account.get("name") or "")), account):
            return None
        for kind in ("pod", "secret", "node"):
            bound = info.get(kind)
            if isinstance(bound, dict) and not _current(
                    lookup(kind.capitalize(), "" if kind == "node" else namespace, str(bound.get("name") or "")),
                    bound):
                return None
        user = f"system:serviceaccount:{namespace}:{account.get('name')}"
        return user, frozenset({"system:serviceaccounts", f"system:serviceaccounts:{namespace}",
                                "system:authenticated"})


def _current(obj: Obj | None, named: Mapping[str, Any]) -> bool:
    """The object the token names still exists as that object (same uid) and is not being deleted."""
    return (obj is not None and uid_of(obj) == named.get("uid")
            and obj.get("metadata", {}).get("deletionTimestamp") is None)


def _spec(body: Any, namespace: str, lookup: Lookup) -> tuple[dict[str, Any], Obj | None]:
    """The TokenRequest's spec with its defaults, and the object it binds to; Invalid, NotFound or Conflict."""
    if not isinstance(body, Mapping) or not isinstance(body.get("spec", {}), Mapping):
        raise BadRequest("the request body must be an authentication.k8s.io/v1 TokenRequest")
    spec = dict(body.get("spec") or {})
    seconds = spec.get("expirationSeconds", DEFAULT_SECONDS)
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise Invalid(errors=[FieldError(path="spec.expirationSeconds", value=seconds, rule="must be an integer")])
    if seconds < MIN_SECONDS:
        raise Invalid(errors=[FieldError(path="spec.expirationSeconds", value=seconds,
                                         rule="may not specify a duration less than 10 minutes")])
    if seconds > MAX_SECONDS:
        raise Invalid(errors=[FieldError(path="spec.expirationSeconds", value=seconds,
                                         rule="may not specify a duration larger than 2^32 seconds")])
    spec["expirationSeconds"] = seconds
    audiences = spec.get("audiences") or [ISSUER]
    if not isinstance(audiences, list) or not all(isinstance(a, str) and a for a in audiences):
        raise Invalid(errors=[FieldError(path="spec.audiences", value=audiences, rule="must be a list of strings")])
    spec["audiences"] = audiences
    ref = spec.get("boundObjectRef")
    if ref is None:
        return spec, None
    if not isinstance(ref, Mapping) or ref.get("kind") not in _BOUND_KINDS:
        kind = ref.get("kind") if isinstance(ref, Mapping) else ref
        raise Invalid(errors=[FieldError(path="spec.boundObjectRef.kind", kind="Unsupported value", value=kind,
                                         rule='supported values: "Node", "Pod", "Secret"')])
    kind, name = str(ref["kind"]), str(ref.get("name") or "")
    bound = lookup(kind, "" if kind == "Node" else namespace, name)
    if bound is None:
        raise NotFound(f'{kind.lower()}s "{name}" not found')
    if ref.get("uid") and ref["uid"] != uid_of(bound):
        raise Conflict(f"the UID in the bound object reference ({ref['uid']}) does not match the UID in record. "
                       "The object might have been deleted and then recreated")
    return spec, bound


class _Guard(Protocol):
    def authorize_write(self, request: web.Request, resource: Resource, namespace: str, name: str,
                        sub: str) -> None: ...

    def audit_write(self, request: web.Request, resource: Resource, namespace: str, name: str, sub: str,
                    obj: Obj, code: int) -> None: ...


def store_lookup(store: ApiStore) -> Lookup:
    def lookup(kind: str, namespace: str, name: str) -> Obj | None:
        try:
            return store.cluster.get(kind, namespace, name)
        except NotFound:
            return None
    return lookup


def add_token_route(router: web.UrlDispatcher, store: ApiStore, cfg: ServerConfig, guard: _Guard,
                    clock: Callable[[], float] = time.time) -> None:
    """Registered before the generic resource routes, which know no ``token`` subresource; also sets the config's
    authenticator of the tokens. Nothing without a signer in the config."""
    signer = cfg.signer
    if signer is None:
        return
    lookup = store_lookup(store)
    cfg.authenticate_token = lambda token: signer.authenticate(token, clock(), lookup)

    async def token(request: web.Request) -> web.Response:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        accounts = store.registry.find("", "v1", "serviceaccounts")
        assert accounts is not None
        try:
            guard.authorize_write(request, accounts, namespace, name, "token")
            account = store.get(accounts, namespace, name)
            spec, bound = _spec(await read_body(request), namespace, lookup)
        except ApiStatusError as err:
            return json_reply(error_status(err, kind="serviceaccounts", name=name), err.code)
        now = int(clock())
        exp = now + int(spec["expirationSeconds"])
        info: dict[str, Any] = {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid_of(account)}}
        if bound is not None:
            info[str(spec["boundObjectRef"]["kind"]).lower()] = {"name": bound["metadata"]["name"],
                                                                 "uid": uid_of(bound)}
            spec["boundObjectRef"] = {**spec["boundObjectRef"], "uid": uid_of(bound)}
        claims = {"aud": spec["audiences"], "exp": exp, "iat": now, "nbf": now, "iss": ISSUER,
                  "jti": secrets.token_hex(16), "kubernetes.io": info,
                  "sub": f"system:serviceaccount:{namespace}:{name}"}
        expires = datetime.fromtimestamp(exp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        reply = {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                 "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
                 "spec": spec, "status": {"token": signer.sign(claims), "expirationTimestamp": expires}}
        # The audit entry names the account, never the token.
        guard.audit_write(request, accounts, namespace, name, "token", {"metadata": reply["metadata"]}, 201)
        return json_reply(reply, 201)

    router.add_post(TOKEN_PATH, token)
