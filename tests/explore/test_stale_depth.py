"""Informer lag as a parameter: ``stale:K`` decides on a view up to K moves old, behind the runtime's read-your-writes
check (KEP-5647). With the check on, every strategy x podManagementPolicy stays clean; with it off the explorer
finds kubernetes#59848's class of bug: a controller acting on a view that misses its own last create and delete
deletes the pod it has just created.

Cost (``bench/explore.py --faults 0 --user-actions 0 --perturb stale:K [--no-read-your-writes]``, docs/performance.md
lists every case): the 2-replica cases take under a second of CPU each; the 3-replica sweep at stale:3 with the check
on takes 0.3 to 6.6 CPU s a case (2,700 states at most), so it runs in the default suite.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from explore_sets import POLICIES, STRATEGIES, found, manifest, run
from tiers import sweep

from rollwise.cli import main
from rollwise.explore.model import perturbations_of

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SWEPT = [name for name in STRATEGIES if name != "QuorumAware"]  # DEP-07's model has its own sweep (issue 23)
# The view from before the controller deleted web-1 (the old revision, Ready), while the store already holds the
# web-1 it created again at the new revision.
LAST_MOVES = ["statefulset-controller: reconciles (deletes web-1)",
              "kubelet: termination finishes web-1",
              "statefulset-controller: reconciles (creates web-1)",
              "statefulset-controller: reconciles on a stale view (misses the last 3 changes; deletes web-1)"]


def _ordered(replicas: int = 2) -> dict[str, object]:
    strategy, _ = STRATEGIES["RollingUpdate"]
    return manifest(strategy, "OrderedReady", replicas=replicas)


def test_without_read_your_writes_a_view_missing_its_own_create_deletes_the_new_pod() -> None:
    result = run(_ordered(), replicas=2, template_changes=1, perturb="stale:3", read_your_writes=False)
    assert result.complete
    assert set(found(result)) == {"no-churn"}
    churn = result.violations[0]
    assert churn.message == ("deleted web-1, which it created under this same template and partition, and which had "
                             "not failed (it was pending)")
    assert [m.words() for m in churn.trace[-4:]] == LAST_MOVES


def test_with_read_your_writes_the_same_bounds_are_clean() -> None:
    result = run(_ordered(), replicas=2, template_changes=1, perturb="stale:3")
    assert result.complete
    assert found(result) == {}


def test_a_lag_of_one_or_two_moves_cannot_reach_back_past_the_delete_the_removal_and_the_create() -> None:
    for depth in (1, 2):
        assert found(run(_ordered(), replicas=2, perturb=f"stale:{depth}", read_your_writes=False)) == {}


def test_deeper_lag_reaches_more_states_and_the_check_prunes_them() -> None:
    plain = run(_ordered(), replicas=2).states
    unchecked = [run(_ordered(), replicas=2, perturb=f"stale:{k}", read_your_writes=False).states for k in (1, 2, 3)]
    checked = [run(_ordered(), replicas=2, perturb=f"stale:{k}").states for k in (1, 2, 3)]
    assert plain < unchecked[0] < unchecked[1] < unchecked[2]
    assert all(plain <= c < u for c, u in zip(checked, unchecked, strict=True))


def test_plain_stale_is_stale_one() -> None:
    assert perturbations_of(["stale"]) == perturbations_of(["stale:1"]) == (frozenset({"stale"}), 1)
    a = run(_ordered(), replicas=2, perturb="stale", read_your_writes=False)
    b = run(_ordered(), replicas=2, perturb="stale:1", read_your_writes=False)
    assert (a.states, a.transitions) == (b.states, b.transitions)


SWEEP = sweep(((n, p) for n in SWEPT for p in POLICIES), fast={("RollingUpdate", "OrderedReady"),
                                                                ("Recreate", "Parallel")})


@pytest.mark.parametrize(("name", "policy"), SWEEP)
def test_every_strategy_is_clean_at_stale_three_with_the_check(name: str, policy: str) -> None:
    strategy, annotations = STRATEGIES[name]
    result = run(manifest(strategy, policy, annotations=annotations), replicas=3, template_changes=1,
                 perturb="stale:3")
    assert result.complete, "the bounded state space must be exhausted"
    assert found(result) == {}


@pytest.mark.parametrize("name", ["RollingUpdate", "RollingUpdate-maxUnavailable-2", "EnforcedRollingUpdate"])
def test_without_the_check_three_replicas_find_the_stale_read(name: str) -> None:
    # The strategies whose controller replaces pods itself (under Parallel too: 13 to 16 CPU s each, not run here).
    strategy, _ = STRATEGIES[name]
    result = run(manifest(strategy, "OrderedReady"), replicas=3, template_changes=1, perturb="stale:3",
                 read_your_writes=False)
    assert result.complete
    assert set(found(result)) == {"no-churn"}
    assert result.violations[0].trace[-1].kind == "reconciles on a stale view"


@pytest.mark.parametrize(("perturb", "rule"), [
    ("stale:0", "stale:0: the depth K of stale:K must be a whole number of at least 1"),
    ("stale:x", "stale:x: the depth K of stale:K must be a whole number of at least 1"),
    ("crash:2", "crash:2: only stale takes a depth"),
])
def test_a_bad_depth_is_refused_with_the_flag_and_the_rule(perturb: str, rule: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", str(EXAMPLES / "explore-web.yaml"), "--perturb", perturb]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "--perturb" in err and rule.partition(": ")[2] in err


def test_the_summary_names_the_depth_and_the_check(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["explore", str(EXAMPLES / "rolling-update.yaml"), "--replicas", "2", "--faults", "0",
                 "--user-actions", "0", "--perturb", "stale:3", "--no-read-your-writes"])
    out, _ = capsys.readouterr()
    assert code == 1
    assert out.splitlines()[0] == ("bounds: 2 replicas, 1 template change(s), 0 fault(s), 0 user action(s), "
                                   "perturbations: stale:3, read-your-writes check off")
    assert "16. statefulset-controller: reconciles on a stale view (misses the last 3 changes; deletes web-1)" in out


def test_the_document_records_the_depth_and_the_check(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["explore", str(EXAMPLES / "rolling-update.yaml"), "--replicas", "2", "--faults", "0",
                 "--user-actions", "0", "--perturb", "stale:2", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["bounds"]["perturbations"] == ["stale"]
    assert (doc["bounds"]["staleDepth"], doc["bounds"]["readYourWrites"]) == (2, True)
