"""Every controller is named in exactly one table (runtime/registrations.py): each actor of runtime/actors.py is one
row of one table, its name typed in no other module under src, and `up --controllers` and `rollwise run
--controllers` read their vocabularies from the table."""

from __future__ import annotations

import re
from pathlib import Path

from rollwise.cli.up import parse_controllers
from rollwise.operator.operator import CONTROLLERS as RUN_CONTROLLERS
from rollwise.runtime import actors
from rollwise.runtime.registrations import OBJECT_CONTROLLERS, SET_CONTROLLERS

SRC = Path(__file__).resolve().parents[2] / "src" / "rollwise"
ACTORS = [v for k, v in vars(actors).items() if k.endswith("_CONTROLLER") and isinstance(v, str)]
ROWS = (*SET_CONTROLLERS, *OBJECT_CONTROLLERS)


def test_every_actor_is_one_row_of_one_table() -> None:
    assert ACTORS, "runtime/actors.py names the controllers"
    for actor in ACTORS:
        in_sets = [row for row in SET_CONTROLLERS if row.actor == actor]
        in_objects = [row for row in OBJECT_CONTROLLERS if row.actor == actor]
        assert len(in_sets) + len(in_objects) == 1, f"{actor}: {len(in_sets)} set rows, {len(in_objects)} others"
    assert sorted(row.actor for row in ROWS) == sorted(ACTORS)


def test_no_module_but_the_actors_table_types_an_actor_name() -> None:
    typed = {actor: sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                           if re.search(rf"[\"']{re.escape(actor)}[\"']", p.read_text(encoding="utf-8")))
             for actor in ACTORS}
    assert typed == {actor: ["runtime/actors.py"] for actor in ACTORS}


def test_every_driver_wakes_sets_by_the_rows_rule() -> None:
    importers = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                       if re.search(r"^from rollwise\.runtime\.routing import .*\bsets_to_wake\b",
                                    p.read_text(encoding="utf-8"), re.MULTILINE))
    assert importers == ["runtime/registrations.py"]  # the table names the rule; the drivers ask the table


def test_up_and_run_read_their_controllers_names_from_the_table() -> None:
    up_names = {name for row in ROWS for name in row.up_names.values()}
    assert parse_controllers("*") == up_names | {"kubelet"}  # the kubelet is up's node, not a controller
    run_names = {name for row in ROWS for name in row.operator_names.values()}
    assert set(RUN_CONTROLLERS) == run_names
