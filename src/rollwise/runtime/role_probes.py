"""The role probe's driver half: GET each member pod of a quorum-aware set that has a role probe
(``api/role_probe.py``), keep each answer with the time it came, and hand the answers to the controller's view.

The controller never probes (it does no I/O); ``answers(view)`` runs before the quorum-aware controller decides, in
``up`` and in the operator (runtime/reconciler.py; the operator off its event loop). Members are asked at once,
each GET bounded by ``timeoutSeconds``, so one reconcile waits at most one timeout. An answer younger than
``min_interval`` is reused, so a burst of pod events does not become a burst of GETs; an answer is kept per pod uid,
so a recreated pod never inherits its predecessor's word.

Where a member is reached: ``status.podIP`` and the probe's port, as a kubelet's httpGet probe reaches a pod. A
driver whose pods are not where their IP says (``up``'s process runtime listens on 127.0.0.1 with ports of its own)
passes its own ``address``.
"""

from __future__ import annotations

import http.client
import ssl
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor

from rollwise.api.identity import parent_and_ordinal
from rollwise.api.meta import Obj, name_of, namespace_of, uid_of
from rollwise.api.predicates import status_of
from rollwise.api.role_probe import ProbeAnswer, RoleProbe
from rollwise.controllers.quorum.settings import handed_to_quorum, read_settings
from rollwise.controllers.view import SetView

__all__ = ["MAX_BODY", "Address", "RoleProbes", "http_call", "http_get", "pod_ip_address"]

MAX_BODY = 1 << 20
"""Bytes of an answer read at most: a role is in the first kilobytes; a larger body is cut (and is then garbage)."""

Address = Callable[[Obj, int], tuple[str, int] | None]
"""``address(pod, port)``: where to reach the member's port, or None when it cannot be reached yet."""


def pod_ip_address(pod: Obj, port: int) -> tuple[str, int] | None:
    """``status.podIP`` and the port, as a kubelet reaches a pod for an httpGet probe."""
    ip = status_of(pod).get("podIP")
    return (str(ip), port) if ip else None


def http_get(host: str, port: int, probe: RoleProbe) -> tuple[int | None, bytes, str | None]:
    """One GET: (status, body, None) for an HTTP answer, (None, b"", why) for none. HTTPS skips verification, as a
    kubelet's probe does (members present self-signed certificates)."""
    return http_call(host, port, probe.scheme, "GET", probe.path, timeout=probe.timeout_seconds)


def http_call(host: str, port: int, scheme: str, method: str, path: str, *, timeout: float,
              body: bytes | None = None) -> tuple[int | None, bytes, str | None]:
    """One request to a member's port, as ``http_get`` sends it (a JSON ``body`` for a POST)."""
    conn: http.client.HTTPConnection
    if scheme == "HTTPS":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
    headers = {"Accept": "application/json", "User-Agent": "rollwise-role-probe"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read(MAX_BODY), None
    except TimeoutError:
        return None, b"", f"timed out after {timeout:g}s"
    except ConnectionRefusedError:
        return None, b"", "connection refused"
    except http.client.HTTPException as err:
        return None, b"", f"not an HTTP answer ({type(err).__name__})"
    except OSError as err:
        return None, b"", f"{type(err).__name__}: {err.strerror or err}"
    finally:
        conn.close()


Get = Callable[[str, int, RoleProbe], tuple[int | None, bytes, str | None]]


class RoleProbes:
    """Answers of the member pods of role-probed sets, kept with their time (``clock``, the driver's)."""

    def __init__(self, clock: Callable[[], float], *, address: Address = pod_ip_address, get: Get = http_get,
                 min_interval: float = 1.0) -> None:
        self._clock = clock
        self._address = address
        self._get = get
        self.min_interval = min_interval
        self._answers: dict[tuple[str, str], dict[str, tuple[str, ProbeAnswer]]] = {}
        """(namespace, set) -> pod name -> (pod uid, its last answer)."""
        self._lock = threading.Lock()
        self.gets = 0
        """How many GETs were sent (tests read it)."""

    def answers(self, view: SetView) -> Mapping[str, ProbeAnswer]:
        """The last answer of each member pod of ``view``'s set, by pod name, asking those whose answer is older
        than ``min_interval``; empty for a set that is not quorum-aware or has no valid probe."""
        sts = view.set
        if not handed_to_quorum(sts):
            return {}
        probe = read_settings(sts)[0].probe
        if probe is None:
            return {}
        members = [pod for pod in view.pods if parent_and_ordinal(name_of(pod))[0] == name_of(sts)]
        now = self._clock()
        with self._lock:
            last = self._answers.get((namespace_of(sts), name_of(sts)), {})
        # Only the pods there now, each with an answer given by this very pod (uid): a recreated pod starts unheard.
        kept = {name_of(pod): last[name_of(pod)] for pod in members
                if name_of(pod) in last and last[name_of(pod)][0] == uid_of(pod)}
        due = [pod for pod in members
               if name_of(pod) not in kept or now - kept[name_of(pod)][1].at >= self.min_interval]
        if due:
            with ThreadPoolExecutor(max_workers=len(due), thread_name_prefix="role-probe") as pool:
                for pod, answer in zip(due, pool.map(lambda pod: self._ask(pod, probe), due), strict=True):
                    kept[name_of(pod)] = (uid_of(pod), answer)
        with self._lock:
            self._answers[(namespace_of(sts), name_of(sts))] = kept
        return {name: answer for name, (_, answer) in kept.items()}

    def _ask(self, pod: Obj, probe: RoleProbe) -> ProbeAnswer:
        where = self._address(pod, probe.port)
        if where is None:
            return ProbeAnswer(at=self._clock(), error="no address yet (no pod IP)")
        with self._lock:
            self.gets += 1
        status, body, error = self._get(where[0], where[1], probe)
        return ProbeAnswer(at=self._clock(), status=status, body=body, error=error)


