"""One lab run: a scenario under a strategy against real members of a store (etcd, ZooKeeper, NATS: the lab's store
table, ``lab/stores.py``), and the same in the quorum model with that store's parameters.

Real run (reference §3): boot the set, crash the members that are to be down, let the cluster settle, start the
write meter and the status poller, change the template, wait for the rollout to complete; the figures are counted
from the template change to completion (reference §4 item 6: the crash's own election is not the rollout's). Then,
with the members still up, every write the store acknowledged is read back: one missing is a lost write.
The result document is the simulator's (events from the store's change feed, the same summary), with the measured
outages and leaders added as ``QuorumLost``/``QuorumRestored``/``LeaderChanged`` events so one plot draws both.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rollwise.api.features import FeatureGates
from rollwise.api.meta import name_of
from rollwise.api.predicates import is_ready
from rollwise.kubelet.process.member import ProbeSettings
from rollwise.kubelet.process.runtime import ProcessRuntime
from rollwise.kubelet.process.stores import StoreError
from rollwise.lab.figures import (
    StatusSample,
    WriteRecord,
    elections,
    leader_moves,
    no_commit_gaps,
    refused_writes,
)
from rollwise.lab.meter import LeaderSampler, StatusPoller, WriteMeter
from rollwise.lab.plane import LabPlane
from rollwise.lab.scenarios import (
    ETCD,
    LabScenario,
    LabStrategy,
    LabTimings,
    model_scenario,
    set_manifest,
    template_patch,
)
from rollwise.lab.shadow import ShadowFigures, ShadowRecorder, Snapshot, group_samples, merge_spans, replay
from rollwise.lab.stores import LabStore, WriteFailed
from rollwise.sim import run_scenario
from rollwise.sim.record import rollout_complete

__all__ = ["Figures", "RealRun", "run_model", "run_real", "shadow_of_run"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Figures:
    completed: bool
    outage_seconds: float  # real: no-commit time; model: time without a leader (quorum lost, or electing)
    elections: int  # real: raft term increments; model: elections (hand-overs excluded)
    leader_moves: int
    rollout_seconds: float | None
    quorum_lost: bool
    quorum_loss_seconds: float | None = None  # the model's own figure (None for a real run)
    longest_gap_seconds: float = 0.0  # real: the longest time between commits; model: the longest leaderless span


@dataclass(frozen=True, slots=True, kw_only=True)
class RealRun:
    figures: Figures
    result: dict[str, Any]  # the result document, for the plot
    writes: tuple[WriteRecord, ...]
    samples: tuple[StatusSample, ...]
    claims_kept: bool  # every member's data directory still there at the end
    root: Path
    pids: tuple[int, ...]  # every process the run started (all stopped when it returns)
    final_pods: tuple[dict[str, Any], ...]
    update_revision: str
    shadow: ShadowFigures  # the quorum model replayed on this run's own pod timeline (``lab/shadow.py``)
    lost_writes: tuple[int, ...] = ()  # the writer's numbers of acknowledged writes the read-back did not find
    refused_writes: int = 0  # writes sent between the template change and completion that were never acknowledged
    acknowledged_writes: int = 0  # every write the store acknowledged during the run (all of them read back)


def _leader_moves_from_events(events: list[dict[str, Any]], since: float) -> int:
    """The model's moves, counted as the real ones are: a different member leads than the previous leader."""
    moves, last = 0, None
    for ev in events:
        if ev["type"] != "LeaderChanged" or not ev.get("pod"):
            continue
        if last is not None and ev["pod"] != last and ev["t"] >= since:
            moves += 1
        last = ev["pod"]
    return moves


def _no_commit_spans(events: list[dict[str, Any]], since: float, until: float) -> list[float]:
    """The model's spans without commits in [since, until], the counterpart of the no-commit gaps: no leader (lost,
    electing, handing over), or no quorum, which stops writes even where the leader holds its term through the loss
    (NATS). Together they are the quorum-loss time plus each election's ``electionSeconds`` (or a requested
    hand-over's ``transferSeconds``)."""
    spans: list[tuple[float, float]] = []
    open_at: dict[str, float | None] = {"leader": None, "quorum": None}
    for ev in sorted(events, key=lambda e: e["t"]):
        kind = {"LeaderChanged": "leader", "QuorumLost": "quorum", "QuorumRestored": "quorum"}.get(ev["type"])
        if kind is None:
            continue
        ends = (ev["type"] == "LeaderChanged" and bool(ev.get("pod"))) or ev["type"] == "QuorumRestored"
        began = open_at[kind]
        if not ends and began is None:
            open_at[kind] = ev["t"]
        elif ends and began is not None:
            spans.append((began, ev["t"]))
            open_at[kind] = None
    spans += [(began, until) for began in open_at.values() if began is not None]
    return [b - a for a, b in merge_spans([(max(a, since), min(b, until)) for a, b in spans
                                           if b > since and a < until])]


def run_model(scenario: LabScenario, strategy: LabStrategy, timings: LabTimings,
              store: LabStore = ETCD) -> tuple[Figures, dict[str, Any]]:
    result = run_scenario(model_scenario(scenario, strategy, timings, store))
    fig = result["summary"][store.set_name]
    start = next((e["t"] for e in result["events"] if e["type"] == "Step" and e.get("action") == "patch"), 0.0)
    end = start + float(fig["rolloutSeconds"]) if fig["rolloutSeconds"] is not None else float(result["endedAt"])
    spans = _no_commit_spans(result["events"], start, end)
    return Figures(completed=bool(fig["completed"]), outage_seconds=round(sum(spans), 3),
                   longest_gap_seconds=round(max(spans, default=0.0), 3),
                   elections=int(fig["leaderElections"] or 0),
                   leader_moves=_leader_moves_from_events(result["events"], start),
                   rollout_seconds=fig["rolloutSeconds"], quorum_lost=bool(fig["quorumLossSeconds"]),
                   quorum_loss_seconds=float(fig["quorumLossSeconds"] or 0.0)), result


def _complete(plane: LabPlane, name: str) -> bool:
    sts = plane.cluster.get("StatefulSet", "default", name)
    return rollout_complete(sts, plane.pods_of(sts), plane.clock())


def run_real(scenario: LabScenario, strategy: LabStrategy, timings: LabTimings, *, root: Path | None = None,
             rate: float = 20.0, timeout: float = 180.0, store: LabStore = ETCD) -> RealRun:
    root = Path(tempfile.mkdtemp(prefix="rollwise-lab-")) if root is None else root
    probe = ProbeSettings(initial_delay_seconds=timings.probe_initial_delay_seconds,
                          period_seconds=timings.probe_period_seconds, timeout_seconds=timings.probe_timeout_seconds,
                          failure_threshold=timings.probe_failure_threshold,
                          heartbeat_seconds=timings.heartbeat_seconds)
    runtime = store.runtime_class(root, probe=probe, start_seconds=timings.start_seconds, pattern=store.runtime.image)
    plane = LabPlane(runtime, gates=FeatureGates().with_overrides(strategy.gates))
    return asyncio.run(_run_real(plane, scenario, strategy, timings, rate=rate, timeout=timeout, store=store))


async def _prepared(plane: LabPlane, store: LabStore, endpoints: list[str], replicas: int) -> None:
    """The store's own preparation for the writer (NATS: its stream), retried while the members settle."""
    if store.prepare is None:
        return
    end, last = plane.clock() + 30, ""
    while plane.clock() < end:
        try:
            await asyncio.to_thread(store.prepare, endpoints[0], replicas, 5.0)
            return
        except StoreError as err:
            last = str(err)
        await plane.run_until(lambda: False, timeout=0.5)
    raise RuntimeError(f"the {store.key} members could not be prepared for the writer: {last}")


async def _run_real(plane: LabPlane, scenario: LabScenario, strategy: LabStrategy, timings: LabTimings, *,
                    rate: float, timeout: float, store: LabStore) -> RealRun:
    runtime, root, name = plane.runtime, plane.runtime.root, store.set_name
    meter: WriteMeter | None = None
    poller: StatusPoller | None = None
    sampler: LeaderSampler | None = None
    try:
        async with plane:
            plane.create(set_manifest(scenario, strategy, timings, store))
            members = ShadowRecorder(pods=lambda: plane.pods_of(plane.cluster.get("StatefulSet", "default", name)),
                                     replicas=scenario.replicas)
            plane.feed.listen(lambda ch: members.observe(ch.at) if ch.kind == "Pod" else None)
            if not await plane.run_until(lambda: _complete(plane, name), timeout=90):
                raise RuntimeError(f"the {store.key} members did not all become ready within 90 s; logs in "
                                   f"{root / 'logs'}")
            layout = runtime.layout(plane.cluster.get("StatefulSet", "default", name))
            endpoints = layout.endpoints()
            attached = {layout.member(i).endpoint: f"{name}-{i}" for i in layout.ordinals()}
            await _prepared(plane, store, endpoints, scenario.replicas)
            for ordinal in scenario.down:
                plane.pod_fault(f"{name}-{ordinal}", "crash")
            settle_end = plane.clock() + timings.settle_seconds
            meter = WriteMeter(endpoints, clock=plane.clock, rate=rate, write=store.write).start()
            poller = StatusPoller([layout.member(i) for i in layout.ordinals()], clock=plane.clock,
                                  role=store.runtime.role).start()
            sampler = None if store.writes_leader is None else LeaderSampler(
                endpoints, clock=plane.clock, read=store.writes_leader).start()
            # reference §4 item 6: a crashed leader costs an election before the rollout; start only once writes
            # commit again and every member left running is Ready, so the figures are the rollout's own. (A NATS
            # stream's leader serves writes before the meta group has elected, and its members report unhealthy
            # until it has: a template change then would find no member participating.)
            survivors = {f"{name}-{o}" for o in range(scenario.replicas) if o not in scenario.down}

            def settled_now() -> bool:
                ready = {name_of(p) for p in plane.pods_of(plane.cluster.get("StatefulSet", "default", name))
                         if is_ready(p)}
                return plane.clock() >= settle_end and meter is not None and meter.committing() and survivors <= ready

            settled = await plane.run_until(settled_now, timeout=timings.settle_seconds + 30)
            if not settled:
                raise RuntimeError(f"writes did not resume within 30 s after the crash faults; logs in {root}")
            t0 = plane.clock()
            plane.recorder.emit(t0, "Step", index=0, action="patch")
            plane.patch_set(name, template_patch(store))
            completed = await plane.run_until(lambda: _complete(plane, name), timeout=timeout)
            t1 = plane.clock()
            await plane.run_until(lambda: plane.clock() >= t1 + 0.5, timeout=1.0)
            writes, samples = await asyncio.to_thread(meter.stop), await asyncio.to_thread(poller.stop)
            write_leaders = None if sampler is None else await asyncio.to_thread(sampler.stop)
            lost = await _read_back(plane, store, meter)
            meter = poller = sampler = None
            gaps = no_commit_gaps(writes, since=t0, until=t1)
            summary = plane.recorder.summary(t1)
            final_set = plane.cluster.get("StatefulSet", "default", name)
            final_pods = plane.pods_of(final_set)
            ids = _member_pods(plane, runtime) if store.key == "etcd" else {
                o + 1: store.pod(o + 1) for o in range(scenario.replicas)}
            _annotate(plane, gaps, samples, ids, name)
    finally:
        if meter is not None:
            meter.stop()
        if poller is not None:
            poller.stop()
        if sampler is not None:
            sampler.stop()
    claims_kept = all((runtime.data_dir("default", f"data-{name}-{o}") / store.data_marker).exists()
                      for o in range(scenario.replicas))
    result = {"scenario": f"lab-{scenario.name}", "description": scenario.description, "strategy": strategy.label,
              "endedAt": round(t1 + 0.5, 3), "events": sorted(plane.recorder.events, key=lambda e: e["t"]),
              "summary": summary, "apiWrites": {}, "metrics": {}, "final": {}}
    fig = summary[name]
    outage, terms = round(sum(b - a for a, b in gaps), 3), elections(samples, since=t0, until=t1)
    # The measured counterparts of the model's figures, so a plot's panel title shows them too.
    fig.update(quorumLossSeconds=outage, leaderElections=terms)
    longest = max((b - a for a, b in no_commit_gaps(writes, since=t0, until=t1, threshold=0.0)), default=0.0)
    writer = [(w.end, attached[w.endpoint]) for w in sorted(writes, key=lambda w: w.end)
              if w.ok and w.endpoint in attached] if timings.client_stalls_at_sigterm else []
    shadow = shadow_of_run(members.snapshots, samples, ids, timings, replicas=scenario.replicas, since=t0, until=t1,
                     writer=writer, write_leaders=write_leaders)
    return RealRun(figures=Figures(completed=completed, outage_seconds=outage, elections=terms,
                                   longest_gap_seconds=round(longest, 3),
                                   leader_moves=leader_moves(samples, since=t0, until=t1),
                                   rollout_seconds=fig["rolloutSeconds"], quorum_lost=bool(gaps)),
                   result=result, writes=tuple(writes), samples=tuple(samples), claims_kept=claims_kept,
                   root=root, pids=tuple(runtime.supervisor.started), final_pods=tuple(final_pods),
                   update_revision=str((final_set.get("status") or {}).get("updateRevision", "")), shadow=shadow,
                   lost_writes=tuple(lost), refused_writes=refused_writes(writes, since=t0, until=t1),
                   acknowledged_writes=sum(1 for w in writes if w.ok))


async def _read_back(plane: LabPlane, store: LabStore, meter: WriteMeter) -> list[int]:
    """The acknowledged writes the store no longer has, retried while a member settles after the rollout."""
    end, last = plane.clock() + 30, ""
    while plane.clock() < end:
        try:
            return await asyncio.to_thread(meter.lost, store.read_back, timeout=5.0)
        except WriteFailed as err:
            last = str(err)
        await plane.run_until(lambda: False, timeout=0.5)
    raise RuntimeError(f"the {store.key} members could not be read back after the rollout: {last}")


def shadow_of_run(snapshots: list[Snapshot], samples: list[StatusSample], ids: dict[int, str], timings: LabTimings, *,
            replicas: int, since: float, until: float, writer: list[tuple[float, str]],
            write_leaders: list[tuple[float, str]] | None) -> ShadowFigures:
    """The model replayed on the run's timeline. Where the writes go through a group of their own (NATS' stream),
    that group is replayed too, from its own sampled leaders, and gives the outage; the probed group (the meta
    group, whose terms the elections count) gives the elections and leader moves."""
    params = timings.quorum_params()
    window = timings.election_draw_seconds
    probed = replay(snapshots, samples, ids, params, replicas=replicas, since=since, until=until, writer=writer,
                    election_window=window)
    if write_leaders is None:
        return probed
    group = replay(snapshots, group_samples(write_leaders, ids), ids, params, replicas=replicas, since=since,
                   until=until, writer=writer, election_window=window, by_time=True)
    return replace(probed, outage_seconds=group.outage_seconds, longest_gap_seconds=group.longest_gap_seconds)


def _annotate(plane: LabPlane, gaps: list[tuple[float, float]], samples: list[StatusSample],
              pods: dict[int, str], name: str) -> None:
    """Measured outages and leaders as the quorum model's event types, for ``cli/plot.py``."""
    for a, b in gaps:
        plane.recorder.emit(a, "QuorumLost", statefulSet=name, measured="no-commit gap")
        plane.recorder.emit(b, "QuorumRestored", statefulSet=name, measured="no-commit gap")
    best, leader = -1, 0
    for s in samples:
        if s.leader == 0 or s.term < best:
            continue
        best = s.term
        if s.leader != leader:
            leader = s.leader
            plane.recorder.emit(s.t, "LeaderChanged", statefulSet=name, pod=pods.get(leader))


def _member_pods(plane: LabPlane, runtime: ProcessRuntime) -> dict[int, str]:
    """etcd member id -> pod name, from the running members and the member Leases they wrote."""
    pods = {int(lease.holder.split(":")[0], 16): lease.name for lease in runtime.member_leases()}
    for lease in plane.cluster.list("Lease"):
        pods.setdefault(int(str(lease["spec"]["holderIdentity"]).split(":")[0], 16), lease["metadata"]["name"])
    return pods
