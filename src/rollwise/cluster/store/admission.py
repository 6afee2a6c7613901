"""Admission, in one place: what the API server does to an object before it is stored.

Every path that writes goes through it — the simulator's scenario steps, the test harness, the API server's
handlers — by giving ``Admission(...).hooks()`` to the store. Per resource, in the API server's order:

1. strict field checks (an optional hook: unknown or mistyped fields are refused, not silently dropped);
2. defaulting (``rollwise.api.defaults``, for the StatefulSet kinds);
3. validation (``rollwise.api.validation``), with the update rules (immutable fields) when there is an old object;
4. a claim's storage request: expansion only where its StorageClass allows it (``volumes.py``);
5. immutability of the other resources rollwise writes: a ControllerRevision's ``data``
   (upstream ``ValidateControllerRevisionUpdate``), and a pod's spec except its containers' images
   (upstream ``ValidatePodUpdate``; the rest of ``spec`` is fixed once the pod exists) and the removal of its
   scheduling gates (KEP-3521: a gate is never added once the pod exists);
6. a created pod's container values kube-apiserver refuses (``imagePullPolicy``, ports, env, probes:
   ``api/validation_containers.py``, the rules a StatefulSet's template is held to);
7. a Lease's spec: its types and ``ValidateLeaseSpec``'s ranges (``api/validation_objects.check_lease_spec``), since
   ``up`` reads every Lease to see whether an operator leads.

A refusal is ``Invalid`` carrying every ``FieldError``, with the API server's message
(``StatefulSet.apps "web" is invalid: ...``), so a client prints the field paths.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rollwise.api.defaults import apply_defaults
from rollwise.api.errors import FieldError, Invalid
from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj, name_of
from rollwise.api.revisions import stored_as_is
from rollwise.api.scheduling import unscheduled
from rollwise.api.validation import note_admitted, validate_statefulset
from rollwise.api.validation_objects import check_lease_spec
from rollwise.api.validation_pods import check_container_values, check_gates_update, check_scheduling_gates
from rollwise.cluster.protocol import Cluster
from rollwise.cluster.resources import CONTROLLER_REVISION, LEASE, POD, PVC, STATEFULSET_KINDS, GroupKind
from rollwise.cluster.store.memory import Admit
from rollwise.cluster.store.volumes import ClaimResize

__all__ = ["Admission", "StrictFields"]

StrictFields = Callable[[GroupKind, Obj], list[FieldError]]
"""A strict unknown-field check: the problems with a raw object of a resource (empty when it is acceptable)."""

_FORBIDDEN = "Forbidden"


class Admission:
    """The admission chain of one world (feature gates fixed for its lifetime)."""

    def __init__(self, *, gates: FeatureGates, strict_fields: StrictFields | None = None,
                 statefulset_kinds: tuple[GroupKind, ...] = STATEFULSET_KINDS) -> None:
        """``statefulset_kinds``: the StatefulSet resources defaulted and validated here. A world with no API server
        (the simulator) has both; ``rollwise up`` only apps/v1, since there the custom kind is a CRD's, defaulted
        and validated by its schema and rules as on a cluster (``apiserver/admission/schema.py``)."""
        self.gates = gates
        self.strict_fields = strict_fields
        self.statefulset_kinds = statefulset_kinds
        self.claims = ClaimResize()

    def bind(self, cluster: Cluster) -> None:
        """Let the hooks that read other objects (a claim's StorageClass) read them from the store they admit to."""
        self.claims.bind(cluster)

    def hooks(self) -> dict[GroupKind, Admit]:
        """The store's admission hooks (``MemoryCluster(admit=...)``), one per resource admission acts on."""
        hooks: dict[GroupKind, Admit] = {gk: self._hook(gk) for gk in self.statefulset_kinds}
        hooks[POD] = self._hook(POD)
        hooks[CONTROLLER_REVISION] = self._hook(CONTROLLER_REVISION)
        hooks[LEASE] = self._hook(LEASE)
        hooks[PVC] = self.claims.admit  # volume expansion (cluster/store/volumes.py)
        return hooks

    def _hook(self, gk: GroupKind) -> Admit:
        return lambda new, old: self.admit(gk, new, old)

    def admit(self, gk: GroupKind, new: Obj, old: Obj | None) -> Obj:
        """The object to store (defaulted), or raise Invalid with every problem found."""
        errors = self.strict_fields(gk, new) if self.strict_fields is not None else []
        if errors:
            raise _invalid(gk, new, errors)
        if gk in self.statefulset_kinds:
            new = apply_defaults(new, gates=self.gates)
            errors = validate_statefulset(new, old=old, gates=self.gates)
            note_admitted(new, gates=self.gates, old=old, errors=errors)
            template = (new.get("spec") or {}).get("template") if isinstance(new.get("spec"), dict) else None
            if not errors and isinstance(template, dict):
                stored_as_is(template)  # what the store keeps: the controller hashes it without storing it again
        elif old is not None and gk == CONTROLLER_REVISION:
            errors = _immutable(new, old, ("data",))
        elif old is not None and gk == POD:
            errors = _pod_update(new, old)
        elif gk == POD:
            errors = check_container_values(new.get("spec"), "spec") + check_scheduling_gates(new.get("spec"), "spec")
        elif gk == LEASE:
            errors = check_lease_spec(new.get("spec"), "spec")
        if errors:
            raise _invalid(gk, new, errors)
        return new


def _invalid(gk: GroupKind, obj: Obj, errors: list[FieldError]) -> Invalid:
    return Invalid(f'{gk} "{name_of(obj)}" is invalid: ' + "; ".join(map(str, errors)), errors=errors)


def _immutable(new: Mapping[str, Any], old: Mapping[str, Any], fields: tuple[str, ...]) -> list[FieldError]:
    return [FieldError(path=f, kind=_FORBIDDEN, rule="field is immutable") for f in fields if new.get(f) != old.get(f)]


def _without_images(spec: Any) -> Any:
    if not isinstance(spec, Mapping):
        return spec
    out = dict(spec)
    for field in ("containers", "initContainers"):
        if isinstance(out.get(field), list):
            out[field] = [{k: v for k, v in c.items() if k != "image"} if isinstance(c, Mapping) else c
                          for c in out[field]]
    return out


def _pod_update(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[FieldError]:
    after, before = new.get("spec"), old.get("spec")
    gates = check_gates_update(after, before, "spec")  # gates may be removed, never added (KEP-3521)
    if gates:
        return gates
    if isinstance(after, Mapping) and isinstance(before, Mapping):
        after, before = ({k: v for k, v in s.items() if k != "schedulingGates"} for s in (after, before))
        if after.get("nodeName") and not before.get("nodeName") and unscheduled(old):
            # The binding (pods/binding): the scheduler sets the node of a pod it could not place before.
            after = {k: v for k, v in after.items() if k != "nodeName"}
    if _without_images(after) == _without_images(before):
        return []
    return [FieldError(path="spec", kind=_FORBIDDEN,
                       rule="pod updates may not change fields other than `spec.containers[*].image` "
                            "and the removal of `spec.schedulingGates`")]
