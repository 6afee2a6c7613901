"""One controller per set: which controller runs for which StatefulSet kind is one table, and `up`'s controllers
stand down for the sets a leading operator runs (local/standdown.py), by the Lease rule a standby candidate uses."""

from __future__ import annotations

import pytest

from rollwise.cluster.resources import ROLLWISE_STATEFULSET, STATEFULSET, STATEFULSET_KINDS
from rollwise.local.standdown import OperatorLeases
from rollwise.operator.operator import CONTROLLERS
from rollwise.runtime.registrations import QUORUM, STATEFULSET_ROW, chain_for, operator_kinds, operator_marks


def test_the_quorum_aware_controller_runs_after_the_statefulset_controller_for_both_kinds() -> None:
    for kind in STATEFULSET_KINDS:
        assert chain_for(kind) == (STATEFULSET_ROW, QUORUM)
    # The operator: the custom kind's whole chain; apps/v1's StatefulSet controller is kube-controller-manager's.
    assert operator_kinds(tuple(CONTROLLERS)) == {
        STATEFULSET: (QUORUM,), ROLLWISE_STATEFULSET: (STATEFULSET_ROW, QUORUM)}
    assert operator_kinds(("quorum",)) == {STATEFULSET: (QUORUM,), ROLLWISE_STATEFULSET: (QUORUM,)}


class _Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _lease(holder: str, *, controllers: tuple[str, ...] = ("statefulset", "quorum"), namespaces: tuple[str, ...] = (),
           duration: int = 15, name: str = "rollwise") -> dict:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": "rollwise-system",
                         "annotations": operator_marks(controllers, namespaces)},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration}}


def test_up_stands_down_only_for_what_the_leading_operator_runs() -> None:
    clock = _Clock()
    leases = OperatorLeases(clock)
    assert leases.seen(_lease("op-a", controllers=("quorum",), namespaces=("prod",))) == (115.0, False)
    assert leases.stands_down(QUORUM, (STATEFULSET, "prod", "etcd"))
    assert leases.stands_down(QUORUM, (ROLLWISE_STATEFULSET, "prod", "etcd"))
    assert not leases.stands_down(QUORUM, (STATEFULSET, "dev", "etcd")), "outside the operator's namespaces"
    assert not leases.stands_down(STATEFULSET_ROW, (ROLLWISE_STATEFULSET, "prod", "web")), "not run by it"
    leases.seen(_lease("op-a"))
    assert leases.stands_down(STATEFULSET_ROW, (ROLLWISE_STATEFULSET, "dev", "web"))
    assert not leases.stands_down(STATEFULSET_ROW, (STATEFULSET, "dev", "web")), "kube-controller-manager's part"


def test_up_resumes_when_the_lease_is_released_or_not_renewed_for_its_duration_by_ups_clock() -> None:
    clock = _Clock()
    said: list[str] = []
    leases = OperatorLeases(clock, say=said.append)
    key = (STATEFULSET, "default", "etcd")
    leases.seen(_lease("op-a", duration=3))
    clock.t = 102.9
    assert not leases.expire() and leases.stands_down(QUORUM, key)
    clock.t = 103.0
    assert not leases.stands_down(QUORUM, key) and leases.expire()
    leases.seen(_lease("op-b"))
    assert leases.stands_down(QUORUM, key)
    assert leases.seen(_lease("")) == (None, True), "released: resume at once"
    assert not leases.stands_down(QUORUM, key)
    assert said == [
        "op-a leads (lease rollwise-system/rollwise): up's controllers it also runs stand down "
        "(apps.rollwise.dev, quorum)",
        "op-a stopped renewing lease rollwise-system/rollwise: up's controllers resume",
        "op-b leads (lease rollwise-system/rollwise): up's controllers it also runs stand down "
        "(apps.rollwise.dev, quorum)",
        "operator lease rollwise-system/rollwise released: up's controllers resume"]


@pytest.mark.parametrize(("controllers", "named"), [
    (("statefulset",), "(apps.rollwise.dev)"), (("quorum",), "(quorum)"),
    (("quorum", "bogus", ""), "(quorum)"), (("bogus",), "(none)")])
def test_the_stand_down_line_names_ups_own_controllers_as_up_controllers_spells_them(
        controllers: tuple[str, ...], named: str) -> None:
    """The operator's `statefulset` is `up`'s `apps.rollwise.dev`: `up`'s own `statefulset` (of apps/v1 sets) never
    stands down, so the line must not say it does; names no controller knows are left out."""
    said: list[str] = []
    OperatorLeases(_Clock(), say=said.append).seen(_lease("op-a", controllers=controllers))
    assert said == [f"op-a leads (lease rollwise-system/rollwise): up's controllers it also runs stand down {named}"]


def test_leases_that_are_not_an_operators_change_nothing() -> None:
    leases = OperatorLeases(_Clock())
    member = {"metadata": {"name": "etcd-0", "namespace": "default"}, "spec": {"holderIdentity": "a1:Leader"}}
    assert leases.seen(member) == (None, False)
    assert not leases.stands_down(QUORUM, (STATEFULSET, "default", "etcd"))


def test_the_next_expiry_is_the_earliest_leading_holders() -> None:
    clock = _Clock()
    leases = OperatorLeases(clock)
    assert leases.next_expiry() is None
    leases.seen(_lease("op-a", duration=15))
    leases.seen(_lease("op-b", duration=3, name="team-b"))
    assert leases.next_expiry() == 103.0
    clock.t = 103.0
    assert leases.expire() and leases.next_expiry() == 115.0


def test_a_new_holders_marks_replace_the_last_holders_whole() -> None:
    leases = OperatorLeases(_Clock())
    scoped = _lease("op-a", namespaces=("prod",))
    leases.seen(scoped)
    # The next holder watches every namespace: its marks, merged over the old annotations, leave no scope behind.
    notes = {**scoped["metadata"]["annotations"], **operator_marks(("statefulset", "quorum"), ())}
    leases.seen({**scoped, "metadata": {**scoped["metadata"], "annotations": notes},
                 "spec": {"holderIdentity": "op-b", "leaseDurationSeconds": 15}})
    assert leases.stands_down(QUORUM, (STATEFULSET, "dev", "etcd"))


@pytest.mark.parametrize("duration", ["abc", None, True, -5, 1.5e300])
def test_a_lease_stored_before_leases_were_validated_is_read_without_a_traceback(duration: object) -> None:
    """`up` reads every Lease of a reopened data directory at start; one stored before the API server checked a
    Lease's spec must not stop it. A duration that is not a positive whole number leads for no time at all."""
    lease = _lease("op-a")
    lease["spec"]["leaseDurationSeconds"] = duration
    leases = OperatorLeases(_Clock())
    leases.seen(lease)
    assert not leases.stands_down(QUORUM, (STATEFULSET, "default", "etcd"))
