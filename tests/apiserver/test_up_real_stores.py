"""``rollwise up`` with real ZooKeeper and NATS JetStream members, driven through lightkube as a user drives it.

A 3-member set of each (image ``zookeeper:*``, ``nats:*``) with the role probe a user would configure for that store
(docs/stores/): the members form one ensemble and elect one leader; the probe, read by the controller's own rule,
finds exactly that one; a deleted member comes back on its claim's data; and a quorum-aware rollout, reading roles
from the probe, replaces the leader last. For NATS with ``rollwise.dev/leader-transfer``, the meta leader steps down
on the controller's request before its pod goes. Asserted are outcomes, never durations.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from kubectl_support import Up
from kubectl_support import until as poll_until
from lightkube import Client
from lightkube.config.kubeconfig import KubeConfig
from lightkube.resources.apps_v1 import StatefulSet
from lightkube.resources.core_v1 import Event, Pod
from lightkube.types import PatchType

from rollwise.api.role_probe import FOLLOWER, LEADER, ProbeAnswer, check_role_probe, probe_of, read_role
from rollwise.kubelet.process.stores import STORES
from rollwise.runtime.role_probes import http_get

DEADLINE = 120.0
until = functools.partial(poll_until, deadline=DEADLINE, most=0.2)  # this file's deadline and cadence

# The members' data under the test's own folder, where the test reads their config and files.
pytestmark = pytest.mark.up("--data-dir", "{tmp}/up")

# The probe a user writes for each store (docs/stores/zookeeper.md, docs/stores/nats.md), and where this run's
# member writes the port that container port stands for.
PROBES = {
    "zookeeper": ({"rollwise.dev/role-probe-port": "8080", "rollwise.dev/role-probe-path": "/commands/srvr",
                   "rollwise.dev/role-probe-leader-json-path": ".server_stats.server_state",
                   "rollwise.dev/role-probe-leader-equals": "leader"},
                  ("zoo.cfg", r"admin\.serverPort=(\d+)")),
    "nats": ({"rollwise.dev/role-probe-port": "8222", "rollwise.dev/role-probe-path": "/jsz",
              "rollwise.dev/role-probe-leader-json-path": ".meta_cluster.leader",
              "rollwise.dev/role-probe-leader-equals": "{pod}"},
             ("nats.conf", r'http: "127\.0\.0\.1:(\d+)"')),
}
IMAGES = {"zookeeper": ("zookeeper:3.8", "zookeeper:3.8-r1"), "nats": ("nats:2.9", "nats:2.9-r1")}


def _set(store: str, *, transfer: bool = False) -> dict[str, Any]:
    name = "zk" if store == "zookeeper" else "nats"
    notes = {"rollwise.dev/update-policy": "QuorumAware", **PROBES[store][0]}
    if transfer:
        notes["rollwise.dev/leader-transfer"] = "true"
    return {
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default", "annotations": notes},
        "spec": {
            "replicas": 3, "serviceName": f"{name}-hs", "podManagementPolicy": "Parallel",
            "updateStrategy": {"type": "OnDelete"},
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"terminationGracePeriodSeconds": 30,
                                  "containers": [{"name": store, "image": IMAGES[store][0]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                      "spec": {"accessModes": ["ReadWriteOnce"],
                                               "resources": {"requests": {"storage": "1Gi"}}}}],
        },
    }



def _ready(pod: Any) -> bool:
    return pod.metadata.deletionTimestamp is None and any(
        c.type == "Ready" and c.status == "True" for c in (pod.status.conditions or []))


class _Members:
    """The members of one set under ``up``: their directories, and their roles as the controller's rule reads the
    probe's answers."""

    def __init__(self, root: Path, store: str, sts: dict[str, Any]) -> None:
        self.root, self.store, self.set = root, store, sts["metadata"]["name"]
        probe, errors = check_role_probe(*probe_of(sts))
        assert probe is not None, errors
        self.probe = probe

    def dir(self, ordinal: int) -> Path:
        return self.root / "claims" / "default" / f"data-{self.set}-{ordinal}" / self.store

    def roles(self) -> dict[str, str]:
        """pod -> leader | follower | unknown, from one GET to each member's probe port."""
        config, pattern = PROBES[self.store][1]
        out = {}
        for ordinal in range(3):
            pod = f"{self.set}-{ordinal}"
            found = re.search(pattern, (self.dir(ordinal) / config).read_text(encoding="utf-8"))
            assert found is not None
            status, body, error = http_get("127.0.0.1", int(found.group(1)), self.probe)
            answer = ProbeAnswer(at=0.0, status=status, body=body, error=error)
            out[pod] = read_role(self.probe, answer, pod=pod, now=0.0).kind
        return out

    def leader(self) -> str | None:
        """The one member the probe says leads, when all three answer clearly and exactly one says so."""
        roles = self.roles()
        leaders = [pod for pod, role in roles.items() if role == LEADER]
        clear = all(role in (LEADER, FOLLOWER) for role in roles.values())
        return leaders[0] if clear and len(leaders) == 1 else None

    def files(self, ordinal: int) -> set[str]:
        base = self.dir(ordinal)
        return {str(p.relative_to(base)) for p in base.rglob("*") if p.is_file()}


class _Deletions:
    """The order the member pods were deleted in, from a watch (a member that exits at once on SIGTERM is gone
    before a poll would see it terminating), and the leader the probe named at each instant, sampled alongside."""

    def __init__(self, client: Client, members: _Members) -> None:
        """Returns once the watch is open, so no deletion after it is missed."""
        self.order: list[tuple[float, str]] = []
        self._open = threading.Event()
        self.leaders: list[tuple[float, str | None]] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._watch, args=(client, members.set), daemon=True),
                         threading.Thread(target=self._sample, args=(members,), daemon=True)]
        for t in self._threads:
            t.start()
        assert self._open.wait(30), "the pod watch did not open"

    def _watch(self, client: Client, name: str) -> None:
        try:
            for _, pod in client.watch(Pod, namespace="default", labels={"app": name}):
                self._open.set()  # the watch lists the three members first
                if self._stop.is_set():
                    return
                if pod.metadata.deletionTimestamp is not None and pod.metadata.name not in self.names():
                    self.order.append((time.monotonic(), pod.metadata.name))
        except Exception:
            if not self._stop.is_set():  # up stopping ends the watch: only an earlier end is a failure
                raise

    def _sample(self, members: _Members) -> None:
        while not self._stop.wait(0.05):
            try:
                leader = members.leader()
            except (OSError, AssertionError):  # a member's config between its pod's deletion and its restart
                leader = None
            self.leaders.append((time.monotonic(), leader))

    def names(self) -> list[str]:
        return [name for _, name in self.order]

    def leader_at_deletion(self, pod: str) -> str | None:
        at = next(t for t, name in self.order if name == pod)
        return next((leader for t, leader in reversed(self.leaders) if t <= at), None)

    def stop(self) -> None:
        self._stop.set()


def _roll(client: Client, members: _Members) -> _Deletions:
    """Change the set's image and wait until every member is Ready at the new revision; the deletions seen."""
    name, store = members.set, members.store
    deletions = _Deletions(client, members)
    client.patch(StatefulSet, name, {"spec": {"template": {"spec": {"containers": [
        {"name": store, "image": IMAGES[store][1]}]}}}}, namespace="default", patch_type=PatchType.STRATEGIC)

    def rolled() -> bool:
        current = list(client.list(Pod, namespace="default", labels={"app": name}))
        rev = client.get(StatefulSet, name, namespace="default").status.updateRevision
        return (len(current) == 3 and all(_ready(p) for p in current) and bool(rev)
                and all(p.metadata.labels.get("controller-revision-hash") == rev for p in current))

    until(rolled, "every member Ready at the new revision", deadline=240)
    deletions.stop()
    return deletions


# ZooKeeper's three JVMs, started again by the deletion and the roll, cost a quarter of a minute of CPU: its case runs
# in make test-slow (CI runs it); make test keeps ZooKeeper members on up through its page's manifest
# (test_docs_stores_on_up.py: three Ready members, one leader by the probe) and NATS' case here.
STORE_PARAMS = [pytest.param(name, marks=[pytest.mark.skipif(STORES[name].binary() is None,
                                                             reason=f"{name} is not installed"),
                                          *([pytest.mark.slow] if name == "zookeeper" else [])])
                for name in ("zookeeper", "nats")]


@pytest.mark.parametrize("store", STORE_PARAMS)
def test_a_store_set_on_up_elects_one_leader_keeps_a_deleted_member_s_data_and_rolls_the_leader_last(
        up: Up, tmp_path: Path, store: str) -> None:
    sts = _set(store)
    name = sts["metadata"]["name"]
    members = _Members(tmp_path / "up" / "processes", store, sts)
    client = Client(KubeConfig.from_file(up.kubeconfig), trust_env=False, field_manager="test")
    client.create(StatefulSet.from_dict(sts))

    def pods() -> list[Any]:
        return list(client.list(Pod, namespace="default", labels={"app": name}))

    until(lambda: len(p := pods()) == 3 and all(_ready(x) for x in p), "three Ready members")
    until(lambda: members.leader() is not None, "exactly one member the probe says leads")
    leader = members.leader()
    assert leader is not None

    # A deleted follower comes back on its claim: what it had written is still there.
    follower = next(f"{name}-{o}" for o in range(3) if f"{name}-{o}" != leader)
    ordinal = int(follower.rsplit("-", 1)[1])
    before = members.files(ordinal)
    assert before, "the member wrote nothing to its claim"
    old_uid = client.get(Pod, follower, namespace="default").metadata.uid
    client.delete(Pod, follower, namespace="default")
    until(lambda: (p := client.get(Pod, follower, namespace="default")).metadata.uid != old_uid and _ready(p),
           f"{follower} back and Ready")
    assert before <= members.files(ordinal)
    until(lambda: members.leader() is not None, "one leader after the member came back")

    # A quorum-aware rollout that reads roles from the probe: the leader goes last.
    leader = members.leader()
    deletions = _roll(client, members)
    assert len(deletions.names()) == 3 and deletions.names()[-1] == leader, (deletions.names(), leader)
    until(lambda: members.leader() is not None, "one leader after the rollout")


@pytest.mark.parametrize("store", STORE_PARAMS[1:])
def test_a_nats_meta_leader_steps_down_on_the_controller_s_request_before_its_pod_goes(
        up: Up, tmp_path: Path, store: str) -> None:
    sts = _set(store, transfer=True)
    name = sts["metadata"]["name"]
    members = _Members(tmp_path / "up" / "processes", store, sts)
    client = Client(KubeConfig.from_file(up.kubeconfig), trust_env=False, field_manager="test")
    client.create(StatefulSet.from_dict(sts))

    def pods() -> list[Any]:
        return list(client.list(Pod, namespace="default", labels={"app": name}))

    until(lambda: len(p := pods()) == 3 and all(_ready(x) for x in p), "three Ready members")
    until(lambda: members.leader() is not None, "one leader")
    first = members.leader()
    deletions = _roll(client, members)
    reasons = [e.reason for e in client.list(Event, namespace="default")]
    assert "LeaderTransferRequested" in reasons
    assert "LeaderTransferTimedOut" not in reasons
    # The member that led when the rollout began, deleted last, no longer led when its pod was deleted.
    assert first is not None and deletions.names()[-1] == first, (deletions.names(), first)
    assert deletions.leader_at_deletion(first) not in (first, None), deletions.leaders[-40:]
