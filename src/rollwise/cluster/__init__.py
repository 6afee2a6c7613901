"""The world: the resource table, the memory store (with watches, admission, persistence and garbage collection)
and the wire codec. Modules: ``resources``, ``memory``, ``watch``, ``selectors``, ``admission``, ``wire``,
``persistence``, ``preconditions``, ``deletion``, ``gc``, ``feed``, ``pump``, ``storage``, ``protocol``."""

from rollwise.cluster.admission import Admission
from rollwise.cluster.memory import MemoryCluster
from rollwise.cluster.protocol import Change, Cluster
from rollwise.cluster.resources import GroupKind, Resource, ResourceTable
from rollwise.cluster.selectors import parse_field_selector, parse_label_selector
from rollwise.cluster.watch import Watch, WatchEvent
from rollwise.cluster.wire import decode, encode

__all__ = [
    "Admission",
    "Change",
    "Cluster",
    "GroupKind",
    "MemoryCluster",
    "Resource",
    "ResourceTable",
    "Watch",
    "WatchEvent",
    "decode",
    "encode",
    "parse_field_selector",
    "parse_label_selector",
]
