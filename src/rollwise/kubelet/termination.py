"""How the simulated kubelet stops a deleted pod's containers, as the real one does (pkg/kubelet: the pod worker's
``syncTerminatingPod``, ``kuberuntime_container.go`` killContainer, the status manager's ``TerminatePod``).

- A container running at the deletion runs its ``preStop`` hook first. A ``sleep`` action (KEP-3960) takes its
  seconds; an exec or httpGet hook has no duration here. The hook is bounded by the grace period.
- Then SIGTERM. The process exits after its image's ``stopSeconds``: exit code 0, reason ``Completed``. One still
  running when the rest of the grace period runs out is killed: 137, reason ``Error``. killContainer always leaves
  at least ``minimumGracePeriodInSeconds`` (2 s) after the hook, whatever the grace period says.
- A container not running at the deletion (still being created, backing off) has nothing to stop. It shows
  terminated with 137 and ``ContainerStatusUnknown``, as ``TerminatePod`` writes it. One that had just exited keeps
  its exit.
- Until it stops, a container looks as it did at the deletion. Liveness and startup probes stop at the deletion
  (prober/worker.go); readiness keeps its last result, so a pod stays Ready until its containers exit.
- Once every container has stopped the pod is terminal (since 1.27): ``Succeeded`` if every exit code is 0, else
  ``Failed``, and Ready is False with reason ``PodCompleted`` or ``PodFailed`` (status/generate.go). The kubelet then
  removes it (grace 0). A finalizer keeps the object, not its containers.

The schedule is decided once, at the first look after the deletion. A repeated delete may shorten it; it is never
made longer. The kubelet's own grace-0 delete, which comes after every container has stopped, changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rollwise.kubelet.containers import KILLED_EXIT_CODE, ContainerRuntime, ContainerView, Termination
from rollwise.kubelet.profiles import KubeletProfile

__all__ = ["DEFAULT_GRACE_SECONDS", "MIN_GRACE_SECONDS", "grace_seconds", "schedule", "stopped_view",
           "terminal_phase"]

DEFAULT_GRACE_SECONDS = 30.0  # the API server's default terminationGracePeriodSeconds
MIN_GRACE_SECONDS = 2.0  # kuberuntime's minimumGracePeriodInSeconds
UNKNOWN_REASON = "ContainerStatusUnknown"
UNKNOWN_MESSAGE = "The container could not be located when the pod was terminated"


def grace_seconds(pod: Mapping[str, Any]) -> float:
    """The pod's grace period: the delete call's, else ``spec.terminationGracePeriodSeconds``, else 30."""
    # An explicit 0 (force deletion) is a real grace period, so test for None, not falsiness.
    grace = pod.get("metadata", {}).get("deletionGracePeriodSeconds")
    if grace is None:
        grace = pod.get("spec", {}).get("terminationGracePeriodSeconds")
    return DEFAULT_GRACE_SECONDS if grace is None else max(0.0, float(grace))


def _pre_stop_seconds(spec: Mapping[str, Any] | None) -> float:
    """The seconds a container's preStop hook takes: its ``sleep`` action's, else none."""
    hook = ((spec or {}).get("lifecycle") or {}).get("preStop") or {}
    sleep = hook.get("sleep") if isinstance(hook, dict) else None
    seconds = sleep.get("seconds") if isinstance(sleep, dict) else None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return 0.0
    return max(0.0, float(seconds))


def _stop(c: ContainerRuntime, v: ContainerView, spec: Mapping[str, Any] | None, profile: KubeletProfile,
          deleted: float, grace: float) -> Termination:
    if not v.running:
        if v.exited is not None:
            return v.exited
        return Termination(exit_code=KILLED_EXIT_CODE, reason=UNKNOWN_REASON, message=UNKNOWN_MESSAGE,
                           started_at=None, finished_at=deleted)
    hook = min(_pre_stop_seconds(spec), grace)
    left = max(grace - hook, MIN_GRACE_SECONDS)
    exits = profile.stop_delay(c.image)
    if exits <= left:
        return Termination(exit_code=0, reason="Completed", started_at=v.run_started_at,
                           finished_at=deleted + hook + exits)
    return Termination(exit_code=KILLED_EXIT_CODE, reason="Error", started_at=v.run_started_at,
                       finished_at=deleted + hook + left)


def schedule(pod: Mapping[str, Any], views: Sequence[tuple[ContainerRuntime, ContainerView]],
             profile: KubeletProfile, deleted: float, now: float,
             kept: tuple[Termination, ...] | None) -> tuple[Termination, ...]:
    """When and how each container stops. ``kept``: the schedule decided at an earlier look; a container that has
    stopped by ``now`` keeps its exit, one still running may only stop sooner (a shorter repeated delete)."""
    specs = {str(s.get("name", "")): s for s in pod.get("spec", {}).get("containers") or () if isinstance(s, dict)}
    grace = grace_seconds(pod)
    fresh = tuple(_stop(c, v, specs.get(c.name), profile, deleted, grace) for c, v in views)
    if kept is None or len(kept) != len(fresh):
        return fresh
    return tuple(old if old.finished_at <= now or old.finished_at <= new.finished_at else new
                 for old, new in zip(kept, fresh, strict=True))


def stopped_view(v: ContainerView, stop: Termination) -> ContainerView:
    """The container once it has stopped: terminated, not ready, not started; restarts and lastState kept."""
    return ContainerView(state=stop.as_state(), last=v.last, ready=False,
                         ready_since=stop.finished_at if v.ready else v.ready_since, running=False,
                         run_started_at=v.run_started_at, restart_count=v.restart_count,
                         ever_started=v.ever_started, exited=stop)


def terminal_phase(stops: Sequence[Termination]) -> str:
    """The phase of a pod whose every container has stopped (kubelet_pods.go getPhase with podIsTerminal)."""
    return "Succeeded" if all(s.exit_code == 0 for s in stops) else "Failed"
