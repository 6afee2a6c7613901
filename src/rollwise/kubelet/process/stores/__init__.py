"""The stores whose members the process runtime runs as real processes, by image (``etcd:*``, ``zookeeper:*``,
``nats:*``): ``store_for(image)``."""

from rollwise.kubelet.process.stores.base import MemberTimings, RoleSample, Store, StoreError
from rollwise.kubelet.process.stores.etcd import EtcdStore, etcd_binary
from rollwise.kubelet.process.stores.nats import NatsStore
from rollwise.kubelet.process.stores.zookeeper import ZooKeeperStore

__all__ = ["STORES", "EtcdStore", "MemberTimings", "NatsStore", "RoleSample", "Store", "StoreError",
           "ZooKeeperStore", "etcd_binary", "store_for"]

STORES: dict[str, Store] = {s.name: s for s in (EtcdStore(), ZooKeeperStore(), NatsStore())}


def store_for(image: str) -> Store | None:
    """The store whose members run from ``image``; None for any other image."""
    return next((s for s in STORES.values() if s.runs(image)), None)
