"""``fieldValidation``: Strict refuses an unknown field with 422 and its path, Warn (the default) stores the object
without it and says so in a ``Warning`` header, Ignore drops it silently."""

from __future__ import annotations

import json
from typing import Any

import pytest
from server_support import AUTH, api, body, pod, run, sts

STS = "/apis/apps/v1/namespaces/default/statefulsets"
PODS = "/api/v1/namespaces/default/pods"
MERGE, SMP, APPLY = ("application/merge-patch+json", "application/strategic-merge-patch+json",
                     "application/apply-patch+yaml")


def _typo(obj: dict[str, Any]) -> dict[str, Any]:
    obj["spec"]["replicaz"] = 3
    obj["spec"]["template"]["spec"]["containers"][0]["imagez"] = "x"
    return obj


CONTAINER = {"name": "app", "image": "nginx:1.27"}
TYPO_FIELDS = ["spec.replicaz", "spec.template.spec.containers[0].imagez"]

# (name, method, path, body, content type): each carries the two unknown fields of TYPO_FIELDS.
WRITES = [
    ("create", "POST", STS, _typo(sts("new")), "application/json"),
    ("update", "PUT", f"{STS}/web", _typo(sts("web")), "application/json"),
    ("merge patch", "PATCH", f"{STS}/web",
     _typo({"spec": {"template": {"spec": {"containers": [dict(CONTAINER)]}}}}), MERGE),
    ("strategic merge patch with directives", "PATCH", f"{STS}/web",
     _typo({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "app"}],
                                           "containers": [{"name": "app"}]}}}}), SMP),
    ("server-side apply", "PATCH", f"{STS}/web?fieldManager=m", _typo(sts("web")), APPLY),
]


async def _send(c: Any, method: str, path: str, obj: Any, ctype: str, mode: str | None) -> Any:
    if mode is not None:
        path += ("&" if "?" in path else "?") + f"fieldValidation={mode}"
    return await c.request(method, path, data=json.dumps(obj), headers={**AUTH, "Content-Type": ctype})


@pytest.mark.parametrize(("method", "path", "obj", "ctype"), [w[1:] for w in WRITES], ids=[w[0] for w in WRITES])
def test_strict_refuses_unknown_fields_with_422_and_their_paths(method: str, path: str, obj: Any,
                                                                ctype: str) -> None:
    async def t() -> None:
        async with api() as (c, store):
            await c.post(STS, json=sts("web"), headers=AUTH)
            before = store.resource_version
            resp = await _send(c, method, path, obj, ctype, "Strict")
            status = await body(resp)
            assert (resp.status, status["reason"]) == (422, "Invalid"), status
            assert sorted(cause["field"] for cause in status["details"]["causes"]) == TYPO_FIELDS
            assert 'strict decoding error: unknown field "spec.replicaz"' in status["message"]
            assert store.resource_version == before
    run(t)


@pytest.mark.parametrize("mode", [None, "Warn", "Ignore"])
@pytest.mark.parametrize(("method", "path", "obj", "ctype"), [w[1:] for w in WRITES], ids=[w[0] for w in WRITES])
def test_warn_and_ignore_store_the_object_without_the_unknown_fields(method: str, path: str, obj: Any, ctype: str,
                                                                     mode: str | None) -> None:
    async def t() -> None:
        async with api() as (c, _):
            await c.post(STS, json=sts("web"), headers=AUTH)
            resp = await _send(c, method, path, obj, ctype, mode)
            stored = await body(resp)
            assert resp.status in (200, 201), stored
            assert "replicaz" not in stored["spec"]
            assert "imagez" not in stored["spec"]["template"]["spec"]["containers"][0]
            assert stored["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
            warnings = resp.headers.getall("Warning", [])
            expected = [] if mode == "Ignore" else [f'299 - "unknown field \\"{f}\\""' for f in TYPO_FIELDS]
            assert sorted(warnings) == expected
    run(t)


def test_what_kubectl_sends_passes_strict_validation() -> None:
    """A template's ``creationTimestamp: null``, the last-applied annotation, a claim template's status."""
    obj = sts("web")
    obj["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(sts("web"))}
    obj["spec"]["template"]["metadata"]["creationTimestamp"] = None
    obj["spec"]["volumeClaimTemplates"] = [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                            "metadata": {"name": "data", "creationTimestamp": None},
                                            "spec": {"accessModes": ["ReadWriteOnce"],
                                                     "resources": {"requests": {"storage": "1Gi"}}},
                                            "status": {}}]

    async def t() -> None:
        async with api() as (c, _):
            resp = await _send(c, "POST", STS, obj, "application/json", "Strict")
            assert resp.status == 201, await resp.text()
            assert resp.headers.getall("Warning", []) == []
    run(t)


def test_kinds_without_a_schema_are_not_checked() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}, "extra": 1}

    async def t() -> None:
        async with api() as (c, _):
            resp = await _send(c, "POST", "/api/v1/namespaces/default/configmaps", cm, "application/json", "Strict")
            assert resp.status == 201, await resp.text()
    run(t)


def test_an_unknown_mode_is_a_bad_request() -> None:
    async def t() -> None:
        async with api() as (c, store):
            before = store.resource_version
            resp = await _send(c, "POST", PODS, pod("a"), "application/json", "Loose")
            status = await body(resp)
            assert (resp.status, status["reason"]) == (400, "BadRequest")
            assert '"Loose"' in status["message"]
            assert store.resource_version == before
    run(t)
