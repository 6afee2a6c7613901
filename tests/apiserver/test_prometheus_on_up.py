"""A real Prometheus (Debian's package) scraping `rollwise up`'s real etcd members: the ``prometheus`` analysis
provider reads etcd's own view of itself through it, and the real operator (`rollwise run`) runs AnalysisRuns on
it, ending Successful while every member sees a leader and Failed, with the value in its message, when the
template asks for more.

``up`` runs a three-member etcd set (image ``etcd:*``: real etcd processes); each member's client URL, where etcd
serves ``/metrics``, is found as a user finds it, with ``kubectl exec`` (``$ETCDCTL_ENDPOINTS`` in the member). The
module's Prometheus scrapes the three every second. One server for the module; every process is started here and
stopped by its pid."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kubectl_support import Up
from member_marks import needs_etcd
from operator_support import Operator, audit_entries, get_json
from prometheus_server import NOT_INSTALLED, Prometheus, prometheus_binary, running_prometheus

from rollwise.api.analysis import Measured
from rollwise.api.leases import LEADER, lease_role
from rollwise.runtime.analysis_providers.prometheus import measure_prometheus

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


def _members(up: Up) -> None:
    up.apply(MEMBERS)
    up.kubectl("rollout", "status", "sts/etcd", "--timeout=90s")


pytestmark = [
    pytest.mark.kubectl,
    *needs_etcd,
    pytest.mark.skipif(prometheus_binary() is None, reason=NOT_INSTALLED),
    # The custom kind and the AnalysisRuns are the operator's; up runs the apps/v1 etcd set itself.
    pytest.mark.up(shared=True, for_operator=True, setup=_members),
]


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
def scraped(shared_up: Up, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scraped]:
    endpoints = member_endpoints(shared_up, PODS)
    with running_prometheus(tmp_path_factory.mktemp("prometheus"), endpoints) as prometheus:
        yield Scraped(shared_up, prometheus, endpoints)


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
    seen: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def agreed() -> bool:
        """Prometheus' last scrape of each member names one leader, and up's member Leases (written from each
        member's own status) name the same one. Both lag the members a little, so a leader change while the
        machine is busy is waited out, never taken for a disagreement."""
        per_pod = {pod: _measure(scraped, f'etcd_server_is_leader{{pod="{pod}"}}').value for pod in PODS}
        roles = {lease["metadata"]["name"]: lease_role(lease)
                 for lease in scraped.up.read("leases", "-n", "default")["items"]}
        seen.append((per_pod, roles))
        assert all(value in (0, 1) for value in per_pod.values()), per_pod
        leaders = [pod for pod, value in per_pod.items() if value == 1]
        return len(leaders) == 1 and roles.get(leaders[0]) == LEADER \
            and [pod for pod in PODS if roles.get(pod) == LEADER] == leaders

    scraped.up.until(agreed, "Prometheus and the Leases name the same one leader", on_fail=lambda: repr(seen[-3:]))


def test_a_query_prometheus_refuses_is_a_measurement_error_in_its_words(scraped: Scraped) -> None:
    measured = _measure(scraped, "sum(etcd_server_has_leader")
    assert measured.value is None and measured.error is not None
    assert measured.error.startswith(f"prometheus at {scraped.prometheus.address}: bad_data: ")
    assert "parse error" in measured.error


TEMPLATE = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: AnalysisTemplate
metadata: {{name: {name}, namespace: default}}
spec:
  args: [{{name: prometheus}}]
  metrics:
  - name: members-with-a-leader
    {condition}
    provider:
      prometheus:
        address: "{{{{args.prometheus}}}}"
        query: sum(etcd_server_has_leader{{job="etcd"}})
        timeout: 5
"""
RUN = """\
apiVersion: apps.rollwise.dev/v1alpha1
kind: AnalysisRun
metadata: {{name: {name}, namespace: default}}
spec:
  templates: [{{templateName: {template}}}]
  args: [{{name: prometheus, value: "{address}"}}]
"""


def _run(scraped: Scraped, name: str, condition: str) -> dict[str, Any]:
    """An AnalysisTemplate and a run of it created by hand, as the StatefulSet controller's analysis step creates
    one; the run's status once it ends."""
    up = scraped.up
    up.apply(TEMPLATE.format(name=name, condition=condition))
    up.kubectl("create", "-f", "-", stdin=RUN.format(name=name, template=name, address=scraped.prometheus.address))
    up.until(lambda: (get_json(up, "ar", name, check=False).get("status") or {}).get("phase")
             in ("Successful", "Failed", "Error", "Inconclusive"), f"the analysis {name} ends",
             on_fail=lambda: json.dumps(get_json(up, "ar", name, check=False).get("status")))
    return dict(get_json(up, "ar", name)["status"])


def _writers(up: Up, name: str) -> set[str]:
    return {e["user"] for e in audit_entries(up) if e["resource"].startswith("analysisruns.")
            and e["verb"] in ("update", "patch") and e.get("name") == name}


def test_the_operator_runs_an_analysis_on_etcds_leader_metric_to_success(scraped: Scraped,
                                                                        operator: Operator) -> None:
    _settled(scraped, "sum(etcd_server_has_leader)", 3.0)  # every member scraped once
    status = _run(scraped, "leaders", "successCondition: result == 3")  # every member of three sees a leader
    assert status["phase"] == "Successful" and "message" not in status, status
    (result,) = status["metricResults"]
    assert (result["name"], result["phase"], result["count"], result["successful"]) == (
        "members-with-a-leader", "Successful", 1, 1)
    assert [m["value"] for m in result["measurements"]] == ["3"]
    assert _writers(scraped.up, "leaders") == {"op-a"}


def test_the_operator_ends_an_analysis_failed_with_etcds_value_in_the_message(scraped: Scraped,
                                                                             operator: Operator) -> None:
    _settled(scraped, "sum(etcd_server_has_leader)", 3.0)
    status = _run(scraped, "more-leaders", "failureCondition: result < 4")  # four asked of three
    assert status["phase"] == "Failed", status
    assert status["message"] == 'metric members-with-a-leader failed: result 3 matches failureCondition "result < 4"'
    (result,) = status["metricResults"]
    assert [(m["phase"], m["value"]) for m in result["measurements"]] == [("Failed", "3")]
    assert _writers(scraped.up, "more-leaders") == {"op-a"}
