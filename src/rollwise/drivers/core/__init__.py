"""The controller core every driver shares: the work queue, the event recorder and the StatefulSet controller's
reconcile of one key, over an injected clock (virtual in the simulator, wall in ``up`` and the operator)."""

from rollwise.drivers.core.controller import QUORUM_CONTROLLER, STATEFULSET_CONTROLLER, SetController
from rollwise.drivers.core.events import EventRecorder
from rollwise.drivers.core.queue import AsyncioScheduler, Scheduler, WorkQueue
from rollwise.drivers.core.routing import sets_to_wake

__all__ = ["QUORUM_CONTROLLER", "STATEFULSET_CONTROLLER", "AsyncioScheduler", "EventRecorder", "Scheduler",
           "SetController", "WorkQueue", "sets_to_wake"]
