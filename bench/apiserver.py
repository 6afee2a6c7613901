"""API server throughput and latency, as a client sees them over TLS (the figures in docs/performance.md).

Starts ``rollwise up --ephemeral --port 0`` in a subprocess with the controllers and the kubelet off (only the
API is measured), creates pods through the API, then measures with ``aiohttp`` clients:

- GET of one pod, from ``--concurrency`` clients at once: requests/s, p50/p99 latency;
- LIST of every pod in the namespace (``--pods`` of them, 10,000 by default): p50/p99 latency and body size;
- watch fan-out: ``--watchers`` watches on the pods, then ``--writes`` label patches; each event's delivery latency
  (from just before the write to its arrival at a watcher) as p50/p99, and events delivered per second.

Run: `.venv/bin/python bench/apiserver.py [--pods N] [--watchers N] [--writes N] [--concurrency N] [--json]
[--profile DIR]`. ``--json`` prints one JSON document instead of the table: ``{"create": {"req_per_s", "p50_ms",
"p99_ms"}, "get": {...}, "list": {"p50_ms", "p99_ms", "bytes"}, "watch": {"events_per_s", "p50_ms", "p99_ms"}}``;
``--profile DIR`` runs the server under cProfile and leaves up.prof in DIR.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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

        list_lat = []
        size = 0
        for _ in range(args.lists):
            lat, body = await _timed(session, "GET", PODS)
            list_lat.append(lat)
            size = len(body)
        out["list"] = _figures(list_lat, req_per_s=round(args.lists / sum(list_lat), 2), bytes=size)

        rv = json.loads((await _timed(session, "GET", f"{PODS}?limit=1&labelSelector=none%3Dnone"))[1])[
            "metadata"]["resourceVersion"]
        sent: dict[str, float] = {}
        latencies: list[float] = []
        expected = args.watchers * args.writes
        done = asyncio.Event()

        async def watcher() -> None:
            async with session.get(f"{PODS}?watch=true&resourceVersion={rv}", timeout=aiohttp.ClientTimeout(
                    total=None, sock_read=None)) as resp:
                async for line in resp.content:
                    ev = msgspec.json.decode(line)  # the cheapest parse: the figure is the server's, not ours
                    mark = ev["object"]["metadata"].get("labels", {}).get("mark")
                    if mark in sent:
                        latencies.append(time.perf_counter() - sent[mark])
                        if len(latencies) >= expected:
                            done.set()
                            return

        tasks = [asyncio.create_task(watcher()) for _ in range(args.watchers)]
        await asyncio.sleep(0.5)  # let every watch open before the writes start
        t0 = time.perf_counter()
        for i in range(args.writes):
            mark = f"m{i}"
            sent[mark] = time.perf_counter()
            await _timed(session, "PATCH", f"{PODS}/pod-{i % args.pods:05d}",
                         data=json.dumps({"metadata": {"labels": {"mark": mark}}}),
                         headers={"Content-Type": "application/merge-patch+json"})
        await asyncio.wait_for(done.wait(), 120)
        fan_s = time.perf_counter() - t0
        for task in tasks:
            task.cancel()
        out["watch"] = _figures(latencies, events_per_s=round(expected / fan_s, 1))
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
