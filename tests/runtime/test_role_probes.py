"""Role probes through the real controller path: the simulator's SetController (the StatefulSet controller, then the
quorum-aware controller, the real executor, the quorum model electing leaders and writing member Leases), with a
fake member HTTP server per pod on 127.0.0.1 answering the ZooKeeper AdminServer's ``/commands/srvr``. Each server
tells the truth (its member's Lease) unless the test makes it hang, answer garbage or claim to lead; whatever it
does, the member the Leases name leader is never deleted while another outdated member participates."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
import yaml
from member_servers import MemberServers, serve

from rollwise.api.identity import revision_of
from rollwise.api.leases import LEADER, lease_role
from rollwise.api.meta import name_of
from rollwise.api.role_probe import ProbeAnswer, RoleProbe
from rollwise.cli.options import load_with_overrides
from rollwise.controllers.plan import DeletePod, Plan
from rollwise.controllers.view import SetView
from rollwise.runtime.role_probes import RoleProbes, http_get
from rollwise.sim.loop import Simulation

Answer = Callable[[str, bool, bool], tuple[int, bytes] | None]
"""(pod, leads by its Lease, outdated) -> (status, body), or None to hang past the probe's timeout."""
Deletions = list[tuple[str, bool, list[str]]]
Roll = Callable[[Answer], tuple[dict, Deletions]]

SCENARIO = {
    "name": "zookeeper-role-probe",
    "limitSeconds": 60,
    "kubelet": {"startSeconds": 2, "readySeconds": 1, "terminationSeconds": 1,
                "apps": {"zk": {"model": "quorum", "electionSeconds": 1, "probeInitialDelaySeconds": 1,
                                "probePeriodSeconds": 1}}},
    "objects": [{
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "zk", "annotations": {
            "rollwise.dev/update-policy": "QuorumAware",
            "rollwise.dev/role-probe-port": "8080", "rollwise.dev/role-probe-path": "/commands/srvr",
            "rollwise.dev/role-probe-leader-json-path": ".server_stats.server_state",
            "rollwise.dev/role-probe-leader-equals": "leader"}},
        "spec": {"replicas": 3, "podManagementPolicy": "Parallel", "updateStrategy": {"type": "OnDelete"},
                 "selector": {"matchLabels": {"app": "zk"}},
                 "template": {"metadata": {"labels": {"app": "zk"}},
                              "spec": {"containers": [{"name": "zookeeper", "image": "zookeeper:3.8"}]}}}}],
    "steps": [
        {"waitFor": {"ready": "zk", "timeout": 60}},
        {"patch": {"kind": "StatefulSet", "name": "zk",
                   "merge": {"spec": {"template": {"spec": {"containers": [{"name": "zookeeper",
                                                                             "image": "zookeeper:3.9"}]}}}}}},
        {"waitFor": {"rolloutComplete": "zk", "timeout": 40}}],
}


def _srvr(state: str) -> tuple[int, bytes]:
    return 200, json.dumps({"command": "srvr", "server_stats": {"server_state": state}, "error": None}).encode()


def truth(pod: str, leads: bool, outdated: bool) -> tuple[int, bytes] | None:
    return _srvr("leader" if leads else "follower")


class Members(MemberServers):
    """One fake member server per pod name; ``answer`` decides what they say."""

    def __init__(self, sim: Simulation, answer: Answer) -> None:
        super().__init__()
        self.sim, self.answer = sim, answer

    def handler(self, pod: str) -> type[BaseHTTPRequestHandler]:
        members = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                said = members.answer(pod, *members.truth(pod))
                if said is None:
                    time.sleep(1.5)  # past the probe's timeoutSeconds (1)
                    return
                status, body = said
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        return Handler

    def truth(self, pod: str) -> tuple[bool, bool]:
        """Does the member lead (its Lease, written by the quorum model), and is its pod outdated. The simulation
        waits for the probe's answers, so the store is read while nothing writes to it."""
        cluster = self.sim.cluster
        lease = next((x for x in cluster.list("Lease", "default") if name_of(x) == pod), None)
        sts = cluster.get("StatefulSet", "default", "zk")
        pods = [p for p in cluster.list("Pod", "default") if name_of(p) == pod]
        outdated = bool(pods) and revision_of(pods[0]) != (sts.get("status") or {}).get("updateRevision")
        return lease_role(lease) == LEADER, outdated

@pytest.fixture
def roll(tmp_path: Path) -> Iterator[Roll]:
    """Run the rollout with member servers answering by ``answer``: the result document and every deletion the
    quorum-aware controller decided, as (pod, the Leases named it leader, the other outdated members it left)."""
    opened: list[Members] = []

    def run(answer: Answer) -> tuple[dict, list[tuple[str, bool, list[str]]]]:
        path = tmp_path / "zk.yaml"
        path.write_text(yaml.safe_dump(SCENARIO))
        sim = Simulation(load_with_overrides(str(path)))
        members = Members(sim, answer)
        opened.append(members)
        sim.controller.role_probes = RoleProbes(sim.clock, address=members.address)
        deletions: list[tuple[str, bool, list[str]]] = []

        def observe(view: SetView, plan: Plan) -> None:
            update = view.set["status"]["updateRevision"]
            gone = {d.name for d in plan.of_type(DeletePod)}
            for name in sorted(gone):
                leads = lease_role(view.leases.get(name)) == LEADER
                others = [name_of(p) for p in view.pods if name_of(p) not in gone and revision_of(p) != update
                          and not (p["metadata"].get("deletionTimestamp"))]
                deletions.append((name, leads, others))

        sim.quorum_observers.append(observe)
        return sim.run(), deletions

    yield run
    for members in opened:
        members.close()


def _leader_first(deletions: list[tuple[str, bool, list[str]]]) -> list[str]:
    return [f"{pod} deleted while leading, before {others}" for pod, leads, others in deletions if leads and others]


def test_members_that_tell_the_truth_roll_followers_first_and_the_leader_last(roll: Roll) -> None:
    _, deletions = roll(truth)
    assert len(deletions) == 3 and _leader_first(deletions) == []
    assert [leads for _, leads, _ in deletions] == [False, False, True]


@pytest.mark.parametrize("fault", ["hangs", "garbage", "server-error"])
def test_a_leader_whose_probe_fails_is_never_deleted_and_nothing_goes_before_it(roll: Roll, fault: str) -> None:
    def answer(pod: str, leads: bool, outdated: bool) -> tuple[int, bytes] | None:
        if leads and outdated:
            return {"hangs": None, "garbage": (200, b"Mode: leader\n"), "server-error": (500, b"")}[fault]
        return truth(pod, leads, outdated)

    _, deletions = roll(answer)
    assert _leader_first(deletions) == []
    assert not any(leads for _, leads, _ in deletions), deletions


def test_a_follower_that_also_claims_to_lead_holds_both_claimants(roll: Roll) -> None:
    claimed: list[str] = []

    def answer(pod: str, leads: bool, outdated: bool) -> tuple[int, bytes] | None:
        if outdated and not leads and (not claimed or claimed[0] == pod):
            claimed[:1] = [pod]
            return _srvr("leader")
        return truth(pod, leads, outdated)

    _, deletions = roll(answer)
    assert _leader_first(deletions) == []
    assert [pod for pod, _, _ in deletions] and claimed[0] not in [pod for pod, _, _ in deletions]
    assert not any(leads for _, leads, _ in deletions)


def test_the_runner_turns_a_hang_a_refusal_and_a_non_http_answer_into_reasons() -> None:
    probe = RoleProbe(port=1, path="/commands/srvr", json_path=".a", equals="b")
    silent = serve(type("H", (BaseHTTPRequestHandler,), {"do_GET": lambda self: time.sleep(1.5),
                                                         "log_message": lambda self, *a: None}))
    try:
        assert http_get("127.0.0.1", silent.server_address[1], probe) == (None, b"", "timed out after 1s")
    finally:
        silent.shutdown()
        silent.server_close()
    port = silent.server_address[1]  # closed now: nothing listens there
    assert http_get("127.0.0.1", port, probe)[2] == "connection refused"


def test_a_recreated_pod_never_inherits_its_predecessors_answer() -> None:
    t = [100.0]
    said = iter([(200, b"1"), (503, b"2")])
    probes = RoleProbes(lambda: t[0], address=lambda pod, port: ("h", port),
                        get=lambda host, port, probe: (*next(said), None))
    sts = yaml.safe_load(yaml.safe_dump(SCENARIO["objects"][0]))
    sts["metadata"]["namespace"] = "default"
    pod = {"metadata": {"name": "zk-0", "namespace": "default", "uid": "a"}}
    first = probes.answers(SetView(set=sts, pods=(pod,), now=t[0]))
    assert first == {"zk-0": ProbeAnswer(at=100.0, status=200, body=b"1")}
    assert probes.answers(SetView(set=sts, pods=(pod,), now=t[0])) == first, "younger than min_interval: reused"
    again = {"metadata": {**pod["metadata"], "uid": "b"}}
    assert probes.answers(SetView(set=sts, pods=(again,), now=t[0]))["zk-0"].status == 503
    assert probes.gets == 2
