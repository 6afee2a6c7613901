"""The server's record of a set's pods over time: one watch, opened before the set exists and kept open across
whatever the test does, with every event kept in order.

A watch the server ends is resumed from the last resourceVersion seen; a resume the server refuses (410) is a gap
in the record, and ``events()`` then fails rather than answer from a partial history.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from rollwise.apiserver.auth.tls import read_endpoint

__all__ = ["PodEvent", "PodHistory", "unavailable_counts"]


@dataclass(frozen=True)
class PodEvent:
    type: str
    name: str
    ready: bool
    terminating: bool


class PodHistory:
    """Watches the pods matching ``selector`` in ``namespace`` from the current state on, in a background thread."""

    def __init__(self, kubeconfig: Path, namespace: str, selector: str) -> None:
        endpoint = read_endpoint(kubeconfig)
        self._host, self._port = endpoint.host, endpoint.port
        self._token = endpoint.token
        self._tls = endpoint.tls
        self._path = f"/api/v1/namespaces/{namespace}/pods"
        self._selector = selector
        self._events: list[PodEvent] = []
        self._gap: str | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._conn: http.client.HTTPSConnection | None = None
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._started.wait(30):
            raise AssertionError("the pod watch did not start")

    def events(self) -> list[PodEvent]:
        with self._lock:
            if self._gap is not None:
                raise AssertionError(f"the pod watch has a gap: {self._gap}")
            return list(self._events)

    def stop(self) -> None:
        self._stopping.set()
        conn = self._conn
        if conn is not None and conn.sock is not None:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(2)
        self._thread.join(30)

    def _run(self) -> None:
        since: str | None = None
        while not self._stopping.is_set():
            try:
                for event in self._watch(since):
                    obj = event["object"]
                    if event["type"] == "ERROR":
                        with self._lock:
                            self._gap = f"the server refused to resume from {since}: {obj.get('message')}"
                        return
                    since = obj["metadata"]["resourceVersion"]
                    if event["type"] == "BOOKMARK":
                        continue
                    with self._lock:
                        self._events.append(_summary(event["type"], obj))
            except (OSError, http.client.HTTPException, ValueError) as err:
                if not self._stopping.is_set():
                    with self._lock:
                        self._gap = f"the watch failed: {err!r}"
                return

    def _watch(self, since: str | None) -> Iterator[dict[str, Any]]:
        query = {"watch": "1", "labelSelector": self._selector, "allowWatchBookmarks": "true"}
        if since is not None:
            query["resourceVersion"] = since
        conn = http.client.HTTPSConnection(self._host, self._port, context=self._tls, timeout=None)
        self._conn = conn
        try:
            conn.request("GET", f"{self._path}?{urlencode(query)}", headers={"Authorization": f"Bearer {self._token}"})
            response = conn.getresponse()
            if response.status != 200:
                raise ValueError(f"watch answered {response.status}: {response.read()[:300]!r}")
            self._started.set()
            while line := response.readline():
                yield json.loads(line)
        finally:
            conn.close()


def _summary(kind: str, pod: dict[str, Any]) -> PodEvent:
    conditions = (pod.get("status") or {}).get("conditions") or []
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    return PodEvent(kind, pod["metadata"]["name"], ready, pod["metadata"].get("deletionTimestamp") is not None)


def unavailable_counts(events: list[PodEvent], set_name: str, replicas: int) -> list[int]:
    """After each event, how many of the set's in-range ordinals are missing, terminating or not Ready (KEP-961's
    count against maxUnavailable, with minReadySeconds 0)."""
    names = {f"{set_name}-{i}" for i in range(replicas)}
    state: dict[str, PodEvent] = {}
    counts = []
    for event in events:
        if event.type == "DELETED":
            state.pop(event.name, None)
        else:
            state[event.name] = event
        counts.append(sum(1 for name in names
                          if name not in state or state[name].terminating or not state[name].ready))
    return counts
