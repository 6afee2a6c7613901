"""The process runtime's store table: which images each store runs, the member config it writes from the set (an
ensemble or a cluster of the set's ordinals, each at its own loopback ports), where a role probe's container port
lands, and the wire clients' failures as the one error the callers catch."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from rollwise.kubelet.process import ClusterLayout, PortAllocator
from rollwise.kubelet.process.stores import MemberTimings, StoreError, ZooKeeperStore, store_for
from rollwise.kubelet.process.stores.nats import NatsStore, meta_term
from rollwise.kubelet.process.stores.nats_wire import request
from rollwise.kubelet.process.stores.zk_wire import set_data


def _set(name: str, replicas: int = 3) -> dict:
    return {"metadata": {"name": name, "namespace": "prod"}, "spec": {"replicas": replicas}}


@pytest.mark.parametrize(("image", "store"), [("etcd:3.5.1", "etcd"), ("zookeeper:3.8", "zookeeper"),
                                             ("nats:2.9-alpine", "nats"), ("postgres:16", None),
                                             ("quay.io/etcd:3.5", None)])
def test_each_store_runs_the_images_of_its_name(image: str, store: str | None) -> None:
    found = store_for(image)
    assert (found.name if found else None) == store


def test_a_zookeeper_member_s_config_lists_every_ordinal_with_myid_ordinal_plus_one(tmp_path: Path) -> None:
    layout = ClusterLayout(_set("zk"), ports=PortAllocator(), run_id="r", extra_ports=ZooKeeperStore.extra_ports)
    argv = ZooKeeperStore().command("/usr/bin/java", layout, 1, tmp_path, MemberTimings(election_ms=1000))
    config = (tmp_path / "zoo.cfg").read_text()
    assert argv[-1] == str(tmp_path / "zoo.cfg")
    assert (tmp_path / "data" / "myid").read_text().strip() == "2"
    servers = re.findall(r"^server\.(\d)=127\.0\.0\.1:(\d+):(\d+)$", config, re.MULTILINE)
    assert [s[0] for s in servers] == ["1", "2", "3"]
    me = layout.member(1)
    assert (str(me.peer_port), str(me.extra[0])) == servers[1][1:]
    assert f"clientPort={me.client_port}" in config and f"admin.serverPort={me.extra[1]}" in config
    assert "tickTime=200" in config  # a fifth of the election timeout: followers give up on a leader in ~1 s
    # The role probe's 8080 is the member's AdminServer, 2181 its client port; an unknown port reaches nothing.
    store = ZooKeeperStore()
    assert store.probe_port(me, 8080) == me.extra[1] and store.probe_port(me, 2181) == me.client_port
    assert store.probe_port(me, 9999) is None


def test_a_nats_member_is_named_after_its_pod_and_routes_to_every_ordinal(tmp_path: Path) -> None:
    layout = ClusterLayout(_set("nats", 5), ports=PortAllocator(), run_id="r", extra_ports=NatsStore.extra_ports)
    NatsStore().command("/usr/sbin/nats-server", layout, 3, tmp_path / "nats", MemberTimings())
    config = (tmp_path / "nats" / "nats.conf").read_text()
    assert 'server_name: "nats-3"' in config
    routes = re.findall(r"nats-route://127\.0\.0\.1:(\d+)", config)
    assert routes == [str(layout.member(i).peer_port) for i in range(5)]
    assert f'store_dir: "{tmp_path / "nats" / "js"}"' in config and "system_account: SYS" in config
    assert NatsStore().probe_port(layout.member(3), 8222) == layout.member(3).extra[0]


def test_ports_kept_for_another_store_are_not_reused_for_a_member_that_needs_more() -> None:
    """ports.json of an etcd set (client, peer) read for a ZooKeeper set of the same name: new ports, not a crash."""
    layout = ClusterLayout(_set("zk"), ports=PortAllocator(), run_id="r", known={0: (4001, 4002)}, extra_ports=2)
    assert len(layout.member(0).ports) == 4 and 4001 not in layout.member(0).ports


@pytest.fixture
def mute_server() -> Iterator[int]:
    """A TCP server that accepts and answers garbage, then closes: neither ZooKeeper nor NATS."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield srv.getsockname()[1]
    stop.set()
    thread.join()
    srv.close()


def test_a_write_to_something_that_is_not_the_store_fails_as_a_store_error(mute_server: int) -> None:
    with pytest.raises(StoreError):
        set_data(mute_server, "/meter", b"1", timeout=0.5)
    with pytest.raises(StoreError, match="not a NATS server"):
        request(mute_server, "lab.meter", {}, timeout=0.5)


def test_a_write_to_a_closed_port_fails_as_a_store_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(StoreError):
        set_data(port, "/meter", b"1", timeout=0.5)
    with pytest.raises(StoreError):
        request(port, "lab.meter", {}, timeout=0.5)


def test_a_nats_member_s_meta_term_is_read_from_the_term_and_vote_its_raft_code_persists(tmp_path: Path) -> None:
    """nats-server 2.9 serves no raft term; its meta group's ``tav.idx`` holds it (little-endian, then the vote)."""
    assert meta_term(tmp_path) == 0  # no term persisted yet
    meta = tmp_path / "js" / "jetstream" / "SYS" / "_js_" / "_meta_"
    meta.mkdir(parents=True)
    (meta / "tav.idx").write_bytes((7).to_bytes(8, "little") + b"yrzKKRBu")
    assert meta_term(tmp_path) == 7
