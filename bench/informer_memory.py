"""The operator's informer memory on a cluster of 10,000 foreign pods and 10 rollwise sets: watching everything
(before issue 25) against watching only what rollwise owns (``cluster.client.scope``).

Starts `rollwise up --controllers=*,-apps.rollwise.dev,-kubelet` (no kubelet: the pods stay Pending, which costs up
nothing per pod), creates N foreign pods in namespace `team` (each with a label and a container, like a
Deployment's), 200 foreign Leases (node heartbeats) and 10 custom sets of 3 Parallel replicas with a claim
template, runs `rollwise run` until the sets' 30 pods and 30 claims exist, stops it, then for each mode starts a
fresh process that lists and watches the operator's five kinds as `rollwise run` does and reports, once every
cache has synced: the objects cached, the bytes tracemalloc holds for them, and the process's RSS growth.

Modes: `all` (no selectors: what the operator did before), `owned` (`--controllers statefulset`: pods and claims
by `rollwise.dev/managed-by`, member Leases by `rollwise.dev/member-of`), `owned+quorum` (the default
controllers: pods by `statefulset.kubernetes.io/pod-name`, since the companion acts on kube-controller-manager's
unlabelled pods).

Run: `.venv/bin/python bench/informer_memory.py [--foreign-pods N]` (default 10,000; a few minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import yaml
from lightkube import AsyncClient
from lightkube.config.kubeconfig import KubeConfig

from rollwise.cluster.client.kube import CR_GROUP, KubeCluster
from rollwise.cluster.client.scope import informer_selectors
from rollwise.runtime.clock import WallClock
from rollwise.runtime.informer import Informer

ROOT = Path(__file__).resolve().parents[1]
KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.32"
KINDS = ("StatefulSet", "Pod", "PersistentVolumeClaim", "ControllerRevision", "Lease")
MODES = {"all": None, "owned": ("statefulset",), "owned+quorum": ("statefulset", "quorum")}
SETS, REPLICAS = 10, 3


def _sets() -> str:
    docs = [{"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
             "metadata": {"name": f"db{i}", "namespace": "default"},
             "spec": {"replicas": REPLICAS, "podManagementPolicy": "Parallel",
                      "selector": {"matchLabels": {"app": f"db{i}"}},
                      "template": {"metadata": {"labels": {"app": f"db{i}"}},
                                   "spec": {"containers": [{"name": "db", "image": "postgres:17"}]}},
                      "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                          "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
            for i in range(SETS)]
    return "---\n".join(yaml.safe_dump(d) for d in docs)


async def _foreign(kubeconfig: str, pods: int) -> None:
    kube = KubeCluster(AsyncClient(KubeConfig.from_file(kubeconfig), trust_env=False))
    gate = asyncio.Semaphore(32)

    async def create(obj: dict[str, Any]) -> None:
        async with gate:
            await kube.create(obj)

    await asyncio.gather(*(create({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"web-{i:05d}", "namespace": "team",
                     "labels": {"app": f"web-{i % 100}", "pod-template-hash": "5d8f7c6b9"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                 "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}}}]}})
        for i in range(pods)))
    await asyncio.gather(*(create({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": f"node-{i:03d}", "namespace": "team"},
        "spec": {"holderIdentity": f"node-{i:03d}", "leaseDurationSeconds": 40}}) for i in range(200)))
    await kube.client.close()


async def _measure(kubeconfig: str, mode: str) -> dict[str, Any]:
    kube = KubeCluster(AsyncClient(KubeConfig.from_file(kubeconfig), trust_env=False), set_group=CR_GROUP)
    controllers = MODES[mode]
    selectors = informer_selectors(controllers) if controllers is not None else {}
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    informers = [Informer(kube.list_watch(kind, None, labels=selectors.get(kind)), WallClock()) for kind in KINDS]
    tasks = [asyncio.create_task(i.run()) for i in informers]
    started = time.monotonic()
    await asyncio.gather(*(i.wait_synced() for i in informers))
    synced = time.monotonic() - started
    held = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await kube.client.close()
    return {"mode": mode, "objects": {i.kind: len(i.store) for i in informers}, "held_mib": held / 2**20,
            "rss_growth_mib": (rss_after - rss_before) / 1024, "sync_seconds": synced}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--foreign-pods", type=int, default=10_000)
    parser.add_argument("--measure", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(asyncio.run(_measure(args.kubeconfig, args.measure))))
        return
    tmp = Path(tempfile.mkdtemp(prefix="rollwise-informers-"))
    kubeconfig = tmp / "kubeconfig"
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(tmp), "NO_PROXY": "127.0.0.1"}
    up = subprocess.Popen([sys.executable, "-m", "rollwise", "up", "--port", "0", "--ephemeral", "--any-token",
                           "--controllers=*,-apps.rollwise.dev,-kubelet", "--kubeconfig", str(kubeconfig)],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    op = None
    try:
        assert up.stdout is not None
        while not up.stdout.readline().startswith("export KUBECONFIG="):
            pass

        def k(*a: str, stdin: str | None = None) -> str:
            return subprocess.run([KUBECTL, *a], env=env, input=stdin, capture_output=True, text=True,
                                  check=True, timeout=600).stdout

        k("apply", "-k", str(ROOT / "deploy" / "crds"))
        k("create", "namespace", "rollwise-system")
        k("create", "namespace", "team")
        t0 = time.monotonic()
        asyncio.run(_foreign(str(kubeconfig), args.foreign_pods))
        print(f"{args.foreign_pods} foreign pods and 200 foreign Leases created in {time.monotonic() - t0:.0f} s",
              file=sys.stderr)
        op = subprocess.Popen([sys.executable, "-m", "rollwise", "run", "--kubeconfig", str(kubeconfig),
                               "--controllers", "statefulset", "--health-addr", "127.0.0.1:0",
                               "--metrics-addr", "127.0.0.1:0"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        k("apply", "-f", "-", stdin=_sets())
        want = SETS * REPLICAS
        while True:
            pods = k("get", "pods", "-n", "default", "-l", "rollwise.dev/managed-by=rollwise", "-o", "name")
            claims = k("get", "pvc", "-n", "default", "-l", "rollwise.dev/managed-by=rollwise", "-o", "name")
            if len(pods.split()) >= want and len(claims.split()) >= want:
                break
            time.sleep(1)
        os.kill(op.pid, signal.SIGTERM)
        op.wait(timeout=60)
        op = None
        rows = []
        for mode in MODES:
            out = subprocess.run([sys.executable, __file__, "--measure", mode, "--kubeconfig", str(kubeconfig)],
                                 env=env, capture_output=True, text=True, check=True, timeout=900).stdout
            rows.append(json.loads(out))
        print(f"\ninformers of `rollwise run` on {args.foreign_pods} foreign pods + 200 foreign Leases + "
              f"{SETS} rollwise sets ({want} pods, {want} claims)\n")
        print(f"{'mode':<14}{'pods':>7}{'claims':>8}{'leases':>8}{'revisions':>11}{'held MiB':>10}"
              f"{'RSS +MiB':>10}{'sync s':>8}")
        for r in rows:
            o = r["objects"]
            print(f"{r['mode']:<14}{o['Pod']:>7}{o['PersistentVolumeClaim']:>8}{o['Lease']:>8}"
                  f"{o['ControllerRevision']:>11}{r['held_mib']:>10.1f}{r['rss_growth_mib']:>10.1f}"
                  f"{r['sync_seconds']:>8.1f}")
        print(f"\nreproduce: .venv/bin/python bench/informer_memory.py --foreign-pods {args.foreign_pods}")
    finally:
        for proc in (op, up):
            if proc is not None and proc.poll() is None:
                os.kill(proc.pid, signal.SIGTERM)
                proc.wait(timeout=60)


if __name__ == "__main__":
    main()
