"""The simulator's summary reports writes made while nothing changed (``writesWithoutChange``, issue 38): the
quiescence rule over every reconcile of the run. The real controllers make none in any bundled scenario — the
paused and hooked ones included, which made one each before a paused set's ``lastUpdateTime`` and a pending hook's
elapsed time stopped moving with the clock — and a controller that writes the status it read is counted."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from rollwise.cli import main
from rollwise.controllers.plan import Plan, WriteStatus
from rollwise.controllers.statefulset import reconcile
from rollwise.controllers.view import SetView
from rollwise.runtime import registrations
from rollwise.sim import Simulation, load_scenario, parse_scenario

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "rollwise" / "examples"
SCENARIOS = sorted(p for p in EXAMPLES.rglob("*.yaml") if p.name not in ("explore-web.yaml", "shrink-claims.yaml"))
"""Every bundled scenario but the manifest `explore` reads and the one a shrunk claim template makes invalid."""


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: str(p.relative_to(EXAMPLES).with_suffix("")))
def test_no_bundled_scenario_writes_without_a_change(scenario: Path) -> None:
    summary = Simulation(load_scenario(str(scenario))).run()["summary"]
    assert summary, "a scenario has a set"
    assert {name: fig["writesWithoutChange"] for name, fig in summary.items()} == dict.fromkeys(summary, 0)


def test_a_controller_that_writes_the_status_it_read_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    added: list[float] = []

    def writes_what_it_read(view: SetView) -> Plan:
        plan = reconcile(view)
        status = view.set.get("status")
        if plan.of_type(WriteStatus) or not status:
            return plan
        added.append(view.now)
        return dataclasses.replace(plan, actions=(*plan.actions, WriteStatus(status=status, reason="again")))

    noisy = dataclasses.replace(registrations.STATEFULSET_ROW, decide=writes_what_it_read)
    monkeypatch.setattr(registrations, "SET_CONTROLLERS", (noisy, registrations.QUORUM))
    doc = yaml.safe_load((EXAMPLES / "rolling-update.yaml").read_text())
    doc.pop("expect")
    # Once the rollout is done, a person annotates the set three times, 5 s apart: each wakes the controller, and
    # nothing in its status changes.
    for n in range(3):
        note = {"metadata": {"annotations": {"example.com/note": str(n)}}}
        doc["steps"] += [{"after": 5}, {"patch": {"kind": "StatefulSet", "name": "web", "merge": note}}]
    summary = Simulation(parse_scenario(doc)).run()["summary"]
    assert len(added) >= 3, "the controller reconciled a set whose status did not change"
    assert summary["web"]["writesWithoutChange"] == len(added)


def test_a_scenario_can_expect_no_write_without_a_change(tmp_path: Path) -> None:
    doc = yaml.safe_load((EXAMPLES / "safer" / "pause-mid-rollout.yaml").read_text())
    doc["expect"] = {"web": {"writesWithoutChange": 0}}
    path = tmp_path / "quiet.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert main(["simulate", str(path)]) == 0
    doc["expect"] = {"web": {"writesWithoutChange": {"gt": 0}}}
    path.write_text(yaml.safe_dump(doc))
    assert main(["simulate", str(path)]) == 1
