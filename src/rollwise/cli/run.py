"""``rollwise run``: the operator against a real API server (kubeconfig or in-cluster), with leader election,
``/metrics``, ``/healthz`` and ``/readyz``. Exit codes: 0 stopped by SIGTERM/SIGINT (lease released), 1 lost the
lease or could not start, 2 invalid flags or an unusable kubeconfig or service account (one line, no traceback)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
import uuid
from pathlib import Path
from typing import Any

from rollwise.api.meta import Obj
from rollwise.api.validation_rules import check_dns_label, check_dns_subdomain
from rollwise.cli.adoption import sweep_forever
from rollwise.cli.durations import seconds
from rollwise.cli.kubeconfig import ClientConfig, ConfigProblem, client_config
from rollwise.cli.logfiles import append_problem
from rollwise.cli.logs import LOG_FORMATS, JsonFormatter, configure_logging
from rollwise.cluster.operator_namespace import DEFAULT_NAMESPACE
from rollwise.cluster.resources import ANALYSIS_RUN, ROLLWISE_STATEFULSET, STATEFULSET
from rollwise.operator.election import LeaseTimings
from rollwise.operator.operator import CONTROLLERS, Operator, OperatorConfig
from rollwise.runtime.registrations import ANALYSIS, operator_kind_name

__all__ = ["add_run", "parse_duration"]

log = logging.getLogger("rollwise.run")

def parse_duration(text: str) -> float:
    """``15s``, ``500ms``, ``1m``, ``2`` (seconds) → seconds (``cli/durations.py``)."""
    value = seconds(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"invalid duration {text!r}: use a number with ms, s, m or h")
    return value


def _controllers(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in CONTROLLERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown controllers {', '.join(unknown) or '(none)'}; "
                                         f"known: {', '.join(CONTROLLERS)}")
    return names


_BOOLEANS = {**dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
             **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False)}
"""What a bool flag of kube-controller-manager takes (pflag parses it with Go's ``strconv.ParseBool``)."""


def _boolean(text: str) -> bool:
    if text not in _BOOLEANS:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: use true or false")
    return _BOOLEANS[text]


def _name_by(check: Any, what: str) -> Any:
    """An argparse type for a flag naming an object: refused at start with the API server's rule, since the
    elector would otherwise retry a write the server refuses for as long as it runs."""
    def parse(text: str) -> str:
        errors = check(text, what)
        if errors:
            raise argparse.ArgumentTypeError(f"{text!r}: {errors[0].rule}")
        return text
    return parse


def _identity(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty: it names this replica in the Lease")
    return text


def _workers(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be a whole number of at least 1")
    return count


class _Leases:
    """``LeaseClient`` over the cluster."""

    def __init__(self, kube: Any) -> None:
        self.kube = kube

    async def get(self, namespace: str, name: str) -> Obj:
        return dict(await self.kube.get("Lease", namespace, name))

    async def create(self, lease: Obj) -> Obj:
        return dict(await self.kube.create(lease))

    async def update(self, lease: Obj) -> Obj:
        return dict(await self.kube.update(lease))


class _Events:
    """``EventSink`` over the cluster."""

    def __init__(self, kube: Any) -> None:
        self.kube = kube

    async def create(self, event: Obj) -> Obj:
        return dict(await self.kube.create(event))

    async def patch(self, namespace: str, name: str, merge: Any) -> Obj:
        return dict(await self.kube.patch("Event", namespace, name, merge))


def _announce(args: argparse.Namespace, text: str) -> None:
    """The start and stop lines, whatever the log level (tools read the ports from the first), in the log's format."""
    record = logging.LogRecord("rollwise.run", logging.INFO, __file__, 0, text, (), None)
    formatter = JsonFormatter() if args.log_format == "json" else None
    print(formatter.format(record) if formatter is not None else text, file=sys.stderr, flush=True)


TRANSPORTS = ("direct", "aiohttp", "httpx")


def _client(client_config: ClientConfig, registry: Any, transport: str = "direct") -> Any:
    """The API client: ``direct``, aiohttp requests built from the resource table (``cluster/client/rest.py``);
    ``aiohttp``, lightkube's httpx client over aiohttp's connections (``cluster/client/aiohttp_transport.py``);
    ``httpx``, lightkube over httpx's own pool (these two, kept to compare transports, ignore ``tls-server-name``
    and proxies). Every request is counted (``cli/client_metrics.py``)."""
    from rollwise.cli.client_metrics import RequestMetrics, instrument_client  # noqa: PLC0415 - prometheus-client

    metrics = RequestMetrics(registry)
    if transport == "direct":
        return client_config.rest_client(observe=metrics.observe)
    config = client_config.single
    from lightkube import AsyncClient  # noqa: PLC0415 - lightkube costs ~0.1 s no other command should pay
    from lightkube.config.client_adapter import verify_cluster  # noqa: PLC0415 - as above

    from rollwise.cluster.client.aiohttp_transport import AiohttpTransport  # noqa: PLC0415 - as above

    over = None if transport == "httpx" else AiohttpTransport(
        verify_cluster(config.cluster, config.user, config.abs_file, trust_env=False))
    client = AsyncClient(config, trust_env=False, transport=over)
    instrument_client(client._client._client, metrics)  # lightkube's httpx client: every request it makes
    return client


async def _serve(args: argparse.Namespace, timings: LeaseTimings, kube_config: ClientConfig) -> int:
    from rollwise.cli.client_metrics import register_process_collectors  # noqa: PLC0415
    from rollwise.cluster.client.kube import CR_GROUP, KubeCluster  # noqa: PLC0415 - lightkube, as above
    from rollwise.operator.probes import health_app, metrics_app, serve  # noqa: PLC0415 - aiohttp
    from rollwise.runtime.metrics import RuntimeMetrics  # noqa: PLC0415
    from rollwise.runtime.trace import DecisionLog  # noqa: PLC0415 - as above

    runtime_metrics = RuntimeMetrics()
    register_process_collectors(runtime_metrics.registry)
    client = _client(kube_config, runtime_metrics.registry, args.http_transport)
    custom = KubeCluster(client, set_group=CR_GROUP)
    # Each controller's API, by the name the registration table gives it: the custom kind's sets, apps/v1's, runs.
    worlds: dict[str, Any] = {operator_kind_name(ROLLWISE_STATEFULSET): custom,
                              operator_kind_name(STATEFULSET): KubeCluster(client, set_group="apps"),
                              ANALYSIS.operator_names[ANALYSIS_RUN]: custom}
    config = OperatorConfig(identity=args.identity, namespaces=args.namespaces, controllers=args.controllers,
                            leader_elect=args.leader_elect, lease_namespace=args.lease_namespace,
                            lease_name=args.lease_name, timings=timings, workers=args.workers)
    shared = worlds[config.controllers[0]]
    trace = DecisionLog(args.trace) if args.trace else None
    op = Operator(worlds, config=config, leases=_Leases(shared),
                  events=_Events(shared), metrics=runtime_metrics, trace=trace)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    health, health_port = await serve(health_app(ready=op.not_ready, healthy=op.unhealthy), args.health_addr)
    metrics, metrics_port = await serve(metrics_app(op.metrics.registry), args.metrics_addr)
    _announce(args, f"rollwise run: {args.identity}: health on port {health_port}, metrics on port {metrics_port}")
    sweeper = asyncio.create_task(sweep_forever(op, worlds["statefulset"]), name="adoption-sweep")
    try:
        reason = await op.run(stop)
    finally:
        sweeper.cancel()
        await asyncio.gather(sweeper, return_exceptions=True)
        await health.cleanup()
        await metrics.cleanup()
        await client.close()
        if trace is not None:
            trace.close()
    _announce(args, f"rollwise run: {reason}")
    return 0 if reason == "stopped" else 1


def _run(args: argparse.Namespace) -> int:
    from rollwise.operator.probes import parse_addr  # noqa: PLC0415 - aiohttp loads only for `run`

    try:
        timings = LeaseTimings(lease_duration_seconds=args.lease_duration, renew_deadline_seconds=args.renew_deadline,
                               retry_period_seconds=args.retry_period)
        for flag, addr in (("--metrics-addr", args.metrics_addr), ("--health-addr", args.health_addr)):
            try:
                parse_addr(addr)
            except ValueError as err:
                raise ValueError(f"{flag}: {err}") from err
        if args.trace is not None and (problem := append_problem(Path(args.trace))) is not None:
            raise ValueError(f"--trace {args.trace}: {problem}")
        # read before anything starts, so a missing or broken file is one line
        kube_config = client_config(args.kubeconfig, args.context, in_cluster=args.in_cluster)
    except (ValueError, ConfigProblem) as err:
        print(f"rollwise run: {err}", file=sys.stderr)
        return 2
    configure_logging(args.log_format, args.log_level)
    try:
        return asyncio.run(_serve(args, timings, kube_config))
    except (OSError, ValueError) as err:  # a port in use, a server that cannot be reached at start
        print(f"rollwise run: {err}", file=sys.stderr)
        return 1


def _namespaces(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    bad = [n for n in names if check_dns_label(n, "namespace")]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"{', '.join(bad) or '(none)'}: a namespace is a DNS label "
                                         "(lower-case letters, digits and '-', at most 63)")
    return names


def _one_line_error(prog: str) -> Any:
    def error(message: str) -> None:  # argparse's usage block would bury the one line that matters
        print(f"{prog}: {message} (see {prog} --help)", file=sys.stderr)
        raise SystemExit(2)
    return error


def add_run(sub: Any) -> None:
    p = sub.add_parser("run", help="run the operator against a Kubernetes API",
                       description="Run rollwise's controllers against a real API server: the "
                                   "apps.rollwise.dev/v1alpha1 StatefulSet controller and the quorum-aware controller "
                                   "for sets of both kinds (OnDelete plus the rollwise.dev/update-policy annotation; "
                                   "on apps/v1 sets as a companion of kube-controller-manager).")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig to use (default: $KUBECONFIG, ~/.kube/config)")
    where.add_argument("--in-cluster", action="store_true", help="use the pod's service account")
    p.add_argument("--context", help="kubeconfig context (default: the current one)")
    p.error = _one_line_error("rollwise run")
    p.add_argument("--namespaces", "--namespace", type=_namespaces, default=(), metavar="NS[,NS...]",
                   help="watch only these namespaces (default: all)")
    p.add_argument("--controllers", type=_controllers, default=tuple(CONTROLLERS),
                   help=f"comma-separated controllers to run (default: {','.join(CONTROLLERS)})")
    p.add_argument("--leader-elect", nargs="?", const=True, default=True, type=_boolean, metavar="true|false",
                   help="take part in leader election (default true, as kube-controller-manager's): one replica "
                        "acts at a time, and `rollwise up`'s own controllers stand down while it leads")
    p.add_argument("--lease-namespace", default=os.environ.get("POD_NAMESPACE") or DEFAULT_NAMESPACE,
                   type=_name_by(check_dns_label, "namespace"))
    p.add_argument("--lease-name", default="rollwise", type=_name_by(check_dns_subdomain, "name"))
    p.add_argument("--identity", default=os.environ.get("POD_NAME") or f"{socket.gethostname()}_{uuid.uuid4()}",
                   type=_identity,
                   help="this replica's name in the Lease (default: $POD_NAME, else host and a random id)")
    p.add_argument("--lease-duration", type=parse_duration, default=15.0, metavar="DURATION")
    p.add_argument("--renew-deadline", type=parse_duration, default=10.0, metavar="DURATION")
    p.add_argument("--retry-period", type=parse_duration, default=2.0, metavar="DURATION")
    p.add_argument("--workers", type=_workers, default=5, help="concurrent reconciles per controller (default 5)")
    p.add_argument("--http-transport", default="direct", choices=TRANSPORTS,
                   help="the API client: direct (default: aiohttp requests, no lightkube), aiohttp (lightkube's "
                        "httpx client over aiohttp's connections) or httpx (lightkube over httpx's own)")
    p.add_argument("--metrics-addr", default=":8080", help="serve /metrics here (default :8080)")
    p.add_argument("--health-addr", default=":8081", help="serve /healthz and /readyz (default :8081)")
    p.add_argument("--trace", metavar="FILE", help="append every decision that acts to FILE as JSON lines (the "
                                                "view it decided from, its actions and reasons), for rollwise "
                                                "check-trace")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.add_argument("--log-format", default="text", choices=LOG_FORMATS,
                   help="text (default) or json: one object per line with time, level, set, action, reason")
    p.set_defaults(run=_run, parser=p)
