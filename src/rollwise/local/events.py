"""The Events ``rollwise up`` writes for what its simulated world does, in the words a cluster's components use, so
``kubectl describe`` and ``kubectl get events`` read as they would on a cluster.

- ``KubeletEvents``: what a scheduler and a kubelet say about a pod (Scheduled, Pulling, Started, BackOff,
  Unhealthy, Killing, ...), for the simulated kubelet's pods and the process runtime's alike;
- ``quorum_event``: a quorum model's event (``kubelet/quorum_binding.py``) as an Event on the set, from the member's
  heartbeat (``LEASE_WRITER``): elections show in ``kubectl get events``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rollwise.api.meta import Obj, name_of, namespace_of, uid_of
from rollwise.api.scheduling import GATED_REASON, unscheduled
from rollwise.kubelet.agent import Note
from rollwise.kubelet.loop import KUBELET
from rollwise.kubelet.quorum import LEADER_CHANGED, QUORUM_LOST, QuorumEvent
from rollwise.runtime.execute import ControllerEvent

__all__ = ["KubeletEvents", "quorum_event"]


def quorum_event(event: QuorumEvent) -> ControllerEvent:
    if event.type == QUORUM_LOST:
        return ControllerEvent(event_type="Warning", reason=event.type,
                               message="fewer than a majority of the members are running: no quorum")
    if event.type == LEADER_CHANGED:
        return ControllerEvent(event_type="Normal", reason=event.type,
                               message=f"{event.pod} is the leader" if event.pod else "no member leads")
    return ControllerEvent(event_type="Normal", reason=event.type, message="a majority of the members runs again")


@dataclass(slots=True)
class _Told:
    """What was already said about one pod: its scheduling, and that its containers are being stopped."""

    scheduled: bool = False
    killing: bool = False
    unschedulable: str = ""
    """The FailedScheduling message last written (a pod no node takes: api/scheduling.py)."""


class KubeletEvents:
    """The Events a scheduler and a kubelet write about a pod (``kubectl describe pod`` shows them), from what each
    look at the pod saw happen (``kubelet.agent.Note``): the simulated kubelet's looks (``kubelet/loop.py``'s
    ``notes`` hook) and the process runtime's (``local/processes.py``). ``record(pod, event, component)`` writes
    one."""

    def __init__(self, record: Callable[[Obj, ControllerEvent, str], None]) -> None:
        self.record = record
        self._told: dict[str, _Told] = {}

    def forget(self, uid: str) -> None:
        """The pod is gone."""
        self._told.pop(uid, None)

    def __call__(self, pod: Obj, notes: tuple[Note, ...]) -> None:
        told = self._told.setdefault(uid_of(pod), _Told())
        images = {str(c.get("name")): str(c.get("image")) for c in (pod.get("spec") or {}).get("containers") or ()}
        out: list[tuple[str, ControllerEvent]] = []
        if unscheduled(pod):
            # kube-scheduler's Warning, once per message; nothing is scheduled, pulled or started yet.
            condition = next(c for c in pod["status"]["conditions"]
                             if isinstance(c, dict) and c.get("type") == "PodScheduled")
            message = str(condition.get("message") or "")
            # A gated pod is never tried, so kube-scheduler says nothing of it (KEP-3521).
            if message != told.unschedulable and condition.get("reason") != GATED_REASON:
                told.unschedulable = message
                self.record(pod, ControllerEvent(event_type="Warning", reason="FailedScheduling", message=message),
                            "default-scheduler")
            return
        if not told.scheduled and not (pod.get("status") or {}).get("containerStatuses"):
            told.scheduled = True
            node = (pod.get("spec") or {}).get("nodeName") or "rollwise-node"
            out.append(("default-scheduler", ControllerEvent(
                event_type="Normal", reason="Scheduled",
                message=f"Successfully assigned {namespace_of(pod)}/{name_of(pod)} to {node}")))
        for note in notes:
            out.extend((KUBELET, event) for event in _note_events(pod, note, images))
        if (pod.get("metadata") or {}).get("deletionTimestamp") is not None and not told.killing:
            told.killing = True
            for container in images:
                out.append((KUBELET, ControllerEvent(event_type="Normal", reason="Killing",
                                                     message=f"Stopping container {container}")))
        for component, ev in out:
            self.record(pod, ev, component)


def _note_events(pod: Obj, note: Note, images: dict[str, str]) -> list[ControllerEvent]:
    name = note.container or ""
    image = images.get(name, "")
    if note.type == "ContainerWaiting" and note.reason == "ContainerCreating":
        return [ControllerEvent(event_type="Normal", reason="Pulling", message=f'Pulling image "{image}"')]
    if note.type == "ContainerWaiting" and note.reason == "ErrImagePull":
        return [ControllerEvent(event_type="Warning", reason="Failed",
                                message=f'Failed to pull image "{image}": not found')]
    if note.type == "ContainerWaiting" and note.reason == "ImagePullBackOff":
        return [ControllerEvent(event_type="Normal", reason="BackOff", message=f'Back-off pulling image "{image}"')]
    if note.type == "ContainerWaiting" and note.reason == "CrashLoopBackOff":
        return [ControllerEvent(event_type="Warning", reason="BackOff",
                                message=f"Back-off restarting failed container {name} in pod {name_of(pod)}")]
    if note.type == "PodRunning":
        out = []
        for container, img in images.items():
            out.append(ControllerEvent(event_type="Normal", reason="Pulled",
                                       message=f'Container image "{img}" already present'))
            out.append(ControllerEvent(event_type="Normal", reason="Started", message=f"Started container {container}"))
        return out
    if note.type == "PodNotReady":
        return [ControllerEvent(event_type="Warning", reason="Unhealthy", message="Readiness probe failed")]
    return []
