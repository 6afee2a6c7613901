"""A pod's connect subresources: ``exec``, ``attach`` and ``portforward``.

On a cluster these are upgraded connections (websocket ``v5.channel.k8s.io`` or SPDY) proxied to the kubelet,
which runs the command in the container. Under ``up`` most pods run in the simulated kubelet: their containers are
states in a table, with no process to run a command in, attach to or forward a port to. Such a request gets a
``Status`` that says so (400 BadRequest, as a kubelet answers for a container it cannot reach), never a bare 404,
so `kubectl exec` prints why. A pod run as a real process (``--process-images``) is handed to ``cfg.pod_connect``
when the runtime provides one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from rollwise.api.errors import BadRequest, NotFound
from rollwise.api.meta import name_of, namespace_of
from rollwise.apiserver.serving.config import ServerConfig
from rollwise.apiserver.serving.exec_stream import exec_websocket
from rollwise.apiserver.storage.store import ApiStore
from rollwise.cluster.resources import POD

__all__ = ["CONNECT_SUBRESOURCES", "connect", "process_connect"]

CONNECT_SUBRESOURCES = ("exec", "attach", "portforward")
_WHAT = {"exec": "run a command in", "attach": "attach to", "portforward": "forward a port to"}


async def connect(request: web.Request, store: ApiStore, cfg: ServerConfig, namespace: str, name: str,
                  sub: str) -> web.StreamResponse:
    try:
        pod = store.cluster.get(POD, namespace, name)
    except NotFound:
        raise NotFound(f'pods "{name}" not found') from None
    if cfg.pod_connect is not None:
        handled = await cfg.pod_connect(request, pod, sub)
        if isinstance(handled, web.StreamResponse):
            return handled
    containers = [str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or ()]
    container = request.query.get("container") or (containers[0] if containers else "")
    if container and containers and container not in containers:
        raise BadRequest(f"container {container} is not valid for pod {name}")
    raise BadRequest(
        f'cannot {_WHAT[sub]} pod "{name}": its containers are simulated by rollwise up\'s kubelet and have no '
        f"process (container {container!r} is a state, not a running program); only the pods whose image matches "
        "`rollwise up --process-images` run as real processes")


ExecContext = Callable[[str, str], tuple[dict[str, str], Path] | None]


def process_connect(context: ExecContext) -> Callable[[web.Request, Any, str], Awaitable[web.StreamResponse | None]]:
    """``ServerConfig.pod_connect`` for the process runtime: ``exec`` into a pod it runs (``context`` gives the
    member's environment and directory); None for any other pod, which ``connect`` then answers."""

    async def handle(request: web.Request, pod: Any, sub: str) -> web.StreamResponse | None:
        found = context(namespace_of(pod), name_of(pod))
        if found is None:
            return None
        if sub != "exec":
            raise BadRequest(f'cannot {_WHAT[sub]} pod "{name_of(pod)}": rollwise up runs this member as a local '
                             "process and serves exec into it, not attach or port-forward; its client URL is in "
                             "the pod's ETCDCTL_ENDPOINTS (`kubectl exec POD -- env`)")
        argv = request.query.getall("command", [])
        if not argv:
            raise BadRequest("you must specify at least one command for the container")
        if request.headers.get("Upgrade", "").lower() != "websocket":
            raise BadRequest("exec into a process pod needs a websocket upgrade (v5.channel.k8s.io); rollwise up "
                             "does not serve SPDY")
        env, cwd = found
        return await exec_websocket(request, argv, env=env, cwd=cwd)

    return handle
