"""The explorer's state: the store objects that matter, in a canonical hashable form with time abstracted.

A ``Node`` carries a whole ``MemoryCluster`` (so controllers and the executor run on the real thing) plus the
bookkeeping the invariants need: the template and partition each pod was created under, the budgets already
spent, and (for the stale-view perturbation) the store as it was up to K moves earlier, with the resourceVersions
each controller last wrote (the read-your-writes check's record). ``Node.key`` forgets what cannot change a
decision: uids, resourceVersions, timestamps (beyond "available or not"), generations (beyond "observed or not").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rollwise.api.features import FeatureGates
from rollwise.api.identity import ordinal_of, ordinal_range, revision_of
from rollwise.api.in_place import in_place_pending
from rollwise.api.leases import lease_role
from rollwise.api.meta import Obj, annotations_of, name_of, uid_of
from rollwise.api.ordinals import OrdinalSpan
from rollwise.api.predicates import is_terminating
from rollwise.api.strategies import ROLLING_KINDS, declared_type
from rollwise.cluster.resources import ANALYSIS_RUN, GroupKind
from rollwise.cluster.store.memory import MemoryCluster
from rollwise.controllers.quorum.settings import handed_to_quorum
from rollwise.explore.pods import stage_of
from rollwise.invariants.stages import image_of
from rollwise.runtime.actors import QUORUM_CONTROLLER, STATEFULSET_CONTROLLER
from rollwise.runtime.setkeys import set_resource

__all__ = [
    "HOOK_LABEL",
    "HOOK_VALUE",
    "NAMESPACE",
    "PERTURBATIONS",
    "QUORUM_CONTROLLER",
    "STATEFULSET_CONTROLLER",
    "Bounds",
    "Move",
    "Node",
    "SetFacts",
    "Used",
    "facts_of",
    "perturbations_of",
    "with_hook_label",
]

NAMESPACE = "default"
PERTURBATIONS = ("stale", "crash", "burst", "roles")
SAFETY_ACTIONS = ("pause", "pdb", "reserve", "hook")
HOOK_LABEL = "example.com/drain"
"""With the ``hook`` safety action, every pod carries this label (``pending``) from its template: the label of the
pre-delete hook a user may put on the set (api/lifecycle.py), and that the application releases as a move."""
HOOK_VALUE = "pending"


def with_hook_label(manifest: Obj, bounds: Bounds) -> Obj:
    """The manifest the exploration starts from: with the ``hook`` action, its template carries ``HOOK_LABEL``."""
    if "hook" not in bounds.safety_actions:
        return manifest
    template = manifest["spec"]["template"]
    meta = dict(template.get("metadata") or {})
    meta["labels"] = {**(meta.get("labels") or {}), HOOK_LABEL: HOOK_VALUE}
    return {**manifest, "spec": {**manifest["spec"], "template": {**template, "metadata": meta}}}


@dataclass(frozen=True, slots=True, kw_only=True)
class Bounds:
    """How far the environment may go. ``replicas`` is the largest size; scaling moves between it and one less."""

    replicas: int = 3
    template_changes: int = 1
    faults: int = 1
    user_actions: int = 1
    perturbations: frozenset[str] = frozenset()
    perturbation_budget: int = 1
    """How many stale reconciles and how many controller crashes one path may contain (each)."""
    stale_depth: int = 1
    """``stale:K``: a stale reconcile decides on the store as it was up to K moves earlier (informer lag)."""
    read_your_writes: bool = True
    """The runtime's KEP-5647 check: a controller never decides on a view older than its own last write."""
    max_states: int = 200_000
    broken_image: str = ""
    """An image that never pulls (the broken template); derived from the set's image when empty."""
    safety_actions: frozenset[str] = frozenset()
    """Further user actions (``SAFETY_ACTIONS``), each spending a user action: ``pause`` toggles spec.paused,
    ``pdb`` creates a PodDisruptionBudget of maxUnavailable 1 over the set's pods, ``reserve`` reserves the
    set's second wanted ordinal (``spec.reserveOrdinals``), or clears the list when it holds any: pods move;
    ``hook`` adds (or removes) a pre-delete hook on ``HOOK_LABEL``; the application releasing a marked pod's hook
    is a move of its own."""


@dataclass(frozen=True, slots=True)
class Used:
    """Budgets spent on the path to a state (part of the state: the same store with more budget left differs)."""

    template_changes: int = 0
    faults: int = 0
    user_actions: int = 0
    stale: int = 0
    crashes: int = 0
    roles: int = 0
    """Reconciles on a faulty role source (``--perturb roles``, explore/roles.py)."""

    def within(self, other: Used) -> bool:
        """No budget spent beyond ``other``'s: from the same store, this state can make every move that one can."""
        return (self.template_changes <= other.template_changes and self.faults <= other.faults
                and self.user_actions <= other.user_actions and self.stale <= other.stale
                and self.crashes <= other.crashes and self.roles <= other.roles)


@dataclass(frozen=True, slots=True, kw_only=True)
class Move:
    """One transition: who acts (a controller, ``kubelet``, ``user``), what, on which object, and how."""

    actor: str
    kind: str
    target: str = ""
    detail: str = ""
    healthy: bool = True
    """Part of the healthy sub-graph liveness walks: controllers unperturbed, pods progressing, no user and no fault."""
    created: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    """The pods a controller move created and asked to delete."""

    def words(self) -> str:
        text = f"{self.actor}: {self.kind}"
        if self.target:
            text += f" {self.target}"
        if self.detail:
            text += f" ({self.detail})"
        return text


@dataclass(frozen=True, slots=True, kw_only=True)
class SetFacts:
    """What the explorer needs to know about the set's configuration, read once from its spec."""

    name: str
    resource: GroupKind
    """Which StatefulSet resource the set is (``apps/v1`` or ``apps.rollwise.dev``): both run the same controllers."""
    strategy: str
    """RollingUpdate, OnDelete, Recreate, EnforcedRollingUpdate, or QuorumAware (OnDelete plus the annotation)."""
    policy: str
    min_ready_seconds: float
    good_images: tuple[str, ...]
    broken_image: str
    gates: FeatureGates
    has_partition: bool
    when_scaled: str
    when_deleted: str


def facts_of(sts: Obj, *, gates: FeatureGates, broken_image: str = "") -> SetFacts:
    spec = sts["spec"]
    kind = declared_type(spec.get("updateStrategy") or {})
    if handed_to_quorum(sts):
        kind = "QuorumAware"
    image = image_of(spec["template"])
    retention = spec.get("persistentVolumeClaimRetentionPolicy") or {}
    return SetFacts(
        name=name_of(sts), resource=set_resource(sts), strategy=kind,
        policy=spec.get("podManagementPolicy") or "OrderedReady",
        min_ready_seconds=float(spec.get("minReadySeconds") or 0), good_images=(image, f"{image}-next"),
        broken_image=broken_image or f"{image}-broken", gates=gates,
        has_partition=kind in ROLLING_KINDS,
        when_scaled=retention.get("whenScaled") or "Retain", when_deleted=retention.get("whenDeleted") or "Retain",
    )


@dataclass(slots=True, kw_only=True)
class Node:
    cluster: MemoryCluster
    facts: SetFacts
    born: Mapping[str, tuple[str, int, bool]] = field(default_factory=dict)
    """Pod name → (template image, partition) when the controller created it (the no-churn invariant)."""
    used: Used = Used()
    history: tuple[MemoryCluster, ...] = ()
    """The stores up to ``stale_depth`` moves earlier, newest first: what a lagging informer may still show (kept
    only while a stale reconcile may still happen on this path, so it splits states only when it can matter)."""
    written: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Controller → resource → the resourceVersion of its last write there (KEP-5647's record)."""
    admitted: tuple[tuple[bool, ...], ...] = ()
    """Per entry of ``history``: whether each controller's read-your-writes check lets it decide on that store
    (empty with the check off). Part of the key in place of the resourceVersions, which the key forgets."""
    _key: tuple[Any, ...] | None = None

    @property
    def sts(self) -> Obj:
        return self.cluster.get(self.facts.resource, NAMESPACE, self.facts.name)

    def pods(self) -> list[Obj]:
        return [pod for pod in self.cluster.list("Pod", NAMESPACE) if ordinal_of(pod) >= 0]

    def in_range(self) -> OrdinalSpan:
        return ordinal_range(self.sts)

    @property
    def key(self) -> tuple[Any, ...]:
        """(``key_but_budgets``, the budgets spent): built in two parts so the subsumption check reads the first
        without copying."""
        if self._key is None:
            rest = (store_key(self.cluster, self.facts), tuple(sorted(self.born.items())),
                    tuple(store_key(old, self.facts) for old in self.history), self.admitted)
            self._key = (rest, self.used)
        return self._key

    @property
    def key_but_budgets(self) -> tuple[Any, ...]:
        """``key`` without the budgets spent (``used``): states alike but for what is left to spend."""
        rest: tuple[Any, ...] = self.key[0]
        return rest


def perturbations_of(items: Iterable[str]) -> tuple[frozenset[str], int]:
    """The switches of ``--perturb`` and the stale depth (``stale`` is ``stale:1``). Raises ValueError, naming the
    item and the rule, on an unknown switch or a bad depth."""
    switches, depth = set(), 1
    for item in items:
        name, colon, value = item.partition(":")
        if name not in PERTURBATIONS:
            raise ValueError(f"{item}: supported values: {', '.join(PERTURBATIONS)} (stale:K for a depth)")
        if colon:
            if name != "stale":
                raise ValueError(f"{item}: only stale takes a depth")
            if not value.isdigit() or int(value) < 1:
                raise ValueError(f"{item}: the depth K of stale:K must be a whole number of at least 1")
            depth = int(value)
        switches.add(name)
    return frozenset(switches), depth


_TIMES = frozenset({"lastTransitionTime", "lastUpdateTime", "lastProbeTime", "startedAt", "finishedAt"})


def freeze(value: Any) -> Any:
    """A hashable copy, without timestamps."""
    if isinstance(value, Mapping):
        return tuple(sorted((k, freeze(v)) for k, v in value.items() if k not in _TIMES))
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


_MEMO: dict[tuple[int, str], tuple[Any, Any]] = {}
_MEMO_LIMIT = 1 << 16


def _memo(obj: Any, tag: str, make: Callable[[Any], Any]) -> Any:
    """``make(obj)``, computed once per stored object: forks share every object a move did not touch, and a stored
    dict never changes. The entry holds the object, so its id cannot be reused while cached."""
    hit = _MEMO.get((id(obj), tag))
    if hit is not None and hit[0] is obj:
        return hit[1]
    if len(_MEMO) > _MEMO_LIMIT:
        _MEMO.clear()
    value = make(obj)
    _MEMO[(id(obj), tag)] = (obj, value)
    return value


def _set_part(sts: Obj) -> tuple[Any, ...]:
    """The set's spec, status and annotations, without its conditions' messages. A message is prose about the
    rest of the state (which pod the rollout waits for, and why); what a controller decides reads a condition's
    type, status and reason, and an old message only tells it whether an Event was already emitted, and Events are
    not part of the state. Two states that differ in a message alone are one state: after a pod's transition the
    set's message lags until the controller's next move, and keeping each lagging message apart made a fifth of
    the states (RollingUpdate, OrderedReady, 2 replicas: 4,571 -> 3,709, the same violations)."""
    status = dict(sts.get("status") or {})
    observed = status.pop("observedGeneration", None) == sts["metadata"].get("generation")
    conditions = status.pop("conditions", None)
    said = tuple(freeze({k: v for k, v in c.items() if k != "message"}) if isinstance(c, Mapping) else freeze(c)
                 for c in (conditions if isinstance(conditions, list) else ()))
    return _memo(sts["spec"], "spec", freeze), freeze(status), said, observed, freeze(annotations_of(sts))


def _pod_part(pod: Obj, min_ready_seconds: float) -> tuple[Any, ...]:
    return (name_of(pod), revision_of(pod), image_of(pod), stage_of(pod, min_ready_seconds), is_terminating(pod),
            *_in_place_part(pod), freeze(pod["metadata"].get("labels") or {}),
            tuple(pod["metadata"].get("finalizers") or ()),
            tuple(str(r.get("uid")) for r in pod["metadata"].get("ownerReferences") or ()))


def _in_place_part(pod: Obj) -> tuple[Any, ...]:
    """An in-place update's state (api/in_place.py): whether the record is on the pod, and the images its status
    runs (which the spec's differ from until the kubelet restarts the containers)."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or ()
    return in_place_pending(pod), tuple(str(cs.get("image", "")) for cs in statuses)


def _owners(part: tuple[Any, ...], names: Mapping[str, str]) -> tuple[Any, ...]:
    """A part whose last item lists owner uids, with each uid replaced by the owner's kind/name (or "absent")."""
    return (*part[:-1], tuple(names.get(uid, "absent") for uid in part[-1]))


def store_key(cluster: MemoryCluster | None, facts: SetFacts) -> tuple[Any, ...]:
    if cluster is None:
        return ()
    sts = cluster.get(facts.resource, NAMESPACE, facts.name)
    pod_objs = cluster.list("Pod", NAMESPACE)
    names = {uid_of(obj): f"{obj['kind']}/{name_of(obj)}" for obj in (*pod_objs, sts)}
    mrs = facts.min_ready_seconds
    pods = tuple(_owners(_memo(pod, "pod", lambda o: _pod_part(o, mrs)), names) for pod in pod_objs)
    claims = tuple(
        _owners(_memo(c, "claim", lambda o: (name_of(o), tuple(str(r.get("uid"))
                                                              for r in o["metadata"].get("ownerReferences") or ()))),
                names)
        for c in cluster.list("PersistentVolumeClaim", NAMESPACE))
    revisions = tuple(_memo(r, "rev", lambda o: (name_of(o), o.get("revision"), bool(o["metadata"].get(
        "ownerReferences")))) for r in cluster.list("ControllerRevision", NAMESPACE))
    leases = tuple(_memo(x, "lease", lambda o: (name_of(o), str(lease_role(o))))
                   for x in cluster.list("Lease", NAMESPACE))
    budgets = tuple(freeze(b.get("spec")) for b in cluster.list("PodDisruptionBudget", NAMESPACE))
    runs = tuple(_memo(r, "run", lambda o: (name_of(o), str((o.get("status") or {}).get("phase") or ""),
                                            bool((o.get("spec") or {}).get("terminate"))))
                 for r in cluster.list(ANALYSIS_RUN, NAMESPACE))
    return _memo(sts, "set", _set_part), pods, claims, revisions, leases, budgets, runs
