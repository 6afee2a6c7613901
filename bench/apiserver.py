"""API server throughput and latency, as a client sees them over TLS (the figures in docs/performance.md).

Starts ``rollwise up --ephemeral --port 0`` in a subprocess with the controllers and the kubelet off (only the
API is measured), creates pods through the API, then measures with ``aiohttp`` clients:

- GET of one pod, from ``--concurrency`` clients at once: requests/s, p50/p99 latency;
- LIST of every pod in the namespace (``--pods`` of them, 10,000 by default): p50/p99 latency (from sending the
  request to holding the last byte of the body) and body size;
- watch fan-out: ``--watchers`` watches on the pods, then ``--writes`` label patches; each event's delivery latency
  (from just before the write to its arrival at a watcher) as p50/p99, and events delivered per second.

Both measure the server, not this client: a list is read by a plain TLS socket into one buffer (aiohttp's client
took 10-15 ms of its own per 10 MB list); the watchers are spread over ``--watch-procs`` processes, and each
stream notes the time its bytes arrive before anything parses them (the events are parsed after the run). With
100 aiohttp streams in the writer's own process, each event's figure held the parsing of the streams served
before it, and the writes waited for that parsing too.

Run: `.venv/bin/python bench/apiserver.py [--pods N] [--watchers N] [--writes N] [--concurrency N]
[--watch-procs N] [--json] [--profile DIR]`. ``--json`` prints one JSON document instead of the table:
``{"create": {"req_per_s", "p50_ms", "p99_ms"}, "get": {...}, "list": {"p50_ms", "p99_ms", "bytes"}, "watch":
{"events_per_s", "p50_ms", "p99_ms"}}``; ``--profile DIR`` runs the server under cProfile and leaves up.prof in DIR.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import multiprocessing as mp
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import msgspec
import yaml

PODS = "/api/v1/namespaces/default/pods"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i:05d}", "labels": {"app": "bench"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}


async def _timed(session: aiohttp.ClientSession, method: str, url: str, **kw: Any) -> tuple[float, bytes]:
    start = time.perf_counter()
    async with session.request(method, url, **kw) as resp:
        body = await resp.read()
        if resp.status >= 300:
            raise RuntimeError(f"{method} {url}: {resp.status} {body[:200]!r}")
    return time.perf_counter() - start, body


def _figures(latencies: list[float], **more: float) -> dict[str, float]:
    return {**more, "p50_ms": round(_pct(latencies, .5) * 1e3, 3), "p99_ms": round(_pct(latencies, .99) * 1e3, 3)}


class _RawClient:
    """A blocking HTTP/1.1 client on one kept-alive TLS socket, reading a body into one preallocated buffer: the
    time of a request is the server's and the TLS decryption's, not a client library's."""

    def __init__(self, base: str, headers: dict[str, str], ctx: ssl.SSLContext) -> None:
        url = urlsplit(base)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 443
        self.sock = ctx.wrap_socket(socket.create_connection((self.host, self.port)), server_hostname=self.host)
        self.headers = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.buf = bytearray(1 << 20)

    def get(self, path: str) -> tuple[float, bytes]:
        start = time.perf_counter()
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n{self.headers}\r\n".encode())
        got = 0
        while (end := self.buf.find(b"\r\n\r\n", 0, got)) < 0:
            got += self._recv(got)
        head = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
        if not head[0].startswith("HTTP/1.1 200"):
            raise RuntimeError(f"GET {path}: {head[0]}")
        fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
        if "content-length" not in fields:
            raise RuntimeError(f"GET {path}: no Content-Length ({fields})")
        total = end + 4 + int(fields["content-length"])
        while got < total:
            got += self._recv(got)
        elapsed = time.perf_counter() - start
        body = bytes(self.buf[end + 4:total])
        if got > total:
            raise RuntimeError(f"GET {path}: {got - total} bytes after the body")
        return elapsed, body

    def _recv(self, at: int) -> int:
        if len(self.buf) - at < 1 << 18:
            self.buf.extend(bytes(len(self.buf)))  # double: a list is read with few copies
        n = self.sock.recv_into(memoryview(self.buf)[at:])
        if not n:
            raise RuntimeError("the server closed the connection")
        return n

    def close(self) -> None:
        self.sock.close()


class _Arrivals(asyncio.Protocol):
    """One watch stream's bytes, each piece with the time it arrived; nothing is parsed until the run is over."""

    def __init__(self) -> None:
        self.pieces: list[tuple[float, bytes]] = []

    def data_received(self, data: bytes) -> None:
        self.pieces.append((time.perf_counter(), data))

    def marks(self) -> dict[str, float]:
        """The first arrival of each mark: the time of the piece that completed the event's line."""
        out: dict[str, float] = {}
        raw = b""  # what arrived and is not yet taken apart
        lines = b""  # the chunks' data: NDJSON, one event a line
        head = False
        for at, data in self.pieces:
            raw += data
            if not head:
                if b"\r\n\r\n" not in raw:
                    continue
                status, _, raw = raw.partition(b"\r\n\r\n")
                if not status.startswith(b"HTTP/1.1 200") or b"chunked" not in status.lower():
                    raise RuntimeError(f"watch: {status[:200]!r}")
                head = True
            while (eol := raw.find(b"\r\n")) >= 0:  # whole chunks of the chunked encoding
                size = int(raw[:eol], 16)
                if len(raw) < eol + 2 + size + 2:
                    break
                lines += raw[eol + 2:eol + 2 + size]
                raw = raw[eol + 2 + size + 2:]
            *done, lines = lines.split(b"\n")
            for line in done:
                if line.strip():
                    ev = msgspec.json.decode(line)
                    mark = (ev["object"]["metadata"].get("labels") or {}).get("mark")
                    if mark is not None:
                        out.setdefault(mark, at)
        return out


def _watch_process(base: str, token: str, cadata: str, path: str, streams: int, pipe: Connection) -> None:
    ctx = ssl.create_default_context(cadata=cadata)
    asyncio.run(_watch(base, token, ctx, path, streams, pipe))


async def _watch(base: str, token: str, ctx: ssl.SSLContext, path: str, streams: int, pipe: Connection) -> None:
    url = urlsplit(base)
    host, port = url.hostname or "127.0.0.1", url.port or 443
    loop = asyncio.get_running_loop()
    opened = []
    for _ in range(streams):
        transport, proto = await loop.create_connection(_Arrivals, host, port, ssl=ctx, server_hostname=host)
        transport.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
        opened.append((transport, proto))
    pipe.send("ready")
    marks: set[str] = await loop.run_in_executor(None, pipe.recv)
    deadline = time.monotonic() + 120
    while True:  # until every stream holds every mark (or the deadline: the figures then say what is missing)
        seen = [proto.marks() for _, proto in opened]
        if all(marks <= set(s) for s in seen) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    pipe.send(seen)
    for transport, _ in opened:
        transport.close()


class _Watchers:
    """``--watchers`` watch streams over ``--watch-procs`` processes. ``perf_counter`` is the system's monotonic
    clock on Linux, so the times the processes note compare with the writer's."""

    def __init__(self, base: str, headers: dict[str, str], ctx: ssl.SSLContext, path: str,
                 args: argparse.Namespace) -> None:
        procs = max(1, min(args.watch_procs, args.watchers))
        spawn = mp.get_context("spawn")  # a fresh interpreter: nothing of this process's event loop
        token = headers["Authorization"].removeprefix("Bearer ")
        cadata = ctx.get_ca_certs(binary_form=True)
        pem = "".join(ssl.DER_cert_to_PEM_cert(der) for der in cadata)
        self.pipes: list[Connection] = []
        self.procs = []
        for k in range(procs):
            mine, theirs = spawn.Pipe()
            count = args.watchers // procs + (k < args.watchers % procs)
            proc = spawn.Process(target=_watch_process, args=(base, token, pem, path, count, theirs), daemon=True)
            proc.start()
            self.pipes.append(mine)
            self.procs.append(proc)

    def wait_ready(self) -> None:
        for pipe in self.pipes:
            if pipe.recv() != "ready":
                raise RuntimeError("a watcher process failed")

    def collect(self, marks: set[str]) -> list[dict[str, float]]:
        for pipe in self.pipes:
            pipe.send(marks)
        seen = [s for pipe in self.pipes for s in pipe.recv()]
        missing = sum(len(marks - set(s)) for s in seen)
        if missing:
            raise RuntimeError(f"{missing} events never arrived")
        return seen

    def close(self) -> None:
        for proc in self.procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()


async def bench(base: str, headers: dict[str, str], ctx: ssl.SSLContext,
                args: argparse.Namespace) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    conn = aiohttp.TCPConnector(ssl=ctx, limit=args.concurrency * 2 + args.watchers + 4)
    async with aiohttp.ClientSession(base, headers=headers, connector=conn) as session:
        t0 = time.perf_counter()
        sem = asyncio.Semaphore(args.concurrency)

        async def create(i: int) -> float:
            async with sem:
                return (await _timed(session, "POST", PODS, json=_pod(i)))[0]

        create_lat = await asyncio.gather(*(create(i) for i in range(args.pods)))
        create_s = time.perf_counter() - t0
        out["create"] = _figures(create_lat, req_per_s=round(args.pods / create_s, 1))

        gets = args.gets

        async def get(i: int) -> float:
            async with sem:
                return (await _timed(session, "GET", f"{PODS}/pod-{i % args.pods:05d}"))[0]

        t0 = time.perf_counter()
        get_lat = await asyncio.gather(*(get(i) for i in range(gets)))
        get_s = time.perf_counter() - t0
        out["get"] = _figures(get_lat, req_per_s=round(gets / get_s, 1))

        lister = _RawClient(base, headers, ctx)
        list_lat = []
        size = 0
        try:
            for _ in range(args.lists):
                lat, body = await asyncio.to_thread(lister.get, PODS)
                list_lat.append(lat)
                size = len(body)
        finally:
            lister.close()
        assert len(json.loads(body)["items"]) == args.pods, "the list lacks pods"
        out["list"] = _figures(list_lat, req_per_s=round(args.lists / sum(list_lat), 2), bytes=size)

        rv = json.loads((await _timed(session, "GET", f"{PODS}?limit=1&labelSelector=none%3Dnone"))[1])[
            "metadata"]["resourceVersion"]
        sent: dict[str, float] = {}
        streams = _Watchers(base, headers, ctx, f"{PODS}?watch=true&resourceVersion={rv}", args)
        try:
            await asyncio.to_thread(streams.wait_ready)
            await asyncio.sleep(0.5)  # let every watch open on the server before the writes start
            t0 = time.perf_counter()
            for i in range(args.writes):
                mark = f"m{i}"
                sent[mark] = time.perf_counter()
                await _timed(session, "PATCH", f"{PODS}/pod-{i % args.pods:05d}",
                             data=json.dumps({"metadata": {"labels": {"mark": mark}}}),
                             headers={"Content-Type": "application/merge-patch+json"})
            arrivals = await asyncio.to_thread(streams.collect, set(sent))
        finally:
            streams.close()
        latencies = [t - sent[mark] for seen in arrivals for mark, t in seen.items()]
        fan_s = max(t for seen in arrivals for t in seen.values()) - t0
        out["watch"] = _figures(latencies, events_per_s=round(len(latencies) / fan_s, 1))
    return out


def _table(out: dict[str, dict[str, float]], args: argparse.Namespace) -> None:
    c, g, li, w = out["create"], out["get"], out["list"], out["watch"]
    print(f"create   {args.pods} pods: {c['req_per_s']:8.0f} req/s   p50 {c['p50_ms']:6.2f} ms   "
          f"p99 {c['p99_ms']:6.2f} ms")
    print(f"get      {args.gets} reqs:   {g['req_per_s']:8.0f} req/s   p50 {g['p50_ms']:6.2f} ms   "
          f"p99 {g['p99_ms']:6.2f} ms")
    print(f"list     {args.pods} pods:  {li['req_per_s']:8.2f} req/s   p50 {li['p50_ms']:6.1f} ms   "
          f"p99 {li['p99_ms']:6.1f} ms   {li['bytes'] / 1e6:.1f} MB")
    print(f"watch    {args.watchers} watchers x {args.writes} writes: {w['events_per_s']:8.0f} events/s   "
          f"p50 {w['p50_ms']:6.2f} ms   p99 {w['p99_ms']:6.2f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--gets", type=int, default=5_000)
    parser.add_argument("--lists", type=int, default=10)
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--watch-procs", type=int, default=4, help="processes the watch streams are spread over")
    parser.add_argument("--json", action="store_true", help="print one JSON document of the figures")
    parser.add_argument("--profile", type=Path, help="run the server under cProfile; up.prof in this directory")
    args = parser.parse_args()
    if not args.json:
        print("command: .venv/bin/python bench/apiserver.py " + " ".join(sys.argv[1:]))
    profile: list[str] = []
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
        profile = ["-m", "cProfile", "-o", str(args.profile / "up.prof")]
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        proc = subprocess.Popen(
            [sys.executable, *profile, "-m", "rollwise", "up", "--ephemeral", "--port", "0", "--kubeconfig",
             str(kubeconfig), "--controllers=-statefulset,-apps.rollwise.dev,-kubelet"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL if args.json else None, text=True)
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith("export KUBECONFIG="):
                    break
            config = yaml.safe_load(kubeconfig.read_text())
            cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
            ctx = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
            out = asyncio.run(bench(cluster["server"], {"Authorization": f"Bearer {user['token']}"}, ctx, args))
        finally:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)
    if args.json:
        print(json.dumps(out))
    else:
        _table(out, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
