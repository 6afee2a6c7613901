"""``rollwise run``: the operator against a real API server (kubeconfig or in-cluster), with leader election,
``/metrics``, ``/healthz`` and ``/readyz``. Exit codes: 0 stopped by SIGTERM/SIGINT (lease released), 1 lost the
lease or could not start, 2 invalid flags."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import signal
import socket
import sys
import uuid
from typing import Any

from rollwise.api.meta import Obj
from rollwise.operator.election import LeaseTimings
from rollwise.operator.operator import CONTROLLERS, Operator, OperatorConfig

__all__ = ["add_run", "parse_duration"]

log = logging.getLogger("rollwise.run")

_DURATION = re.compile(r"(?P<value>[0-9]+(?:\.[0-9]+)?)(?P<unit>ms|s|m|h)?")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


def parse_duration(text: str) -> float:
    """``15s``, ``500ms``, ``1m``, ``2`` (seconds) → seconds, as Go's ``time.ParseDuration`` for these units."""
    m = _DURATION.fullmatch(text.strip())
    if m is None:
        raise argparse.ArgumentTypeError(f"invalid duration {text!r}: use a number with ms, s, m or h")
    return float(m["value"]) * _UNITS[m["unit"]]


def _controllers(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in CONTROLLERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown controllers {', '.join(unknown) or '(none)'}; "
                                         f"known: {', '.join(CONTROLLERS)}")
    return names


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


def _client(args: argparse.Namespace) -> Any:
    # lightkube loads only for `run` (about 0.1 s that no other command should pay).
    from lightkube import AsyncClient  # noqa: PLC0415
    from lightkube.config.kubeconfig import KubeConfig  # noqa: PLC0415

    if args.in_cluster:
        config = KubeConfig.from_service_account()
    else:
        path = args.kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
        config = KubeConfig.from_file(path)
    return AsyncClient(config.get(context_name=args.context), trust_env=False)


async def _serve(args: argparse.Namespace, timings: LeaseTimings) -> int:
    from rollwise.cluster.kube import CR_GROUP, KubeCluster  # noqa: PLC0415 - lightkube, as above
    from rollwise.operator.probes import health_app, metrics_app, serve  # noqa: PLC0415 - aiohttp

    client = _client(args)
    worlds: dict[str, Any] = {"statefulset": KubeCluster(client, set_group=CR_GROUP),
                              "quorum": KubeCluster(client, set_group="apps")}
    config = OperatorConfig(identity=args.identity, namespace=args.namespace, controllers=args.controllers,
                            leader_elect=args.leader_elect, lease_namespace=args.lease_namespace,
                            lease_name=args.lease_name, timings=timings, workers=args.workers)
    shared = worlds[config.controllers[0]]
    op = Operator({name: worlds[name] for name in config.controllers}, config=config, leases=_Leases(shared),
                  events=_Events(shared))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    health, health_port = await serve(health_app(ready=op.not_ready, healthy=op.unhealthy), args.health_addr)
    metrics, metrics_port = await serve(metrics_app(op.metrics.registry), args.metrics_addr)
    print(f"rollwise run: {args.identity}: health on port {health_port}, metrics on port {metrics_port}",
          file=sys.stderr, flush=True)
    try:
        reason = await op.run(stop)
    finally:
        await health.cleanup()
        await metrics.cleanup()
        await client.close()
    print(f"rollwise run: {reason}", file=sys.stderr, flush=True)
    return 0 if reason == "stopped" else 1


def _run(args: argparse.Namespace) -> int:
    from rollwise.operator.probes import parse_addr  # noqa: PLC0415 - aiohttp loads only for `run`

    try:
        timings = LeaseTimings(lease_duration_seconds=args.lease_duration, renew_deadline_seconds=args.renew_deadline,
                               retry_period_seconds=args.retry_period)
        parse_addr(args.metrics_addr)
        parse_addr(args.health_addr)
    except ValueError as err:
        print(f"rollwise run: {err}", file=sys.stderr)
        return 2
    logging.basicConfig(level=getattr(logging, args.log_level), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    if args.log_level != "DEBUG":
        logging.getLogger("httpx2").setLevel(logging.WARNING)  # one line per request drowns the actions
    try:
        return asyncio.run(_serve(args, timings))
    except (OSError, ValueError) as err:  # no kubeconfig, a port in use, a bad context
        print(f"rollwise run: {err}", file=sys.stderr)
        return 1


def add_run(sub: Any) -> None:
    p = sub.add_parser("run", help="run the operator against a Kubernetes API",
                       description="Run rollwise's controllers against a real API server: the "
                                   "apps.rollwise.dev/v1alpha1 StatefulSet controller and the quorum-aware companion "
                                   "for apps/v1 sets (OnDelete plus the rollwise.dev/update-policy annotation).")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig to use (default: $KUBECONFIG, ~/.kube/config)")
    where.add_argument("--in-cluster", action="store_true", help="use the pod's service account")
    p.add_argument("--context", help="kubeconfig context (default: the current one)")
    p.add_argument("--namespace", help="watch only this namespace (default: all)")
    p.add_argument("--controllers", type=_controllers, default=tuple(CONTROLLERS),
                   help=f"comma-separated controllers to run (default: {','.join(CONTROLLERS)})")
    p.add_argument("--leader-elect", action="store_true", help="take part in leader election (run two replicas)")
    p.add_argument("--lease-namespace", default=os.environ.get("POD_NAMESPACE") or "rollwise-system")
    p.add_argument("--lease-name", default="rollwise")
    p.add_argument("--identity", default=os.environ.get("POD_NAME") or f"{socket.gethostname()}_{uuid.uuid4()}",
                   help="this replica's name in the Lease (default: $POD_NAME, else host and a random id)")
    p.add_argument("--lease-duration", type=parse_duration, default=15.0, metavar="DURATION")
    p.add_argument("--renew-deadline", type=parse_duration, default=10.0, metavar="DURATION")
    p.add_argument("--retry-period", type=parse_duration, default=2.0, metavar="DURATION")
    p.add_argument("--workers", type=int, default=5, help="concurrent reconciles per controller (default 5)")
    p.add_argument("--metrics-addr", default=":8080", help="serve /metrics here (default :8080)")
    p.add_argument("--health-addr", default=":8081", help="serve /healthz and /readyz (default :8081)")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.set_defaults(run=_run)
