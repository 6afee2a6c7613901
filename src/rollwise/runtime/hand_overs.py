"""The hand-over's driver half where the store's own API moves leadership (``rollwise.dev/leader-transfer:
patroni``): rollwise answers its own request, with no agent beside the member.

The quorum-aware controller asks for a hand-over by annotating the leader's pod (``api/leader_transfer.py``). For a
Patroni set, the driver that runs the controller (runtime/reconciler.py, in ``up`` and the operator)
finds that request in the set's view and sends Patroni's switchover to the leader's pod:
``POST <scheme>://<pod IP>:<probe port>/switchover`` with ``{"leader": <pod>, "candidate": <target>}`` (Patroni's
REST API docs, "Switchover and failover endpoints"; ``patronictl switchover`` sends the same). Patroni member names
are pod names, as Spilo and the Patroni Kubernetes examples set them.

Once per request (the pod's uid, the target, the request's time): a reconcile that sees the same request again
sends nothing. Each switchover runs on a thread of its own, since Patroni answers only once the candidate leads
(seconds), and neither the event loop nor the reconcile should wait for that; the controller learns the outcome
from the role probe (the old primary's ``/leader`` turns 503), and its transfer timeout bounds a refused or lost
switchover as it bounds an agent that never answers.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from rollwise.api.leader_transfer import requested_at, transfer_target
from rollwise.api.meta import Obj, deletion_timestamp, name_of, namespace_of, uid_of
from rollwise.controllers.quorum.settings import PATRONI, handed_to_quorum, read_settings
from rollwise.controllers.view import SetView
from rollwise.runtime.role_probes import Address, http_call, pod_ip_address

__all__ = ["HandOvers", "Switchover"]

log = logging.getLogger("rollwise.hand_overs")

SWITCHOVER_PATH = "/switchover"
SWITCHOVER_TIMEOUT = 30.0  # Patroni answers once the candidate leads: a demotion, then a promotion


@dataclass(frozen=True, slots=True, kw_only=True)
class Switchover:
    """One switchover sent: to whom, and what came back (``status`` None: no answer, ``error`` says why)."""

    namespace: str
    leader: str
    candidate: str
    status: int | None
    body: str
    error: str | None


Call = Callable[..., tuple[int | None, bytes, str | None]]


class HandOvers:
    def __init__(self, *, address: Address = pod_ip_address, call: Call = http_call,
                 timeout: float = SWITCHOVER_TIMEOUT) -> None:
        self._address, self._call, self._timeout = address, call, timeout
        self._asked: set[tuple[str, str, float | None]] = set()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self.sent: list[Switchover] = []
        """Every switchover sent and its answer, in the order they came back (tests and logs read it)."""

    def answer(self, view: SetView) -> int:
        """Send the switchover each pending request of ``view``'s set asks for; how many were started now."""
        sts = view.set
        if not handed_to_quorum(sts):
            return 0
        settings = read_settings(sts)[0]
        if settings.hand_over != PATRONI or settings.probe is None:
            return 0
        started = 0
        for pod in view.pods:
            target = transfer_target(pod)
            if target is None or deletion_timestamp(pod) is not None:
                continue
            key = (uid_of(pod), target, requested_at(pod))
            where = self._address(pod, settings.probe.port)
            with self._lock:
                if key in self._asked or where is None:
                    continue  # asked already; or no pod IP yet, and the next reconcile looks again
                self._asked.add(key)
            thread = threading.Thread(target=self._switchover, args=(pod, target, where, settings.probe.scheme),
                                      daemon=True, name=f"switchover-{name_of(pod)}")
            thread.start()
            with self._lock:
                self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            started += 1
        return started

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the switchovers in flight (tests; a driver never waits)."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout)

    def _switchover(self, pod: Obj, target: str, where: tuple[str, int], scheme: str) -> None:
        body = json.dumps({"leader": name_of(pod), "candidate": target}).encode()
        status, answer, error = self._call(where[0], where[1], scheme, "POST", SWITCHOVER_PATH,
                                           timeout=self._timeout, body=body)
        done = Switchover(namespace=namespace_of(pod), leader=name_of(pod), candidate=target, status=status,
                          body=answer.decode(errors="replace").strip()[:200], error=error)
        with self._lock:
            self.sent.append(done)
        if status == 200:
            log.info("switchover of %s/%s to %s: %s", done.namespace, done.leader, target, done.body)
        else:
            # Not the leader any more, the candidate not healthy, no answer: the controller's timeout bounds it.
            log.warning("switchover of %s/%s to %s refused or unanswered: %s", done.namespace, done.leader, target,
                        error or f"{status} {done.body}")
