"""What bench/operator_on_up.py measures besides the operator's own /metrics: every pod event as a watcher in the
benchmark's process receives it, and from those and up's audit log the event-to-action latency.

An *action* is the operator's pod create or delete (the audit log's server-side time and resourceVersion). Its
*event* is the latest change of the same set committed before it (by resourceVersion) that the controller reacts to:
a pod of the set becoming Ready, a pod of the set gone, or a user's write of the set. The latency runs from the moment
this process's watch received that pod event (the audit time for a user's write) to the server's commit of the
action, so it holds the operator's watch delivery, its queue wait, its reconcile and its request.
"""

from __future__ import annotations

import bisect
import contextlib
import http.client
import json
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rollwise.apiserver.auth.tls import read_endpoint

__all__ = ["PodEvents", "PodRecord", "event_to_action"]


@dataclass(frozen=True)
class PodRecord:
    at: float
    rv: int
    type: str
    name: str
    ready: bool
    terminating: bool
    image: str


def set_of(pod: str) -> str:
    return pod.rsplit("-", 1)[0]


class PodEvents:
    """All pod events of one namespace, from a watch opened now and resumed from its last resourceVersion if the
    server ends it; ``gaps`` counts resumes the server refused (the record is then incomplete)."""

    def __init__(self, kubeconfig: Path, namespace: str) -> None:
        endpoint = read_endpoint(kubeconfig)
        self._addr = (endpoint.host, endpoint.port)
        self._token = endpoint.token
        self._tls = endpoint.tls
        self._path = f"/api/v1/namespaces/{namespace}/pods?watch=1&allowWatchBookmarks=true"
        self.records: list[PodRecord] = []
        self.pods: dict[str, PodRecord] = {}
        self.gaps = 0
        self._conn: http.client.HTTPSConnection | None = None
        self._stopping = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def settled(self, count: int, image: str) -> bool:
        pods = list(self.pods.values())
        return len(pods) == count and all(p.ready and not p.terminating and p.image == image for p in pods)

    def stop(self) -> None:
        self._stopping = True
        conn = self._conn
        if conn is not None and conn.sock is not None:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(2)
        self._thread.join(30)

    def _run(self) -> None:
        since = ""
        while not self._stopping:
            conn = http.client.HTTPSConnection(*self._addr, context=self._tls)
            self._conn = conn
            try:
                conn.request("GET", self._path + (f"&resourceVersion={since}" if since else ""),
                             headers={"Authorization": f"Bearer {self._token}"})
                response = conn.getresponse()
                while line := response.readline():
                    event = json.loads(line)
                    obj = event["object"]
                    if event["type"] == "ERROR":
                        self.gaps += 1
                        since = ""
                        break
                    since = obj["metadata"]["resourceVersion"]
                    if event["type"] != "BOOKMARK":
                        self._keep(time.time(), event["type"], obj)
            except (OSError, http.client.HTTPException, ValueError):
                if not self._stopping:
                    self.gaps += 1
                    time.sleep(0.5)
            finally:
                conn.close()

    def _keep(self, at: float, kind: str, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        conditions = (pod.get("status") or {}).get("conditions") or []
        record = PodRecord(at, int(meta["resourceVersion"]), kind, meta["name"],
                           any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions),
                           meta.get("deletionTimestamp") is not None, pod["spec"]["containers"][0]["image"])
        self.records.append(record)
        if kind == "DELETED":
            self.pods.pop(record.name, None)
        else:
            self.pods[record.name] = record


def event_to_action(records: list[PodRecord], audit: list[dict[str, Any]], operator: str,
                    since: float) -> list[float]:
    """Seconds from each of the operator's pod creates and deletes committed after ``since`` back to the event it
    answered (see the module docstring)."""
    triggers: dict[str, list[tuple[int, float]]] = defaultdict(list)  # set -> (rv, when), in rv order below
    was_ready: dict[str, bool] = {}
    for r in records:
        if r.type == "DELETED" or (r.ready and not was_ready.get(r.name, False)):
            triggers[set_of(r.name)].append((r.rv, r.at))
        was_ready[r.name] = r.ready and r.type != "DELETED"
    for e in audit:
        if e["user"] != operator and e["resource"] == "statefulsets.apps.rollwise.dev" and e.get("code", 200) < 300:
            triggers[e["name"]].append((int(e["resourceVersion"]), e["time"]))
    for found in triggers.values():
        found.sort()
    latencies = []
    for e in audit:
        if e["user"] != operator or e["resource"] != "pods" or e["verb"] not in ("create", "delete") \
                or e["time"] < since or e.get("code", 200) >= 300:
            continue
        found = triggers[set_of(e["name"])]
        at = bisect.bisect_left(found, (int(e["resourceVersion"]), float("-inf"))) - 1
        if at >= 0:
            latencies.append(e["time"] - found[at][1])
    return latencies
