"""``rollwise up``: a local control plane that kubectl talks to, with rollwise's controllers and the simulated
kubelet running in wall-clock time.

Prints the server URL and the kubeconfig path first, then the line to paste (``export KUBECONFIG=...``); serves
until SIGINT or SIGTERM. Exit codes: 0 after a clean stop, 2 for invalid options.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from aiohttp import web

from rollwise.api.errors import FieldError, InvalidObject
from rollwise.api.features import MAX_UNAVAILABLE, RECREATE, parse_gate_flags_any
from rollwise.api.versions import DEFAULT_KUBE_VERSION, parse_kube_version
from rollwise.apiserver.admission.versioning import Versioning
from rollwise.apiserver.app import make_app
from rollwise.apiserver.auth.authz import RbacAuthorizer
from rollwise.apiserver.auth.tls import load_or_create, merge_kubeconfig, server_ssl_context, write_kubeconfig
from rollwise.apiserver.auth.tokens import Signer
from rollwise.apiserver.serving.config import Faults, ServerConfig
from rollwise.apiserver.serving.connect import process_connect
from rollwise.apiserver.storage.bootstrap import kubernetes_service
from rollwise.apiserver.storage.store import ApiStore
from rollwise.cli.logfiles import append_problem
from rollwise.cli.render import print_invalid
from rollwise.cluster.documents import read_documents
from rollwise.cluster.resources import ANALYSIS_RUN, STATEFULSET
from rollwise.kubelet.process import DEFAULT_PATTERN, ProbeSettings, ProcessRuntime
from rollwise.kubelet.process.patroni import PatroniRuntime
from rollwise.kubelet.process.runtime import image_matches
from rollwise.kubelet.process.runtimes import Runtimes
from rollwise.kubelet.process.stores import STORES
from rollwise.kubelet.profiles import KubeletProfile, parse_kubelet
from rollwise.kubelet.quorum_probe import QuorumParams
from rollwise.local.disruption import DisruptionController
from rollwise.local.driver import WallDriver, scaled_profile
from rollwise.local.processes import ProcessKubelet
from rollwise.local.scheduler import Scheduler
from rollwise.local.workloads import DEPLOYMENT, REPLICASET, REPLICATION_CONTROLLER, WorkloadControllers
from rollwise.runtime.registrations import ANALYSIS, QUORUM, SET_CONTROLLERS, STATEFULSET_ROW
from rollwise.runtime.trace import DecisionLog
from rollwise.scenario.scenario import parse_apps

__all__ = ["add_up", "parse_controllers", "parse_faults"]

DEFAULT_DATA_DIR = Path("~/.local/state/rollwise/up").expanduser()
# The StatefulSet kinds' controllers by the names the registration table gives them, the AnalysisRun controller,
# then up's own.
CONTROLLERS = (*dict.fromkeys(n for row in SET_CONTROLLERS for n in row.up_names.values()),
               *ANALYSIS.up_names.values(), "kubelet", "deployment", "replicaset")
_FAULT_KEYS = ("compact-every", "drop-watches-every", "watch-delay", "conflict-rate", "error-rate", "timeout-rate",
               "seed")


def add_up(sub: Any) -> None:
    p = sub.add_parser("up", help="serve the Kubernetes API locally, with rollwise's controllers and a simulated "
                                  "kubelet, for kubectl and client libraries",
                       description="Serve the Kubernetes API on 127.0.0.1 (TLS, bearer token) with rollwise's "
                                   "StatefulSet controller and a simulated kubelet in wall-clock time.")
    p.add_argument("--port", type=int, default=6443, help="port on 127.0.0.1 (0 picks a free one; default 6443)")
    p.add_argument("--speed", type=float, default=1.0,
                   help="divide simulated durations (container start, readiness, back-offs, termination) by N")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--data-dir", type=Path, help=f"where the credentials, the kubeconfig and the objects "
                                                     f"(SQLite) live (default {DEFAULT_DATA_DIR})")
    where.add_argument("--ephemeral", action="store_true", help="keep the objects in memory and the credentials "
                                                                 "in a temporary directory removed on exit")
    p.add_argument("--kubeconfig", type=Path, help="where to write the kubeconfig (default <data-dir>/kubeconfig)")
    p.add_argument("--merge-kubeconfig", action="store_true",
                   help="also add the `rollwise` context to ~/.kube/config")
    p.add_argument("--controllers", default="*",
                   help="kube-controller-manager-style list: '*' (default), or names with '-' to disable, e.g. "
                        f"'*,-kubelet'; names: {', '.join(CONTROLLERS)}")
    p.add_argument("--kubelet", type=Path, metavar="FILE",
                   help="the simulated kubelet's timings, per-image behaviours and application models, as a "
                        "scenario's `kubelet:` block (YAML), e.g. `images: {\"app:typo\": {fail: ErrImagePull}}` "
                        "or `apps: {etcd: {model: quorum}}`")
    p.add_argument("--process-images", default=DEFAULT_PATTERN, metavar="PATTERN",
                   help=f"pods of a StatefulSet whose container image matches one of these comma-separated "
                        f"shell-style patterns run as real local etcd, ZooKeeper, NATS or Patroni members (default "
                        f"{DEFAULT_PATTERN!r}; '' runs every pod in the simulated kubelet); their data lives in "
                        f"<data-dir>/processes (Patroni's in <data-dir>/patroni), one directory per claim")
    p.add_argument("--faults", default="",
                   help="misbehave on purpose, for tests: comma-separated compact-every=SECONDS, "
                        "drop-watches-every=SECONDS, watch-delay=SECONDS, conflict-rate=P, error-rate=P, "
                        "timeout-rate=P (P: the chance per write, 0 to 1), seed=N")
    p.add_argument("--debug-endpoints", action="store_true",
                   help="serve POST /debug/rollwise/compact, /debug/rollwise/drop-watches and "
                        "/debug/rollwise/namespaces/NS/pods/NAME/fault (body {\"fault\": \"crash\"}: one of the "
                        "simulator's pod faults crash, unready, recover, fail, kill, in the kubelet)")
    p.add_argument("--audit-log", type=Path, help="append one JSON line per write (time, user, verb, resource, "
                                                   "name, resourceVersion, code); the built-in controllers' writes "
                                                   "too, as system:serviceaccount:kube-system:<controller>")
    p.add_argument("--trace", type=Path, metavar="FILE",
                   help="append every decision of the built-in controllers that acts to FILE as JSON lines (the "
                        "view it decided from, its actions and reasons), for rollwise check-trace")
    p.add_argument("--authz", choices=("none", "rbac"), default="none",
                   help="rbac: authorize every request by the (Cluster)Roles bound to its user, as a cluster would "
                        "(`up`'s own credentials are a superuser); none (default): allow everything")
    p.add_argument("--any-token", action="store_true",
                   help="accept any bearer token, as the user of that name (tests tell clients apart this way)")
    p.add_argument("--kube-version", default=DEFAULT_KUBE_VERSION, metavar="VERSION",
                   help=f"judge apps/v1 StatefulSets as this release's API server does "
                        f"(default {DEFAULT_KUBE_VERSION}; "
                        "1.31 to 1.37, e.g. 1.35.4): maxUnavailable's gate is on in 1.35.0-1.35.3 and from 1.37, "
                        "off in 1.35.4 and 1.36; Recreate is alpha, off, in 1.37")
    p.add_argument("--feature-gates", default="", metavar="GATES",
                   help="the release's StatefulSet gates, as kube-apiserver takes them: "
                        "MaxUnavailableStatefulSet=true|false, StatefulSetRecreateStrategy=true|false (1.37)")
    p.add_argument("--proposals", choices=("on", "off"), default="on",
                   help="on (default): apps/v1 sets may use the seeds' proposals (Recreate, EnforcedRollingUpdate, "
                        "podProgressTimeoutSeconds, progressDeadlineSeconds, paused, podUpdatePolicy, "
                        "volumeClaimUpdatePolicy, reserveOrdinals, lifecycle, maxUnavailable where its gate is off), "
                        "each write that does carries a warning; off: refuse or drop them as a real server of "
                        "--kube-version does")
    p.set_defaults(run=run_up)


def parse_controllers(text: str) -> set[str]:
    """``*`` is every controller, ``-name`` turns one off, ``name`` on; a list of only ``-name``s starts from all
    (so ``--controllers=-apps.rollwise.dev`` leaves the CRD kind to an external operator)."""
    items = [s.strip() for s in text.split(",") if s.strip()]
    on: set[str] = set(CONTROLLERS) if items and all(i.startswith("-") for i in items) else set()
    for item in items:
        if item == "*":
            on |= set(CONTROLLERS)
        elif item.startswith("-") and item[1:] in CONTROLLERS:
            on.discard(item[1:])
        elif item in CONTROLLERS:
            on.add(item)
        else:
            raise ValueError(f"--controllers: unknown controller {item!r}; known: {', '.join(CONTROLLERS)}")
    return on


def parse_faults(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, sep, value = item.partition("=")
        if key not in _FAULT_KEYS or not sep:
            raise ValueError(f"--faults: {item!r}: expected one of {', '.join(k + '=N' for k in _FAULT_KEYS)}")
        try:
            out[key] = float(value)
        except ValueError:
            raise ValueError(f"--faults: {key}: {value!r} is not a number") from None
        if out[key] < 0 or (key.endswith("-rate") and out[key] > 1):
            raise ValueError(f"--faults: {key}: {value} is out of range")
    return out


def run_up(args: argparse.Namespace) -> int:
    try:
        controllers = parse_controllers(args.controllers)
        faults = parse_faults(args.faults)
        if not math.isfinite(args.speed) or args.speed <= 0:
            raise ValueError(f"--speed {args.speed}: must be a finite number greater than 0")
        if not 0 <= args.port <= 65535:
            raise ValueError("--port: must be between 0 and 65535")
        if args.data_dir is not None and args.data_dir.exists() and not args.data_dir.is_dir():
            raise ValueError(f"--data-dir {args.data_dir}: not a directory")
        if args.audit_log is not None and (problem := append_problem(args.audit_log)) is not None:
            raise ValueError(f"--audit-log {args.audit_log}: {problem}")
    except ValueError as err:
        print(f"rollwise up: {err}", file=sys.stderr)
        return 2
    versioning = _versioning(args)
    if versioning is None:
        return 2
    try:
        profile, apps = _load_profile(args.kubelet)
    except InvalidObject as err:
        print("rollwise up: --kubelet:", file=sys.stderr)
        print_invalid(err)
        return 2
    temp = tempfile.mkdtemp(prefix="rollwise-up-") if args.ephemeral else None
    if temp:  # enterable: a Patroni member runs as `postgres` when up runs as root (kubelet/process/patroni.py)
        os.chmod(temp, 0o711)
    data_dir = Path(temp) if temp else (args.data_dir or DEFAULT_DATA_DIR)
    try:
        return asyncio.run(_serve(args, data_dir, controllers, faults, profile, apps, versioning))
    except OSError as err:
        print(f"rollwise up: {err}", file=sys.stderr)
        return 1
    finally:
        if temp:
            shutil.rmtree(temp, ignore_errors=True)


def _versioning(args: argparse.Namespace) -> Versioning | None:
    """The release, gates and proposals from the flags; None (after printing every problem) when they are bad."""
    gates, errors = parse_gate_flags_any(args.feature_gates)
    release, more = parse_kube_version(args.kube_version, gates)
    errors += more
    if errors or release is None:
        for error in errors:
            print(f"rollwise up: {error}", file=sys.stderr)
        return None
    return Versioning(release, proposals=args.proposals == "on")


def _load_profile(path: Path | None) -> tuple[KubeletProfile, dict[str, QuorumParams]]:
    """The kubelet's profile and the sets bound to a quorum model (``apps.<set>: {model: quorum}``), from a
    scenario's ``kubelet:`` block."""
    if path is None:
        return KubeletProfile(), {}
    # The one loader every file goes through (size, depth, encoding, aliases, duplicate keys, numbers).
    docs = read_documents(path)
    if len(docs) > 1:
        raise InvalidObject([FieldError(path="<file>", rule=f"expected one document, found {len(docs)}")],
                            source=str(path))
    raw = docs[0] if docs else {}
    profile, errors = parse_kubelet(raw, path="kubelet")
    apps = parse_apps(raw.get("apps") if isinstance(raw, dict) else None, errors)
    if errors:
        raise InvalidObject(errors, source=str(path))
    return profile, {name: app.params for name, app in apps.items() if app.model == "quorum"}


async def _serve(args: argparse.Namespace, data_dir: Path, controllers: set[str], faults: dict[str, float],
                 profile: KubeletProfile, apps: dict[str, QuorumParams], versioning: Versioning) -> int:
    creds = load_or_create(data_dir / "pki")
    store = ApiStore(data_dir=None if args.ephemeral else data_dir / "state", versioning=versioning)
    audit_file: TextIO | None = args.audit_log.open("a", encoding="utf-8") if args.audit_log else None

    def audit(entry: dict[str, Any]) -> None:
        assert audit_file is not None
        audit_file.write(json.dumps(entry) + "\n")
        audit_file.flush()

    config = ServerConfig(
        tokens={creds.token: "admin"}, any_token=args.any_token, audit=audit if audit_file else None,
        signer=Signer(creds.sa_key_path.read_bytes()) if creds.sa_key_path is not None else None,
        debug_endpoints=args.debug_endpoints, authorizer=_authorizer(store) if args.authz == "rbac" else None,
        faults=Faults(conflict_rate=faults.get("conflict-rate", 0.0), error_rate=faults.get("error-rate", 0.0),
                      timeout_rate=faults.get("timeout-rate", 0.0),
                      watch_delay_seconds=faults.get("watch-delay", 0.0),
                      rng=random.Random(int(faults.get("seed", 0)))))
    processes = _processes(args, data_dir, store, controllers, profile)
    trace = DecisionLog(args.trace) if args.trace else None
    driver = WallDriver(store.cluster, listen=store.feed.listen, pump=store.feed.pump, speed=args.speed,
                        profile=profile, apps=apps, processes=processes, audit=audit if audit_file else None,
                        trace=trace, gates=store.gates, kubelet="kubelet" in controllers,
                        quorum=QUORUM.up_names[STATEFULSET] in controllers,
                        analysis=ANALYSIS.up_names[ANALYSIS_RUN] in controllers,
                        statefulset_kinds=tuple(gk for gk, name in STATEFULSET_ROW.up_names.items()
                                                if name in controllers),
                        announce=lambda line: print(f"rollwise up: {line}", file=sys.stderr, flush=True))
    config.pod_fault = driver.pod_fault
    if processes is not None:
        config.pod_connect = process_connect(processes.runtime.exec_context)
    workloads = WorkloadControllers(store.cluster, listen=store.feed.listen, pump=store.feed.pump, kinds=tuple(
        gk for gk, name in ((DEPLOYMENT, "deployment"), (REPLICASET, "replicaset"),
                            (REPLICATION_CONTROLLER, "replicaset")) if name in controllers))
    disruption = DisruptionController(store.cluster, listen=store.feed.listen, pump=store.feed.pump,
                                      clock=driver.clock)
    scheduler = Scheduler(store.cluster, listen=store.feed.listen, pump=store.feed.pump, clock=driver.clock)
    runner = web.AppRunner(make_app(store, config), handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port, ssl_context=server_ssl_context(creds), shutdown_timeout=1)
    await site.start()
    port = runner.addresses[0][1]
    url = f"https://127.0.0.1:{port}"
    config.server_address = f"127.0.0.1:{port}"
    kubernetes_service(store.cluster, address="127.0.0.1", port=port)
    store.feed.pump()
    kubeconfig = (args.kubeconfig or data_dir / "kubeconfig").expanduser().resolve()
    write_kubeconfig(kubeconfig, url, creds)
    if args.merge_kubeconfig:
        merge_kubeconfig(Path("~/.kube/config").expanduser(), url, creds)
    driver.start()
    workloads.start()
    disruption.start()
    scheduler.start()
    print(f"rollwise up: serving {url}", flush=True)
    print(f"kubeconfig: {kubeconfig}", flush=True)
    print(f"export KUBECONFIG={kubeconfig}", flush=True)
    release = versioning.release
    print(f"rollwise up: apps/v1 StatefulSets as Kubernetes {release.name} judges them (maxUnavailable "
          f"{'on' if release.on(MAX_UNAVAILABLE) else 'off'}, Recreate "
          f"{'on' if release.on(RECREATE) else 'off'}); the seeds' proposals "
          + ("kept, with a warning on each write that uses one" if versioning.proposals else "refused as that "
             "release refuses them"), file=sys.stderr, flush=True)
    # Deployments run here (local/workloads.py) but their containers do not: the operator's own Deployment shows
    # Running pods that reconcile nothing, which a newcomer who applied deploy/ reads as the operator at work.
    print(f"rollwise up: pods are simulated and no container runs, a Deployment's included: the operator's "
          f"(kubectl apply -k deploy/) shows Running pods that run no operator; the operator is `rollwise run "
          f"--kubeconfig {kubeconfig}`", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    periodic = (("compact-every", store.cluster.compact_history), ("drop-watches-every", store.cluster.drop_watches))
    tasks = [asyncio.create_task(_every(faults[k], fn)) for k, fn in periodic if faults.get(k)]
    await stop.wait()
    for task in tasks:
        task.cancel()
    driver.stop()
    workloads.stop()
    disruption.stop()
    scheduler.stop()
    store.cluster.drop_watches()  # open watch streams end cleanly before the server stops
    await runner.cleanup()
    store.close()
    if audit_file is not None:
        audit_file.close()
    if trace is not None:
        trace.close()
    print("rollwise up: stopped", file=sys.stderr, flush=True)
    return 0


def _authorizer(store: ApiStore) -> RbacAuthorizer:
    def lister(plural: str, namespace: str | None) -> list[Any]:
        resource = store.registry.find("rbac.authorization.k8s.io", "v1", plural)
        assert resource is not None
        return store.list(resource, namespace)

    return RbacAuthorizer(lister)


# Without a readinessProbe on the container: etcd-druid's probe (a linearizable read, reference §1.7), checked every
# second rather than druid's 15 s / 5 s so a rollout on this machine takes seconds; Leases renewed every second.
_PROBE = ProbeSettings(initial_delay_seconds=0, period_seconds=1, timeout_seconds=0.5, failure_threshold=3,
                       heartbeat_seconds=1)


def _processes(args: argparse.Namespace, data_dir: Path, store: ApiStore, controllers: set[str],
               profile: KubeletProfile) -> ProcessKubelet | None:
    """The process runtime, unless turned off (``--process-images ''``, or no kubelet at all)."""
    if not args.process_images or "kubelet" not in controllers:
        return None
    runtime: ProcessRuntime | None = None
    if any(image_matches(f"{name}:0", args.process_images) for name in STORES):
        try:
            runtime = ProcessRuntime(data_dir / "processes", pattern=args.process_images, probe=_PROBE,
                                     profile=scaled_profile(profile, args.speed))
        except FileNotFoundError as err:
            print(f"rollwise up: {err}: pods matching {args.process_images!r} run in the simulated kubelet",
                  file=sys.stderr, flush=True)
    runtimes = [runtime] if runtime is not None else []
    if image_matches("patroni:0", args.process_images):
        try:
            runtimes.append(PatroniRuntime(data_dir / "patroni", pattern=args.process_images, probe=_PROBE,
                                           profile=scaled_profile(profile, args.speed)))
        except FileNotFoundError as err:
            print(f"rollwise up: {err}: Patroni pods run in the simulated kubelet", file=sys.stderr, flush=True)
    if not runtimes:
        return None
    both = runtimes[0] if len(runtimes) == 1 else Runtimes(*runtimes)
    return ProcessKubelet(both, store.cluster, pump=store.feed.pump, clock=store.clock)


async def _every(seconds: float, fn: Any) -> None:
    with contextlib.suppress(asyncio.CancelledError):
        while True:
            await asyncio.sleep(seconds)
            fn()
