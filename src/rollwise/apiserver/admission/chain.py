"""What the server adds to the world's admission (``rollwise.cluster.store.admission``) before the store keeps an
object.

The world's chain (StatefulSet defaulting and validation, revision and pod immutability) runs first, unchanged;
then the parts only a server with no other components needs: the pod defaults, the default admission plugins that
change a pod or a claim (``plugins.py``), the scheduler's first attempt (cordons, taints and node selectors), a
stand-in provisioner (a claim is Bound at once), namespaces Active, and a
CustomResourceDefinition established at once with its accepted names.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from rollwise.api.defaults import default_image_pull_policy
from rollwise.api.errors import FieldError, Invalid
from rollwise.api.features import FeatureGates
from rollwise.api.meta import Obj, name_of
from rollwise.api.pod_status import pod_status_errors
from rollwise.apiserver.admission.cel_rules import compile_errors
from rollwise.apiserver.admission.kind_defaults import kind_hooks
from rollwise.apiserver.admission.plugins import Plugins
from rollwise.apiserver.admission.policies import POLICY, check_policy
from rollwise.apiserver.admission.versioning import Versioning
from rollwise.cluster.resources import POD, PVC, STATEFULSET, GroupKind
from rollwise.cluster.store.admission import Admission as WorldAdmission

__all__ = ["NODE_NAME", "Admission"]

NODE_NAME = "rollwise-node"
Admit = Callable[[Obj, Obj | None], Obj]


NAMESPACE = GroupKind("", "Namespace")
CRD = GroupKind("apiextensions.k8s.io", "CustomResourceDefinition")


class Admission:
    def __init__(self, *, gates: FeatureGates, versioning: Versioning | None = None) -> None:
        self.gates = gates
        self.versioning = versioning
        # The custom kind is its CRD's business here, as on a cluster: no rollwise validator at admission.
        self.world = WorldAdmission(gates=gates, statefulset_kinds=(STATEFULSET,))
        self._kinds = kind_hooks()  # built once: the service IP allocator lives in it
        self.plugins = Plugins()

    def hooks(self) -> dict[GroupKind, Admit]:
        """Resource -> admission hook (``MemoryCluster(admit=...)``): the world's, then the server's."""
        hooks: dict[GroupKind, Admit] = dict(self.world.hooks())
        for gk, extra in ((PVC, self._claim), (CRD, self._crd), (NAMESPACE, self._namespace),
                          (POLICY, self._policy)):
            hooks[gk] = _chain(hooks.get(gk), extra)
        versioning = self.versioning
        if versioning is not None and STATEFULSET in hooks:
            # The release's answer to the seeds' proposals (--proposals off) comes before defaulting, as the
            # decoder and the gated-field drop come before it in kube-apiserver.
            hooks[STATEFULSET] = _chain(lambda new, old: versioning.admit(STATEFULSET, new, old), hooks[STATEFULSET])
        for gk, defaults in self._kinds.items():
            hooks[gk] = _chain(hooks.get(gk), defaults)
        # The pod defaults first: the world's update rule compares the whole spec, node included.
        world_pod = hooks.get(POD)
        hooks[POD] = self._pod if world_pod is None else _chain(self._pod, world_pod)
        return hooks

    def _pod(self, new: Obj, old: Obj | None) -> Obj:
        # kube-apiserver decodes a pod into typed structs: a status of the wrong shape is refused, never stored.
        status_errors = pod_status_errors(new)
        if status_errors:
            raise Invalid(f'Pod "{name_of(new)}" is invalid: ' + "; ".join(map(str, status_errors)),
                          errors=status_errors)
        spec = new.get("spec")
        if not isinstance(spec, dict) or not isinstance(spec.get("containers"), list) or not spec["containers"]:
            raise Invalid(errors=[FieldError(path="spec.containers", kind="Required value",
                                             rule="a pod needs at least one container")])
        spec = new["spec"] = dict(spec)
        for key, value in (("restartPolicy", "Always"), ("terminationGracePeriodSeconds", 30),
                           ("dnsPolicy", "ClusterFirst"), ("schedulerName", "default-scheduler"),
                           ("enableServiceLinks", True)):
            spec.setdefault(key, value)
        self.plugins.pod(new, old)
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
        # The scheduler's first attempt, at creation (cordons, taints, node selectors: api/scheduling.py); a pod no
        # node takes stays Pending for the scheduler loop (local/scheduler.py), which binds it later.
        if old is None:
            if not spec.get("nodeName"):
                self.plugins.schedule(new)
        elif old.get("spec", {}).get("nodeName") and not spec.get("nodeName"):
            spec["nodeName"] = old["spec"]["nodeName"]
        return new

    def _claim(self, new: Obj, old: Obj | None) -> Obj:
        spec = new["spec"] = dict(new.get("spec") or {})
        spec.setdefault("volumeMode", "Filesystem")
        self.plugins.claim(spec, old)
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

    def _policy(self, new: Obj, old: Obj | None) -> Obj:
        errors = check_policy(new)
        if errors:
            raise Invalid(f'ValidatingAdmissionPolicy.admissionregistration.k8s.io "{name_of(new)}" is invalid: '
                          + ", ".join(map(str, errors)), errors=errors)
        return new

    def _crd(self, new: Obj, old: Obj | None) -> Obj:
        spec = new.get("spec") or {}
        names = dict(spec.get("names") or {})
        errors: list[FieldError] = []
        for path, value in (("spec.group", spec.get("group")), ("spec.names.kind", names.get("kind")),
                            ("spec.names.plural", names.get("plural"))):
            if not value:
                errors.append(FieldError(path=path, kind="Required value", rule="required"))
        if not spec.get("versions"):
            errors.append(FieldError(path="spec.versions", kind="Required value", rule="must have exactly one "
                                     "version marked as storage version"))
        for i, version in enumerate(spec.get("versions") or ()):
            schema = ((version.get("schema") or {}).get("openAPIV3Schema") if isinstance(version, dict) else None)
            if isinstance(schema, dict):
                # kube-apiserver compiles every rule when the CRD is written and refuses one that does not compile.
                errors += compile_errors(schema, f"spec.versions[{i}].schema.openAPIV3Schema")
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


def _chain(first: Admit | None, then: Admit) -> Admit:
    if first is None:
        return then
    return lambda new, old: then(first(new, old), old)
