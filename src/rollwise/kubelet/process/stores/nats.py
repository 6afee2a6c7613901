"""NATS JetStream 2.9 members (``nats:*``, Debian's ``nats-server``).

A cluster from the set: ``server_name`` is the pod's name (as the NATS Helm chart sets it), the cluster is named
after the set, and every member routes to every ordinal of the set's range at ``spec.replicas`` (where a cluster
would use ``nats://<pod>.<service>:6222``). JetStream is on with its store directory in the pod's claim, so a
restarted member comes back with its streams and the meta group's log.

Accounts: ``SYS`` is the system account (``$JS.API.META.LEADER.STEPDOWN`` is a system-account request) and
``APP`` has JetStream; a client that brings no credentials lands in ``APP`` (``no_auth_user``). The users and
passwords are fixed and local: these members listen on 127.0.0.1 only.

The monitoring port answers ``GET /jsz`` with ``meta_cluster.leader``, the meta leader's server name (the role
probe, docs/stores/nats.md) and ``GET /healthz`` with 200 once JetStream is current with the meta leader (the
readiness check, as the Helm chart's probe). The hand-over is the meta leader's step-down; NATS 2.9 then elects
whichever member's timer fires first (a preferred successor came in later releases), so the target is not chosen.
nats-server 2.9 reports no raft term over HTTP; each member keeps its meta group's term and vote in its store
directory (``<system account>/_js_/_meta_/tav.idx``: the term as a little-endian 64-bit number, then the vote, as
its raft code writes it), and the lab reads the term there, beside the member's answer to ``/jsz``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import ClassVar

from rollwise.api.identity import parent_and_ordinal
from rollwise.kubelet.process.identity import ClusterLayout, MemberAddress
from rollwise.kubelet.process.stores.base import MemberTimings, RoleSample, Store, StoreError
from rollwise.kubelet.process.stores.http import get_json
from rollwise.kubelet.process.stores.nats_wire import request

__all__ = ["SYSTEM_USER", "NatsStore", "meta_leader", "meta_term"]

SYSTEM_ACCOUNT, SYSTEM_USER = "SYS", ("sys", "sys")
STEPDOWN = "$JS.API.META.LEADER.STEPDOWN"


def meta_leader(member: MemberAddress, timeout: float) -> str:
    """The meta leader's server name as ``/jsz`` says ("" while it knows none)."""
    status, doc = get_json(member.extra[0], "/jsz", timeout=timeout)
    if status != 200 or not isinstance(doc, dict):
        raise StoreError(f"{member.name}: /jsz answered HTTP {status}")
    meta = doc.get("meta_cluster") or {}
    return str(meta.get("leader") or "") if isinstance(meta, dict) else ""


def meta_term(member_dir: Path) -> int:
    """The meta group's raft term the member last persisted (0 before it has one)."""
    try:
        data = (member_dir / "js" / "jetstream" / SYSTEM_ACCOUNT / "_js_" / "_meta_" / "tav.idx").read_bytes()
    except OSError:
        return 0
    return int.from_bytes(data[:8], "little") if len(data) >= 8 else 0


class NatsStore(Store):
    name = "nats"
    image = "nats:*"
    extra_ports = 1  # monitoring
    container_ports: ClassVar[dict[int, int]] = {4222: 0, 6222: 1, 8222: 2}
    can_transfer = True

    def __init__(self) -> None:
        self._dirs: dict[int, Path] = {}  # client port -> the member's directory, for its persisted term

    def binary(self) -> str | None:
        return shutil.which("nats-server") or next(
            (p for p in ("/usr/sbin/nats-server", "/usr/bin/nats-server") if Path(p).is_file()), None)

    def command(self, binary: str, layout: ClusterLayout, ordinal: int, member_dir: Path,
                timings: MemberTimings) -> list[str]:
        me = layout.member(ordinal)
        routes = ", ".join(f"nats-route://127.0.0.1:{layout.member(i).peer_port}" for i in layout.ordinals())
        config = f"""server_name: "{me.name}"
listen: "127.0.0.1:{me.client_port}"
http: "127.0.0.1:{me.extra[0]}"
jetstream {{ store_dir: "{member_dir / 'js'}", max_memory_store: 64MB, max_file_store: 1GB }}
cluster {{ name: "{layout.set_name}", listen: "127.0.0.1:{me.peer_port}", routes: [{routes}] }}
accounts {{
  {SYSTEM_ACCOUNT} {{ users: [{{user: {SYSTEM_USER[0]}, password: {SYSTEM_USER[1]}}}] }}
  APP {{ jetstream: enabled, users: [{{user: app, password: app}}] }}
}}
system_account: {SYSTEM_ACCOUNT}
no_auth_user: app
"""
        member_dir.mkdir(parents=True, exist_ok=True)
        self._dirs[me.client_port] = member_dir
        path = member_dir / "nats.conf"
        path.write_text(config, encoding="utf-8")
        return [binary, "-c", str(path)]

    def ready(self, member: MemberAddress, timeout: float) -> bool:
        try:
            return get_json(member.extra[0], "/healthz", timeout=timeout)[0] == 200
        except StoreError:
            return False

    def role(self, member: MemberAddress, timeout: float) -> RoleSample:
        # The term first: a leader named after it is of that term or a later one, never of an earlier one.
        where = self._dirs.get(member.client_port)
        term = meta_term(where) if where is not None else 0
        ordinal = parent_and_ordinal(meta_leader(member, timeout))[1]
        return RoleSample(member=member.ordinal + 1, leader=ordinal + 1 if ordinal >= 0 else 0, term=term)

    def move_leader(self, layout: ClusterLayout, leader: int, target: int, *, timeout: float) -> None:
        """The meta leader steps down; NATS 2.9 picks the successor (``target`` is only where the request goes
        after the leader: any member forwards a system request to the meta leader)."""
        answer = request(layout.member(leader).client_port, STEPDOWN, {}, timeout=timeout, user=SYSTEM_USER[0],
                         password=SYSTEM_USER[1])
        if not answer.get("success"):
            raise StoreError(f"{layout.member(leader).name}: step-down refused: {answer.get('error') or answer}")
