"""``exec`` into a pod run as a real process, over the websocket protocol kubectl speaks (``v5.channel.k8s.io``,
``v4.channel.k8s.io``; kubectl-wire.md).

Every websocket message is binary: its first byte is the channel (0 stdin, 1 stdout, 2 stderr, 3 the error
channel, 4 terminal resize; v5 adds 255, "close this channel", which ends stdin). The command's exit is reported
on channel 3 as a ``Status``: ``Success``, or ``Failure`` with reason ``NonZeroExitCode`` and the code in
``details.causes``, as the kubelet reports it; then the socket closes. The command runs on this machine, in the
member's environment and directory (``ProcessRuntime.exec_context``), as the user who started `up`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

from aiohttp import WSMsgType, web

from rollwise.apiserver.serving.http import bool_flag

__all__ = ["PROTOCOLS", "exec_websocket"]

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
_STDIN, _STDOUT, _STDERR, _ERROR, _CLOSE = 0, 1, 2, 3, 255


def _status(code: int | None, failure: str = "") -> bytes:
    if code == 0 and not failure:
        body: dict[str, object] = {"metadata": {}, "status": "Success"}
    elif failure:
        body = {"metadata": {}, "status": "Failure", "message": failure, "reason": "InternalError"}
    else:
        body = {"metadata": {}, "status": "Failure",
                "message": f"command terminated with non-zero exit code: exit status {code}",
                "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}
    return bytes([_ERROR]) + json.dumps(body).encode()


async def _pump(ws: web.WebSocketResponse, stream: asyncio.StreamReader | None, channel: int) -> None:
    if stream is None:
        return
    while chunk := await stream.read(32 * 1024):
        if ws.closed:
            return
        await ws.send_bytes(bytes([channel]) + chunk)


async def exec_websocket(request: web.Request, argv: list[str], *, env: dict[str, str],
                         cwd: Path) -> web.WebSocketResponse:
    ws = web.WebSocketResponse(protocols=PROTOCOLS)
    await ws.prepare(request)
    q = request.query
    want_stdin = bool_flag(q.get("stdin"))
    pipe = asyncio.subprocess.PIPE
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=pipe if want_stdin else asyncio.subprocess.DEVNULL,
            stdout=pipe if bool_flag(q.get("stdout", "true")) else asyncio.subprocess.DEVNULL,
            stderr=pipe if bool_flag(q.get("stderr", "true")) else asyncio.subprocess.DEVNULL,
            env=env, cwd=str(cwd))
    except OSError as err:
        await ws.send_bytes(_status(None, f'exec failed: unable to start process: exec: "{argv[0]}": {err.strerror}'))
        await ws.close()
        return ws

    async def feed() -> None:
        async for msg in ws:
            if msg.type != WSMsgType.BINARY or not msg.data or proc.stdin is None:
                continue
            channel, data = msg.data[0], msg.data[1:]
            if channel == _STDIN and data:
                proc.stdin.write(data)
                with contextlib.suppress(ConnectionError):
                    await proc.stdin.drain()
            elif channel == _CLOSE and data[:1] == bytes([_STDIN]):
                proc.stdin.close()

    reader = asyncio.create_task(feed())
    try:
        await asyncio.gather(_pump(ws, proc.stdout, _STDOUT), _pump(ws, proc.stderr, _STDERR))
        code = await proc.wait()
        if not ws.closed:
            await ws.send_bytes(_status(code))
    finally:
        reader.cancel()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await ws.close()
    return ws
