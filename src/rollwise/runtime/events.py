"""The event recorder: a controller's events become Kubernetes ``Event`` objects on the object they concern."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from rollwise.api.meta import Obj, name_of, namespace_of, uid_of
from rollwise.cluster.protocol import Cluster
from rollwise.runtime.execute import ControllerEvent

__all__ = ["ControllerEvents", "EventRecorder", "event_object"]


class ControllerEvents(Protocol):
    """Where a controller's events go: ``EventRecorder`` (the API), or the simulator's run record."""

    def record(self, obj: Obj, ev: ControllerEvent, component: str) -> None: ...


class EventRecorder:
    """Writes ``v1`` Events through the cluster, named ``<object>.<n>`` with ``n`` counting up per recorder; the
    involved object carries its apiVersion, so the built-in and the project's StatefulSet stay apart."""

    def __init__(self, cluster: Cluster, *, clock: Callable[[], float]) -> None:
        self._cluster = cluster
        self._clock = clock
        self._seq = 0

    def record(self, obj: Obj, ev: ControllerEvent, component: str) -> None:
        self._seq += 1
        self._cluster.create(event_object(obj, ev, component, seq=self._seq, at=self._clock()), actor=component,
                             handed_over=True)


def event_object(obj: Obj, ev: ControllerEvent, component: str, *, seq: int, at: float) -> Obj:
    """The ``v1`` Event for ``ev`` about ``obj``, named ``<object>.<seq>``."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name_of(obj)}.{seq}", "namespace": namespace_of(obj)},
        "involvedObject": {"apiVersion": obj.get("apiVersion", "apps/v1"), "kind": obj.get("kind", "StatefulSet"),
                           "name": name_of(obj), "namespace": namespace_of(obj), "uid": uid_of(obj)},
        "reason": ev.reason,
        "message": ev.message,
        "type": ev.event_type,
        "source": {"component": component},
        "firstTimestamp": at,
    }
