"""Hand-built views for the quorum-aware controller: an etcd-like set, member pods in given states, Leases, and a
tiny world that plays deletions out (terminating -> gone -> recreated unready -> ready, one phase per reconcile)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping

from rollwise.api.features import QUORUM_AWARE, FeatureGates
from rollwise.api.identity import POD_NAME_LABEL, REVISION_LABEL, ordinal_of, revision_of
from rollwise.api.leases import LEADER, MEMBER, cluster_id, format_holder, member_id
from rollwise.api.meta import Obj, name_of
from rollwise.controllers.plan import DeletePod, Plan, WriteStatus
from rollwise.controllers.quorum import UPDATE_POLICY, reconcile_quorum
from rollwise.controllers.view import SetView

__all__ = [
    "MID",
    "NEW",
    "NOW",
    "OLD",
    "World",
    "deleted",
    "lease",
    "leases_for",
    "member",
    "quorum_set",
    "view_of",
]

SET = "etcd"
OLD, MID, NEW = "etcd-old", "etcd-mid", "etcd-new"
NOW = 100.0
SELECTOR = {"app": "etcd"}


def quorum_set(replicas: int = 3, *, notes: Mapping[str, str] | None = None, strategy: str = "OnDelete",
               api_version: str = "apps/v1", update: str | None = NEW, policy: str | None = "QuorumAware") -> Obj:
    """An OnDelete set annotated QuorumAware, containers ``etcd`` then ``backup-restore``, at ``update``."""
    annotations = dict(notes or {})
    if policy is not None:
        annotations[UPDATE_POLICY] = policy
    status: Obj = {"replicas": replicas, "currentRevision": OLD,
                   "conditions": [{"type": "Progressing", "status": "True", "reason": "Settled", "message": "",
                                   "lastTransitionTime": 1.0}]}
    if update is not None:
        status["updateRevision"] = update
    return {
        "apiVersion": api_version,
        "kind": "StatefulSet",
        "metadata": {"name": SET, "namespace": "default", "uid": "uid-etcd", "annotations": annotations},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(SELECTOR)},
            "updateStrategy": {"type": strategy},
            "template": {"metadata": {"labels": dict(SELECTOR)},
                         "spec": {"containers": [{"name": "etcd", "image": "etcd:1"},
                                                 {"name": "backup-restore", "image": "br:1"}]}},
        },
        "status": status,
    }


# Member container states: (containerStatus without name, participating).
_STATES: dict[str, Obj] = {
    "ready": {"ready": True, "state": {"running": {"startedAt": 1.0}}},
    "unready": {"ready": False, "state": {"running": {"startedAt": 1.0}}},
    "terminated": {"ready": False, "state": {"terminated": {"exitCode": 1, "reason": "Error"}}},
    "creating": {"ready": False, "state": {"waiting": {"reason": "ContainerCreating"}}},
    "initializing": {"ready": False, "state": {"waiting": {"reason": "PodInitializing"}}},
    "other-waiting": {"ready": False, "state": {"waiting": {"reason": "SomethingNew"}}},
}


def _status_of(state: str) -> Obj | None:
    if state == "unknown":
        return None
    if state in _STATES:
        return copy.deepcopy(_STATES[state])
    return {"ready": False, "state": {"waiting": {"reason": state}}}  # a waiting reason, e.g. CrashLoopBackOff


def member(ordinal: int, state: str = "ready", *, rev: str = OLD, terminating: bool = False,
           labels: Mapping[str, str] | None = None, sidecar: str = "ready", name: str | None = None,
           pod_ready: bool | None = None) -> Obj:
    """A member pod: ``state`` is the etcd container's (ready, unready, terminated, creating, initializing,
    other-waiting, unknown = no status entry, or a waiting reason such as CrashLoopBackOff)."""
    pod_name = name or f"{SET}-{ordinal}"
    statuses = []
    etcd = _status_of(state)
    if etcd is not None:
        statuses.append({"name": "etcd", "restartCount": 0, **etcd})
    side = _status_of(sidecar)
    if side is not None:
        statuses.append({"name": "backup-restore", "restartCount": 0, **side})
    ready = state == "ready" if pod_ready is None else pod_ready
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod_name, "namespace": "default", "uid": f"uid-{pod_name}-{rev}",
                     "labels": {**SELECTOR, POD_NAME_LABEL: pod_name, REVISION_LABEL: rev, **(labels or {})}},
        "spec": {"containers": [{"name": "etcd"}, {"name": "backup-restore"}]},
        "status": {"phase": "Running",
                   "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                   "containerStatuses": statuses},
    }
    if terminating:
        pod["metadata"]["deletionTimestamp"] = NOW - 1
    return pod


def lease(name: str, holder: str | None) -> Obj:
    spec = {} if holder is None else {"holderIdentity": holder}
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def leases_for(replicas: int, leader: int | None, *, template: str = "{pod}") -> dict[str, Obj]:
    """One Lease per member in the current three-part form, ``leader`` saying Leader and the rest Member."""
    out = {}
    for o in range(replicas):
        pod = f"{SET}-{o}"
        name = template.replace("{pod}", pod)
        out[name] = lease(name, format_holder(member_id(pod), cluster_id(SET), LEADER if o == leader else MEMBER))
    return out


def view_of(sts: Obj, pods: Iterable[Obj], leases: Mapping[str, Obj] | None = None, *,
            gate: bool = True, now: float = NOW) -> SetView:
    gates = FeatureGates() if gate else FeatureGates().with_overrides({QUORUM_AWARE: False})
    return SetView(set=sts, pods=tuple(pods), leases=dict(leases or {}), now=now, gates=gates)


def deleted(plan: Plan) -> list[str]:
    return [d.name for d in plan.of_type(DeletePod)]


class World:
    """Members that play deletions out one phase per reconcile; ``stall`` names pods whose new incarnation never
    becomes ready (its etcd container crash-loops). Status writes are applied, as the driver would."""

    def __init__(self, sts: Obj, pods: Iterable[Obj], leases: Mapping[str, Obj] | None = None, *,
                 stall: Iterable[str] = ()) -> None:
        self.sts = copy.deepcopy(sts)
        self.pods = {name_of(p): copy.deepcopy(p) for p in pods}
        self.leases = dict(leases or {})
        self.stall = set(stall)
        self.phase: dict[str, str] = {}
        self.order: list[str] = []
        self.plans: list[Plan] = []
        self.now = NOW

    def view(self) -> SetView:
        return view_of(self.sts, sorted(self.pods.values(), key=ordinal_of), self.leases, now=self.now)

    def participating(self) -> int:
        return sum(1 for p in self.pods.values()
                   if any(cs["name"] == "etcd" and cs.get("ready") for cs in p["status"]["containerStatuses"]))

    def reconcile(self) -> Plan:
        plan = reconcile_quorum(self.view())
        self.plans.append(plan)
        for action in plan.actions:
            if isinstance(action, WriteStatus):
                self.sts["status"] = action.status
        return plan

    def advance(self, plan: Plan) -> None:
        """Move every pod in flight one phase on, then mark the plan's deletions terminating."""
        update = self.sts["status"]["updateRevision"]
        for name, phase in list(self.phase.items()):
            ordinal = int(name.rsplit("-", 1)[1])
            if phase == "terminating":
                del self.pods[name]
                self.phase[name] = "gone"
            elif phase == "gone":
                state = "CrashLoopBackOff" if name in self.stall else "unready"
                self.pods[name] = member(ordinal, state, rev=update)
                self.phase[name] = "starting"
            elif name not in self.stall:
                self.pods[name] = member(ordinal, "ready", rev=revision_of(self.pods[name]))
                del self.phase[name]
        for name in deleted(plan):
            self.order.append(name)
            self.pods[name]["metadata"]["deletionTimestamp"] = self.now
            self.phase[name] = "terminating"
        self.now += 1.0

    def run(self, limit: int = 100) -> list[str]:
        """Reconcile and advance until the controller reports every member updated; the deletion order."""
        for _ in range(limit):
            plan = self.reconcile()
            if not plan.requeue_after and not self.phase:
                return self.order
            self.advance(plan)
        raise AssertionError(f"rollout did not finish: {self.order}")
