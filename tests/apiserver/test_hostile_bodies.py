"""Hostile request bodies get a Kubernetes Status (400, 413 or 422 with the field path), never a 500 or a hang,
and change nothing: the API server reads bodies through the same loader as every other door."""

from __future__ import annotations

import copy
import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from server_support import AUTH, api, body, run, sts

from rollwise.cluster.documents import MAX_DOCUMENT_BYTES

STS = "/apis/apps/v1/namespaces/default/statefulsets"
JSON, YAML, MERGE, SMP, APPLY = ("application/json", "application/yaml", "application/merge-patch+json",
                                 "application/strategic-merge-patch+json", "application/apply-patch+yaml")

LAUGHS = "\n".join(["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
                    *(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9))])
STS_YAML = yaml.safe_dump(sts("web"), sort_keys=False)

# (name, method, path, body, content type, code, field path in details.causes or None)
CASES: list[tuple[str, str, str, bytes, str, int, str | None]] = [
    ("a YAML alias bomb", "POST", STS, (LAUGHS + "\n" + STS_YAML).encode(), YAML, 422, "a1[0]"),
    ("an alias in an annotation", "PATCH", f"{STS}/web",
     b"metadata:\n  annotations: {x: &a lol, y: *a}\n", MERGE, 422, "metadata.annotations.y"),
    ("a duplicate key in YAML", "POST", STS, STS_YAML.replace("spec:\n", "spec:\n  replicas: 1\n", 1).encode(),
     YAML, 422, "spec.replicas"),
    ("a duplicate key in JSON", "POST", STS, b'{"kind":"StatefulSet","kind":"StatefulSet"}', JSON, 400, None),
    ("a duplicate key in a patch", "PATCH", f"{STS}/web", b'{"spec":{"replicas":1,"replicas":2}}', MERGE, 400, None),
    ("NaN in JSON", "PATCH", f"{STS}/web", b'{"spec":{"replicas":NaN}}', MERGE, 400, None),
    ("an overflowing JSON number", "PATCH", f"{STS}/web", b'{"spec":{"replicas":1e999}}', MERGE, 400, None),
    ("an integer past int64", "PATCH", f"{STS}/web", b'{"spec":{"replicas":99999999999999999999999}}', MERGE, 400,
     None),
    (".nan in YAML", "PATCH", f"{STS}/web", b"spec: {replicas: .nan}\n", MERGE, 422, "spec.replicas"),
    (".inf in a server-side apply", "PATCH", f"{STS}/web?fieldManager=m",
     STS_YAML.replace("replicas: 2", "replicas: .inf").encode(), APPLY, 422, "spec.replicas"),
    ("JSON nested 10,000 deep", "POST", STS, b"[" * 10_000 + b"]" * 10_000, JSON, 400, None),
    ("YAML nested 10,000 deep", "PUT", f"{STS}/web", b"spec:\n  x: " + b"[" * 10_000 + b"]" * 10_000, YAML, 422,
     None),
    ("Latin-1 bytes", "POST", STS, json.dumps(sts("caf\u00e9"), ensure_ascii=False).encode("latin-1"), JSON, 400, None),
    ("UTF-16", "POST", STS, json.dumps(sts("w16")).encode("utf-16"), JSON, 400, None),
    ("several YAML documents", "POST", STS, (STS_YAML + "---\n" + STS_YAML).encode(), YAML, 400, None),
    ("a YAML tag on the whole body", "POST", STS, b"!!binary aGVsbG8=\n", YAML, 400, None),
    ("a YAML tag on a field", "POST", STS, STS_YAML.replace("replicas: 2", "replicas: !!set {}").encode(), YAML, 422,
     "spec.replicas"),
    # Found by the fuzz below: shapes a patch can give metadata that the store's indexes could not read.
    ("a patch that makes metadata a boolean", "PATCH", f"{STS}/web", b'{"metadata":true}', MERGE, 422, "metadata"),
    ("owner references that are not a list", "PATCH", f"{STS}/web", b'{"metadata":{"ownerReferences":true}}', SMP,
     422, "metadata.ownerReferences"),
    ("finalizers that are not a list", "PATCH", f"{STS}/web", b'{"metadata":{"finalizers":7}}', MERGE, 422,
     "metadata.finalizers"),
    ("a body over the size limit", "POST", STS, b'{"a":"' + b"x" * MAX_DOCUMENT_BYTES + b'"}', JSON, 413, None),
]


@pytest.mark.parametrize(("method", "path", "data", "ctype", "code", "field"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_hostile_body_is_a_status_and_changes_nothing(method: str, path: str, data: bytes, ctype: str, code: int,
                                                      field: str | None) -> None:
    async def t() -> None:
        async with api() as (c, store):
            await c.post(STS, json=sts("web"), headers=AUTH)
            before = store.resource_version
            resp = await c.request(method, path, data=data, headers={**AUTH, "Content-Type": ctype})
            status = await body(resp)
            assert (resp.status, status["kind"], status["code"]) == (code, "Status", code), status
            assert resp.headers["Content-Type"] == "application/json"
            if field is not None:
                assert field in [cause["field"] for cause in status["details"]["causes"]], status
            assert store.resource_version == before
    run(t)


def test_a_yaml_body_under_the_json_content_type_is_still_read() -> None:
    async def t() -> None:
        async with api() as (c, _):
            resp = await c.post(STS, data=STS_YAML.encode(), headers={**AUTH, "Content-Type": JSON})
            assert resp.status == 201, await resp.text()
            assert (await body(resp))["spec"]["replicas"] == 2
    run(t)


# --- fuzz: mutated bundled manifests through POST, PUT and PATCH ------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
SEED_OBJECTS = [obj for p in sorted((ROOT / "src" / "rollwise" / "examples").glob("*.yaml"))
                for obj in yaml.safe_load(p.read_text()).get("objects", []) if isinstance(obj, dict)]
ODD_VALUES = st.sampled_from([None, True, 0, -1, 3, 2**63 - 1, 1e308, 0.5, "", "x", "NaN", [], {}, [1, "a", None],
                              {"a": 1}, {"replicaz": 3}])
MAX_EXAMPLES = int(os.environ.get("ROLLWISE_FUZZ_EXAMPLES", "120"))
TEXT_MUTATIONS = ["none", "none", "none", "duplicate", "alias", "nan", "deep", "truncate", "latin1", "utf16"]


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    children = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else []
    for key, value in children:
        out += _paths(value, (*prefix, key))
    return out


@st.composite
def request_bodies(draw: st.DrawFn) -> tuple[str, bytes, str]:
    """A bundled object with a few values replaced or deleted, written as JSON or YAML, then maybe made hostile."""
    doc = copy.deepcopy(draw(st.sampled_from(SEED_OBJECTS)))
    doc.setdefault("metadata", {})["name"] = "web"
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(_paths(doc)))
        if not path:
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(draw(ODD_VALUES))
    as_json = draw(st.booleans())
    text = json.dumps(doc) if as_json else yaml.safe_dump(doc, sort_keys=False)
    mutation = draw(st.sampled_from(TEXT_MUTATIONS))
    if mutation == "duplicate":
        text = text.replace('"metadata": {', '"metadata": {"name": "x", ', 1) if as_json else \
            text.replace("metadata:\n", "metadata:\n  name: x\n", 1)
    elif mutation == "alias" and not as_json:
        text = LAUGHS + "\n" + text
    elif mutation == "nan":
        text = text.replace("1", "NaN" if as_json else ".nan", 1)
    elif mutation == "deep":
        depth = draw(st.integers(60, 5000))
        nested = "[" * depth + "]" * depth
        text = text.replace("{", '{"deep": ' + nested + ", ", 1) if as_json else f"{text}deep: {nested}\n"
    elif mutation == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    data = text.encode()
    if mutation == "latin1":
        data = text.encode("latin-1", errors="replace") + b"\xe9"
    elif mutation == "utf16":
        data = text.encode("utf-16")
    ctype = JSON if as_json else draw(st.sampled_from([YAML, JSON, APPLY]))
    return draw(st.sampled_from(["POST", "PUT", "PATCH"])), data, ctype


@settings(max_examples=MAX_EXAMPLES, deadline=timedelta(seconds=20), suppress_health_check=[HealthCheck.too_slow])
@given(case=request_bodies())
@example(case=("PATCH", b"apiVersion: 0\nkind: StatefulSet\nmetadata:\n  n", APPLY))  # metadata a string
@example(case=("PATCH", b"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web, labels: x}", APPLY))
@example(case=("PATCH", b"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec: 3", APPLY))
@example(case=("PATCH", b"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web, annotations: [1]}", APPLY))
def test_mutated_manifests_get_a_status_never_a_5xx(case: tuple[str, bytes, str]) -> None:
    method, data, ctype = case
    if method == "PATCH" and ctype == JSON:
        ctype = MERGE
    async def t() -> None:
        async with api() as (c, _):
            await c.post(STS, json=sts("web"), headers=AUTH)
            path = STS if method == "POST" else f"{STS}/web?fieldManager=fuzz"
            resp = await c.request(method, path, data=data, headers={**AUTH, "Content-Type": ctype})
            reply = await body(resp)
            assert resp.status < 500, reply
            if resp.status >= 400:
                assert (reply["kind"], reply["code"]) == ("Status", resp.status), reply
    run(t)


# (name, method, path, code): query values that must be refused, not read as some default.
QUERIES = [
    ("a dry run spelled in lower case deletes nothing", "DELETE", f"{STS}/web?dryRun=all", 422),
    ("an unknown dry run value on create", "POST", f"{STS}?dryRun=Bogus", 422),
    ("a grace period past int64", "DELETE", f"{STS}/web?gracePeriodSeconds=99999999999999999999999", 400),
    ("an unknown fieldValidation", "POST", f"{STS}?fieldValidation=strict", 400),
]


@pytest.mark.parametrize(("method", "path", "code"), [q[1:] for q in QUERIES], ids=[q[0] for q in QUERIES])
def test_a_bad_query_value_is_a_status_and_changes_nothing(method: str, path: str, code: int) -> None:
    async def t() -> None:
        async with api() as (c, store):
            await c.post(STS, json=sts("web"), headers=AUTH)
            before = store.resource_version
            resp = await c.request(method, path, json=sts("other"), headers=AUTH)
            status = await body(resp)
            assert (resp.status, status["kind"], status["code"]) == (code, "Status", code), status
            assert store.resource_version == before
    run(t)
