"""Ports, member identity and holderIdentity of the process runtime (reference §1.4, §3, §4)."""

from __future__ import annotations

import socket

import pytest

from rollwise.kubelet.process import ClusterLayout, MemberStatus, PortAllocator, holder_identity, stable_dns_name


def _set(replicas: int = 3, *, start: int | None = None, service: str | None = "etcd-peer") -> dict:
    spec: dict = {"replicas": replicas}
    if service:
        spec["serviceName"] = service
    if start is not None:
        spec["ordinals"] = {"start": start}
    return {"metadata": {"name": "etcd", "namespace": "prod"}, "spec": spec}


def test_allocated_ports_are_distinct_bindable_loopback_ports_never_handed_out_twice() -> None:
    ports = PortAllocator()
    seen = [p for _ in range(20) for p in ports.allocate(3)]
    assert len(seen) == len(set(seen)) == 60
    for port in seen[:6]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


@pytest.mark.parametrize("count", [0, -1])
def test_allocating_no_port_is_refused(count: int) -> None:
    with pytest.raises(ValueError, match="count"):
        PortAllocator().allocate(count)


def test_two_allocators_in_one_process_still_get_different_ports_from_the_kernel() -> None:
    a, b = PortAllocator().allocate(4), PortAllocator().allocate(4)
    # Each allocator remembers only its own ports; the kernel does not hand a port back while it is held, and
    # rarely right after, so the sets do not overlap in practice. Pinned to catch a fixed-port regression.
    assert set(a).isdisjoint(b)


def test_member_identity_comes_from_the_ordinal_and_stays_put_across_restarts() -> None:
    layout = ClusterLayout(_set(), ports=PortAllocator(), run_id="r1")
    m1 = layout.member(1)
    assert m1.name == "etcd-1" and m1.ordinal == 1
    assert layout.member(1) == m1  # a restart comes back at the address its peers know
    assert m1.client_port != m1.peer_port
    assert m1.client_url == f"http://127.0.0.1:{m1.client_port}"
    assert m1.peer_url == f"http://127.0.0.1:{m1.peer_port}"


def test_initial_cluster_lists_every_ordinal_of_the_range_at_replicas() -> None:
    layout = ClusterLayout(_set(3, start=2), ports=PortAllocator(), run_id="r1")
    names = [item.split("=")[0] for item in layout.initial_cluster().split(",")]
    assert names == ["etcd-2", "etcd-3", "etcd-4"]
    assert all("=http://127.0.0.1:" in item for item in layout.initial_cluster().split(","))
    assert layout.endpoints() == [layout.member(i).endpoint for i in (2, 3, 4)]


def test_the_cluster_token_is_unique_per_run_and_set() -> None:
    ports = PortAllocator()
    a = ClusterLayout(_set(), ports=ports, run_id="run-a")
    b = ClusterLayout(_set(), ports=ports, run_id="run-b")
    assert a.token != b.token and "run-a" in a.token and "etcd" in a.token


def test_the_command_listens_on_loopback_only_with_the_layout_s_urls_and_token() -> None:
    layout = ClusterLayout(_set(), ports=PortAllocator(), run_id="r9")
    argv = layout.command("/bin/etcd", 0, "/data/etcd-0")
    flags = dict(zip(argv[1::2], argv[2::2], strict=False))
    m = layout.member(0)
    assert flags["--name"] == "etcd-0" and flags["--data-dir"] == "/data/etcd-0"
    assert flags["--listen-client-urls"] == m.client_url and flags["--listen-peer-urls"] == m.peer_url
    assert flags["--initial-cluster-token"] == layout.token
    assert flags["--initial-cluster"] == layout.initial_cluster()
    urls = [v for k, v in flags.items() if k.endswith("-urls")]
    assert urls and all(u.startswith("http://127.0.0.1:") for u in urls)


@pytest.mark.parametrize(("service", "expected"), [("etcd-peer", "etcd-0.etcd-peer.prod.svc"),
                                                   (None, "etcd-0.etcd.prod.svc")])
def test_stable_dns_name_uses_the_headless_service(service: str | None, expected: str) -> None:
    assert stable_dns_name(_set(service=service), 0) == expected


@pytest.mark.parametrize(("leader", "expected"), [
    (0xBA8895804678CD95, "ba8895804678cd95:ef6d69d248212693:Leader"),
    (0xC933CABEF32F1BC2, "ba8895804678cd95:ef6d69d248212693:Member"),
    (0, "ba8895804678cd95:ef6d69d248212693:Member"),  # no leader known: not the leader
])
def test_holder_identity_is_backup_restore_s_lower_hex_triple(leader: int, expected: str) -> None:
    status = MemberStatus(member_id=0xBA8895804678CD95, cluster_id=0xEF6D69D248212693, leader=leader, raft_term=3,
                          raft_index=9)
    assert holder_identity(status) == expected


def test_holder_identity_keeps_short_ids_unpadded_as_strconv_formatuint_does() -> None:
    status = MemberStatus(member_id=0xABC, cluster_id=0x1, leader=0xABC, raft_term=1, raft_index=1)
    assert holder_identity(status) == "abc:1:Leader"


@pytest.mark.parametrize("bad", [{"period_seconds": 0}, {"timeout_seconds": 0}, {"heartbeat_seconds": -1},
                                 {"initial_delay_seconds": -1}, {"failure_threshold": 0}])
def test_probe_settings_refuse_timings_that_would_never_tick(bad: dict) -> None:
    from rollwise.kubelet.process import ProbeSettings

    with pytest.raises(ValueError, match="must be"):
        ProbeSettings(**bad)
