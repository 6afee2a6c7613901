"""An application's drain agent for pre-delete hooks, in the simulator (api/lifecycle.py, issue 28).

rollwise cannot know when an application has drained a pod: its own agent says so by removing the hook's labels
and finalizers once the controller has marked the pod ``PreparingDelete``. A scenario models that agent with
``kubelet.hookReleaseSeconds`` (or per image, ``images[IMAGE].hookReleaseSeconds``): this long after the mark, the
agent releases the hook. Without either, nothing releases a hook by itself; a ``releaseHook`` step does, as a person
(or an agent) with kubectl would.
"""

from __future__ import annotations

from collections.abc import Callable

from rollwise.api.errors import ApiStatusError, NotFound
from rollwise.api.lifecycle import is_preparing_delete, marked_at, pre_delete_hook, release_patch
from rollwise.api.meta import Obj, controller_of, uid_of
from rollwise.cluster.protocol import Change, Cluster
from rollwise.runtime.clock import Clock, TimerHandle
from rollwise.runtime.setkeys import find_set

__all__ = ["DRAIN_AGENT", "HookAgent", "release_hook"]

DRAIN_AGENT = "drain-agent"
"""The actor of the agent's writes."""


def release_hook(cluster: Cluster, namespace: str, name: str, *, actor: str) -> bool:
    """Remove the pre-delete hook's labels and finalizers from the pod (its owner set's hook); False when there was
    nothing to remove. NotFound: no such pod."""
    pod = cluster.get("Pod", namespace, name)
    ref = controller_of(pod)
    if ref is None or ref.get("kind") != "StatefulSet":
        return False
    try:
        sts = find_set(cluster, namespace, str(ref.get("name")))
    except NotFound:
        return False
    patch = release_patch(pre_delete_hook(sts), pod)
    if patch is None:
        return False
    cluster.patch("Pod", namespace, name, patch, actor=actor)
    return True


class HookAgent:
    """Releases each marked pod's hook ``delay(pod)`` seconds after its mark (None: never by itself)."""

    def __init__(self, cluster: Cluster, clock: Clock, delay: Callable[[Obj], float | None]) -> None:
        self.cluster = cluster
        self.clock = clock
        self.delay = delay
        self._timers: dict[str, TimerHandle] = {}

    def pod_changed(self, ch: Change) -> None:
        pod = ch.obj
        uid = uid_of(pod)
        if ch.type == "DELETED":
            timer = self._timers.pop(uid, None)
            if timer is not None:
                timer.cancel()
            return
        if uid in self._timers or not is_preparing_delete(pod) or pod["metadata"].get("deletionTimestamp"):
            return
        seconds = self.delay(pod)
        if seconds is None:
            return
        now = self.clock.now()
        at = max(now, (marked_at(pod) or now) + seconds)
        self._timers[uid] = self.clock.call_at(at, self._release, uid, ch.namespace, ch.name)

    def _release(self, uid: str, namespace: str, name: str) -> None:
        self._timers.pop(uid, None)
        try:
            if uid_of(self.cluster.get("Pod", namespace, name)) == uid:
                release_hook(self.cluster, namespace, name, actor=DRAIN_AGENT)
        except ApiStatusError:
            return  # gone or changed meanwhile: a pod made again is marked (and released) afresh
