"""Bad requests get a Kubernetes Status with the right code and reason, never a 500, and change nothing."""

from __future__ import annotations

import json

import pytest
from server_support import AUTH, api, body, pod, run, sts

PODS = "/api/v1/namespaces/default/pods"
STS = "/apis/apps/v1/namespaces/default/statefulsets"
JSON, MERGE, JSONP, SMP = ("application/json", "application/merge-patch+json", "application/json-patch+json",
                           "application/strategic-merge-patch+json")


def _pod_body(**meta: object) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                       "spec": {"containers": [{"name": "c", "image": "i"}]}}).encode()


CASES = [
    ("unreadable body", "POST", PODS, b"{not json", JSON, 400),
    ("a list as the object", "POST", PODS, b"[1,2]", JSON, 400),
    ("metadata that is not an object", "POST", PODS, b'{"kind":"Pod","apiVersion":"v1","metadata":"x"}', JSON, 400),
    ("wrong kind for the URL", "POST", PODS, b'{"kind":"Service","apiVersion":"v1","metadata":{"name":"s"}}',
     JSON, 400),
    ("a namespace that does not exist", "POST", "/api/v1/namespaces/nope/pods", _pod_body(name="x"), JSON, 404),
    ("a name that is not a DNS subdomain", "POST", PODS, _pod_body(name="Bad_Name"), JSON, 422),
    ("a time that does not parse", "POST", PODS, _pod_body(name="t", creationTimestamp="soon"), JSON, 422),
    ("no name at all", "POST", PODS, _pod_body(), JSON, 422),
    ("an unknown JSON patch operation", "PATCH", f"{PODS}/a", b'[{"op":"bogus"}]', JSONP, 422),
    ("a patch that renames", "PATCH", f"{PODS}/a", b'{"metadata":{"name":"b"}}', MERGE, 422),
    ("an element without its merge key", "PATCH", f"{PODS}/a", b'{"spec":{"containers":[{"image":"x"}]}}', SMP,
     422),
    ("an unknown patch type", "PATCH", f"{PODS}/a", b"{}", "text/plain", 415),
    ("a scalar merge patch", "PATCH", f"{PODS}/a", b"5", MERGE, 400),
    ("a PUT whose name differs from the URL", "PUT", f"{PODS}/a", json.dumps(pod("b")).encode(), JSON, 400),
    ("a grace period that is not a number", "DELETE", f"{PODS}/a?gracePeriodSeconds=abc", b"", JSON, 400),
    ("an unknown propagation policy", "DELETE", f"{PODS}/a", b'{"propagationPolicy":"Sideways"}', JSON, 422),
    ("preconditions that are not an object", "DELETE", f"{PODS}/a", b'{"preconditions":"x"}', JSON, 400),
    ("a stale uid precondition", "DELETE", f"{PODS}/a", b'{"preconditions":{"uid":"other"}}', JSON, 409),
    ("a malformed resourceVersion to watch from", "GET", f"{PODS}?watch=true&resourceVersion=abc", b"", JSON, 400),
    ("a malformed label selector", "GET", f"{PODS}?labelSelector=a%20in%20(", b"", JSON, 400),
    ("an unsupported field selector", "GET", f"{PODS}?fieldSelector=spec.bogus%3Dx", b"", JSON, 400),
    ("scale on a resource without it", "GET", f"{PODS}/a/scale", b"", JSON, 404),
    ("a malformed JSON patch to scale", "PATCH", f"{STS}/web/scale", b"[1]", JSONP, 422),
    ("negative replicas through scale", "PUT", f"{STS}/web/scale", b'{"spec":{"replicas":-1}}', JSON, 422),
    ("a selector change", "PATCH", f"{STS}/web", b'{"spec":{"selector":{"matchLabels":{"app":"x"}}}}', MERGE, 422),
    ("deleting the default namespace", "DELETE", "/api/v1/namespaces/default", b"", JSON, 403),
    ("POST to an object path", "POST", f"{PODS}/a", b"{}", JSON, 405),
    # A namespaced resource's cluster-wide path only lists and watches (kube-apiserver registers create and
    # deletecollection under /namespaces/NS/ alone); a create there landed in `default`.
    ("POST to the cluster-wide path of a namespaced resource", "POST", "/api/v1/pods", _pod_body(name="x"), JSON,
     405),
    ("a Lease created outside any namespace", "POST", "/apis/coordination.k8s.io/v1/leases",
     b'{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"}}', JSON, 405),
    ("DELETE of every pod in every namespace at once", "DELETE", "/api/v1/pods", b"", JSON, 405),
    ("an unknown group", "GET", "/apis/nope/v1/things", b"", JSON, 404),
]


@pytest.mark.parametrize(("method", "path", "data", "ctype", "code"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_request_is_a_status_and_changes_nothing(method: str, path: str, data: bytes, ctype: str,
                                                       code: int) -> None:
    async def t() -> None:
        async with api() as (c, store):
            await c.post(PODS, json=pod("a"), headers=AUTH)
            await c.post(STS, json=sts("web"), headers=AUTH)
            before = store.resource_version
            resp = await c.request(method, path, data=data, headers={**AUTH, "Content-Type": ctype})
            status = await body(resp)
            assert (resp.status, status["kind"], status["code"]) == (code, "Status", code)
            assert resp.headers["Content-Type"] == "application/json"
            assert store.resource_version == before
    run(t)
