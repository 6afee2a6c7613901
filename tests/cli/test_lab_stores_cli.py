"""``rollwise lab zookeeper|nats``: the lab's store table behind the same command as ``lab etcd``; flags refused as
there, leader transfer offered only where the store can hand over, each store's model parameters and role probe."""

from __future__ import annotations

import pytest

from rollwise.cli import main
from rollwise.lab.experiment import run_model
from rollwise.lab.scenarios import SCENARIOS, STRATEGIES, model_scenario, set_manifest, strategies_for
from rollwise.lab.stores import LAB_STORES


def test_a_zookeeper_lab_offers_no_leader_transfer_and_says_so_with_exit_2(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert "quorum-transfer" not in strategies_for(LAB_STORES["zookeeper"])
    assert "quorum-transfer" in strategies_for(LAB_STORES["nats"])
    assert main(["lab", "zookeeper", "--strategies", "quorum-transfer"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "--strategies: Unsupported value: 'quorum-transfer'" in captured.err


@pytest.mark.parametrize("store", ["zookeeper", "nats"])
def test_a_store_lab_refuses_bad_flags_before_any_member_starts(store: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lab", store, "--scenarios", "dep07,bogus"]) == 2
    assert main(["lab", store, "--trials", "0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "--scenarios" in captured.err and "--trials" in captured.err


@pytest.mark.parametrize("store", ["zookeeper", "nats"])
def test_the_real_set_carries_the_store_s_role_probe_and_the_model_s_set_does_not(store: str) -> None:
    """The model's members write Leases; a probe there would find every role unknown and hold the rollout."""
    lab = LAB_STORES[store]
    real = set_manifest(SCENARIOS["dep07"], STRATEGIES["quorum"], lab.timings, lab)
    notes = real["metadata"]["annotations"]
    assert notes["rollwise.dev/role-probe-port"] == lab.probe["rollwise.dev/role-probe-port"]
    assert real["spec"]["template"]["spec"]["containers"][0]["image"] == lab.images[0]
    model = model_scenario(SCENARIOS["dep07"], STRATEGIES["quorum"], lab.timings, lab)
    [obj] = [o for o in model.objects if o.get("kind") == "StatefulSet"]
    assert not any(k.startswith("rollwise.dev/role-probe") for k in obj["metadata"].get("annotations") or {})


def test_the_model_with_zookeeper_s_parameters_pays_an_election_for_the_leader_where_etcd_hands_over() -> None:
    """ZooKeeper 3.8 does not hand over on shutdown: the leader going last costs the model one election timeout;
    etcd's hand-over on SIGTERM costs nothing."""
    zk, etcd = LAB_STORES["zookeeper"], LAB_STORES["etcd"]
    zk_fig, _ = run_model(SCENARIOS["five"], STRATEGIES["quorum"], zk.timings, zk)
    etcd_fig, _ = run_model(SCENARIOS["five"], STRATEGIES["quorum"], etcd.timings, etcd)
    assert zk_fig.completed and etcd_fig.completed
    assert zk_fig.outage_seconds == pytest.approx(zk.timings.election_seconds, abs=0.05)
    assert etcd_fig.outage_seconds == 0
    assert (zk_fig.elections, zk_fig.leader_moves) == (1, 1)

