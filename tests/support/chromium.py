"""Headless Debian Chromium driven over the DevTools protocol (a small client on aiohttp's websockets): open a
page, read its DOM text, wait for a change, take a screenshot. Chromium runs with its own profile directory and
is killed by pid at the end."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp

DEADLINE = 60.0
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--remote-debugging-port=0", "--remote-allow-origins=*"]


def find_chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Page:
    def __init__(self, ws: aiohttp.ClientWebSocketResponse, session: str) -> None:
        self.ws = ws
        self.session = session
        self._ids = itertools.count(1000)

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        return await _call(self.ws, self._ids, method, params, session=self.session)

    async def evaluate(self, expression: str) -> Any:
        reply = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return reply.get("result", {}).get("value")

    async def text(self, selector: str = "body") -> str:
        return str(await self.evaluate(f"(document.querySelector({json.dumps(selector)}) || {{}}).innerText || ''"))

    async def wait_for(self, predicate: Callable[[str], bool], what: str, selector: str = "body") -> str:
        """The element's text once ``predicate`` holds (checked every 50 ms), else AssertionError with the text."""
        loop = asyncio.get_running_loop()
        end = loop.time() + DEADLINE
        text = ""
        while loop.time() < end:
            text = await self.text(selector)
            if predicate(text):
                return text
            await asyncio.sleep(0.05)
        raise AssertionError(f"not within {DEADLINE} s: {what}; the page shows:\n{text}")

    async def screenshot(self, path: Path) -> None:
        reply = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        path.write_bytes(base64.b64decode(reply["data"]))


async def _call(ws: aiohttp.ClientWebSocketResponse, ids: itertools.count[int], method: str, params: dict[str, Any],
                *, session: str | None = None) -> dict[str, Any]:
    ident = next(ids)
    message: dict[str, Any] = {"id": ident, "method": method, "params": params}
    if session:
        message["sessionId"] = session
    await ws.send_str(json.dumps(message))
    while True:
        raw = await asyncio.wait_for(ws.receive(), DEADLINE)
        if raw.type != aiohttp.WSMsgType.TEXT:
            raise AssertionError(f"DevTools connection closed during {method}")
        reply = json.loads(raw.data)
        if reply.get("id") == ident:
            if "error" in reply:
                raise AssertionError(f"{method}: {reply['error']}")
            return reply.get("result") or {}


@contextlib.asynccontextmanager
async def chromium(url: str, *, width: int = 1280, height: int = 900) -> AsyncIterator[Page]:
    """A page at ``url`` in a fresh headless Chromium."""
    binary = find_chromium()
    assert binary is not None
    profile = tempfile.mkdtemp(prefix="rollwise-chromium-")
    proc = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = Path(profile) / "DevToolsActivePort"
        loop = asyncio.get_running_loop()
        end = loop.time() + DEADLINE
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            assert loop.time() < end and proc.poll() is None, "chromium did not start its DevTools endpoint"
            await asyncio.sleep(0.05)
        port, path = port_file.read_text().split("\n")[:2]
        async with aiohttp.ClientSession() as http, http.ws_connect(f"ws://127.0.0.1:{port}{path}",
                                                                    max_msg_size=64 << 20) as ws:
            ids = itertools.count(1)
            target = await _call(ws, ids, "Target.createTarget", {"url": "about:blank"})
            attached = await _call(ws, ids, "Target.attachToTarget", {"targetId": target["targetId"],
                                                                       "flatten": True})
            page = Page(ws, attached["sessionId"])
            await page.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
                            deviceScaleFactor=1, mobile=False)
            await page.send("Page.enable")
            await page.send("Page.navigate", url=url)
            yield page
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
