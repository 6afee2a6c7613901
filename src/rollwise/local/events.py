"""The Events ``rollwise up`` writes for what its simulated world does, in the words a cluster's components use, so
``kubectl describe`` and ``kubectl get events`` read as they would on a cluster.

- ``quorum_event``: a quorum model's event (``runtime/quorum_app.py``) as an Event on the set, from the member's
  heartbeat (``LEASE_WRITER``): elections show in ``kubectl get events``.
"""

from __future__ import annotations

from rollwise.kubelet.quorum import LEADER_CHANGED, QUORUM_LOST, QuorumEvent
from rollwise.runtime.execute import ControllerEvent

__all__ = ["quorum_event"]


def quorum_event(event: QuorumEvent) -> ControllerEvent:
    if event.type == QUORUM_LOST:
        return ControllerEvent(event_type="Warning", reason=event.type,
                               message="fewer than a majority of the members are running: no quorum")
    if event.type == LEADER_CHANGED:
        return ControllerEvent(event_type="Normal", reason=event.type,
                               message=f"{event.pod} is the leader" if event.pod else "no member leads")
    return ControllerEvent(event_type="Normal", reason=event.type, message="a majority of the members runs again")

