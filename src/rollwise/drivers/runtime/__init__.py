"""The operator's runtime: informers, a rate-limited work queue, the KEP-5647 consistency check, Lease leader
election, an event recorder, metrics and probes — small, async, with the clock injected (operator-plan §1.3)."""

from rollwise.drivers.runtime.clock import Clock, VirtualClock, WallClock
from rollwise.drivers.runtime.consistency import ConsistencyStore, compare_resource_versions
from rollwise.drivers.runtime.controller import CacheBehind, Controller, NotLeader
from rollwise.drivers.runtime.election import LeaderElector, LeaseTimings
from rollwise.drivers.runtime.informer import Informer, ListResult, ListWatchSource, WatchEvent
from rollwise.drivers.runtime.metrics import RuntimeMetrics
from rollwise.drivers.runtime.queue import WorkQueue
from rollwise.drivers.runtime.recorder import EventRecorder
from rollwise.drivers.runtime.store import CacheReader, Store

__all__ = [
    "CacheBehind",
    "CacheReader",
    "Clock",
    "ConsistencyStore",
    "Controller",
    "EventRecorder",
    "Informer",
    "LeaderElector",
    "LeaseTimings",
    "ListResult",
    "ListWatchSource",
    "NotLeader",
    "RuntimeMetrics",
    "Store",
    "VirtualClock",
    "WallClock",
    "WatchEvent",
    "WorkQueue",
    "compare_resource_versions",
]
