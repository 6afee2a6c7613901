"""The operator against `rollwise up`: N custom-resource sets of R replicas created, then rolled to a new image.

Starts `rollwise up --controllers=*,-apps.rollwise.dev --any-token --speed 20` and `rollwise run` (token `op-a`)
as subprocesses on 127.0.0.1, applies the sets with kubectl, and prints: wall time per phase; the operator's API
requests per replaced pod from up's audit log, against upstream's (one delete, one create, plus status writes);
reconciles, their latency and queue wait (p50/p99 from /metrics); the operator's peak RSS.

Run: `.venv/bin/python bench/operator_on_up.py [--sets N] [--replicas R]` (defaults 50 x 4). Both processes share the
machine's cores with kubectl; on the project's 2-core machine the figures are an upper bound.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32"


def _sets(n: int, replicas: int, image: str) -> str:
    docs = [{"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
             "metadata": {"name": f"s{i:04d}", "namespace": "default"},
             "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": f"s{i:04d}"}},
                      "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}},
                      "template": {"metadata": {"labels": {"app": f"s{i:04d}"}},
                                   "spec": {"containers": [{"name": "app", "image": image}]}}}}
            for i in range(n)]
    return "---\n".join(yaml.safe_dump(d) for d in docs)


def _quantile(buckets: list[tuple[float, float]], q: float) -> float:
    total = buckets[-1][1]
    for bound, count in buckets:
        if count >= q * total:
            return bound
    return float("inf")


def _histogram(metrics: str, name: str) -> list[tuple[float, float]]:
    out = []
    for m in re.finditer(rf'^{name}_bucket{{[^}}]*le="([^"]+)"[^}}]*}} ([0-9.e+]+)$', metrics, re.M):
        out.append((float(m.group(1)), float(m.group(2))))
    return sorted(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=50)
    parser.add_argument("--replicas", type=int, default=4)
    args = parser.parse_args()
    kubectl = KUBECTL if os.access(KUBECTL, os.X_OK) else "kubectl"
    tmp = Path(tempfile.mkdtemp(prefix="rollwise-bench-"))
    kc, audit = tmp / "kc.yaml", tmp / "audit.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
    env.update(KUBECONFIG=str(kc), KUBECACHEDIR=str(tmp / "cache"), HOME=str(tmp), NO_PROXY="127.0.0.1")
    up = subprocess.Popen([sys.executable, "-m", "rollwise", "up", "--port", "0", "--ephemeral", "--kubeconfig",
                           str(kc), "--speed", "20", "--controllers", "*,-apps.rollwise.dev", "--any-token",
                           "--audit-log", str(audit)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    op: subprocess.Popen[str] | None = None
    try:
        assert up.stdout is not None
        while not up.stdout.readline().startswith("export KUBECONFIG="):
            pass

        def k(*a: str, stdin: str | None = None) -> str:
            return subprocess.run([kubectl, *a], env=env, input=stdin, capture_output=True, text=True, check=True,
                                  timeout=600).stdout

        k("apply", "-k", str(ROOT / "deploy"))
        config = yaml.safe_load(kc.read_text())
        for user in config["users"]:
            user["user"] = {"token": "op-a"}
        (tmp / "op.yaml").write_text(yaml.safe_dump(config))
        op = subprocess.Popen([sys.executable, "-m", "rollwise", "run", "--kubeconfig", str(tmp / "op.yaml"),
                               "--identity", "op-a", "--controllers", "statefulset", "--log-level", "WARNING",
                               "--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0"],
                              env=env, stderr=subprocess.PIPE, text=True)
        assert op.stderr is not None
        ports = None
        while ports is None:
            ports = re.search(r"metrics on port (\d+)", op.stderr.readline())
        metrics_url = f"http://127.0.0.1:{ports.group(1)}/metrics"

        def settled(image: str) -> bool:
            items = json.loads(k("get", "rsts", "-o", "json"))["items"]
            return len(items) == args.sets and all(
                (s.get("status") or {}).get("updatedReplicas") == args.replicas
                and s["status"].get("readyReplicas") == args.replicas
                and s["status"].get("currentRevision") == s["status"].get("updateRevision")
                and s["status"].get("observedGeneration") == s["metadata"]["generation"]
                and s["spec"]["template"]["spec"]["containers"][0]["image"] == image for s in items)

        def phase(image: str) -> float:
            start = time.perf_counter()
            k("apply", "-f", "-", stdin=_sets(args.sets, args.replicas, image))
            while not settled(image):
                time.sleep(0.5)
            return time.perf_counter() - start

        create = phase("app:v1")
        mark = len(audit.read_text().splitlines())
        rollout = phase("app:v2")
        entries = [json.loads(line) for line in audit.read_text().splitlines()[mark:]]
        requests = Counter(f"{e['verb']} {e['resource']}" for e in entries if e["user"] == "op-a"
                           and not e["resource"].startswith("leases"))
        metrics = urllib.request.urlopen(metrics_url, timeout=10).read().decode()
        rss = next((line.split()[1] for line in Path(f"/proc/{op.pid}/status").read_text().splitlines()
                    if line.startswith("VmHWM")), "?")
    finally:
        for proc in (op, up):
            if proc is not None and proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.kill(proc.pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
    pods = args.sets * args.replicas
    reconcile = _histogram(metrics, "controller_runtime_reconcile_time_seconds")
    wait = _histogram(metrics, "workqueue_queue_duration_seconds")
    total = sum(float(m) for m in re.findall(r'^controller_runtime_reconcile_total{[^}]*} ([0-9.e+]+)$', metrics,
                                             re.M))
    print(f"operator against rollwise up: {args.sets} sets x {args.replicas} replicas = {pods} pods")
    print(f"  create and become ready: {create:.1f} s wall; roll to a new image: {rollout:.1f} s wall")
    print(f"  reconciles (both phases): {total:.0f}; reconcile p50 {_quantile(reconcile, 0.5) * 1000:.0f} ms, "
          f"p99 {_quantile(reconcile, 0.99) * 1000:.0f} ms; queue wait p50 {_quantile(wait, 0.5) * 1000:.1f} ms, "
          f"p99 {_quantile(wait, 0.99) * 1000:.1f} ms (bucket upper bounds)")
    print(f"  operator peak RSS: {int(rss) // 1024 if rss != '?' else '?'} MiB")
    print("  operator API writes per replaced pod during the rollout (upstream: 1 delete, 1 create, status writes):")
    for key, n in sorted(requests.items()):
        print(f"    {key:48s} {n / pods:6.2f}")
    print(f"  command: .venv/bin/python bench/operator_on_up.py --sets {args.sets} --replicas {args.replicas}")


if __name__ == "__main__":
    main()
