"""The operator against `rollwise up`: N custom-resource sets of R replicas created, then rolled to a new image.

(Named operator_on_up.py, not operator.py: a script called operator.py would shadow the standard library's
`operator` module for everything it imports.)

Starts `rollwise up --controllers=*,-apps.rollwise.dev --any-token --speed 20` and `rollwise run` (token `op-a`)
as subprocesses on 127.0.0.1, applies the sets with kubectl, and prints per phase: wall and CPU seconds of up, the
operator and kubectl; reconciles per second; the event-to-action latency (bench/operator_events.py); the operator's
API requests per replaced pod from up's audit log, beside what upstream's StatefulSet controller sends; peak RSS.

Run: `.venv/bin/python bench/operator_on_up.py [--sets N] [--replicas R] [--workers W] [--profile DIR] [--json]`
(defaults 50 x 4, the operator's default 5 workers). At the end it measures up's own pod-create capacity in the same
run (``--capacity N`` bare pods from 8 concurrent clients, in a namespace of their own), the figure the operator's
actions per second are held against. ``--json`` prints one JSON document: ``{"create": {...}, "rollout": {"p50_ms",
"p99_ms", "operator_cpu_s", "up_cpu_s", "replaced_pods", "actions_per_s", ...}, "requests_per_replaced_pod":
{...}, "up_create_capacity_per_s", ..., "events": {"sent", "dropped"}}`` (the operator's Event counters over the
whole run).
`--profile DIR` runs both servers under cProfile and leaves up.prof and operator.prof in DIR. Both processes share
the machine's cores with kubectl and this process's watch; on the project's 2-core machine the figures are an upper
bound.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from operator_events import PodEvents, event_to_action
from rollwise.apiserver.auth.tls import read_endpoint

ROOT = Path(__file__).resolve().parents[1]
KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32"
TICK = os.sysconf("SC_CLK_TCK")
BUDGET = 2


def _sets(n: int, replicas: int, image: str) -> str:
    docs = [{"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
             "metadata": {"name": f"s{i:04d}", "namespace": "default"},
             "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": f"s{i:04d}"}},
                      "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": BUDGET}},
                      "template": {"metadata": {"labels": {"app": f"s{i:04d}"}},
                                   "spec": {"containers": [{"name": "app", "image": image}]}}}}
            for i in range(n)]
    return "---\n".join(yaml.safe_dump(d) for d in docs)


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def _peak_rss_mib(pid: int) -> int:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith("VmHWM"))
    return int(line.split()[1]) // 1024


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # only reaped children: the kubectl runs
    return usage.ru_utime + usage.ru_stime


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _counter(metrics: str, name: str) -> float:
    return sum(float(m) for m in re.findall(rf"^{name}(?:{{[^}}]*}})? ([0-9.e+]+)$", metrics, re.M))


@dataclass
class Phase:
    name: str
    wall: float
    apply: float
    cpu: dict[str, float]
    reconciles: float
    latencies: list[float]
    actions: int

    def figures(self, pods: int) -> dict[str, float]:
        return {"wall_s": round(self.wall, 3), "p50_ms": round(_quantile(self.latencies, 0.5) * 1000, 1),
                "p99_ms": round(_quantile(self.latencies, 0.99) * 1000, 1),
                "operator_cpu_s": round(self.cpu["operator"], 3), "up_cpu_s": round(self.cpu["up"], 3),
                "kubectl_cpu_s": round(self.cpu["kubectl"], 3), "replaced_pods": pods,
                "operator_cpu_ms_per_pod": round(self.cpu["operator"] / pods * 1000, 3),
                "actions": self.actions, "actions_per_s": round(self.actions / self.wall, 1),
                "reconciles_per_s": round(self.reconciles / self.wall, 1)}


def _create_capacity(kubeconfig: Path, count: int, concurrency: int = 8) -> float:
    """up's own pod creates per second in this run: ``count`` bare pods from ``concurrency`` clients at once, in a
    namespace of their own that is deleted afterwards."""
    endpoint = read_endpoint(kubeconfig)
    pods = "/api/v1/namespaces/capacity/pods"

    async def run() -> float:
        connector = aiohttp.TCPConnector(ssl=endpoint.tls, limit=concurrency)
        async with aiohttp.ClientSession(f"https://{endpoint.host}:{endpoint.port}", connector=connector,
                                         headers={"Authorization": f"Bearer {endpoint.token}"}) as session:
            async with session.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace",
                                                                "metadata": {"name": "capacity"}}) as r:
                await r.read()
            gate = asyncio.Semaphore(concurrency)

            async def one(i: int) -> None:
                pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"c-{i:05d}"},
                       "spec": {"containers": [{"name": "c", "image": "app:v1"}]}}
                async with gate, session.post(pods, json=pod) as r:
                    await r.read()
                    if r.status != 201:
                        raise RuntimeError(f"capacity pod create: {r.status}")

            began = time.perf_counter()
            await asyncio.gather(*(one(i) for i in range(count)))
            rate = count / (time.perf_counter() - began)
            async with session.delete("/api/v1/namespaces/capacity") as r:
                await r.read()
            return rate

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sets", type=int, default=50)
    parser.add_argument("--replicas", type=int, default=4)
    parser.add_argument("--workers", type=int, default=5, help="the operator's concurrent reconciles (its default 5)")
    parser.add_argument("--profile", type=Path, help="run up and the operator under cProfile; .prof files here")
    parser.add_argument("--http-transport", default="direct", choices=["direct", "aiohttp", "httpx"],
                        help="the operator's API client (rollwise run --http-transport)")
    parser.add_argument("--capacity", type=int, default=2000, help="pods created to measure up's create capacity")
    parser.add_argument("--json", action="store_true", help="print one JSON document of the figures")
    args = parser.parse_args()
    kubectl = KUBECTL if os.access(KUBECTL, os.X_OK) else "kubectl"
    tmp = Path(tempfile.mkdtemp(prefix="rollwise-bench-"))
    kc, audit = tmp / "kc.yaml", tmp / "audit.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
    env.update(KUBECONFIG=str(kc), KUBECACHEDIR=str(tmp / "cache"), HOME=str(tmp), NO_PROXY="127.0.0.1")

    def python(profile_name: str) -> list[str]:
        if args.profile is None:
            return [sys.executable, "-m"]
        args.profile.mkdir(parents=True, exist_ok=True)
        return [sys.executable, "-m", "cProfile", "-o", str(args.profile / profile_name), "-m"]

    up = subprocess.Popen([*python("up.prof"), "rollwise", "up", "--port", "0", "--ephemeral", "--kubeconfig",
                           str(kc), "--speed", "20", "--controllers", "*,-apps.rollwise.dev", "--any-token",
                           "--audit-log", str(audit)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    op: subprocess.Popen[str] | None = None
    pods: PodEvents | None = None
    phases: list[Phase] = []
    try:
        assert up.stdout is not None
        while not up.stdout.readline().startswith("export KUBECONFIG="):
            pass

        def k(*a: str, stdin: str | None = None) -> str:
            return subprocess.run([kubectl, *a], env=env, input=stdin, capture_output=True, text=True, check=True,
                                  timeout=1800).stdout

        k("apply", "-k", str(ROOT / "deploy"))
        config = yaml.safe_load(kc.read_text())
        for user in config["users"]:
            user["user"] = {"token": "op-a"}
        (tmp / "op.yaml").write_text(yaml.safe_dump(config))
        # Passed only when not the default, so the bench also drives an operator from before the flag existed.
        transport = [] if args.http_transport == "direct" else ["--http-transport", args.http_transport]
        op = subprocess.Popen([*python("operator.prof"), "rollwise", "run", "--kubeconfig", str(tmp / "op.yaml"),
                               "--identity", "op-a", "--controllers", "statefulset", "--log-level", "WARNING",
                               "--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0",
                               "--workers", str(args.workers),
                               *transport],
                              env=env, stderr=subprocess.PIPE, text=True)
        assert op.stderr is not None
        port = None
        while port is None:
            port = re.search(r"metrics on port (\d+)", op.stderr.readline())
        metrics_url = f"http://127.0.0.1:{port.group(1)}/metrics"
        pods = PodEvents(kc, "default")

        def metrics() -> str:
            return urllib.request.urlopen(metrics_url, timeout=60).read().decode()  # type: ignore[no-any-return]

        def statuses_done(image: str) -> bool:
            items = json.loads(k("get", "rsts", "-o", "json"))["items"]
            return len(items) == args.sets and all(
                (s.get("status") or {}).get("updatedReplicas") == args.replicas
                and s["status"].get("readyReplicas") == args.replicas
                and s["status"].get("currentRevision") == s["status"].get("updateRevision")
                and s["status"].get("observedGeneration") == s["metadata"]["generation"]
                and s["spec"]["template"]["spec"]["containers"][0]["image"] == image for s in items)

        def phase(name: str, image: str) -> Phase:
            assert pods is not None and op is not None
            before = {"up": _cpu(up.pid), "operator": _cpu(op.pid), "kubectl": _children_cpu(), "bench": _own_cpu()}
            reconciles = _counter(metrics(), "controller_runtime_reconcile_total")
            start, wall_start = time.time(), time.perf_counter()
            k("apply", "-f", "-", stdin=_sets(args.sets, args.replicas, image))
            applied = time.perf_counter() - wall_start
            while not pods.settled(args.sets * args.replicas, image):
                time.sleep(0.2)  # the pods, from this process's watch: costs up nothing
            while not statuses_done(image):
                time.sleep(1.0)
            wall = time.perf_counter() - wall_start
            after = {"up": _cpu(up.pid), "operator": _cpu(op.pid), "kubectl": _children_cpu(), "bench": _own_cpu()}
            entries = [json.loads(line) for line in audit.read_text().splitlines()]
            actions = sum(1 for e in entries if e["user"] == "op-a" and e["resource"] == "pods"
                          and e["verb"] in ("create", "delete") and e["time"] >= start)
            return Phase(name, wall, applied, {p: after[p] - before[p] for p in before},
                         _counter(metrics(), "controller_runtime_reconcile_total") - reconciles,
                         event_to_action(pods.records, entries, "op-a", start), actions)

        phases.append(phase("create", "app:v1"))
        mark = len(audit.read_text().splitlines())
        phases.append(phase("rollout", "app:v2"))
        entries = [json.loads(line) for line in audit.read_text().splitlines()[mark:]]
        requests = Counter(f"{e['verb']} {e['resource']}" for e in entries if e["user"] == "op-a"
                           and not e["resource"].startswith("leases"))
        final = metrics()
        rss = {"operator": _peak_rss_mib(op.pid), "up": _peak_rss_mib(up.pid)}
        gaps = pods.gaps
        capacity = _create_capacity(kc, args.capacity)
    finally:
        if pods is not None:
            pods.stop()
        for proc in (op, up):
            if proc is not None and proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    os.kill(proc.pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        pods = args.sets * args.replicas
        rollout = phases[1].figures(pods)
        print(json.dumps({
            "sets": args.sets, "replicas": args.replicas, "workers": args.workers,
            "http_transport": args.http_transport,
            "create": phases[0].figures(pods), "rollout": rollout,
            "requests_per_replaced_pod": {k: round(v / pods, 3) for k, v in sorted(requests.items())},
            "up_create_capacity_per_s": round(capacity, 1),
            "actions_vs_capacity": round(rollout["actions_per_s"] / capacity, 4),
            "peak_rss_mib": rss, "watch_gaps": gaps,
            "reconcile_errors": _counter(final, "controller_runtime_reconcile_errors_total"),
            "events": {"sent": _counter(final, "rollwise_events_sent_total"),
                       "dropped": _counter(final, "rollwise_events_dropped_total")}}))
        return
    _report(args, phases, requests, final, rss, gaps, capacity)


def _report(args: Any, phases: list[Phase], requests: Counter[str], metrics: str, rss: dict[str, int],
            gaps: int, capacity: float) -> None:
    pods = args.sets * args.replicas
    print(f"operator against rollwise up: {args.sets} sets x {args.replicas} replicas = {pods} pods, "
          f"RollingUpdate maxUnavailable {BUDGET}")
    print("  phase    wall s (apply)  cpu s: up  operator  kubectl  bench  reconciles/s  event-to-action p50 / p99")
    for p in phases:
        print(f"  {p.name:8s} {p.wall:6.1f} ({p.apply:4.1f})  {p.cpu['up']:9.1f} {p.cpu['operator']:9.1f} "
              f"{p.cpu['kubectl']:8.1f} {p.cpu['bench']:6.1f}  {p.reconciles / p.wall:12.0f}  "
              f"{_quantile(p.latencies, 0.5) * 1000:7.0f} ms / {_quantile(p.latencies, 0.99) * 1000:.0f} ms "
              f"({len(p.latencies)} actions)")
    rollout = phases[1]
    rate = rollout.actions / rollout.wall
    print(f"  up's own pod-create capacity in this run: {capacity:.0f}/s; the rollout's actions: {rate:.0f}/s "
          f"({rate / capacity:.0%} of it); operator CPU per replaced pod {rollout.cpu['operator'] / pods * 1e3:.2f} ms")
    print(f"  peak RSS: operator {rss['operator']} MiB, up {rss['up']} MiB; watch gaps: {gaps}; "
          f"reconcile errors: {_counter(metrics, 'controller_runtime_reconcile_errors_total'):.0f}, "
          f"stale-cache skips: {_counter(metrics, 'rollwise_stale_sync_skips_total'):.0f}, "
          f"Events sent / dropped: {_counter(metrics, 'rollwise_events_sent_total'):.0f} / "
          f"{_counter(metrics, 'rollwise_events_dropped_total'):.0f}")
    print("  API requests per replaced pod during the rollout, ours against upstream's StatefulSet controller:")
    # Upstream writes status once per sync in which a count changed (inconsistentStatus): per replaced pod when it
    # is gone, when its replacement is seen created, when that is Ready; once per set at the template change (each
    # later wave's deletes share the write of the previous wave's last Ready). +1 where the kubelet turns a
    # terminating pod unready, as a real one does (up's keeps it Ready until it is gone).
    upstream = {"delete pods": "1", "create pods": "1",
                "update statefulsets.apps.rollwise.dev/status": f"3 + 1/{args.replicas} (a write per count change)",
                "create controllerrevisions.apps": f"1/{args.replicas} (one per set)",
                "create events": "2, with patches (SuccessfulDelete, SuccessfulCreate; 25 per set in 5 min)",
                "patch events": "(a repeated event: count + 1)"}
    for key in sorted(set(requests) | set(upstream)):
        print(f"    {key:46s} {requests.get(key, 0) / pods:6.2f}   upstream {upstream.get(key, '-')}")
    workers = f" --workers {args.workers}" if args.workers != 5 else ""
    print(f"  command: .venv/bin/python bench/operator_on_up.py --sets {args.sets} --replicas {args.replicas}{workers}")


if __name__ == "__main__":
    main()
