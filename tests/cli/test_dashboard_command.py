"""`rollwise dashboard`'s command line: the port it listens on unless told otherwise."""

from __future__ import annotations

from rollwise.cli import build_parser

# The ports other tools take by default on a platform engineer's machine, beside rollwise.
TAKEN_BESIDE_IT = {
    3000: "Grafana",
    3100: "Argo Rollouts' dashboard (kubectl argo rollouts dashboard), Loki",
    4466: "Headlamp",
    6443: "rollwise up",
    7777: "Octant",
    8001: "kubectl proxy",
    8080: "Argo CD (port-forwarded), rollwise run's metrics",
    8081: "rollwise run's health probes",
    8443: "Kubernetes Dashboard",
    9090: "Prometheus",
    9093: "Alertmanager",
    10350: "Tilt",
    16686: "Jaeger",
    20001: "Kiali",
}


def test_the_dashboards_default_port_is_none_a_tool_run_beside_it_takes() -> None:
    args = build_parser(["dashboard"]).parse_args(["dashboard"])
    assert args.port not in TAKEN_BESIDE_IT, TAKEN_BESIDE_IT.get(args.port)


def test_the_help_names_the_default_port() -> None:
    args = build_parser(["dashboard"]).parse_args(["dashboard"])
    dashboard = build_parser(["dashboard"])._subparsers._group_actions[0].choices["dashboard"]  # type: ignore[union-attr]
    assert f"default {args.port};" in dashboard.format_help()
