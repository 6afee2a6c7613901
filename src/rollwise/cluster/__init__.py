"""The world: the ``Cluster`` protocol (``protocol``), the resource table (``resources``), the wire codec (``wire``),
the one loader (``documents``), and one sub-package per role: ``store`` (the in-memory store), ``client`` (the client
of a real API server) and ``crd`` (the CustomResourceDefinitions rollwise ships)."""

from rollwise.cluster.protocol import Change, Cluster
from rollwise.cluster.resources import GroupKind, Resource, ResourceTable
from rollwise.cluster.store.admission import Admission
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.cluster.store.selectors import parse_field_selector, parse_label_selector
from rollwise.cluster.store.watch import Watch, WatchEvent
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
