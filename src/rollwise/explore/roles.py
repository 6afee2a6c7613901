"""The role source of a role-probed quorum set in the explorer (issue 41): each member's probe answer, as the
operator's probe runner would hand it to the controller, and the ways that source fails (``--perturb roles``).

The truth is the member Leases the world writes (world.py ``_sync_leases``: the leader keeps leading while it
participates). A healthy reconcile sees every member answer the truth, now. A perturbed one sees, for one member,
one of the role source's faults: no answer (a timeout), a follower that also says it leads (two leaders), or the
leader's answer from before it led, older than ``staleAfterSeconds`` (stale); or the leader answering the truth
while its readiness fails (NATS' ``/healthz`` does on a voting meta leader while a peer catches up). The ``budget``
invariant's
leader-last rule (explore/invariants.py) then checks that no quorum-aware deletion takes the member the Leases name
leader while another outdated member still participates (DEP-07 step 4, follower before leader).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterator, Mapping

from rollwise.api.identity import ordinal_of, ordinal_range, revision_of
from rollwise.api.leases import LEADER, lease_role
from rollwise.api.meta import Obj, name_of
from rollwise.api.predicates import is_ready, is_terminating
from rollwise.api.role_probe import ProbeAnswer, RoleProbe, parse_json_path
from rollwise.controllers.quorum.settings import read_settings
from rollwise.controllers.view import SetView

__all__ = ["faults", "leader_deleted_first", "probe_of_set", "truthful"]


def probe_of_set(sts: Obj) -> RoleProbe | None:
    return read_settings(sts)[0].probe


def _leads(view: SetView, pod: str) -> bool:
    lease = view.leases.get(read_settings(view.set)[0].lease_name(pod))
    return lease_role(lease) == LEADER


def _answer(probe: RoleProbe, leads: bool, pod: str, at: float) -> ProbeAnswer:
    """The answer a member gives under ``probe``'s rule: the leader's status or value, or a follower's."""
    if probe.status_code is not None:
        return ProbeAnswer(at=at, status=probe.status_code if leads else 503)
    value: object = (probe.equals or "").replace("{pod}", pod) if leads else "follower"
    for step in reversed(parse_json_path(probe.json_path or "") or ()):
        value = [None] * step + [value] if isinstance(step, int) else {step: value}
    return ProbeAnswer(at=at, status=200, body=json.dumps(value).encode())


def truthful(view: SetView) -> Mapping[str, ProbeAnswer]:
    """Every member pod's answer, the truth, now (empty when the set has no role probe)."""
    probe = probe_of_set(view.set)
    if probe is None:
        return {}
    return {name_of(p): _answer(probe, _leads(view, name_of(p)), name_of(p), view.now) for p in view.pods}


def _not_ready(pod: Obj) -> Obj:
    """The pod as its kubelet reports it once its readiness probe fails: not Ready, no container ready."""
    out = copy.deepcopy(pod)
    status = out.setdefault("status", {})
    for cs in status.get("containerStatuses") or []:
        cs["ready"] = False
    status["conditions"] = [{**c, "status": "False"} if c.get("type") in ("Ready", "ContainersReady") else c
                            for c in status.get("conditions") or []]
    return out


def faults(view: SetView) -> Iterator[tuple[str, SetView]]:
    """Each fault of the role source on one member: (what went wrong, in words; the view the controller sees)."""
    probe = probe_of_set(view.set)
    if probe is None:
        return
    answers = dict(truthful(view))
    pods = {name_of(p): p for p in view.pods}
    for pod in sorted(answers, key=lambda n: int(n.rsplit("-", 1)[1])):
        leads = _leads(view, pod)
        yield f"no answer from {pod}", dataclasses.replace(
            view, probes={**answers, pod: ProbeAnswer(at=view.now, error="timed out")})
        if leads:
            old = _answer(probe, False, pod, view.now - probe.stale_seconds - 1)
            yield f"{pod}'s answer is stale (from before it led)", dataclasses.replace(
                view, probes={**answers, pod: old})
            if is_ready(pods[pod]) and not is_terminating(pods[pod]):
                yield f"{pod} leads but its readiness fails", dataclasses.replace(
                    view, probes=answers, pods=tuple(_not_ready(p) if name_of(p) == pod else p for p in view.pods))
        else:
            yield f"{pod} also says it leads", dataclasses.replace(
                view, probes={**answers, pod: _answer(probe, True, pod, view.now)})


def leader_deleted_first(before: SetView, deleted: tuple[Obj, ...]) -> list[str]:
    """A deletion of the member the Leases name leader while another outdated member participates (Ready, not
    terminating, in range) and is not deleted with it."""
    update = (before.set.get("status") or {}).get("updateRevision")
    span = ordinal_range(before.set)
    gone = {name_of(p) for p in deleted}
    others = [name_of(p) for p in before.pods if name_of(p) not in gone and ordinal_of(p) in span
              and revision_of(p) != update and is_ready(p) and not is_terminating(p)]
    return [f"deleted {name_of(p)}, the leader by its Lease, before outdated member(s) {', '.join(others)}"
            for p in deleted if others and _leads(before, name_of(p))]
