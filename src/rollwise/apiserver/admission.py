"""What the server does to an object before the store keeps it: defaulting and validation per resource.

StatefulSets (both groups) go through rollwise's own defaulting and validation (``api/defaults.py``,
``api/validation.py``), the same rules the simulator applies; pods and claims get the API server's defaults the
kubectl paths need; a CustomResourceDefinition is established at once. Status written on create is dropped for
kinds with a status subresource, except where the kind's server fills it (PVC binding, CRD conditions).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from rollwise.api.defaults import apply_defaults, default_image_pull_policy
from rollwise.api.errors import FieldError, Invalid
from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj, name_of
from rollwise.api.validation import validate_statefulset

__all__ = ["NODE_NAME", "Admission"]

NODE_NAME = "rollwise-node"
Admit = Callable[[Obj, Obj | None], Obj]


class Admission:
    def __init__(self, *, gates: FeatureGates) -> None:
        self.gates = gates

    def hooks(self) -> dict[str, Admit]:
        """Store kind -> admission hook (``MemoryCluster(admit=...)``)."""
        return {
            "StatefulSet": self._statefulset,
            "StatefulSet.apps.rollwise.dev": self._statefulset,
            "Pod": self._pod,
            "PersistentVolumeClaim": self._claim,
            "CustomResourceDefinition": self._crd,
            "Namespace": self._namespace,
        }

    def _statefulset(self, new: Obj, old: Obj | None) -> Obj:
        store_kind = new.get("kind")
        # Validation reads the API kind; the store keys the rollwise group's kind under a qualified name.
        defaulted = apply_defaults({**new, "kind": "StatefulSet"}, gates=self.gates)
        errors = validate_statefulset(defaulted, old=None if old is None else {**old, "kind": "StatefulSet"},
                                      gates=self.gates)
        defaulted["kind"] = store_kind
        if errors:
            group = str(new.get("apiVersion", "apps/v1")).split("/")[0]
            raise Invalid(f'StatefulSet.{group} "{name_of(new)}" is invalid: ' + ", ".join(map(str, errors)),
                          errors=errors)
        return defaulted

    def _pod(self, new: Obj, old: Obj | None) -> Obj:
        spec = new.get("spec")
        if not isinstance(spec, dict) or not isinstance(spec.get("containers"), list) or not spec["containers"]:
            raise Invalid(errors=[FieldError(path="spec.containers", kind="Required value",
                                             rule="a pod needs at least one container")])
        spec = new["spec"] = dict(spec)
        for key, value in (("restartPolicy", "Always"), ("terminationGracePeriodSeconds", 30),
                           ("dnsPolicy", "ClusterFirst"), ("schedulerName", "default-scheduler"),
                           ("serviceAccountName", "default"), ("enableServiceLinks", True),
                           ("preemptionPolicy", "PreemptLowerPriority"), ("priority", 0)):
            spec.setdefault(key, value)
        spec.setdefault("securityContext", {})
        containers = []
        for i, given in enumerate(spec["containers"]):
            if not isinstance(given, dict) or not given.get("name") or not given.get("image"):
                raise Invalid(errors=[FieldError(path=f"spec.containers[{i}]", kind="Required value",
                                                 rule="name and image are required")])
            c = dict(given)
            c.setdefault("imagePullPolicy", default_image_pull_policy(str(c["image"])))
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            c.setdefault("resources", {})
            containers.append(c)
        spec["containers"] = containers
        # A stand-in scheduler: one node takes every pod at creation.
        if old is None:
            spec.setdefault("nodeName", NODE_NAME)
        elif old.get("spec", {}).get("nodeName") and not spec.get("nodeName"):
            spec["nodeName"] = old["spec"]["nodeName"]
        return new

    def _claim(self, new: Obj, old: Obj | None) -> Obj:
        spec = new["spec"] = dict(new.get("spec") or {})
        spec.setdefault("volumeMode", "Filesystem")
        if old is None:
            # A stand-in provisioner binds every claim at once, to a volume named after the claim's uid-to-be.
            storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
            spec.setdefault("volumeName", f"pv-{new['metadata'].get('namespace', 'default')}-{name_of(new)}")
            new["status"] = {"phase": "Bound", "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
                             "capacity": {"storage": storage}}
        return new

    def _namespace(self, new: Obj, old: Obj | None) -> Obj:
        if old is None:
            new["status"] = {"phase": "Active"}
        new["spec"] = {"finalizers": ["kubernetes"], **(new.get("spec") or {})}
        return new

    def _crd(self, new: Obj, old: Obj | None) -> Obj:
        spec = new.get("spec") or {}
        names = dict(spec.get("names") or {})
        errors = []
        for path, value in (("spec.group", spec.get("group")), ("spec.names.kind", names.get("kind")),
                            ("spec.names.plural", names.get("plural"))):
            if not value:
                errors.append(FieldError(path=path, kind="Required value", rule="required"))
        if not spec.get("versions"):
            errors.append(FieldError(path="spec.versions", kind="Required value", rule="must have exactly one "
                                     "version marked as storage version"))
        expected = f"{names.get('plural')}.{spec.get('group')}"
        if not errors and name_of(new) != expected:
            errors.append(FieldError(path="metadata.name", value=name_of(new),
                                     rule='must be spec.names.plural+"."+spec.group'))
        if errors:
            raise Invalid(f'CustomResourceDefinition.apiextensions.k8s.io "{name_of(new)}" is invalid: '
                          + ", ".join(map(str, errors)), errors=errors)
        names.setdefault("singular", str(names.get("kind", "")).lower())
        names.setdefault("listKind", f"{names.get('kind')}List")
        status: dict[str, Any] = {
            "acceptedNames": copy.deepcopy(names),
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                 "message": "no conflicts found"},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                 "message": "the initial names have been accepted"}],
            "storedVersions": [v.get("name") for v in spec.get("versions") or () if v.get("storage")],
        }
        new["status"] = status
        return new
