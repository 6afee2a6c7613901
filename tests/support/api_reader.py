"""Reads from ``rollwise up`` over its REST API, for the tests' polling: what ``kubectl get -o json`` prints.

A test that waits for a rollout asks the same question many times. Asked through kubectl, each poll starts a Go
process and runs its client (about 0.1 CPU s with the server's share), which made the end-to-end tests spend most
of their CPU on waiting. The reads here are one HTTPS request each. What a person types — apply, patch, rollout,
wait, describe, and ``kubectl get`` itself in the tests about kubectl — still goes through the real kubectl.

Names resolve as kubectl resolves them, from the server's discovery: plural, singular, short name or kind, the
built-in groups before custom ones (``statefulset`` is the apps/v1 kind, ``rsts`` the custom one).
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["ApiReader", "ReadFailed"]


class ReadFailed(AssertionError):
    """A read the server refused (its Status), as kubectl exiting non-zero would be."""

    def __init__(self, code: int, body: str) -> None:
        super().__init__(f"GET failed ({code}): {body[:300]}")
        self.code = code


@dataclass(frozen=True)
class _Resource:
    prefix: str  # /api/v1 or /apis/<group>/<version>
    plural: str
    namespaced: bool
    kind: str

    @property
    def api_version(self) -> str:
        return self.prefix.removeprefix("/api/").removeprefix("/apis/")


class ApiReader:
    """GETs against the server a kubeconfig names, with its token and CA, on one kept-alive connection."""

    def __init__(self, kubeconfig: Path) -> None:
        config = yaml.safe_load(kubeconfig.read_text())
        cluster = config["clusters"][0]["cluster"]
        url = urllib.parse.urlsplit(cluster["server"])
        self._host, self._port = url.hostname or "127.0.0.1", url.port or 443
        self._headers = {"Authorization": f"Bearer {config['users'][0]['user'].get('token', '')}",
                         "Accept": "application/json"}
        self._ssl = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        self._names: dict[str, _Resource] | None = None
        self._conn: http.client.HTTPSConnection | None = None
        self._lock = threading.RLock()  # tests poll from threads too; discovery reads under the same lock

    def _get(self, path: str) -> tuple[int, bytes]:
        """One GET on the kept-alive connection (opened again once if the server closed it)."""
        with self._lock:
            for retry in (False, True):
                if self._conn is None:
                    self._conn = http.client.HTTPSConnection(self._host, self._port, context=self._ssl, timeout=30)
                try:
                    self._conn.request("GET", path, headers=self._headers)
                    reply = self._conn.getresponse()
                    return reply.status, reply.read()
                except (http.client.HTTPException, OSError):
                    self.close()
                    if retry:
                        raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _json(self, path: str) -> Any:
        code, body = self._get(path)
        if code != 200:
            raise ReadFailed(code, body.decode(errors="replace"))
        return json.loads(body)

    def _resolve(self, name: str) -> _Resource:
        with self._lock:
            if self._names is None:
                self._names = self._discover()
        try:
            return self._names[name.lower()]
        except KeyError:
            raise ReadFailed(404, f'the server doesn\'t have a resource type "{name}"') from None

    def _discover(self) -> dict[str, _Resource]:
        prefixes = ["/api/v1"] + [f"/apis/{g['preferredVersion']['groupVersion']}"
                                  for g in self._json("/apis")["groups"]]
        names: dict[str, _Resource] = {}
        for prefix in prefixes:  # the server lists built-in groups first; the first claim on a name wins
            for r in self._json(prefix)["resources"]:
                if "/" in r["name"]:
                    continue  # a subresource
                res = _Resource(prefix, r["name"], bool(r["namespaced"]), r["kind"])
                group = prefix.split("/")[2] if prefix.startswith("/apis/") else ""
                for alias in (r["name"], r.get("singularName") or "", r["kind"].lower(), *(r.get("shortNames") or ())):
                    if alias:
                        names.setdefault(alias.lower(), res)
                        if group:  # kubectl's RESOURCE.GROUP
                            names.setdefault(f"{alias.lower()}.{group}", res)
        return names

    def get(self, resource: str, name: str | None = None, *, namespace: str | None = "default",
            labels: str | None = None) -> Any:
        """One object, or a list with ``items`` (each with its kind and apiVersion, as kubectl prints them);
        ``namespace=None``: every namespace. Raises ReadFailed with the server's code."""
        res = self._resolve(resource)
        path = res.prefix
        if res.namespaced and namespace is not None:
            path += f"/namespaces/{namespace}"
        path += f"/{res.plural}"
        if name is not None:
            return self._json(f"{path}/{name}")
        if labels:
            path += "?" + urllib.parse.urlencode({"labelSelector": labels})
        listed = self._json(path)
        items = [{"apiVersion": res.api_version, "kind": res.kind, **item} for item in listed.get("items") or ()]
        return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}

    def get_args(self, *args: str) -> Any:
        """``get`` from kubectl-style arguments: RESOURCE [NAME] [-n NS] [-l SELECTOR] [-A]."""
        words = list(args)
        namespace: str | None = "default"
        labels = None
        positional: list[str] = []
        while words:
            word = words.pop(0)
            if word in ("-n", "--namespace"):
                namespace = words.pop(0)
            elif word in ("-l", "--selector"):
                labels = words.pop(0)
            elif word in ("-A", "--all-namespaces"):
                namespace = None
            elif word.startswith("-"):
                raise ValueError(f"get_args: unsupported option {word} (use up.kubectl)")
            else:
                positional.append(word)
        if not 1 <= len(positional) <= 2:
            raise ValueError(f"get_args: RESOURCE [NAME], got {positional}")
        return self.get(positional[0], positional[1] if len(positional) == 2 else None, namespace=namespace,
                        labels=labels)
