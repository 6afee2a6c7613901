"""Every bundled scenario under every ``--strategy`` gives the result document it gave when this was pinned.

A change to the world layer, the drivers or the kubelet must not change what the controllers decide. This pins
the whole result document (events, summary, apiWrites, metrics, final state) of each scenario in
``src/rollwise/examples`` and ``tests/scenarios``, by default and under each strategy override, as a digest. A
change that alters decisions on purpose regenerates the table and says why in its commit:

    ROLLWISE_PIN_RESULTS=1 .venv/bin/pytest tests/sim/test_decisions_pinned.py
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from bundled import SCENARIO_FILES

from rollwise.cli.options import load_with_overrides
from rollwise.sim import run_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = SCENARIO_FILES
STRATEGIES = (None, "RollingUpdate", "RollingUpdate:maxUnavailable=2", "OnDelete", "Recreate",
              "EnforcedRollingUpdate", "QuorumAware")
PINNED = Path(__file__).with_name("pinned_results.json")


def _digest(path: Path, strategy: str | None) -> str:
    result = run_scenario(load_with_overrides(str(path), strategy=strategy))
    result["strategy"] = strategy
    return hashlib.sha256(json.dumps(result, sort_keys=True).encode()).hexdigest()[:16]


def _case(path: Path, strategy: str | None) -> str:
    return f"{path.stem}/{strategy or 'default'}"


def test_every_bundled_scenario_decides_as_pinned() -> None:
    got = {_case(p, s): _digest(p, s) for p in SCENARIOS for s in STRATEGIES}
    if os.environ.get("ROLLWISE_PIN_RESULTS"):
        PINNED.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    pinned = json.loads(PINNED.read_text())
    changed = sorted(case for case in got.keys() | pinned.keys() if got.get(case) != pinned.get(case))
    assert not changed, f"result documents changed for: {changed}"
