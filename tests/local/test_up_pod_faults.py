"""What `rollwise up` adds for replaying scenarios against it: pod faults on request (the debug endpoint), the
quorum model from the kubelet file, and the built-in controllers' writes in the audit log. In process: the API
server on aiohttp's TestServer and the wall-clock driver on the same loop, as `up` runs them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from server_support import AUTH, TOKEN, body, run, sts

from rollwise.api.errors import Invalid
from rollwise.apiserver.app import make_app
from rollwise.apiserver.auth.authz import RbacAuthorizer
from rollwise.apiserver.serving.config import ServerConfig
from rollwise.apiserver.storage.store import ApiStore
from rollwise.kubelet.process import ProcessRuntime
from rollwise.kubelet.profiles import KubeletProfile
from rollwise.kubelet.quorum_probe import QuorumParams
from rollwise.local.driver import WallDriver
from rollwise.local.processes import ProcessKubelet

PODS = "/api/v1/namespaces/default/pods"
SETS = "/apis/apps/v1/namespaces/default/statefulsets"
DEADLINE = 20.0
SPEED = 20.0
FAST = KubeletProfile(start_seconds=1, ready_seconds=1, termination_seconds=1)
QUORUM = QuorumParams(election_seconds=1, probe_initial_delay_seconds=4, probe_period_seconds=2)


def fault_path(pod: str) -> str:
    return f"/debug/rollwise/namespaces/default/pods/{pod}/fault"


@asynccontextmanager
async def up(*, apps: dict[str, QuorumParams] | None = None, kubelet: bool = True, rbac: bool = False,
             debug: bool = True) -> AsyncIterator[tuple[TestClient[Any, Any], ApiStore, list[dict[str, Any]]]]:
    store = ApiStore()
    audit: list[dict[str, Any]] = []
    driver = WallDriver(store.cluster, listen=store.feed.listen, pump=store.feed.pump, profile=FAST, speed=SPEED,
                        apps=apps, kubelet=kubelet, audit=audit.append)
    authorizer = None
    if rbac:
        authorizer = RbacAuthorizer(lambda plural, ns: store.list(
            store.registry.find("rbac.authorization.k8s.io", "v1", plural), ns))  # type: ignore[arg-type]
    config = ServerConfig(tokens={TOKEN: "admin"}, any_token=True, audit=audit.append, debug_endpoints=debug,
                          authorizer=authorizer, pod_fault=driver.pod_fault)
    async with TestClient(TestServer(make_app(store, config), host="127.0.0.1", port=0)) as client:
        driver.start()
        try:
            yield client, store, audit
        finally:
            driver.stop()


async def until(check: Callable[[], Any], what: str) -> Any:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end:
        found = await check()
        if found:
            return found
        await asyncio.sleep(0.02)
    raise AssertionError(f"not within {DEADLINE} s: {what}")


async def get(c: TestClient[Any, Any], path: str) -> Any:
    return await body(await c.get(path, headers=AUTH))


async def ready_pods(c: TestClient[Any, Any]) -> list[str]:
    return sorted(p["metadata"]["name"] for p in (await get(c, PODS))["items"]
                  if any(x["type"] == "Ready" and x["status"] == "True" for x in p.get("status", {}).get("conditions")
                         or []))


def quorum_set(name: str = "etcd") -> dict[str, Any]:
    doc = sts(name, image="etcd:3.5", replicas=3)
    doc["spec"]["podManagementPolicy"] = "Parallel"
    return doc


def test_a_crash_fault_reaches_the_kubelet_and_is_audited_as_the_caller() -> None:
    async def t() -> None:
        async with up() as (c, _, audit):
            await c.post(SETS, json=sts("web", replicas=1), headers=AUTH)
            await until(lambda: _has(ready_pods(c), "web-0"), "web-0 Ready")
            resp = await c.post(fault_path("web-0"), json={"fault": "crash"}, headers=AUTH)
            assert resp.status == 201, await resp.text()
            assert (await body(resp))["status"] == "Success"

            async def crash_looping() -> bool:
                statuses = (await get(c, f"{PODS}/web-0"))["status"].get("containerStatuses") or []
                waiting = (statuses[0].get("state") or {}).get("waiting") or {} if statuses else {}
                return waiting.get("reason") == "CrashLoopBackOff"

            await until(crash_looping, "web-0 crash-loops")
            assert "web-0" not in await ready_pods(c)
            assert {"user": "admin", "verb": "create", "resource": "pods/fault", "name": "web-0", "code": 201} \
                .items() <= next(e for e in audit if e["resource"] == "pods/fault").items()
    run(t)


def test_kill_restarts_the_container_once() -> None:
    async def t() -> None:
        async with up() as (c, _, _audit):
            await c.post(SETS, json=sts("web", replicas=1), headers=AUTH)
            await until(lambda: _has(ready_pods(c), "web-0"), "web-0 Ready")
            assert (await c.post(fault_path("web-0"), json={"fault": "kill"}, headers=AUTH)).status == 201

            async def restarted_and_ready() -> bool:
                pod = await get(c, f"{PODS}/web-0")
                restarts = pod["status"]["containerStatuses"][0]["restartCount"]
                return restarts == 1 and "web-0" in await ready_pods(c)

            await until(restarted_and_ready, "web-0 restarted once and Ready again")
    run(t)


def test_a_bad_fault_request_is_a_status_with_the_field_and_changes_nothing() -> None:
    cases = [({"fault": "boom"}, 422, "fault"), ({}, 422, "fault"), ({"fault": "crash", "extra": 1}, 422, "extra"),
             ({"fault": 3}, 422, "fault"), ([1], 422, "<body>"), ({"fault": "crash", "container": "nope"}, 422,
                                                                  "container")]

    async def t() -> None:
        async with up() as (c, store, audit):
            await c.post(SETS, json=sts("web", replicas=1), headers=AUTH)
            await until(lambda: _has(ready_pods(c), "web-0"), "web-0 Ready")
            before = (await get(c, f"{PODS}/web-0"))["metadata"]["resourceVersion"]
            for payload, code, field in cases:
                resp = await c.post(fault_path("web-0"), json=payload, headers=AUTH)
                status = await body(resp)
                assert (resp.status, status["kind"], status["code"]) == (code, "Status", code), payload
                assert [cause["field"] for cause in status["details"]["causes"]] == [field], status
            missing = await c.post(fault_path("nope"), json={"fault": "crash"}, headers=AUTH)
            assert (missing.status, (await body(missing))["reason"]) == (404, "NotFound")
            assert (await get(c, f"{PODS}/web-0"))["metadata"]["resourceVersion"] == before
            assert not [e for e in audit if e["resource"] == "pods/fault"]
            del store
    run(t)


def test_without_debug_endpoints_or_a_kubelet_there_is_no_fault_to_take() -> None:
    async def t() -> None:
        async with up(debug=False) as (c, _, _audit):
            await c.post(SETS, json=sts("web", replicas=1), headers=AUTH)
            assert (await c.post(fault_path("web-0"), json={"fault": "crash"}, headers=AUTH)).status == 404
        async with up(kubelet=False) as (c, _, _audit):
            await c.post(SETS, json=sts("web", replicas=1), headers=AUTH)
            await until(lambda: _has(_names(c), "web-0"), "web-0 created")
            resp = await c.post(fault_path("web-0"), json={"fault": "crash"}, headers=AUTH)
            assert (resp.status, (await body(resp))["reason"]) == (409, "Conflict")
    run(t)


def test_with_rbac_a_fault_needs_create_on_pods_fault() -> None:
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "chaos", "namespace": "default"},
            "rules": [{"apiGroups": [""], "resources": ["pods/fault"], "verbs": ["create"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "chaos", "namespace": "default"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "chaos"},
               "subjects": [{"kind": "User", "name": "monkey"}]}

    async def t() -> None:
        async with up(rbac=True) as (c, _, audit):
            await c.post(SETS, json=sts("web", replicas=1), headers=AUTH)
            await until(lambda: _has(ready_pods(c), "web-0"), "web-0 Ready")
            as_monkey = {"Authorization": "Bearer monkey"}
            refused = await c.post(fault_path("web-0"), json={"fault": "crash"}, headers=as_monkey)
            assert refused.status == 403
            assert 'cannot create resource "pods/fault"' in (await body(refused))["message"]
            await c.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", json=role, headers=AUTH)
            await c.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", json=binding,
                         headers=AUTH)
            assert (await c.post(fault_path("web-0"), json={"fault": "crash"}, headers=as_monkey)).status == 201
            assert [(e["user"], e["code"]) for e in audit if e["resource"] == "pods/fault"] == [
                ("monkey", 403), ("monkey", 201)]
    run(t)


def test_the_built_in_controllers_writes_are_audited_as_their_service_account() -> None:
    async def t() -> None:
        async with up() as (c, _, audit):
            await c.post(SETS, json=sts("web", replicas=2), headers=AUTH)
            await until(lambda: _has(ready_pods(c), "web-1"), "web-1 Ready")
            ours = [(e["verb"], e["resource"], e["name"]) for e in audit
                    if e["user"] == "system:serviceaccount:kube-system:statefulset-controller"]
            assert [w for w in ours if w[1] == "pods"] == [("create", "pods", "web-0"), ("create", "pods", "web-1")]
            assert ("update", "statefulsets.apps/status", "web") in ours
            assert any(w[1] == "controllerrevisions.apps" and w[0] == "create" for w in ours)
    run(t)


def test_a_set_bound_to_the_quorum_model_elects_a_leader_and_readiness_follows_the_probe() -> None:
    async def t() -> None:
        async with up(apps={"etcd": QUORUM}) as (c, _, _audit):
            started = time.monotonic()
            await c.post(SETS, json=quorum_set(), headers=AUTH)
            await until(lambda: _count(ready_pods(c), 3), "three members Ready")
            # Ready from the model's first probe tick (start 1 s + initial delay 4 s, at speed 20), never from the
            # kubelet's own readySeconds (1 s).
            assert time.monotonic() - started >= (1 + 4) / SPEED
            leader = await until(lambda: _leader(c), "a member Lease says Leader")
            assert leader == "etcd-0"  # a cluster started at once: the lowest ordinal
            assert (await c.post(fault_path("etcd-0"), json={"fault": "crash"}, headers=AUTH)).status == 201
            assert await until(lambda: _leader(c, not_="etcd-0"), "a new leader") == "etcd-1"
            events = [(e["reason"], e["message"]) for e in (await get(c, "/api/v1/namespaces/default/events"))["items"]
                      if e["involvedObject"]["kind"] == "StatefulSet"]
            assert ("LeaderChanged", "etcd-1 is the leader") in events
    run(t)


async def _has(names: Any, name: str) -> bool:
    return name in await names


async def _count(names: Any, n: int) -> bool:
    return len(await names) == n


async def _names(c: TestClient[Any, Any]) -> list[str]:
    return [p["metadata"]["name"] for p in (await get(c, PODS))["items"]]


async def _leader(c: TestClient[Any, Any], not_: str = "") -> str | None:
    for lease in (await get(c, "/apis/coordination.k8s.io/v1/namespaces/default/leases"))["items"]:
        if lease["spec"].get("holderIdentity", "").endswith(":Leader") and lease["metadata"]["name"] != not_:
            return str(lease["metadata"]["name"])
    return None


def test_a_process_pod_takes_only_a_process_fault_and_a_model_bound_set_is_never_a_process(tmp_path: Any) -> None:
    store = ApiStore()
    cluster = store.cluster
    runtime = ProcessRuntime(tmp_path, binary="/bin/true")
    processes = ProcessKubelet(runtime, cluster, pump=store.feed.pump, clock=time.time)
    driver = WallDriver(cluster, listen=store.feed.listen, pump=store.feed.pump, processes=processes,
                        apps={"etcd": QUORUM})
    owner = cluster.create(quorum_set("db"), actor="user")
    bound = cluster.create(quorum_set("etcd"), actor="user")

    def member(set_obj: dict[str, Any], name: str) -> dict[str, Any]:
        ref = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": set_obj["metadata"]["name"],
               "uid": set_obj["metadata"]["uid"], "controller": True}
        return cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": name, "namespace": "default", "ownerReferences": [ref]},
            "spec": {"containers": [{"name": "app", "image": "etcd:3.5"}]}}, actor="statefulset-controller")

    db0, etcd0 = member(owner, "db-0"), member(bound, "etcd-0")
    assert processes.matches(db0) and not processes.matches(etcd0)
    with pytest.raises(Invalid) as refused:
        driver.pod_fault("default", "db-0", "unready")
    assert [(e.path, e.rule) for e in refused.value.errors] == [
        ("fault", 'supported values: "crash", "kill", "fail", "recover"')]
    del driver
    runtime.close()
