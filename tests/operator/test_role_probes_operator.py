"""The operator asks the members of a custom-kind set with ``spec.roleProbe`` who leads (Patroni's ``GET /leader``:
200 only on the primary), off its event loop, and rolls the replicas first and the primary last; a primary whose
probe answers a server error is never deleted, nor is anyone before it."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler

import pytest
from member_servers import MemberServers
from runtime_fakes import run
from test_runtime_operator import Lab

from rollwise.api.identity import revision_of
from rollwise.api.meta import Obj, name_of
from rollwise.api.predicates import is_running_and_ready, is_terminating
from rollwise.cluster.resources import ROLLWISE_STATEFULSET
from rollwise.operator.memory import Events, Leases, MemoryWorld
from rollwise.operator.operator import Operator, OperatorConfig
from rollwise.runtime.role_probes import RoleProbes

PRIMARY = "pg-1"


def _pg() -> Obj:
    return {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
            "metadata": {"name": "pg", "namespace": "default",
                         "annotations": {"rollwise.dev/update-policy": "QuorumAware"}},
            "spec": {"replicas": 3, "podManagementPolicy": "Parallel", "updateStrategy": {"type": "OnDelete"},
                     "roleProbe": {"port": 8008, "path": "/leader", "leader": {"statusCode": 200}},
                     "selector": {"matchLabels": {"app": "pg"}},
                     "template": {"metadata": {"labels": {"app": "pg"}},
                                  "spec": {"containers": [{"name": "postgres", "image": "spilo:15"}]}}}}


class Patroni(MemberServers):
    """One fake Patroni REST API per pod name: /leader is 200 on PRIMARY, 503 elsewhere, or ``broken`` on it."""

    def __init__(self) -> None:
        super().__init__()
        self.broken: int | None = None
        self.asked: list[str] = []

    def handler(self, name: str) -> type[BaseHTTPRequestHandler]:
        patroni = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                patroni.asked.append(name)
                code = (patroni.broken or 200) if name == PRIMARY else 503
                self.send_response(code if self.path == "/leader" else 404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def patroni() -> Iterator[Patroni]:
    members = Patroni()
    yield members
    members.close()


async def _kubelet(lab: Lab) -> None:
    """Every second: terminating pods go, new pods run their member container, Ready."""
    while True:
        await lab.clock.sleep(1.0)
        for pod in lab.cluster.list("Pod", "default"):
            if is_terminating(pod):
                lab.cluster.delete("Pod", "default", name_of(pod), grace_period_seconds=0, actor="kubelet")
            elif not is_running_and_ready(pod):
                now = lab.clock.now()
                lab.cluster.update_status({**pod, "status": {
                    "phase": "Running", "podIP": "10.0.0.1",
                    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}],
                    "containerStatuses": [{"name": "postgres", "ready": True, "restartCount": 0,
                                           "state": {"running": {"startedAt": now}}}]}}, actor="kubelet")
        await lab.feed.notify()


def _updated(lab: Lab) -> bool:
    return len(lab.pods()) == 3 and all(p["spec"]["containers"][0]["image"] == "spilo:16" and is_running_and_ready(p)
                                        for p in lab.pods())


def _holding(lab: Lab) -> bool:
    sts = lab.cluster.get(ROLLWISE_STATEFULSET, "default", "pg")
    return any("cannot be told" in c.get("message", "") for c in sts["status"].get("conditions") or ())


def _roll(patroni: Patroni, *, until: Callable[[Lab], bool]) -> tuple[list[str], Lab]:
    """Create the set, let it settle, change the image, wait ``until`` (virtual time), and return the pods the
    operator deleted, in order. The probes run on threads, so waits are conditions, not durations."""
    async def go() -> tuple[list[str], Lab]:
        lab = Lab()
        lab.cluster.create(_pg())
        world = MemoryWorld(lab.feed, actor="op")
        config = OperatorConfig(identity="op", controllers=("statefulset", "quorum"), leader_elect=False, workers=1)
        # The custom kind's controllers and apps/v1's quorum-aware one, both on the one store.
        op = Operator({"statefulset": world, "quorum": world}, config=config, leases=Leases(world),
                      events=Events(world), clock=lab.clock, wall_time=lab.clock.now, rng=random.Random(1),
                      inline={"statefulset": world.sync, "quorum": world.sync})  # type: ignore[dict-item]
        for set_ctl in op.sets:
            assert set_ctl.role_probes is not None, "the operator asks the members itself"
            set_ctl.role_probes = RoleProbes(lab.clock.now, address=patroni.address)
        stop = asyncio.Event()
        running = asyncio.create_task(op.run(stop))
        kubelet = asyncio.create_task(_kubelet(lab))
        await lab.until(lambda: len(lab.pods()) == 3 and all(p.get("status") for p in lab.pods()))
        await lab.user.patch(ROLLWISE_STATEFULSET, "default", "pg", {"spec": {"template": {"spec": {
            "containers": [{"name": "postgres", "image": "spilo:16"}]}}}})
        await lab.until(lambda: until(lab), limit=600)
        stop.set()
        kubelet.cancel()
        await running
        changes, _ = lab.cluster.changes_since(0)
        # The operator writes nothing else to these pods: each of its pod updates is a graceful delete's mark.
        order = [c.name for c in changes if c.kind == "Pod" and c.type == "MODIFIED" and c.actor == "op"]
        return order, lab
    return run(go())


def test_the_operator_rolls_the_replicas_first_and_the_primary_last_by_asking_patroni(patroni: Patroni) -> None:
    order, lab = _roll(patroni, until=_updated)
    assert order[-1] == PRIMARY and sorted(order) == ["pg-0", "pg-1", "pg-2"], order
    sts = lab.cluster.get(ROLLWISE_STATEFULSET, "default", "pg")
    assert all(revision_of(p) == sts["status"]["updateRevision"] for p in lab.pods())
    assert {"pg-0", "pg-1", "pg-2"} <= set(patroni.asked)


def test_a_primary_answering_a_server_error_is_never_deleted_nor_anyone_before_it(patroni: Patroni) -> None:
    patroni.broken = 500
    order, lab = _roll(patroni, until=_holding)
    assert order == [], "no replica said who leads is trusted when no member says it leads"
    sts = lab.cluster.get(ROLLWISE_STATEFULSET, "default", "pg")
    condition = next(c for c in sts["status"]["conditions"] if c["type"] == "AllMembersUpdated")
    assert "pg-1 (probe answered 500, a server error)" in condition["message"]
