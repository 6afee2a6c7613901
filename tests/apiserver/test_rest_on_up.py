"""The operator's direct API client (``cluster/client/rest.py``) against ``rollwise up``: TLS and the bearer token from
the kubeconfig (the audit log names the token's user, for the writes it keeps), every verb and a watch, errors as the
server words them, and a 503 once the server is gone."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubectl_support import Up, stop_up
from lightkube.config.kubeconfig import KubeConfig
from operator_support import audit_entries

from rollwise.api import errors
from rollwise.cluster.client.kube import KubeCluster
from rollwise.cluster.client.rest import RestClient

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.up(for_operator=True),
]

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "rest-0", "namespace": "default",
                                                        "labels": {"app": "rest"}},
       "spec": {"terminationGracePeriodSeconds": 30, "containers": [{"name": "app", "image": "nginx:1.27"}]}}


def _client(up: Up, tmp_path: Path, observed: list[tuple[str, int]]) -> RestClient:
    config = yaml.safe_load(up.kubeconfig.read_text())
    for user in config["users"]:
        user["user"] = {"token": "op-rest"}  # --any-token: the audit log names whoever sends this
    return RestClient.from_config(KubeConfig.from_dict(config).get(),
                                  observe=lambda method, host, code, seconds: observed.append((method, code)))


def test_every_verb_and_a_watch_over_tls_with_the_kubeconfigs_token(up: Up, tmp_path: Path) -> None:
    observed: list[tuple[str, int]] = []

    async def go() -> dict[str, Any]:
        client = _client(up, tmp_path, observed)
        kube = KubeCluster(client)
        try:
            source = kube.list_watch("Pod", "default", labels={"app": "rest"})
            listed = await source.list(resource_version="")
            created = await kube.create(POD)
            with pytest.raises(errors.AlreadyExists):
                await kube.create(POD)
            events = source.watch(resource_version=listed.resource_version, timeout_seconds=30)
            first = await asyncio.wait_for(events.__anext__(), 30)
            await events.aclose()
            patched = await kube.patch("Pod", "default", "rest-0", {"metadata": {"labels": {"patched": "yes"}}})
            stale = {**created, "metadata": {**created["metadata"], "labels": {"app": "rest", "x": "y"}}}
            with pytest.raises(errors.Conflict):
                await kube.update(stale)  # created's resourceVersion predates the patch
            updated = await kube.update({**patched, "metadata": {**patched["metadata"],
                                                                 "annotations": {"a": "b"}}})
            with pytest.raises(errors.Conflict):
                await kube.delete("Pod", "default", "rest-0", uid="not-its-uid")
            gone = await kube.delete("Pod", "default", "rest-0", uid=created["metadata"]["uid"],
                                     grace_period_seconds=0)
            with pytest.raises(errors.NotFound):
                await kube.get("Pod", "default", "missing")
            return {"created": created, "first": first, "patched": patched, "updated": updated, "gone": gone}
        finally:
            await client.close()

    got = asyncio.run(go())
    assert got["created"]["metadata"]["uid"] and isinstance(got["created"]["metadata"]["creationTimestamp"], float)
    assert (got["first"].type, got["first"].obj["metadata"]["name"]) == ("ADDED", "rest-0")
    assert got["patched"]["metadata"]["labels"] == {"app": "rest", "patched": "yes"}
    assert got["updated"]["metadata"]["annotations"] == {"a": "b"}
    assert got["gone"] is None or got["gone"]["metadata"]["name"] == "rest-0"
    mine = [e for e in audit_entries(up) if e["user"] == "op-rest"]
    assert {e["verb"] for e in mine} == {"create", "patch", "update", "delete"}  # the audit log keeps writes
    assert ("POST", 201) in observed and ("POST", 409) in observed and ("GET", 404) in observed
    assert len(observed) == 10  # one per request, the watch included


def test_a_server_that_goes_away_is_service_unavailable(up: Up, tmp_path: Path) -> None:
    observed: list[tuple[str, int]] = []

    async def go() -> None:
        client = _client(up, tmp_path, observed)
        kube = KubeCluster(client)
        try:
            await kube.list("Pod", "default")  # a pooled connection, then the server stops
            assert stop_up(up.proc) == 0
            with pytest.raises(errors.ApiStatusError) as caught:
                await kube.get("Pod", "default", "web-0")
            assert (caught.value.code, caught.value.reason) == (503, "ServiceUnavailable")
        finally:
            await client.close()

    asyncio.run(go())
    assert observed == [("GET", 200)]  # a request that got no reply is not counted, as over httpx
