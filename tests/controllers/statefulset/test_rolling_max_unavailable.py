"""The rolling-update step in isolation against upstream's #137666 table (reference §8.3 items 22-24)."""

from __future__ import annotations

import pytest
from builders import make_pod, make_set, revision_for, with_image

from rollwise.api.features import MAX_UNAVAILABLE, FeatureGates
from rollwise.api.identity import ordinal_of
from rollwise.controllers.plan import DeletePod
from rollwise.controllers.statefulset.context import Sync
from rollwise.controllers.statefulset.strategies.rolling import RollingUpdate

NOW = 0.0

# policy, replicas, partition, maxUnavailable, unavailable pods, remaining ordinals  (reference §8.3 item 23)
TABLE = [
    ("Parallel", 1, 0, 1, {0: "NR"}, []),
    ("Parallel", 3, 0, 1, {2: "NR"}, [0, 1]),
    ("Parallel", 5, 0, 2, {3: "NR", 4: "NR"}, [0, 1, 2]),
    ("OrderedReady", 1, 0, 1, {0: "NR"}, [0]),
    ("OrderedReady", 3, 0, 1, {2: "NR"}, [0, 1, 2]),
    ("OrderedReady", 5, 0, 2, {4: "NR"}, [0, 1, 2, 3]),
    ("Parallel", 3, 0, 1, {2: "T"}, [0, 1, 2]),
    ("OrderedReady", 3, 0, 1, {2: "T"}, [0, 1, 2]),
    ("Parallel", 5, 0, 3, {3: "NR", 4: "T"}, [0, 1, 4]),
    ("Parallel", 3, 0, 1, {2: "W"}, [0, 1]),
    ("OrderedReady", 3, 0, 1, {2: "W"}, [0, 1, 2]),
    ("Parallel", 5, 0, 3, {3: "T", 4: "NR"}, [0, 1, 3]),
    ("OrderedReady", 5, 0, 3, {3: "NR", 4: "T"}, [0, 1, 2, 4]),
    ("OrderedReady", 5, 0, 3, {3: "T", 4: "NR"}, [0, 1, 2, 3]),
    ("Parallel", 5, 2, 1, {4: "NR"}, [0, 1, 2, 3]),
    ("Parallel", 5, 2, 1, {2: "NR"}, [0, 1, 3, 4]),
    ("Parallel", 5, 2, 1, {1: "NR"}, [0, 1, 2, 3, 4]),
    ("OrderedReady", 5, 2, 1, {4: "NR"}, [0, 1, 2, 3, 4]),
    ("Parallel", 5, 3, 2, {3: "NR", 4: "NR"}, [0, 1, 2]),
    ("Parallel", 5, 3, 2, {1: "NR", 4: "NR"}, [0, 1, 2, 3]),
    ("Parallel", 4, 0, 2, {0: "NR", 1: "NR"}, [2, 3]),
    ("Parallel", 5, 0, 3, {0: "NR", 1: "NR"}, [2, 3]),
]

# Variant B (1.34-1.36) on the same rows, where it differs (reference §8.3 item 24): row -> remaining.
VARIANT_B = {1: [0], 2: [0, 1, 2], 3: [0, 1, 2, 3, 4], 9: [0, 1, 3, 4], 10: [0, 1, 2], 15: [0, 1, 2, 3, 4],
             16: [0, 1, 2, 3, 4], 19: [0, 1, 2, 3, 4], 20: [0, 1, 2, 3, 4], 21: [0, 1, 2, 3],
             22: [0, 1, 2, 3]}


def _sync(policy: str, replicas: int, partition: int, max_unavailable: int, states: dict[int, str],
          gates: FeatureGates) -> Sync:
    mrs = 30 if "W" in states.values() else 0
    sts = make_set(replicas=replicas, policy=policy, min_ready_seconds=mrs,
                   strategy={"type": "RollingUpdate",
                             "rollingUpdate": {"partition": partition, "maxUnavailable": max_unavailable}})
    old = revision_for(sts, 1)
    update = revision_for(with_image(sts, "nginx:new"), 2)
    pods = []
    for ordinal in range(replicas):
        state = states.get(ordinal)
        pods.append(make_pod(sts, ordinal, revision=old, ready=state != "NR", terminating=state == "T",
                             ready_since=NOW if state == "W" else NOW - 90))
    return Sync(sts=sts, now=NOW, gates=gates, span=range(len(pods)), replicas=list(pods), condemned=[],
                current_revision=old, update_revision=update, collision_count=0, claims={})


def _remaining(sync: Sync) -> list[int]:
    deleted = {a.name for a in sync.actions if isinstance(a, DeletePod)}
    return [ordinal_of(p) for p in sync.replicas if p is not None and p["metadata"]["name"] not in deleted]


@pytest.mark.parametrize(("policy", "replicas", "partition", "max_unavailable", "states", "remaining"), TABLE,
                         ids=[f"row{i + 1}" for i in range(len(TABLE))])
def test_rolling_update_deletes_what_the_137666_table_expects(
    policy: str, replicas: int, partition: int, max_unavailable: int, states: dict[int, str], remaining: list[int]
) -> None:
    sync = _sync(policy, replicas, partition, max_unavailable, states, FeatureGates())
    RollingUpdate().update(sync)
    assert _remaining(sync) == remaining


def test_parallel_broken_single_replica_is_replaced_once_the_template_is_fixed() -> None:
    """#137409: an already unavailable outdated pod must not eat the whole budget (row 1)."""
    sync = _sync("Parallel", 1, 0, 1, {0: "NR"}, FeatureGates())
    RollingUpdate().update(sync)
    assert [a.name for a in sync.actions if isinstance(a, DeletePod)] == ["foo-0"]


@pytest.mark.parametrize("terminating", [(), (5,), (3,), (4,), (5, 4), (5, 3), (4, 3), (5, 4, 3), (2,), (1,)],
                         ids=lambda t: "terminating=" + ",".join(map(str, t)) if t else "none")
def test_ordered_ready_budget_counts_terminating_pods_even_below_the_partition(terminating: tuple[int, ...]) -> None:
    """reference §8.3 item 22: 6 replicas, partition 3, maxUnavailable 2: deletions = max(0, 2 - #terminating)."""
    sync = _sync("OrderedReady", 6, 3, 2, dict.fromkeys(terminating, "T"), FeatureGates())
    RollingUpdate().update(sync)
    assert len([a for a in sync.actions if isinstance(a, DeletePod)]) == max(0, 2 - len(terminating))


def test_gate_off_uses_the_legacy_one_at_a_time_algorithm() -> None:
    sync = _sync("Parallel", 5, 0, 3, {}, FeatureGates().with_overrides({MAX_UNAVAILABLE: False}))
    RollingUpdate().update(sync)
    assert [a.name for a in sync.actions if isinstance(a, DeletePod)] == ["foo-4"]


def test_legacy_waits_for_the_replacement_above_before_touching_the_next_pod() -> None:
    sync = _sync("Parallel", 3, 0, 1, {}, FeatureGates().with_overrides({MAX_UNAVAILABLE: False}))
    sync.replicas[2] = None  # foo-2 deleted and not yet recreated
    RollingUpdate().update(sync)
    assert not [a for a in sync.actions if isinstance(a, DeletePod)]
    assert [b.pod for b in sync.blocked] == ["foo-2"]
