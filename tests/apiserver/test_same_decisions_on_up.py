"""The same decisions in both worlds: every bundled scenario replayed against `rollwise up` through the operator gives,
per set, the same sequence of controller actions (who, create or delete, which pod) as the simulator
(operator-plan §4; times are not compared).

The worlds: `up --controllers=-apps.rollwise.dev,-quorum` runs the scenario's kubelet block (timings, image
behaviours, the quorum model) in its kubelet, divided by `--speed`; the operator (`rollwise run`) decides. A plain set
becomes the custom kind in both worlds, so the operator's StatefulSet controller decides; a set handed to DEP-07's
quorum-aware controller (OnDelete and the annotation) stays `apps/v1`: `up`'s built-in StatefulSet controller creates
its pods, as kube-controller-manager would, and the operator's quorum companion deletes them. The operator runs one
controller per StatefulSet resource, so its writes on a custom-kind set are its StatefulSet controller's and those on
an `apps/v1` set its companion's; `up`'s audit log names its own controllers by their service accounts.

Steps are replayed as a user would (kubectl apply, patch, scale, delete; a pod fault through `up`'s debug endpoint)
on the simulator's timeline: `after` waits its time divided by the speed, a `waitFor` waits for the simulator's own
predicate on `up`'s objects (and, where the simulator's wait timed out, its whole timeout). The simulator's
controller reacts in zero virtual time, `up`'s operator in milliseconds: so that a user's step never lands between
a state and the decision it calls for, each step runs once `up` has taken as many decisions on every set as the
simulator had before that step.

Actions the simulator takes on one set at one virtual instant (a Parallel batch: three pods deleted together end
together, and one reconcile recreates them in ordinal order) have no order in wall-clock time: on `up` the three
deletes go out milliseconds apart, so the pods end milliseconds apart and are recreated as each one goes. Such a
batch must be the same actions, one after the other with nothing between, in any order (upstream creates a batch
concurrently, in no defined order either); every other action keeps its exact place.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
import zygote
from kubectl_support import POLL_FIRST, Up, find_kubectl, start_up, stop_up
from operator_support import Operator, audit_entries, get_json
from tiers import sweep

from rollwise.cli.options import load_with_overrides
from rollwise.local.audited import SERVICE_ACCOUNT_PREFIX
from rollwise.runtime.actors import CONTROLLERS, QUORUM_CONTROLLER, STATEFULSET_CONTROLLER
from rollwise.sim import run_scenario
from rollwise.sim.record import rollout_complete

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "src" / "rollwise" / "examples"
# Recorded analyses (``analyses:``) replay in the simulator only: on up a metric is measured from its provider.
BUNDLED = sorted(p for p in EXAMPLES.glob("*.yaml")
                 if "steps" in (doc := yaml.safe_load(p.read_text()) or {}) and "analyses" not in doc)
SCENARIOS = [*BUNDLED, ROOT / "tests" / "scenarios" / "scale-and-retention.yaml"]
FAST = {("rolling-update",), ("image-typo-fixed",), ("etcd-member-down",)}
"""The scenarios ``make test`` replays (a rolling update, a fix that lands, the quorum-aware companion); ``make
test-slow`` (CI) replays every one (tests/support/tiers.py)."""
SPEED = {"image-typo-fixed": 100.0, "stuck-image-ordered-ready": 100.0}  # long waits that time out
DEFAULT_SPEED = 40.0
OPERATOR = "op-replay"
SYNC_DEADLINE = 60.0
CUSTOM = "apps.rollwise.dev/v1alpha1"

Action = tuple[str, str, str]  # (controller, create | delete, pod)

pytestmark = pytest.mark.kubectl


def _quorum_aware(obj: dict[str, Any]) -> bool:
    return ((obj.get("metadata") or {}).get("annotations") or {}).get("rollwise.dev/update-policy") is not None


def _as_custom(doc: dict[str, Any]) -> dict[str, Any]:
    for obj in doc["objects"]:
        if obj["kind"] == "StatefulSet":
            obj["metadata"].setdefault("namespace", "default")
            if not _quorum_aware(obj):
                obj["apiVersion"] = CUSTOM
    return doc


@dataclass
class Simulated:
    actions: dict[str, list[Action]]
    instants: dict[str, list[float]]  # the virtual time of each action
    before_step: list[dict[str, int]]  # per step index: how many actions per set came before it ran
    timed_out: set[int]  # indices of the waitFor steps whose timeout expired
    in_place: int = 0  # pods the controllers updated in place (no create, no delete: the sequences show none)


def _simulate(doc: dict[str, Any], tmp: Path) -> Simulated:
    path = tmp / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc))
    result = run_scenario(load_with_overrides(str(path), strategy=None))
    actions: dict[str, list[Action]] = {}
    instants: dict[str, list[float]] = {}
    before: list[dict[str, int]] = []
    timed_out = set()
    for e in result["events"]:
        if e["type"] == "Step":
            assert e["index"] == len(before)
            before.append({name: len(seq) for name, seq in actions.items()})
        elif e["type"] == "WaitTimedOut":
            timed_out.add(e["index"])
        elif e["type"] in ("PodCreated", "PodDeleteRequested") and e.get("by") in CONTROLLERS:
            verb = "create" if e["type"] == "PodCreated" else "delete"
            actions.setdefault(e["pod"].rsplit("-", 1)[0], []).append((e["by"], verb, e["pod"]))
            instants.setdefault(e["pod"].rsplit("-", 1)[0], []).append(e["t"])
    in_place = sum(1 for e in result["events"] if e["type"] == "PodUpdatedInPlace" and e.get("by") in CONTROLLERS)
    return Simulated(actions=actions, instants=instants, before_step=before, timed_out=timed_out, in_place=in_place)


def _in_instants(actions: list[Action], instants: list[float]) -> list[frozenset[Action]]:
    """The simulator's actions on a set as a sequence of groups, one per virtual instant, controller and verb."""
    out: list[frozenset[Action]] = []
    last: tuple[float, str, str] | None = None
    for action, t in zip(actions, instants, strict=True):
        out.append(out.pop() | {action} if last == (t, *action[:2]) else frozenset({action}))
        last = (t, *action[:2])
    return out


def _grouped_as(actions: list[Action], model: list[frozenset[Action]]) -> list[frozenset[Action]]:
    """``up``'s actions cut into consecutive runs of the sizes of ``model``'s groups (what is left, one by one)."""
    out, i = [], 0
    for group in model:
        if i < len(actions):
            out.append(frozenset(actions[i:i + len(group)]))
        i += len(group)
    return out + [frozenset({a}) for a in actions[i:]]


def _on_up(up: Up, custom: set[str]) -> dict[str, list[Action]]:
    out: dict[str, list[Action]] = {}
    for e in audit_entries(up):
        if e["resource"] != "pods" or e["verb"] not in ("create", "delete") or e["code"] >= 300:
            continue
        set_name = e["name"].rsplit("-", 1)[0]
        if e["user"] == OPERATOR:
            who = STATEFULSET_CONTROLLER if set_name in custom else QUORUM_CONTROLLER
        elif e["user"].startswith(SERVICE_ACCOUNT_PREFIX):
            who = e["user"].removeprefix(SERVICE_ACCOUNT_PREFIX)
        else:
            continue  # a user's own delete (the scenario's deletePod)
        out.setdefault(set_name, []).append((who, e["verb"], e["name"]))
    return out


def _set_and_pods(up: Up, name: str, custom: bool) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    sts = get_json(up, "rsts" if custom else "statefulset.apps", name, check=False) or None
    if sts is None:
        return None, []
    uid = sts["metadata"]["uid"]
    pods = [p for p in up.read("pods")["items"]
            if any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or ())]
    return sts, pods


def _satisfied(up: Up, args: dict[str, Any], custom: set[str]) -> bool:
    """The simulator's waitFor predicates (sim/steps.py) on `up`'s objects."""
    name = str(args.get("rolloutComplete") or args.get("ready"))
    sts, pods = _set_and_pods(up, name, name in custom)
    if sts is None:
        return False
    if "rolloutComplete" in args:
        return rollout_complete(sts, pods, time.time())
    status, want = sts.get("status") or {}, int(sts["spec"].get("replicas", 1))
    return status.get("observedGeneration") == sts["metadata"].get("generation") \
        and status.get("readyReplicas") == want and status.get("replicas") == want


def _caught_up(up: Up, custom: set[str], counts: dict[str, int]) -> bool:
    seen = _on_up(up, custom)
    return all(len(seen.get(name, ())) >= n for name, n in counts.items())


def _replay(up: Up, doc: dict[str, Any], sim: Simulated, speed: float) -> None:
    custom = {o["metadata"]["name"] for o in doc["objects"] if o["apiVersion"] == CUSTOM}
    for obj in doc["objects"]:
        up.apply(json.dumps(obj))
    for index, step in enumerate(doc["steps"]):
        counts = sim.before_step[index]
        up.until(lambda: _caught_up(up, custom, counts), f"up's decisions before step {index}: "  # noqa: B023
                 f"{counts}, so far {_on_up(up, custom)}", deadline=SYNC_DEADLINE, most=POLL_FIRST)
        (kind, arg), = step.items()
        _run_step(up, kind, arg, index in sim.timed_out, custom, speed)
    up.until(lambda: _caught_up(up, custom, {k: len(v) for k, v in sim.actions.items()}),
             f"up's decisions after the last step: {_on_up(up, custom)}", deadline=SYNC_DEADLINE, most=POLL_FIRST)


def _run_step(up: Up, kind: str, arg: Any, times_out: bool, custom: set[str], speed: float) -> None:
    if kind == "waitFor":
        end = time.monotonic() + float(arg.get("timeout", 86400)) / speed
        done = lambda: _satisfied(up, arg, custom)  # noqa: E731
        if times_out:  # the simulator waited out the whole timeout: so must up, and not see it satisfied
            up.until(lambda: done() or time.monotonic() >= end, f"waitFor {arg}",
                     deadline=end - time.monotonic() + 5, most=POLL_FIRST)
            assert not done(), f"waitFor {arg}: satisfied on up, timed out in the simulator"
        else:
            up.until(done, f"waitFor {arg}", deadline=SYNC_DEADLINE, most=POLL_FIRST)
        return
    if kind == "after":
        end = time.monotonic() + float(arg) / speed
        up.until(lambda: time.monotonic() >= end, f"after {arg}", most=POLL_FIRST)
        return
    if kind == "deletePod":
        up.kubectl("delete", "pod", arg, "--wait=false")
        return
    resource = "rsts" if arg.get("name") in custom else "sts"
    if kind == "patch":
        up.kubectl("patch", resource, arg["name"], "--type=merge", "-p", json.dumps(arg["merge"]))
    elif kind == "scale":
        up.kubectl("scale", f"{resource}/{arg['name']}", f"--replicas={arg['replicas']}")
    elif kind in ("promote", "abort", "retry"):  # rollwise rollout promote [--full] | abort | retry, as a user runs it
        full = ["--full"] if arg.get("full") else []
        done = zygote.run(["rollout", kind, *full, f"{resource}/{arg['name']}", "--kubeconfig",
                           str(up.kubeconfig)], env=up.env, timeout=SYNC_DEADLINE)
        assert done.returncode == 0, done.stderr
    elif kind == "podFault":
        up.kubectl("create", "--raw", f"/debug/rollwise/namespaces/default/pods/{arg['pod']}/fault", "-f", "-",
                   stdin=json.dumps({"fault": arg["fault"]}))
    else:
        raise AssertionError(f"step {kind} is not replayed against up")


@pytest.fixture
def kubectl() -> Iterator[str]:
    found = find_kubectl()
    if found is None:
        pytest.skip("kubectl is not installed")
    yield found


@pytest.mark.parametrize("stem", sweep(((s.stem,) for s in SCENARIOS), fast=FAST))
def test_the_operator_against_up_decides_as_the_simulator(stem: str, kubectl: str, tmp_path: Path) -> None:
    scenario = next(s for s in SCENARIOS if s.stem == stem)
    doc = _as_custom(yaml.safe_load(scenario.read_text()))
    sim = _simulate(doc, tmp_path)
    assert sim.in_place or any(verb == "delete" for seq in sim.actions.values() for _, verb, _ in seq), \
        "a scenario with decisions"
    speed = SPEED.get(scenario.stem, DEFAULT_SPEED)
    kubelet = tmp_path / "scenario-kubelet.yaml"
    kubelet.write_text(yaml.safe_dump(doc.get("kubelet") or {}))
    up = start_up(tmp_path, kubectl, "--controllers=-apps.rollwise.dev,-quorum", "--any-token", "--debug-endpoints",
                  "--kubelet", str(kubelet), "--speed", str(speed))
    try:
        up.install_rollwise()
        op = Operator(up, tmp_path, OPERATOR)
        try:
            op.wait_for(r"started leading")
            _replay(up, doc, sim, speed)
        finally:
            assert op.stop() == 0
        seen = _on_up(up, {o["metadata"]["name"] for o in doc["objects"] if o["apiVersion"] == CUSTOM})
        for name in sorted({*seen, *sim.actions}):
            expected = _in_instants(sim.actions.get(name, []), sim.instants.get(name, []))
            assert _grouped_as(seen.get(name, []), expected) == expected, \
                f"set {name}\n  on up:     {seen.get(name)}\n  simulated: {sim.actions.get(name)}"
    finally:
        stop_up(up.proc)
