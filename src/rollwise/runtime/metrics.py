"""The operator's Prometheus metrics, under controller-runtime's names plus the simulator's.

* ``workqueue_*`` (controller-runtime ``pkg/metrics/workqueue.go``), labelled by controller ``name``;
* ``controller_runtime_reconcile_{total,errors_total,time_seconds}``
  (``pkg/internal/controller/metrics/metrics.go``);
* ``leader_election_master_status`` (``pkg/metrics/leaderelection.go``);
* ``rollwise_stale_sync_skips_total``: reconciles skipped because the cache had not seen this controller's own
  writes (KEP-5647's ``stale_sync_skips_total``);
* ``rollwise_events_sent_total`` and ``rollwise_events_dropped_total``: Events written, and Events given up (spam,
  a full queue when the writer falls behind, or twelve failed tries), as client-go drops them without a trace but
  a log line; a platform team alerts on the second;
* the controllers' own samples (the names of the simulator's result document, ``runtime/samples.py``), exported
  from the same ``MetricsRegistry`` the simulator fills, so the two worlds share one set of names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from rollwise.runtime.samples import DURATION_BUCKETS, MetricsRegistry

__all__ = ["RuntimeMetrics"]

_QUEUE_BUCKETS = tuple(10.0 ** e for e in range(-8, 4))  # controller-runtime: ExponentialBuckets(10e-9, 10, 12)
_RECONCILE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
                      1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50,
                      60)


class _QueueHooks:
    """``QueueMetrics`` for one controller's queue."""

    def __init__(self, metrics: RuntimeMetrics, name: str) -> None:
        self._m = metrics
        self._name = name

    def added(self, depth: int) -> None:
        self._m.queue_adds.labels(name=self._name, controller=self._name).inc()
        self._m.queue_depth.labels(name=self._name, controller=self._name).set(depth)

    def started(self, depth: int, waited_seconds: float) -> None:
        self._m.queue_depth.labels(name=self._name, controller=self._name).set(depth)
        self._m.queue_duration.labels(name=self._name, controller=self._name).observe(waited_seconds)

    def finished(self, worked_seconds: float) -> None:
        self._m.work_duration.labels(name=self._name, controller=self._name).observe(worked_seconds)

    def retried(self) -> None:
        self._m.queue_retries.labels(name=self._name, controller=self._name).inc()


class _PlanSamples(Collector):
    """Exports a ``MetricsRegistry`` (what the controllers' plans reported) in Prometheus form."""

    def __init__(self, registry: MetricsRegistry) -> None:
        self.registry = registry

    def collect(self) -> Iterator[Metric]:
        families: dict[str, tuple[Metric, tuple[str, ...]]] = {}

        def family(name: str, labels: tuple[tuple[str, str], ...], make: type) -> Metric | None:
            keys = tuple(k for k, _ in labels)
            if name not in families:
                families[name] = (make(name, name, labels=list(keys)), keys)
            fam, wanted = families[name]
            return fam if keys == wanted else None  # one label set per family, as Prometheus requires

        for (name, labels), value in sorted(self.registry.gauges.items()):
            if (fam := family(name, labels, GaugeMetricFamily)) is not None:
                fam.add_metric([v for _, v in labels], value)  # type: ignore[attr-defined]
        for (name, labels), value in sorted(self.registry.counters.items()):
            if (fam := family(name, labels, CounterMetricFamily)) is not None:
                fam.add_metric([v for _, v in labels], value)  # type: ignore[attr-defined]
        for (name, labels), hist in sorted(self.registry.histograms.items()):
            if (fam := family(name, labels, HistogramMetricFamily)) is not None:
                cumulative = [("+Inf" if b == float("inf") else f"{b:g}", float(c))
                              for b, c in zip(DURATION_BUCKETS, hist.buckets, strict=True)]
                fam.add_metric([v for _, v in labels], cumulative, hist.total)  # type: ignore[attr-defined]
        yield from (fam for fam, _ in families.values())


class _EventCounts(Collector):
    def __init__(self, sent: Callable[[], int], dropped: Callable[[], int]) -> None:
        self.sent = sent
        self.dropped = dropped

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily("rollwise_events_sent", "Events written to the API server (a count patch counts "
                                  "each event it adds)", value=self.sent())
        yield CounterMetricFamily("rollwise_events_dropped", "Events given up: spam, a full queue, or every try "
                                  "failed", value=self.dropped())


class RuntimeMetrics:
    def __init__(self, *, plan_samples: MetricsRegistry | None = None) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        q = ["name", "controller"]
        self.queue_depth = Gauge("workqueue_depth", "Current depth of workqueue", q, registry=r)
        self.queue_adds = Counter("workqueue_adds", "Total number of adds handled by workqueue", q, registry=r)
        self.queue_duration = Histogram("workqueue_queue_duration_seconds",
                                        "How long in seconds an item stays in workqueue before being requested", q,
                                        buckets=_QUEUE_BUCKETS, registry=r)
        self.work_duration = Histogram("workqueue_work_duration_seconds",
                                       "How long in seconds processing an item from workqueue takes", q,
                                       buckets=_QUEUE_BUCKETS, registry=r)
        self.queue_retries = Counter("workqueue_retries", "Total number of retries handled by workqueue", q,
                                     registry=r)
        self.unfinished = Gauge("workqueue_unfinished_work_seconds",
                                "How many seconds of work has been done that is in progress", q, registry=r)
        self.longest = Gauge("workqueue_longest_running_processor_seconds",
                             "How many seconds has the longest running processor been running", q, registry=r)
        c = ["controller"]
        self.reconcile_total = Counter("controller_runtime_reconcile", "Total number of reconciliations per "
                                       "controller", [*c, "result"], registry=r)
        self.reconcile_errors = Counter("controller_runtime_reconcile_errors", "Total number of reconciliation "
                                        "errors per controller", c, registry=r)
        self.reconcile_time = Histogram("controller_runtime_reconcile_time_seconds", "Length of time per "
                                        "reconciliation per controller", c, buckets=_RECONCILE_BUCKETS, registry=r)
        self.leader = Gauge("leader_election_master_status", "Gauge of if the reporting system is master of the "
                            "relevant lease, 0 indicates backup, 1 indicates master.", ["name"], registry=r)
        self.stale_skips = Counter("rollwise_stale_sync_skips", "Reconciles skipped because the informer cache "
                                   "had not yet seen this controller's own writes (KEP-5647)", c, registry=r)
        self.plan_samples = plan_samples or MetricsRegistry()
        r.register(_PlanSamples(self.plan_samples))

    def count_events(self, sent: Callable[[], int], dropped: Callable[[], int]) -> None:
        """Export the event recorder's running counts (read at each scrape)."""
        self.registry.register(_EventCounts(sent, dropped))

    def queue_hooks(self, controller: str) -> _QueueHooks:
        return _QueueHooks(self, controller)

    def track_in_flight(self, controller: str, started: Callable[[], list[float]], now: float) -> None:
        """Refresh the unfinished-work and longest-running gauges from the queue's in-flight start times."""
        times = started()
        self.unfinished.labels(name=controller, controller=controller).set(sum(now - t for t in times))
        self.longest.labels(name=controller, controller=controller).set(max((now - t for t in times), default=0.0))
