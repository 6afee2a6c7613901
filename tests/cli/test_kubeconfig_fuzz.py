"""Kubeconfigs damaged the way hand-edited and generated files get damaged: a value of the wrong type or out of
range, a key gone. Whatever the damage, reading one either refuses it with a :class:`ConfigProblem` (the one line the
commands print) or gives a context the client is built from without an error: never a traceback."""

from __future__ import annotations

import base64
import copy
import functools
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import REPLACEMENTS, paths_in, set_at
from tiers import examples

from rollwise.apiserver.auth.tls import load_or_create
from rollwise.cli.kubeconfig import ConfigProblem, client_config
from rollwise.cluster.client.rest import RestClient


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@functools.cache
def seed() -> dict[str, Any]:
    """A kubeconfig using every kind of credential the commands accept, with real PEM material."""
    with tempfile.TemporaryDirectory() as tmp:
        creds = load_or_create(Path(tmp))
        cert, key = creds.cert_path.read_bytes(), creds.key_path.read_bytes()
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "a", "preferences": {},
        "clusters": [
            {"name": "c1", "cluster": {"server": "https://127.0.0.1:6443",
                                       "certificate-authority-data": _b64(creds.ca_pem)}},
            {"name": "c2", "cluster": {"server": "10.0.0.1:443", "insecure-skip-tls-verify": True}}],
        "users": [
            {"name": "u1", "user": {"client-certificate-data": _b64(cert), "client-key-data": _b64(key)}},
            {"name": "u2", "user": {"token": "t0k3n"}},
            {"name": "u3", "user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1",
                                             "command": "aws", "args": ["eks", "get-token"]}}},
            {"name": "u4", "user": {"username": "admin", "password": "secret"}}],
        "contexts": [
            {"name": "a", "context": {"cluster": "c1", "user": "u1", "namespace": "team-a"}},
            {"name": "b", "context": {"cluster": "c2", "user": "u2"}},
            {"name": "c", "context": {"cluster": "c1", "user": "u3"}},
            {"name": "d", "context": {"cluster": "c2", "user": "u4"}}],
    }


@st.composite
def damaged(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    doc = copy.deepcopy(seed())
    doc["current-context"] = draw(st.sampled_from(["a", "b", "c", "d"]))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in paths_in(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        if draw(st.booleans()) and isinstance(path[-1], str):
            doc = set_at(doc, path, None, delete=True)
        else:
            doc = set_at(doc, path, copy.deepcopy(draw(REPLACEMENTS)))
    return doc, doc.get("current-context") if isinstance(doc, dict) else ""


def _check(sample: tuple[dict[str, Any], str]) -> None:
    doc, _ = sample
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config"
        path.write_text(yaml.safe_dump(doc))
        try:
            config = client_config(str(path), None)
        except ConfigProblem as problem:
            assert str(problem).startswith(f"--kubeconfig {path}: ") and "\n" not in str(problem)
            return
        assert isinstance(config.rest_client(), RestClient)  # what the checks let through, the client builds
        assert urlsplit(config.single.cluster.server).scheme in ("http", "https")
        assert isinstance(config.namespace, str)


@pytest.mark.parametrize("n", examples(150, 1500))
def test_a_damaged_kubeconfig_is_refused_in_one_line_or_used_never_a_traceback(n: int) -> None:
    settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(damaged())(_check))()
