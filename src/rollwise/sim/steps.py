"""Scenario steps as store operations, run in order (spec/simulate.md ``steps:``).

A step that acts (apply, patch, scale, deletePod, podFault, releaseHook, delete) runs and the next one follows at
the same instant; ``after`` and ``waitFor`` hand control back to virtual time. A step the API server refuses (say,
a patch that makes the set invalid) is recorded as a ``StepRejected`` event and the run goes on, as it would for a
person whose ``kubectl`` command failed.
"""

from __future__ import annotations

from typing import Any

from rollwise.api.abort import NothingToAbort, NothingToRetry, aborted_status, retried_status
from rollwise.api.errors import ApiStatusError, FieldError, Invalid, NotFound
from rollwise.api.meta import Obj, name_of, namespace_of
from rollwise.api.pod_status import pod_status_errors
from rollwise.api.steps import NothingToPromote, promoted_status
from rollwise.api.values import clone
from rollwise.cluster.resources import ResourceRef, ref_of
from rollwise.cluster.store.patching import merge_patch
from rollwise.runtime.setkeys import find_set, set_resource
from rollwise.scenario.manifests import check_manifest
from rollwise.scenario.step_schema import Step
from rollwise.sim.context import SimContext
from rollwise.sim.engine import STEP

__all__ = ["StepRunner"]


class StepRunner:
    def __init__(self, sim: SimContext) -> None:
        self.sim = sim
        self.next_index = 0
        self.waiting: tuple[Step, int] | None = None
        self.finished = not sim.scenario.steps

    @property
    def _steps(self) -> tuple[Step, ...]:
        return self.sim.scenario.steps

    def resume(self) -> None:
        """Run steps from the next one until one hands control back to time."""
        while self.next_index < len(self._steps):
            step = self._steps[self.next_index]
            self.next_index += 1
            now = self.sim.clock.now
            self.sim.recorder.emit(now, "Step", index=step.index, action=step.action)
            if step.action == "after":
                self.sim.engine.at(now + float(step.args), STEP, self.resume)
                return
            if step.action == "waitFor":
                if "seconds" in step.args:
                    self.sim.engine.at(now + float(step.args["seconds"]), STEP, self.resume)
                    return
                deadline = now + float(step.args.get("timeout", self.sim.scenario.limit_seconds))
                self.waiting = (step, self.sim.engine.at(deadline, STEP, self._timeout(step)))
                return
            self._act(step)
            self.sim.drain()
        self.finished = True

    def _timeout(self, step: Step) -> Any:
        def fire() -> None:
            if self.waiting is not None and self.waiting[0] is step:
                self.waiting = None
                self.sim.recorder.emit(self.sim.clock.now, "WaitTimedOut", index=step.index)
                self.resume()
        return fire

    def check_wait(self) -> None:
        """At the end of each instant: a satisfied waitFor lets the next step run, at this same instant."""
        if self.waiting is None:
            return
        step, timer = self.waiting
        if self._satisfied(step.args):
            self.waiting = None
            self.sim.engine.cancel(timer)
            self.sim.engine.at(self.sim.clock.now, STEP, self.resume)

    def _satisfied(self, args: dict[str, Any]) -> bool:
        target = str(args.get("rolloutComplete") or args.get("ready"))
        try:
            sts = find_set(self.sim.cluster, args.get("namespace", "default"), target)
        except NotFound:
            return False
        if "rolloutComplete" in args:
            return self.sim.tallies.complete(sts)
        status = sts.get("status") or {}
        want = int(sts["spec"].get("replicas", 1))
        return (status.get("observedGeneration") == sts["metadata"].get("generation")
                and status.get("readyReplicas") == want and status.get("replicas") == want)

    def _act(self, step: Step) -> None:
        cluster = self.sim.cluster
        args = step.args
        try:
            if step.action == "apply":
                self._apply(args)
            elif step.action == "patch":
                namespace = args.get("namespace", "default")
                resource = self._resource(args)
                self._check_patched(resource, namespace, args["name"], args["merge"])
                cluster.patch(resource, namespace, args["name"], args["merge"], actor="user")
            elif step.action == "scale":
                cluster.patch(self._resource({**args, "kind": "StatefulSet"}), args.get("namespace", "default"),
                              args["name"], {"spec": {"replicas": args["replicas"]}}, actor="user")
            elif step.action == "deletePod":
                cluster.delete("Pod", "default", args, actor="user")
            elif step.action == "delete":
                cluster.delete(self._resource(args), args.get("namespace", "default"), args["name"],
                               propagation="Orphan" if args.get("cascade") == "orphan" else "Background",
                               actor="user")
            elif step.action == "podFault" and not self.sim.pod_fault(args["pod"], args["fault"]):
                raise NotFound(f'pods "{args["pod"]}" not found')
            elif step.action in ("promote", "abort", "retry"):
                self._write_rollout_status(step.action, args)
            elif step.action == "releaseHook" and not self.sim.release_hook(args):
                raise NotFound(f'pods "{args}" not found')
        except ApiStatusError as err:
            self.sim.recorder.emit(self.sim.clock.now, "StepRejected", index=step.index, action=step.action,
                                   reason=err.reason, message=str(err))

    def _write_rollout_status(self, action: str, args: dict[str, Any]) -> None:
        """``rollwise rollout promote [--full] | abort | retry``: the same status write (api/steps.py,
        api/abort.py), at the read version; a refusal (nothing to promote, abort or retry) is a rejected step."""
        sts = find_set(self.sim.cluster, args.get("namespace", "default"), args["name"])
        try:
            if action == "promote":
                status = promoted_status(sts, full=bool(args.get("full", False)))
            else:
                status = aborted_status(sts) if action == "abort" else retried_status(sts)
        except (NothingToPromote, NothingToAbort, NothingToRetry) as err:
            raise Invalid(str(err)) from None
        self.sim.cluster.update_status({**sts, "status": status}, actor="user")

    def _check_patched(self, kind: ResourceRef, namespace: str, name: str, merge: dict[str, Any]) -> None:
        """A patch is refused, as the API server with strict field validation would, when the object it makes is
        malformed (a pod without containers would otherwise reach the kubelet)."""
        current = self.sim.cluster.get(kind, namespace, name)
        patched = merge_patch(current, merge)
        if patched.get("kind") != current.get("kind"):
            return  # the store refuses a patch that changes what the object is
        errors: list[FieldError] = []
        check_manifest(patched, "", self.sim.scenario.gates, errors, copy=False)
        if kind == "Pod":
            errors += pod_status_errors(patched)  # as rollwise up (and kube-apiserver) refuse it
        if errors:
            raise Invalid(f'{kind} "{name}" is invalid: ' + "; ".join(map(str, errors)), errors=errors)

    def _resource(self, args: dict[str, Any]) -> ResourceRef:
        """A step's ``kind``: ``StatefulSet`` names the set of that name, whichever of its two resources it is."""
        if args["kind"] != "StatefulSet":
            return str(args["kind"])
        try:
            return set_resource(find_set(self.sim.cluster, args.get("namespace", "default"), args["name"]))
        except NotFound:
            return "StatefulSet"

    def _apply(self, manifest: Obj) -> None:
        """Create, or replace the spec and metadata of what exists (``kubectl apply`` for a whole manifest)."""
        cluster = self.sim.cluster
        obj = clone(manifest)
        try:
            current = cluster.get(ref_of(obj), namespace_of(obj), name_of(obj))
        except NotFound:
            cluster.create(obj, actor="user")
            return
        meta = {**current["metadata"], **{k: v for k, v in obj.get("metadata", {}).items()
                                          if k in ("labels", "annotations")}}
        cluster.update({**current, **{k: v for k, v in obj.items() if k not in ("metadata", "status")},
                        "metadata": meta}, actor="user")
