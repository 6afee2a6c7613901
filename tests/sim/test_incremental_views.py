"""What the simulator keeps from the change feed is what it would compute from the store, at every step of random
runs: the controller's view and census (runtime/census.py), the plan decided from it (against a reconcile
that walks every pod), and the record's per-instant figures (sim/tally.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_properties import scenarios
from tiers import examples

from rollwise.api.meta import controller_of, name_of, uid_of
from rollwise.controllers.census import census_of
from rollwise.controllers.plan import Plan
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView
from rollwise.runtime.setkeys import all_sets
from rollwise.runtime.views import set_view
from rollwise.sim import Simulation, parse_scenario
from rollwise.sim.record import rollout_complete, unavailable_ordinals

ordinals = st.integers(0, 4)
# What else moves a pod's quietness: its claims (deleted, or stripped of the set's reference), its labels (the
# selector no longer matches: released), the set's minReadySeconds (the context).
feed_steps = st.one_of(
    st.builds(lambda o: {"delete": {"kind": "PersistentVolumeClaim", "name": f"data-web-{o}"}}, ordinals),
    st.builds(lambda o: {"patch": {"kind": "PersistentVolumeClaim", "name": f"data-web-{o}",
                                   "merge": {"metadata": {"ownerReferences": None}}}}, ordinals),
    st.builds(lambda o: {"patch": {"kind": "Pod", "name": f"web-{o}",
                                   "merge": {"metadata": {"labels": {"app": "elsewhere"}}}}}, ordinals),
    st.builds(lambda m: {"patch": {"kind": "StatefulSet", "name": "web", "merge": {"spec": {"minReadySeconds": m}}}},
              st.sampled_from([0, 3])),
)


@st.composite
def runs(draw: st.DrawFn) -> dict[str, Any]:
    raw = draw(scenarios())
    steps = raw["steps"]
    for extra in draw(st.lists(feed_steps, max_size=4)):
        steps.insert(draw(st.integers(1, len(steps) - 1)), extra)
        steps.insert(steps.index(extra) + 1, {"after": draw(st.integers(1, 20))})
    return raw


def _names(pods: Any) -> list[str | None]:
    return [None if pod is None else name_of(pod) for pod in pods]


@pytest.mark.parametrize("n", examples(40, 100))
def test_views_and_figures_kept_from_the_feed_match_the_store(n: int) -> None:
    @settings(max_examples=n, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(runs())
    @example({  # a claim stripped of the set's reference makes its quiet pod loud (a change no set is woken by)
        "name": "claim-stripped", "kubelet": {"startSeconds": 1, "readySeconds": 0, "terminationSeconds": 0},
        "objects": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"}, "spec": {
            "replicas": 3, "podManagementPolicy": "Parallel",
            "persistentVolumeClaimRetentionPolicy": {"whenScaled": "Delete", "whenDeleted": "Delete"},
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "app", "image": "app:v1"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}]}}],
        "steps": [{"waitFor": {"ready": "web", "timeout": 120}},
                  {"patch": {"kind": "PersistentVolumeClaim", "name": "data-web-1",
                             "merge": {"metadata": {"ownerReferences": None}}}},
                  {"after": 5}, {"deletePod": "web-2"}, {"after": 30}]})
    def check(raw: dict[str, Any]) -> None:
        sim = Simulation(parse_scenario(raw))
        problems: list[str] = []
        censuses = 0

        def observe(view: SetView, plan: Plan) -> None:
            nonlocal censuses
            fresh = set_view(sim.cluster, view.set, now=view.now, gates=view.gates)
            where = f"t={view.now}"
            if tuple(view.pods) != fresh.pods:
                problems.append(f"{where}: pods {_names(view.pods)} != {_names(fresh.pods)}")
            if dict(view.claims) != dict(fresh.claims) or view.revisions != fresh.revisions \
                    or dict(view.leases) != dict(fresh.leases):
                problems.append(f"{where}: claims, revisions or leases differ")
            if view.census is not None:
                censuses += 1
                full = census_of(view.census.ctx, view.set, fresh.pods, fresh.claims, view.now)
                kept = view.census
                if (_names(kept.slots), kept.loud, kept.quiet_outdated, kept.quiet_updated, _names(kept.others)) != (
                        _names(full.slots), full.loud, full.quiet_outdated, full.quiet_updated, _names(full.others)):
                    problems.append(f"{where}: census loud {kept.loud} != {full.loud}, others {_names(kept.others)} != "
                                    f"{_names(full.others)}")
            if plan != reconcile(fresh, walk_all=True):
                problems.append(f"{where}: the plan differs from a reconcile that walks every pod")

        sim.observers.append(observe)
        end_of_instant = sim._end_of_instant

        def check_figures() -> None:
            now = sim.clock.now
            for sts in all_sets(sim.cluster):
                pods = [p for p in sim.cluster.list("Pod") if (controller_of(p) or {}).get("uid") == uid_of(sts)]
                if sim.tallies.unavailable(sts, now) != unavailable_ordinals(sts, pods, now):
                    problems.append(f"t={now}: unavailable {sim.tallies.unavailable(sts, now)} != "
                                    f"{unavailable_ordinals(sts, pods, now)}")
                if sim.tallies.complete(sts) != rollout_complete(sts, pods, now):
                    problems.append(f"t={now}: complete {sim.tallies.complete(sts)} != "
                                    f"{rollout_complete(sts, pods, now)}")
            end_of_instant()

        sim._end_of_instant = check_figures  # type: ignore[method-assign]
        sim.run()
        assert not problems, problems[:5]
        assert censuses, "the census kept from the feed was used"

    check()
