"""The admission plugins kube-apiserver enables by default that change what a pod or a claim looks like, each as
upstream does it (plugin/pkg/admission/...). Defaults only: what a pod may be is api/validation_pods.py's.

- ServiceAccount (serviceaccount/admission.go): ``spec.serviceAccountName`` is ``default`` when unset, and the v1
  field ``spec.serviceAccount`` mirrors it (the deprecated name the conversion keeps). The projected token volume is
  not added: no simulated container reads it.
- Priority (priority/admission.go), on create: ``spec.priority`` and ``spec.preemptionPolicy`` come from the pod's
  PriorityClass, else from the global default class (whose name the pod then carries), else 0 and
  ``PreemptLowerPriority``. A class that does not exist, or a priority or policy the pod gives that differs from the
  class', is refused (403) in upstream's words. The two built-in classes exist from the start (``bootstrap.py``).
- DefaultTolerationSeconds (defaulttolerationseconds/admission.go): a pod that does not tolerate the
  ``not-ready`` and ``unreachable`` NoExecute taints tolerates each for 300 s.
- DefaultStorageClass (storage/storageclass/setdefault/admission.go), on create: a claim with no
  ``storageClassName`` at all gets the default StorageClass's name (the newest, when several say they are the
  default); an empty string stays empty, meaning no class.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from rollwise.api.errors import Forbidden
from rollwise.api.meta import Obj, annotations_of, name_of
from rollwise.api.scheduling import placement
from rollwise.cluster.protocol import Cluster
from rollwise.cluster.resources import NODE, POD, GroupKind

__all__ = ["DEFAULT_TOLERATION_SECONDS", "PRIORITY_CLASS", "STORAGE_CLASS", "SYSTEM_PRIORITY_CLASSES", "Plugins"]

PRIORITY_CLASS = GroupKind("scheduling.k8s.io", "PriorityClass")
STORAGE_CLASS = GroupKind("storage.k8s.io", "StorageClass")
DEFAULT_TOLERATION_SECONDS = 300
_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
_DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                              "storageclass.beta.kubernetes.io/is-default-class")
SYSTEM_PRIORITY_CLASSES = (
    # pkg/apis/scheduling: what kube-apiserver creates at start.
    ("system-node-critical", 2000001000, "Used for system critical pods that must not be moved from their current "
                                         "node."),
    ("system-cluster-critical", 2000000000, "Used for system critical pods that must run in the cluster, but can "
                                            "be moved to another node if necessary."),
)


def _tolerates(tolerations: list[Any], taint: str) -> bool:
    """An empty key tolerates every taint and an empty effect every effect, as the plugin reads them."""
    return any(isinstance(t, dict) and t.get("key", "") in ("", taint) and t.get("effect", "") in ("", "NoExecute")
               for t in tolerations)


def default_tolerations(spec: dict[str, Any]) -> None:
    """DefaultTolerationSeconds: the not-ready and unreachable tolerations a pod lacks, 300 s each."""
    given = spec.get("tolerations")
    tolerations = list(given) if isinstance(given, list) else []
    added = [{"key": taint, "operator": "Exists", "effect": "NoExecute",
              "tolerationSeconds": DEFAULT_TOLERATION_SECONDS} for taint in _TAINTS
             if not _tolerates(tolerations, taint)]
    if added:
        spec["tolerations"] = tolerations + added


class Plugins:
    """The plugins that read other objects (PriorityClasses, StorageClasses) from the store they admit to."""

    def __init__(self) -> None:
        self._cluster: Cluster | None = None
        self._clock: Callable[[], float] = time.time

    def bind(self, cluster: Cluster, clock: Callable[[], float] = time.time) -> None:
        self._cluster = cluster
        self._clock = clock

    def schedule(self, pod: Obj) -> None:
        """The scheduler's first attempt, at creation (``api/scheduling.py``): bound to a node that takes it, or left
        Pending with PodScheduled False and upstream's message for the scheduler loop (``local/scheduler.py``)."""
        nodes = self._list(NODE)
        running = Counter(str((p.get("spec") or {}).get("nodeName")) for p in self._list(POD)) if len(nodes) > 1 \
            else Counter[str]()
        node, status = placement(pod, nodes, running, self._clock())
        if node is not None:
            pod["spec"]["nodeName"] = node
            return
        pod["status"] = status

    def _list(self, gk: GroupKind) -> list[Obj]:
        return [] if self._cluster is None else list(self._cluster.list(gk))

    def pod(self, new: Obj, old: Obj | None) -> None:
        """ServiceAccount, Priority (on create) and DefaultTolerationSeconds, on ``new['spec']`` in place."""
        spec = new["spec"]
        spec.setdefault("serviceAccountName", "default")
        spec.setdefault("serviceAccount", spec["serviceAccountName"])
        if old is None:
            self._priority(new, spec)
        else:
            before = old.get("spec") or {}
            for key in ("priority", "preemptionPolicy", "priorityClassName"):
                if key not in spec and key in before:
                    spec[key] = before[key]  # immutable, and set on create: a full replace may leave it out
        default_tolerations(spec)

    def _priority(self, pod: Obj, spec: dict[str, Any]) -> None:
        name = spec.get("priorityClassName") or ""
        classes = self._list(PRIORITY_CLASS)
        if name:
            chosen = next((c for c in classes if name_of(c) == name), None)
            if chosen is None:
                raise Forbidden(f'pods "{name_of(pod)}" is forbidden: no PriorityClass with name {name} was found')
        else:
            defaults = [c for c in classes if c.get("globalDefault") is True]
            chosen = min(defaults, key=lambda c: int(c.get("value", 0)), default=None)
            if chosen is not None:
                spec["priorityClassName"] = name_of(chosen)
        value = 0 if chosen is None else int(chosen.get("value", 0))
        policy = "PreemptLowerPriority" if chosen is None else chosen.get("preemptionPolicy") or "PreemptLowerPriority"
        if "priority" in spec and spec["priority"] != value:
            raise Forbidden(f'pods "{name_of(pod)}" is forbidden: the integer value of priority ({spec["priority"]}) '
                            f"must not be provided in pod spec; priority admission controller computed {value} "
                            "from the given PriorityClass name")
        if "preemptionPolicy" in spec and spec["preemptionPolicy"] != policy:
            raise Forbidden(f'pods "{name_of(pod)}" is forbidden: the string value of PreemptionPolicy '
                            f"({spec['preemptionPolicy']}) must not be provided in pod spec; priority admission "
                            f"controller computed {policy} from the given PriorityClass name")
        spec["priority"], spec["preemptionPolicy"] = value, policy

    def claim(self, spec: dict[str, Any], old: Obj | None) -> None:
        """DefaultStorageClass, on create: the default class for a claim that names none (None, not "")."""
        if old is not None or spec.get("storageClassName") is not None:
            return
        defaults = [c for c in self._list(STORAGE_CLASS) if _is_default(annotations_of(c))]
        if defaults:
            newest = max(defaults, key=lambda c: (_created(c), name_of(c)))
            spec["storageClassName"] = name_of(newest)


def _created(obj: Obj) -> float:
    """The store keeps creation times as seconds (the wire shows them as RFC 3339)."""
    value = obj["metadata"].get("creationTimestamp")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _is_default(annotations: Mapping[str, str]) -> bool:
    return any(annotations.get(key) == "true" for key in _DEFAULT_CLASS_ANNOTATIONS)
