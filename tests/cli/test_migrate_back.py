"""`rollwise migrate rsts/NAME --to apps/v1` before it touches a cluster: which fields apps/v1 has no place for, and
the apps/v1 set it writes (tests/apiserver/test_uninstall_on_up.py runs it against `up`)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rollwise.cli import main
from rollwise.cli.migrate_back import apps_v1_set_for, fields_apps_v1_lacks, migrate_back


def _cr(strategy: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default", "uid": "u1", "labels": {"app": "web"},
                         "annotations": {"rollwise.dev/progress-timeouts": "{}", "team": "db"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "updateStrategy": strategy,
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}, **spec}}


@pytest.mark.parametrize(("strategy", "field"), [
    ({"type": "Recreate"}, "spec.updateStrategy.type: apps/v1 has no strategy Recreate"),
    ({"type": "EnforcedRollingUpdate", "enforcedRollingUpdate": {"partition": 1}},
     "spec.updateStrategy.type: apps/v1 has no strategy EnforcedRollingUpdate"),
    ({"type": "RollingUpdate", "rollingUpdate": {"podProgressTimeoutSeconds": 30}},
     "spec.updateStrategy.rollingUpdate.podProgressTimeoutSeconds: apps/v1 has no such field"),
])
def test_a_strategy_apps_v1_lacks_is_named_until_strategy_says_what_to_use(strategy: dict[str, Any],
                                                                          field: str) -> None:
    (problem,) = fields_apps_v1_lacks(_cr(strategy)["spec"], None)
    assert problem.startswith(field) and "--strategy RollingUpdate" in problem
    assert fields_apps_v1_lacks(_cr(strategy)["spec"], "RollingUpdate") == []


def test_max_unavailable_is_apps_v1s_own_field_and_moves_as_it_is() -> None:
    cr = _cr({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2, "partition": 1}})
    assert fields_apps_v1_lacks(cr["spec"], None) == []
    sts = apps_v1_set_for(cr, None)
    assert sts["apiVersion"] == "apps/v1" and sts["spec"] == cr["spec"]
    assert sts["metadata"] == {"name": "web", "namespace": "default", "labels": {"app": "web"},
                               "annotations": {"team": "db"}}, "no uid, no controller memory"


def test_progress_deadline_is_refused_whatever_the_strategy() -> None:
    spec = _cr({"type": "RollingUpdate"}, progressDeadlineSeconds=600)["spec"]
    assert [p.split(":")[0] for p in fields_apps_v1_lacks(spec, "OnDelete")] == ["spec.progressDeadlineSeconds"]


def test_a_paused_set_is_refused_whatever_the_strategy() -> None:
    spec = _cr({"type": "RollingUpdate"}, paused=True)["spec"]
    assert [p.split(":")[0] for p in fields_apps_v1_lacks(spec, "OnDelete")] == ["spec.paused"]


def test_a_set_with_a_pre_delete_hook_is_refused_whatever_the_strategy() -> None:
    spec = _cr({"type": "RollingUpdate"}, lifecycle={"preDelete": {"labelsHandler": {"drain": "pending"}}})["spec"]
    assert [p.split(":")[0] for p in fields_apps_v1_lacks(spec, "OnDelete")] == ["spec.lifecycle"]


def test_strategy_replaces_the_update_strategy_keeping_partition_and_max_unavailable() -> None:
    cr = _cr({"type": "EnforcedRollingUpdate",
              "enforcedRollingUpdate": {"partition": 1, "maxUnavailable": "50%", "podProgressTimeoutSeconds": 9}})
    assert apps_v1_set_for(cr, "RollingUpdate")["spec"]["updateStrategy"] == {
        "type": "RollingUpdate", "rollingUpdate": {"partition": 1, "maxUnavailable": "50%"}}
    assert apps_v1_set_for(cr, "OnDelete")["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert cr["spec"]["updateStrategy"]["type"] == "EnforcedRollingUpdate", "the custom set is not changed"


@pytest.mark.parametrize("argv", [
    ["migrate", "rsts/web", "--to", "apps/v2"],
    ["migrate", "sts/web", "--to", "apps/v1"],
    ["migrate", "sts/web", "--strategy", "OnDelete"],
])
def test_bad_directions_exit_2_with_one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("error: ")


@pytest.mark.parametrize(("spec", "field"), [
    ({"reserveOrdinals": [1]}, "spec.reserveOrdinals: apps/v1 has no such field"),
    ({"volumeClaimUpdatePolicy": "InPlace"}, "spec.volumeClaimUpdatePolicy: apps/v1 has no such field"),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}},
     "spec.updateStrategy.rollingUpdate.podUpdatePolicy: apps/v1 has no such field"),
])
def test_rollwise_only_fields_are_refused_by_their_path(spec: dict[str, Any], field: str) -> None:
    """Issue 38: kube-controller-manager would move pods off the reserved layout, never update a claim, recreate
    pods meant to be updated in place."""
    cr = _cr({"type": "RollingUpdate"})
    cr["spec"].update(spec)
    (problem,) = fields_apps_v1_lacks(cr["spec"], None)
    assert problem.startswith(field)


def test_rollwise_only_fields_at_apps_v1s_behaviour_are_left_out_not_refused() -> None:
    cr = _cr({"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "podUpdatePolicy": "ReCreate"}},
             volumeClaimUpdatePolicy="OnClaimDelete", reserveOrdinals=None)
    assert fields_apps_v1_lacks(cr["spec"], None) == []
    spec = apps_v1_set_for(cr, None)["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert "volumeClaimUpdatePolicy" not in spec and "reserveOrdinals" not in spec


def test_a_refused_field_is_exit_2_with_nothing_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    cr = _cr({"type": "RollingUpdate"}, reserveOrdinals=[1])

    class Kube:
        async def get(self, *args: Any) -> Any:
            return cr

    assert asyncio.run(migrate_back(Kube(), "default", "web", None, 1.0)) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: statefulset.apps.rollwise.dev/web: spec.reserveOrdinals: ")
