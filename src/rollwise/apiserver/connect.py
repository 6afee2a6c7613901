"""A pod's connect subresources: ``exec``, ``attach`` and ``portforward``.

On a cluster these are upgraded connections (websocket ``v5.channel.k8s.io`` or SPDY) proxied to the kubelet,
which runs the command in the container. Under ``up`` most pods run in the simulated kubelet: their containers are
states in a table, with no process to run a command in, attach to or forward a port to. Such a request gets a
``Status`` that says so (400 BadRequest, as a kubelet answers for a container it cannot reach), never a bare 404,
so `kubectl exec` prints why. A pod run as a real process (``--process-images``) is handed to ``cfg.pod_connect``
when the runtime provides one.
"""

from __future__ import annotations

from aiohttp import web

from rollwise.api.errors import BadRequest, NotFound
from rollwise.apiserver.config import ServerConfig
from rollwise.apiserver.store import ApiStore
from rollwise.cluster.resources import POD

__all__ = ["CONNECT_SUBRESOURCES", "connect"]

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
