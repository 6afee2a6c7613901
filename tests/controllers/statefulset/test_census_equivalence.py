"""The census is an optimisation, never a decision: on any state, a reconcile that counts quiet pods plans exactly
what a reconcile that walks every pod plans (controllers/census.py).

States are drawn at random over what the phases read: every strategy with and without its block, partitions,
budgets, progress timeouts, both policies, minReadySeconds around the availability instant, ordinals start,
reserved ordinals, retention policies, and pods missing, condemned, orphaned, owned by another set, with a broken
identity label, in every phase, Ready or not, terminating, at the current, the update or a third revision, with
claims missing, in line or carrying a foreign controller reference.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import Any

import pytest
from builders import make_pod, make_set, revision_for, with_image
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from tiers import examples

import rollwise.controllers.statefulset as statefulset_controller
from rollwise.api.features import FeatureGates
from rollwise.api.identity import POD_NAME_LABEL, claims_for_pod, ordinal_range
from rollwise.api.meta import Obj, name_of
from rollwise.api.retention import with_claim_owners
from rollwise.controllers.census import census_of, quiet_context
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView

NOW = 0.0

STRATEGIES: list[dict[str, Any] | None] = [
    None,
    {"type": "RollingUpdate"},
    {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
    {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}},
    {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%", "partition": 1}},
    {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3, "podProgressTimeoutSeconds": 30}},
    {"type": "OnDelete"},
    {"type": "Recreate"},
    {"type": "EnforcedRollingUpdate"},
    {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"maxUnavailable": 2, "partition": 1}},
    {"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"podProgressTimeoutSeconds": 20}},
]

WILD = {
    "exists": [True, True, True, False],
    "revision": ["old", "old", "new", "new", "third"],
    "phase": ["Running", "Running", "Running", "Pending", "Failed", "Succeeded"],
    "ready": [True, True, False],
    "ready_since": [-90.0, -10.0, -10.0005, -9.9995, -5.0],
    "terminating": [False, False, False, True],
    "owner": ["ours", "ours", "ours", "orphan", "other"],
    "identity": [True, True, True, False],
    "claim": ["ok", "ok", "missing", "foreign"],
    "stamp": [-100.0, -25.0, -5.0],
}
CALM = {"exists": True, "revision": None, "phase": "Running", "ready": True, "ready_since": -90.0,
        "terminating": False, "owner": "ours", "identity": True, "claim": "ok", "stamp": -100.0}
"""A pod every phase passes over (its revision drawn); a calm state perturbs a field now and then."""


@st.composite
def pod_states(draw: st.DrawFn, calm: bool) -> dict[str, Any]:
    state = {}
    for key, values in WILD.items():
        wild = not calm or key == "revision" or draw(st.integers(min_value=0, max_value=9)) == 0
        state[key] = draw(st.sampled_from(values)) if wild else CALM[key]
    return state


@st.composite
def views(draw: st.DrawFn) -> SetView:
    replicas = draw(st.integers(min_value=0, max_value=7))
    sts = make_set(
        "web", replicas=replicas, policy=draw(st.sampled_from(["OrderedReady", "Parallel"])),
        strategy=copy.deepcopy(draw(st.sampled_from(STRATEGIES))),
        min_ready_seconds=draw(st.sampled_from([0, 0, 10])),
        claims=draw(st.booleans()),
        retention=draw(st.sampled_from([None, ("Delete", "Retain"), ("Retain", "Delete"), ("Delete", "Delete")])),
        start=draw(st.sampled_from([None, None, 3])),
    )
    reserve = draw(st.sampled_from([None, None, None, [1], [0, 4], [4, 5]]))
    if reserve is not None:  # pods at reserved ordinals are drawn too (below span.stop): condemned
        sts["spec"]["reserveOrdinals"] = reserve
    old = revision_for(sts, 1)
    changed = draw(st.booleans())
    if changed:
        sts = with_image(sts, "nginx:new")
    new = revision_for(sts, 2) if changed else old
    third = revision_for(with_image(sts, "nginx:third"), 3)
    revisions = {"old": old, "new": new, "third": third}
    sts["status"] = {"observedGeneration": 1, "currentRevision": name_of(old),
                     "updateRevision": name_of(draw(st.sampled_from([old, new]))),
                     "currentReplicas": draw(st.integers(min_value=0, max_value=replicas)),
                     "replicas": replicas}
    span = ordinal_range(sts)
    pods: list[Obj] = []
    claims: dict[str, Obj] = {}
    calm = draw(st.booleans())
    for ordinal in range(span.start, span.stop + draw(st.integers(min_value=0, max_value=2))):
        state = draw(pod_states(calm))
        if not state["exists"]:
            continue
        pod = make_pod(sts, ordinal, revision=revisions[state["revision"]], phase=state["phase"],
                       ready=state["ready"], ready_since=state["ready_since"], terminating=state["terminating"])
        pod["metadata"]["creationTimestamp"] = state["stamp"]
        if state["owner"] == "orphan":
            pod["metadata"]["ownerReferences"] = []
        elif state["owner"] == "other":
            pod["metadata"]["ownerReferences"][0]["uid"] = "uid-someone-else"
        if not state["identity"]:
            del pod["metadata"]["labels"][POD_NAME_LABEL]
        pods.append(pod)
        for claim in claims_for_pod(sts, ordinal):
            if state["claim"] == "missing":
                continue
            owned = with_claim_owners(claim, sts, None, condemned=False)
            owned["metadata"]["uid"] = f"uid-{name_of(claim)}"
            if state["claim"] == "foreign":
                owned["metadata"]["ownerReferences"] = [
                    {"apiVersion": "v1", "kind": "Pod", "name": "elsewhere", "uid": "uid-x", "controller": True}]
            claims[name_of(claim)] = owned
    order = draw(st.permutations(pods))
    return SetView(set=sts, pods=tuple(order), claims=claims, revisions=(old, new) if changed else (old,),
                   now=NOW, gates=FeatureGates())


_SLOW_EXAMPLES = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("n", examples(200, 600))
def test_counting_quiet_pods_plans_what_walking_every_pod_plans(n: int) -> None:
    @settings(_SLOW_EXAMPLES, max_examples=n)
    @given(views())
    def check(view: SetView) -> None:
        counted = reconcile(view)
        walked = reconcile(view, walk_all=True)
        revisions = [name_of(r) for r in view.revisions]
        ctx = quiet_context(view.set, update_revision=revisions[-1],
                            current_revision=view.set["status"]["currentRevision"])
        quiet = len(census_of(ctx, view.set, view.pods, view.claims, view.now).others) < len(view.pods)
        event(f"some pods quiet: {quiet}")
        assert counted == walked

    check()


@pytest.mark.parametrize("n", examples(100, 300))
def test_a_quiet_pod_stays_quiet_as_time_passes(n: int) -> None:
    @settings(_SLOW_EXAMPLES, max_examples=n)
    @given(views(), st.sampled_from([0.0, 0.0004, 0.001, 5.0, 100.0]))
    def check(view: SetView, later: float) -> None:
        status = view.set["status"]
        ctx = quiet_context(view.set, update_revision=status["updateRevision"],
                            current_revision=status["currentRevision"])
        before = census_of(ctx, view.set, view.pods, view.claims, view.now)
        after = census_of(ctx, view.set, view.pods, view.claims, view.now + later)
        assert set(after.loud) <= set(before.loud)

    check()


@contextlib.contextmanager
def _slots_always_overlaid() -> Iterator[None]:
    """Make every reconcile lay the loud pods over the census' slots, as it does only on large sets."""
    saved = statefulset_controller._COPY_SLOTS_UP_TO, statefulset_controller._SLOTS_PER_LOUD_FOR_A_COPY
    statefulset_controller._COPY_SLOTS_UP_TO, statefulset_controller._SLOTS_PER_LOUD_FOR_A_COPY = -1, 0
    try:
        yield
    finally:
        statefulset_controller._COPY_SLOTS_UP_TO, statefulset_controller._SLOTS_PER_LOUD_FOR_A_COPY = saved


@pytest.mark.parametrize("n", examples(100, 300))
def test_slots_laid_over_the_census_plan_what_a_copy_plans(n: int) -> None:
    @settings(_SLOW_EXAMPLES, max_examples=n)
    @given(views())
    def check(view: SetView) -> None:
        copied = reconcile(view)
        with _slots_always_overlaid():
            overlaid = reconcile(view)
        assert overlaid == copied

    check()
