"""Table printers: the columns ``kubectl get`` shows, computed by the server as upstream's printers do.

Rows are computed from store objects (float timestamps) at ``now``. The pod STATUS follows kubectl's rules
(``kubernetes/pkg/printers/internalversion/printers.go`` ``printPod``): the phase, or the pod's reason, overridden
by init-container progress (``Init:x/y``), then by a waiting or terminated container's reason, ``Terminating`` once
deletion was requested unless the pod has reached a terminal phase. Columns with priority 1 show only under
``-o wide``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rollwise.api.scheduling import GATED_REASON
from rollwise.apiserver.kinds.resources import Resource

__all__ = ["Column", "columns_for", "human_duration", "jsonpath_value", "pod_status"]

Column = dict[str, Any]
Row = list[Any]


def _col(name: str, ctype: str = "string", *, priority: int = 0, fmt: str = "", desc: str = "") -> Column:
    return {"name": name, "type": ctype, "format": fmt, "description": desc or name, "priority": priority}


_NAME = _col("Name", fmt="name", desc="Name must be unique within a namespace.")
_AGE = _col("Age", desc="CreationTimestamp is a timestamp representing the server time when this object was created.")


def human_duration(seconds: float) -> str:
    """kubectl's AGE wording (``k8s.io/apimachinery/pkg/util/duration.HumanDuration``)."""
    if seconds < -1:
        return "<invalid>"
    s = max(0, int(seconds))
    if s < 120:
        return f"{s}s"
    m = s // 60
    if m < 10:
        return f"{m}m{s % 60}s" if s % 60 else f"{m}m"
    if m < 180:
        return f"{m}m"
    h = m // 60
    if h < 8:
        return f"{h}h{m % 60}m" if m % 60 else f"{h}h"
    if h < 48:
        return f"{h}h"
    if h < 24 * 8:
        return f"{h // 24}d{h % 24}h" if h % 24 else f"{h // 24}d"
    if h < 24 * 365 * 2:
        return f"{h // 24}d"
    if h < 24 * 365 * 8:
        return f"{h // (24 * 365)}y{(h // 24) % 365}d"
    return f"{h // (24 * 365)}y"


def _age(ts: Any, now: float) -> str:
    if not isinstance(ts, int | float):
        return "<unknown>"
    return human_duration(now - float(ts))


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def pod_status(pod: Mapping[str, Any]) -> tuple[str, int, int, int, float | None]:
    """(STATUS, ready containers, total containers, restarts, last restart time) as kubectl prints them."""
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    reason = str(status.get("reason") or status.get("phase") or "")
    # A pod held by its scheduling gates says so (upstream printers.go printPod, KEP-3521).
    if any(isinstance(c, Mapping) and c.get("type") == "PodScheduled" and c.get("reason") == GATED_REASON
           for c in status.get("conditions") or ()):
        reason = GATED_REASON
    total = len(spec.get("containers") or ())
    ready = restarts = 0
    last_restart: float | None = None
    initializing = False
    init_specs = spec.get("initContainers") or ()
    for i, c in enumerate(status.get("initContainerStatuses") or ()):
        restarts += int(c.get("restartCount") or 0)
        state = c.get("state") or {}
        term, wait = state.get("terminated"), state.get("waiting")
        if term is not None and term.get("exitCode") == 0:
            continue
        initializing = True
        if term is not None:
            if term.get("reason"):
                reason = f"Init:{term['reason']}"
            elif term.get("signal"):
                reason = f"Init:Signal:{term['signal']}"
            else:
                reason = f"Init:ExitCode:{term.get('exitCode')}"
        elif wait is not None and wait.get("reason") and wait.get("reason") != "PodInitializing":
            reason = f"Init:{wait['reason']}"
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        break
    if not initializing:
        restarts = 0
        has_running = False
        for c in reversed(status.get("containerStatuses") or ()):
            restarts += int(c.get("restartCount") or 0)
            finished = ((c.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
            if isinstance(finished, int | float) and (last_restart is None or finished > last_restart):
                last_restart = float(finished)
            state = c.get("state") or {}
            term, wait = state.get("terminated"), state.get("waiting")
            if wait is not None and wait.get("reason"):
                reason = str(wait["reason"])
            elif term is not None and term.get("reason"):
                reason = str(term["reason"])
            elif term is not None:
                reason = f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode')}"
            elif c.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            conds = {c.get("type"): c.get("status") for c in status.get("conditions") or ()}
            reason = "Running" if conds.get("Ready") == "True" else "NotReady"
    if _meta(pod).get("deletionTimestamp") is not None:
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif status.get("phase") not in ("Succeeded", "Failed"):  # a terminal pod shows how it ended (since 1.27)
            reason = "Terminating"
    return reason, ready, total, restarts, last_restart


def _pod_row(pod: Mapping[str, Any], now: float) -> Row:
    reason, ready, total, restarts, last = pod_status(pod)
    restarts_text = f"{restarts} ({human_duration(now - last)} ago)" if restarts and last is not None else str(restarts)
    status, spec = pod.get("status") or {}, pod.get("spec") or {}
    gates = spec.get("readinessGates") or ()
    conds = {c.get("type"): c.get("status") for c in status.get("conditions") or ()}
    gates_text = f"{sum(1 for g in gates if conds.get(g.get('conditionType')) == 'True')}/{len(gates)}" if gates \
        else "<none>"
    return [_meta(pod).get("name"), f"{ready}/{total}", reason, restarts_text, _age(_meta(pod).get(
        "creationTimestamp"), now), status.get("podIP") or "<none>", spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>", gates_text]


_POD_COLUMNS = [_NAME, _col("Ready", desc="The aggregate readiness state of this pod for accepting traffic."),
                _col("Status", desc="The aggregate status of the containers in this pod."),
                _col("Restarts", desc="The number of times the containers in this pod have been restarted and when "
                                      "the last container in this pod has restarted."),
                _AGE, _col("IP", priority=1, desc="IP address assigned to the pod"),
                _col("Node", priority=1, desc="Name of the node assigned to the pod"),
                _col("Nominated Node", priority=1, desc="Name of the node nominated for the pod"),
                _col("Readiness Gates", priority=1, desc="Pod readiness gates")]


def _containers_images(template_spec: Mapping[str, Any]) -> tuple[str, str]:
    containers = template_spec.get("containers") or ()
    return (",".join(str(c.get("name", "")) for c in containers),
            ",".join(str(c.get("image", "")) for c in containers))


def _sts_row(sts: Mapping[str, Any], now: float) -> Row:
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    names, images = _containers_images(((spec.get("template") or {}).get("spec")) or {})
    return [_meta(sts).get("name"), f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas') or 0)}",
            _age(_meta(sts).get("creationTimestamp"), now), names, images]


_STS_COLUMNS = [_NAME, _col("Ready", desc="Number of the pod with ready state"), _AGE,
                _col("Containers", priority=1, desc="Names of each container in the template."),
                _col("Images", priority=1, desc="Images referenced by each container in the template.")]


def _pvc_row(pvc: Mapping[str, Any], now: float) -> Row:
    spec, status = pvc.get("spec") or {}, pvc.get("status") or {}
    capacity = (status.get("capacity") or {}).get("storage", "")
    modes = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
    access = ",".join(modes.get(m, m) for m in status.get("accessModes") or ())
    return [_meta(pvc).get("name"), status.get("phase") or "", spec.get("volumeName") or "", capacity, access,
            spec.get("storageClassName") or "<unset>", spec.get("volumeAttributesClassName") or "<unset>",
            _age(_meta(pvc).get("creationTimestamp"), now), spec.get("volumeMode") or "Filesystem"]


_PVC_COLUMNS = [_NAME, _col("Status"), _col("Volume"), _col("Capacity"), _col("Access Modes"), _col("StorageClass"),
                _col("VolumeAttributesClass"), _AGE, _col("VolumeMode", priority=1)]


def _event_row(ev: Mapping[str, Any], now: float) -> Row:
    last = ev.get("lastTimestamp") or ev.get("eventTime") or ev.get("firstTimestamp") or _meta(ev).get(
        "creationTimestamp")
    first = ev.get("firstTimestamp") or ev.get("eventTime") or _meta(ev).get("creationTimestamp")
    inv = ev.get("involvedObject") or ev.get("regarding") or {}
    obj = f"{str(inv.get('kind', '')).lower()}/{inv.get('name', '')}"
    source = ev.get("source") or {}
    src = str(source.get("component") or ev.get("reportingComponent") or "")
    if source.get("host"):
        src += f", {source['host']}"
    return [_age(last, now), ev.get("type") or "", ev.get("reason") or "", obj, inv.get("fieldPath") or "",
            str(ev.get("message") or ev.get("note") or "").strip(), src, _age(first, now),
            int(ev.get("count") or 1), _meta(ev).get("name")]


_EVENT_COLUMNS = [_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"),
                  _col("Subobject", priority=1), _col("Message"), _col("Source", priority=1),
                  _col("First Seen", priority=1), _col("Count", "integer", priority=1),
                  _col("Name", priority=1, fmt="name")]


def _revision_row(rev: Mapping[str, Any], now: float) -> Row:
    ref = next((r for r in _meta(rev).get("ownerReferences") or () if r.get("controller")), None)
    owner = f"{str(ref.get('kind', '')).lower()}.{str(ref.get('apiVersion', '')).split('/')[0]}/{ref.get('name')}" \
        if ref else "<none>"
    return [_meta(rev).get("name"), owner, rev.get("revision"), _age(_meta(rev).get("creationTimestamp"), now)]


_REVISION_COLUMNS = [_NAME, _col("Controller"), _col("Revision", "integer"), _AGE]


def _lease_row(lease: Mapping[str, Any], now: float) -> Row:
    return [_meta(lease).get("name"), (lease.get("spec") or {}).get("holderIdentity") or "",
            _age(_meta(lease).get("creationTimestamp"), now)]


def _pdb_row(pdb: Mapping[str, Any], now: float) -> Row:
    """kubectl's PodDisruptionBudget columns (``printPodDisruptionBudget``): N/A for the field not set."""
    spec = pdb.get("spec") or {}
    return [_meta(pdb).get("name"), str(spec["minAvailable"]) if spec.get("minAvailable") is not None else "N/A",
            str(spec["maxUnavailable"]) if spec.get("maxUnavailable") is not None else "N/A",
            int((pdb.get("status") or {}).get("disruptionsAllowed") or 0),
            _age(_meta(pdb).get("creationTimestamp"), now)]


def _namespace_row(ns: Mapping[str, Any], now: float) -> Row:
    return [_meta(ns).get("name"), (ns.get("status") or {}).get("phase") or "Active",
            _age(_meta(ns).get("creationTimestamp"), now)]


def _service_row(svc: Mapping[str, Any], now: float) -> Row:
    spec = svc.get("spec") or {}
    ports = ",".join(f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in spec.get("ports") or ()) or "<none>"
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items())) or "<none>"
    return [_meta(svc).get("name"), spec.get("type") or "ClusterIP", spec.get("clusterIP") or "<none>", "<none>",
            ports, _age(_meta(svc).get("creationTimestamp"), now), selector]


_SERVICE_COLUMNS = [_NAME, _col("Type"), _col("Cluster-IP"), _col("External-IP"), _col("Port(s)"), _AGE,
                    _col("Selector", priority=1)]


def _deployment_row(d: Mapping[str, Any], now: float) -> Row:
    spec, status = d.get("spec") or {}, d.get("status") or {}
    names, images = _containers_images(((spec.get("template") or {}).get("spec")) or {})
    return [_meta(d).get("name"), f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas') or 0)}",
            int(status.get("updatedReplicas") or 0), int(status.get("availableReplicas") or 0),
            _age(_meta(d).get("creationTimestamp"), now), names, images]


def _replicaset_row(rs: Mapping[str, Any], now: float) -> Row:
    spec, status = rs.get("spec") or {}, rs.get("status") or {}
    names, images = _containers_images(((spec.get("template") or {}).get("spec")) or {})
    return [_meta(rs).get("name"), int(spec.get("replicas") or 0), int(status.get("replicas") or 0),
            int(status.get("readyReplicas") or 0), _age(_meta(rs).get("creationTimestamp"), now), names, images]


_TEMPLATE_COLUMNS = [_col("Containers", priority=1, desc="Names of each container in the template."),
                     _col("Images", priority=1, desc="Images referenced by each container in the template.")]
_DEPLOYMENT_COLUMNS = [_NAME, _col("Ready"), _col("Up-to-date", "integer"), _col("Available", "integer"), _AGE,
                       *_TEMPLATE_COLUMNS]
_REPLICASET_COLUMNS = [_NAME, _col("Desired", "integer"), _col("Current", "integer"), _col("Ready", "integer"),
                       _AGE, *_TEMPLATE_COLUMNS]


def _generic_row(obj: Mapping[str, Any], now: float) -> Row:
    return [_meta(obj).get("name"), _age(_meta(obj).get("creationTimestamp"), now)]


_PRINTERS: Mapping[tuple[str, str], tuple[list[Column], Callable[[Mapping[str, Any], float], Row]]] = {
    ("", "Pod"): (_POD_COLUMNS, _pod_row),
    ("apps", "StatefulSet"): (_STS_COLUMNS, _sts_row),
    ("", "PersistentVolumeClaim"): (_PVC_COLUMNS, _pvc_row),
    ("", "Event"): (_EVENT_COLUMNS, _event_row),
    ("events.k8s.io", "Event"): (_EVENT_COLUMNS, _event_row),
    ("apps", "ControllerRevision"): (_REVISION_COLUMNS, _revision_row),
    ("coordination.k8s.io", "Lease"): ([_NAME, _col("Holder"), _AGE], _lease_row),
    ("", "Namespace"): ([_NAME, _col("Status"), _AGE], _namespace_row),
    ("policy", "PodDisruptionBudget"): ([_NAME, _col("Min Available"), _col("Max Unavailable"),
                                         _col("Allowed Disruptions", "integer"), _AGE], _pdb_row),
    ("", "Service"): (_SERVICE_COLUMNS, _service_row),
    ("apps", "Deployment"): (_DEPLOYMENT_COLUMNS, _deployment_row),
    ("apps", "ReplicaSet"): (_REPLICASET_COLUMNS, _replicaset_row),
    ("", "ReplicationController"): (_REPLICASET_COLUMNS, _replicaset_row),
}


def jsonpath_value(obj: Any, path: str) -> Any:
    """A printer column's value: ``.a.b``, ``.a[0].b`` and ``.a[*].b`` (upstream uses full JSONPath)."""
    cur: list[Any] = [obj]
    for raw in path.strip().lstrip(".").replace("[", ".[").split("."):
        if not raw:
            continue
        nxt: list[Any] = []
        for c in cur:
            if raw.startswith("["):
                idx = raw[1:-1]
                if isinstance(c, list):
                    if idx == "*":
                        nxt.extend(c)
                    elif idx.lstrip("-").isdigit() and -len(c) <= int(idx) < len(c):
                        nxt.append(c[int(idx)])
            elif isinstance(c, Mapping) and raw in c:
                nxt.append(c[raw])
        cur = nxt
    if not cur:
        return None
    return cur[0] if len(cur) == 1 else cur


def _custom_columns(resource: Resource) -> tuple[list[Column], Callable[[Mapping[str, Any], float], Row]]:
    specs = list(resource.printer_columns)
    cols = [_NAME] + [_col(str(c.get("name", "")), str(c.get("type", "string")), priority=int(c.get("priority", 0)),
                           fmt=str(c.get("format", "")), desc=str(c.get("description", ""))) for c in specs]

    def row(obj: Mapping[str, Any], now: float) -> Row:
        out: Row = [_meta(obj).get("name")]
        for c in specs:
            value = jsonpath_value(obj, str(c.get("jsonPath", "")))
            if c.get("type") == "date":
                out.append(_age(value, now) if value is not None else "<unknown>")
            elif isinstance(value, list):
                out.append(",".join(str(v) for v in value))
            else:
                out.append(value)
        return out

    return cols, row


def columns_for(resource: Resource) -> tuple[list[Column], Callable[[Mapping[str, Any], float], Row]]:
    if resource.printer_columns:
        return _custom_columns(resource)
    return _PRINTERS.get((resource.group, resource.kind), ([_NAME, _AGE], _generic_row))

