"""The lab's store table: what ``rollwise lab <store>`` needs to know of each store it measures.

One row per store (etcd, ZooKeeper, NATS JetStream, PostgreSQL under Patroni): the member set's name, container and
images; the role probe the real set carries (stores without member Leases: the quorum-aware controller asks the
members); the writer that measures the outage (one write through a member's client port, failing over as a client
does: each write a record of its own, keyed by the writer's number) and its reader, which finds every acknowledged
write again after the rollout (a write acknowledged and then missing is a lost write); how members' ids map to
pods; where a member's data lives in its claim; and the quorum model's parameters for that store (``LabTimings``:
election timeouts, whether it hands over on shutdown, the pod's termination time).

How members are started and who leads as each sees it come from the process runtime's store
(``kubelet/process/stores/``), which ``runtime`` names.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rollwise.kubelet.process import gateway
from rollwise.kubelet.process.patroni import PATRONI, PatroniRuntime
from rollwise.kubelet.process.runtime import ProcessRuntime
from rollwise.kubelet.process.stores import STORES, Store, StoreError
from rollwise.kubelet.process.stores.nats_wire import request, request_each
from rollwise.kubelet.process.stores.pg_wire import query_rows, simple_query
from rollwise.kubelet.process.stores.zk_wire import children, create
from rollwise.kubelet.quorum_probe import QuorumParams
from rollwise.lab.figures import WriteRecord

__all__ = ["LAB_STORES", "LabStore", "LabTimings", "ReadBack", "WriteFailed", "read_from_any"]

WriteFailed = (gateway.GatewayError, StoreError)
"""What a failed write (or read-back) raises, whatever the store."""

ReadBack = Callable[[Sequence[str], Sequence[WriteRecord], float], set[int]]
"""(client endpoints, the acknowledged writes, deadline per member) -> the writer's numbers the store still has;
WriteFailed when no member answers."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LabTimings:
    start_seconds: float = 2.0  # ContainerCreating: the reference's 2 s "pod down" per restart
    probe_initial_delay_seconds: float = 0.0
    probe_period_seconds: float = 0.5
    probe_timeout_seconds: float = 0.5
    probe_failure_threshold: int = 1
    # The model's deletion-to-gone time. Measured here: etcd 3.5.1 leaves raft within ms of SIGTERM, then waits
    # ~1.0 s closing its peer listener before it exits (3.4.23 exited after 0.13-0.15 s, reference §0).
    termination_seconds: float = 1.0
    election_seconds: float = 1.0  # the model's election after a leader is lost (reference §0: 0.96-1.58 s)
    # The model's election once a restarted member restores quorum: measured here 0.48-1.35 s after its process
    # starts, 0.85 s on average (its boot, then etcd's randomised election timer, advanced for a booting member).
    join_election_seconds: float = 0.85
    heartbeat_seconds: float = 0.5  # member Lease renewal (druid: 10 s); the model lags the role by half of it
    settle_seconds: float = 3.0  # after the crash faults, before the template change
    grace_seconds: int = 10  # terminationGracePeriodSeconds of the member pods
    shutdown_transfer: bool = True  # the store hands leadership over when its leader is asked to stop (etcd does)
    transfer_seconds: float = 0.1  # a requested hand-over (etcd's move-leader: about one heartbeat)
    majority_writes: bool = True  # writes need a majority of members up (off: the primary alone writes)
    leader_stops_at_sigterm: bool = False  # a leader not handing over stops serving at SIGTERM, not at its exit
    election_at_sigterm: bool = False  # ...and its followers elect from then, not from its exit (Patroni)
    rejoin_sync_seconds: float = 0.0  # no commits while the leader syncs a member that rejoins
    # A member at SIGTERM stops serving its clients but lets them go only at its exit: the writer attached to it
    # commits nothing until then (the replay's ``client_stalls``).
    client_stalls_at_sigterm: bool = False
    shutdown_transfer_needs_quorum: bool = False  # no hand-over when the rest are short of a quorum (NATS)
    # How long a leader that stays up keeps its term through a quorum loss (nats-server's raft.go,
    # lostQuorumInterval: 10 s), in the probed group and in the group the writes go through alike.
    leader_holds_quorum_loss_seconds: float = 0.0
    # Where the store draws its election timer at random, the latest an election comes after its cause: the replay
    # takes each election's instant from the run within that (``lab/shadow.RunDraws``); 0: the model's own times.
    election_draw_seconds: float = 0.0

    def quorum_params(self) -> QuorumParams:
        """The quorum model's parameters for these timings: its own run (as scenario options) and the replay of a
        real run alike. The member Leases lag the role by half a heartbeat."""
        return QuorumParams(
            election_seconds=self.election_seconds, join_election_seconds=self.join_election_seconds,
            lease_lag_seconds=self.heartbeat_seconds / 2, probe_initial_delay_seconds=self.probe_initial_delay_seconds,
            probe_period_seconds=self.probe_period_seconds, probe_failure_threshold=self.probe_failure_threshold,
            transfer_seconds=self.transfer_seconds, shutdown_transfer=self.shutdown_transfer,
            majority_writes=self.majority_writes, leader_stops_at_sigterm=self.leader_stops_at_sigterm,
            election_at_sigterm=self.election_at_sigterm, rejoin_sync_seconds=self.rejoin_sync_seconds,
            shutdown_transfer_needs_quorum=self.shutdown_transfer_needs_quorum,
            leader_holds_quorum_loss_seconds=self.leader_holds_quorum_loss_seconds)


def _port(endpoint: str) -> int:
    return int(endpoint.rpartition(":")[2])


def _numbers(names: Iterable[str]) -> set[int]:
    """The writer's numbers among record names (``rollwise-meter/17``, ``17``); anything else is not the writer's."""
    tails = (name.rpartition("/")[2] for name in names)
    return {int(tail) for tail in tails if tail.isdigit()}


def read_from_any(endpoints: Sequence[str], read: Callable[[str], set[int]]) -> set[int]:
    """The first member's answer that comes, as a client with a host list reads; StoreError naming what each member
    said when none answers."""
    said: list[str] = []
    for endpoint in endpoints:
        try:
            return read(endpoint)
        except WriteFailed as err:
            said.append(f"{endpoint}: {err}")
    raise StoreError("no member answered the read-back (" + "; ".join(said) + ")")


METER_KEY = "rollwise-meter"


def _etcd_write(endpoint: str, seq: int, timeout: float) -> int:
    return gateway.put(endpoint, f"{METER_KEY}/{seq}", str(seq), timeout=timeout)


def _etcd_read(endpoints: Sequence[str], _acked: Sequence[WriteRecord], timeout: float) -> set[int]:
    return read_from_any(endpoints, lambda e: _numbers(gateway.keys(e, f"{METER_KEY}/", timeout=timeout)))


def _zookeeper_write(endpoint: str, seq: int, timeout: float) -> int:
    create(_port(endpoint), f"/{METER_KEY}/{seq}", str(seq).encode(), timeout=timeout)
    return 0


def _zookeeper_prepare(endpoint: str, _replicas: int, timeout: float) -> None:
    create(_port(endpoint), f"/{METER_KEY}", b"", timeout=timeout)


def _zookeeper_read(endpoints: Sequence[str], _acked: Sequence[WriteRecord], timeout: float) -> set[int]:
    return read_from_any(endpoints, lambda e: _numbers(children(_port(e), f"/{METER_KEY}", timeout=timeout)))


LAB_STREAM = "LAB"


def _nats_write(endpoint: str, seq: int, timeout: float) -> int:
    """Publish to the lab's stream and wait for JetStream's ack: stored on a majority of the stream's replicas. The
    ack's stream sequence number is the receipt the read-back asks for."""
    ack = request(_port(endpoint), "lab.meter", {"seq": seq}, timeout=timeout)
    if "error" in ack or "seq" not in ack:
        raise StoreError(f"{endpoint}: publish not acknowledged: {ack.get('error') or ack}")
    return int(ack["seq"])


_NO_MESSAGE = 10037  # JetStream's err_code for "no message found" (nats-server's server/errors.json)


def stream_numbers(acked: Sequence[WriteRecord], answers: Sequence[dict[str, object]]) -> set[int]:
    """The writer's numbers found in the stream: each acknowledged write's message fetched by its receipt (the
    stream sequence number its ack named) and holding that write's number. A message gone is missing; any other
    error means the stream did not answer (StoreError), not that the write is lost."""
    found = set()
    for record, answer in zip(acked, answers, strict=True):
        error = answer.get("error")
        if isinstance(error, dict) and error.get("err_code") == _NO_MESSAGE:
            continue
        message = answer.get("message")
        if error or not isinstance(message, dict):
            raise StoreError(f"stream message {record.receipt} not read: {error or answer}")
        try:
            data = json.loads(base64.b64decode(str(message.get("data") or "")))
        except ValueError:
            continue  # not the writer's message: the write's own is not at its receipt
        if isinstance(data, dict) and data.get("seq") == record.seq:
            found.add(record.seq)
    return found


def _nats_read(endpoints: Sequence[str], acked: Sequence[WriteRecord], timeout: float) -> set[int]:
    calls = [(f"$JS.API.STREAM.MSG.GET.{LAB_STREAM}", {"seq": r.receipt}) for r in acked]
    # One connection for all of them; each is a request to the stream's leader, a few milliseconds apiece.
    return read_from_any(endpoints, lambda e: stream_numbers(acked, request_each(
        _port(e), calls, timeout=timeout + 0.01 * len(calls))))


def _nats_stream_leader(endpoint: str, timeout: float) -> str:
    """The pod that leads the writer's stream, as the member at ``endpoint`` tells (its server name; "": none)."""
    answer = request(_port(endpoint), f"$JS.API.STREAM.INFO.{LAB_STREAM}", {}, timeout=timeout)
    cluster = answer.get("cluster")
    return str(cluster.get("leader") or "") if isinstance(cluster, dict) else ""


def _nats_prepare(endpoint: str, replicas: int, timeout: float) -> None:
    """The stream the writer publishes to, replicated on every member (NATS allows five at most): its quorum is the
    set's, so two members of five down leave it writable, as they leave the meta group."""
    answer = request(_port(endpoint), f"$JS.API.STREAM.CREATE.{LAB_STREAM}",
                     {"name": LAB_STREAM, "subjects": ["lab.meter"], "num_replicas": min(5, replicas),
                      "storage": "file"}, timeout=timeout)
    error = answer.get("error")
    if error and "already in use" not in str(error):
        raise StoreError(f"{endpoint}: stream not created: {error}")


LAB_TABLE = "lab_meter"


def _patroni_write(endpoint: str, seq: int, timeout: float) -> int:
    """An INSERT on the member ``endpoint`` names, refused unless it is the primary (a replica is read-only): the
    meter fails over to the next member as a client's host list does."""
    host, _, port = endpoint.rpartition(":")
    simple_query(host, int(port), f"INSERT INTO {LAB_TABLE} VALUES ({seq})", timeout=timeout)
    return 0


def _patroni_prepare(endpoint: str, replicas: int, timeout: float) -> None:
    """The writer's table, created on the primary: every member's address is ordinal + 1 in the last octet
    (kubelet/process/patroni.py), so each is tried until one takes the write."""
    host, _, port = endpoint.rpartition(":")
    prefix, last = host.rpartition(".")[0], ""
    for ordinal in range(replicas):
        try:
            simple_query(f"{prefix}.{ordinal + 1}", int(port), f"CREATE TABLE IF NOT EXISTS {LAB_TABLE} (seq bigint)",
                         timeout=timeout)
            return
        except StoreError as err:
            last = str(err)
    raise StoreError(f"no member took the writer's table: {last}")


def _patroni_read(endpoints: Sequence[str], _acked: Sequence[WriteRecord], timeout: float) -> set[int]:
    """The table as the primary has it (a replica may lag: streaming replication is asynchronous here)."""
    def read(endpoint: str) -> set[int]:
        host, _, port = endpoint.rpartition(":")
        if query_rows(host, int(port), "SELECT pg_is_in_recovery()", timeout=timeout) != [("f",)]:
            raise StoreError(f"{endpoint}: a replica")
        return _numbers(str(seq) for (seq,) in query_rows(host, int(port), f"SELECT seq FROM {LAB_TABLE}",
                                                          timeout=timeout))

    return read_from_any(endpoints, read)


@dataclass(frozen=True, slots=True, kw_only=True)
class LabStore:
    key: str  # the process runtime's store name, and the lab's command: ``rollwise lab <key>``
    title: str  # what the table's title calls the real members
    set_name: str
    container: str
    images: tuple[str, str]  # before and after the template change
    data_marker: str  # a path under the claim's directory that exists once the member has written its data
    write: Callable[[str, int, float], int]  # (client endpoint, writer's number, deadline) -> receipt; WriteFailed
    read_back: ReadBack  # every acknowledged write looked up again after the rollout
    timings: LabTimings = field(default_factory=LabTimings)
    probe: Mapping[str, str] = field(default_factory=dict)  # the role probe's annotations on the real set
    prepare: Callable[[str, int, float], None] | None = None  # (endpoint, replicas, deadline) once members are up
    # Who leads the group the writes go through, where that is not the group the role probe reads (NATS: each
    # stream is a raft group of its own, apart from the meta group): (endpoint, deadline) -> pod, "" for none.
    writes_leader: Callable[[str, float], str] | None = None
    store: Store | None = None  # a store outside the process runtime's table (Patroni: its runtime starts it)
    runtime_class: Callable[..., ProcessRuntime] = ProcessRuntime

    @property
    def runtime(self) -> Store:
        return self.store or STORES[self.key]

    def pod(self, member: int) -> str:
        """The pod of a member id, for stores whose ids are ordinal + 1 (ZooKeeper's myid, NATS' ordinals)."""
        return f"{self.set_name}-{member - 1}"


LAB_STORES: dict[str, LabStore] = {
    "etcd": LabStore(key="etcd", title="real etcd 3.5", set_name="etcd", container="etcd",
                     images=("etcd:3.5.1", "etcd:3.5.1-r1"), data_marker="etcd/member", write=_etcd_write,
                     read_back=_etcd_read),
    "zookeeper": LabStore(
        key="zookeeper", title="real ZooKeeper 3.8", set_name="zk", container="zookeeper",
        images=("zookeeper:3.8", "zookeeper:3.8-r1"), data_marker="zookeeper/data/version-2",
        write=_zookeeper_write, read_back=_zookeeper_read, prepare=_zookeeper_prepare,
        probe={"rollwise.dev/role-probe-port": "8080", "rollwise.dev/role-probe-path": "/commands/srvr",
               "rollwise.dev/role-probe-leader-json-path": ".server_stats.server_state",
               "rollwise.dev/role-probe-leader-equals": "leader"},
        # Measured here (ZooKeeper 3.8.0, tickTime 200 ms): the JVM exits 0.35-0.41 s after SIGTERM; a new leader
        # 0.57 s after the old one's exit; a restarted member restores quorum 0.94-1.32 s after its process starts.
        # No hand-over on shutdown, and the leader stops serving at SIGTERM (its followers elect after its exit).
        # The writer waits on its own stopping member (a member holds its client sessions from SIGTERM until its
        # JVM exits, 0.35-0.41 s). While the leader syncs a member that rejoins it commits nothing, but on a quiet
        # machine no such pause is as long as the lab's 0.2 s threshold (the longest gap between commits from 0.3 to
        # 2.5 s after a member's start: 0.05-0.08 s in 20 of 24 starts, and in the other 4 the gap of the next
        # deletion, which fell in that window); under a load average of 3-9 it showed 0.2-0.4 s. The model keeps
        # the rule (``rejoin_sync_seconds``) at the quiet figure, none.
        timings=LabTimings(termination_seconds=0.4, election_seconds=0.6, join_election_seconds=1.1,
                           shutdown_transfer=False, grace_seconds=30, leader_stops_at_sigterm=True,
                           client_stalls_at_sigterm=True)),
    "nats": LabStore(
        key="nats", title="real NATS JetStream 2.9", set_name="nats", container="nats",
        images=("nats:2.9", "nats:2.9-r1"), data_marker="nats/js", write=_nats_write, prepare=_nats_prepare,
        read_back=_nats_read, writes_leader=_nats_stream_leader,
        probe={"rollwise.dev/role-probe-port": "8222", "rollwise.dev/role-probe-path": "/jsz",
               "rollwise.dev/role-probe-leader-json-path": ".meta_cluster.leader",
               "rollwise.dev/role-probe-leader-equals": "{pod}"},
        # Measured here (nats-server 2.9.10): it exits 0.03-0.05 s after SIGTERM, its meta leader handing over on
        # the way (a new leader 0.03 s after the deletion); a restarted member restores quorum 4.5-4.8 s after its
        # process starts (its raft election timeout), and a crashed meta leader's successor takes as long, so the
        # settle time after the crash faults is longer than etcd's.
        # A meta leader whose departure leaves the rest short of a quorum names its successor all the same (a raft
        # entry it and the successor commit), who campaigns at once in a new term and wins no votes: a term at its
        # deletion nobody leads, an election once quorum is back. A leader that stays up holds its term through a
        # quorum loss of up to 10 s (raft.go's lostQuorumInterval), the meta group's as the stream's; and elections
        # come at random, 4-9 s after the followers last heard a leader (raft.go's election timer), again after a
        # split vote: the replay takes each one's instant from the run, up to 10 s after its cause (the 9 s
        # ceiling and a member's boot).
        timings=LabTimings(termination_seconds=0.05, election_seconds=4.5, join_election_seconds=4.6,
                           shutdown_transfer=True, transfer_seconds=0.1, grace_seconds=30, settle_seconds=6.0,
                           shutdown_transfer_needs_quorum=True, leader_holds_quorum_loss_seconds=10.0,
                           election_draw_seconds=10.0)),
    "patroni": LabStore(
        key="patroni", title="real Patroni 3.0 + PostgreSQL 15", set_name="pg", container="postgres",
        images=("patroni:3.0", "patroni:3.0-r1"), data_marker="pgdata/PG_VERSION", write=_patroni_write,
        read_back=_patroni_read, prepare=_patroni_prepare, store=PATRONI, runtime_class=PatroniRuntime,
        probe={"rollwise.dev/role-probe-port": "8008", "rollwise.dev/role-probe-path": "/leader",
               "rollwise.dev/role-probe-leader-status-code": "200"},
        # Measured here (Patroni 3.0.2, ttl 10 s, loop_wait 1 s): a deleted primary stops PostgreSQL at once (no
        # more writes) and releases the leader key; a replica takes it at its next loop and promotes, writes
        # resuming 2.3-3.4 s after the deletion (no chosen successor: an election, not a hand-over), often before
        # Patroni itself has exited (1.6-2.0 s after SIGTERM, once 4.9 s). Which replica's loop comes first, and
        # whether its check of the departing primary's REST API waits out the 2 s timeout, is a race: the replay
        # takes each election's instant from the run, up to 4 s after the deletion. A SIGKILLed primary holds the
        # key until its ttl runs out (10 s), hence the longer settle after the crash faults. A switchover: about
        # 1.5 s without writes. No quorum among the members (the DCS holds the leader key): a primary with its
        # replicas down writes on.
        timings=LabTimings(termination_seconds=1.6, election_seconds=2.4, join_election_seconds=2.4,
                           leader_stops_at_sigterm=True, election_at_sigterm=True, election_draw_seconds=4.0,
                           shutdown_transfer=False, transfer_seconds=1.5, grace_seconds=30, settle_seconds=12.0,
                           majority_writes=False)),
}
