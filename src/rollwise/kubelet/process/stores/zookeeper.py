"""ZooKeeper 3.8 members (``zookeeper:*``, Debian's ``zookeeper`` package run on its JVM).

An ensemble from the set: ``server.<ordinal+1>`` for every ordinal of the set's range at ``spec.replicas`` (the
ZooKeeper StatefulSet tutorial's rule, myid = ordinal + 1, since myid 0 is not allowed), each at its own loopback
ports where a cluster would use ``<pod>.<service>:2888:3888``. The data directory (snapshots, the transaction log and
``myid``) is in the pod's claim, so a restarted member comes back with what it had.

The AdminServer (Jetty, ``admin.serverPort``) answers ``GET /commands/srvr`` with ``server_stats.server_state``:
``leader``, ``follower``, or ``looking`` while it has no quorum (ZooKeeper's own admin docs). That is the role probe
a user configures (docs/stores/zookeeper.md), the readiness check here (serving in a quorum: leader or follower, as
the tutorial's ``zookeeper-ready`` means), and, with the epoch of ``last_processed_zxid`` (its high 32 bits, a new
one per elected leader), the lab's view of who leads. ZooKeeper 3.8 has no leadership transfer: the leader goes last.

Timings: ``tickTime`` is a fifth of the election timeout, ``syncLimit`` 5 ticks, so a follower gives up on a silent
leader after about the election timeout, as etcd's followers do; ``initLimit`` 20 ticks for a joining member's sync.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import ClassVar

from rollwise.kubelet.process.identity import ClusterLayout, MemberAddress
from rollwise.kubelet.process.stores.base import MemberTimings, RoleSample, Store, StoreError
from rollwise.kubelet.process.stores.http import get_json

__all__ = ["ZOOKEEPER_JARS", "ZooKeeperStore", "server_state"]

# Debian's jar names its dependencies in its manifest; the servlet API (the AdminServer's Jetty needs it) and an
# SLF4J binding (else the server logs nothing) are not among them.
ZOOKEEPER_JARS = ("/usr/share/java/zookeeper.jar", "/usr/share/java/servlet-api.jar",
                  "/usr/share/java/slf4j-simple.jar")
SERVING = ("leader", "follower")


def server_state(member: MemberAddress, timeout: float) -> tuple[str, int]:
    """(``server_state``, the epoch of its last zxid) from the AdminServer's ``/commands/srvr``."""
    status, doc = get_json(member.extra[1], "/commands/srvr", timeout=timeout)
    stats = doc.get("server_stats") if isinstance(doc, dict) else None
    if status != 200 or not isinstance(stats, dict) or not isinstance(stats.get("server_state"), str):
        raise StoreError(f"{member.name}: /commands/srvr answered HTTP {status} without server_state")
    return stats["server_state"], int(stats.get("last_processed_zxid") or 0) >> 32


class ZooKeeperStore(Store):
    name = "zookeeper"
    image = "zookeeper:*"
    extra_ports = 2  # election, AdminServer
    container_ports: ClassVar[dict[int, int]] = {2181: 0, 2888: 1, 3888: 2, 8080: 3}

    def binary(self) -> str | None:
        java = shutil.which("java")
        return java if java and all(os.path.isfile(jar) for jar in ZOOKEEPER_JARS) else None

    def command(self, binary: str, layout: ClusterLayout, ordinal: int, member_dir: Path,
                timings: MemberTimings) -> list[str]:
        me = layout.member(ordinal)
        data = member_dir / "data"
        data.mkdir(parents=True, exist_ok=True)
        (data / "myid").write_text(f"{ordinal + 1}\n", encoding="utf-8")
        servers = [f"server.{m.ordinal + 1}=127.0.0.1:{m.peer_port}:{m.extra[0]}"
                   for m in (layout.member(i) for i in layout.ordinals())]
        tick = max(10, timings.election_ms // 5)
        lines = [f"tickTime={tick}", "initLimit=20", "syncLimit=5", f"dataDir={data}",
                 f"clientPort={me.client_port}", "clientPortAddress=127.0.0.1",
                 "admin.enableServer=true", "admin.serverAddress=127.0.0.1", f"admin.serverPort={me.extra[1]}",
                 "4lw.commands.whitelist=srvr,ruok", "quorumListenOnAllIPs=false", *servers]
        config = member_dir / "zoo.cfg"
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        # A small heap and the client compiler: a member is idle most of the time, and the machine is shared.
        return [binary, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", ":".join(ZOOKEEPER_JARS),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain", str(config)]

    def ready(self, member: MemberAddress, timeout: float) -> bool:
        try:
            return server_state(member, timeout)[0] in SERVING
        except StoreError:
            return False

    def role(self, member: MemberAddress, timeout: float) -> RoleSample:
        state, epoch = server_state(member, timeout)
        me = member.ordinal + 1
        return RoleSample(member=me, leader=me if state == "leader" else 0, term=epoch)
