"""Regression scenarios for safety defects, run through ``rollwise simulate`` as a user would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rollwise.cli import main

SCENARIOS = Path(__file__).resolve().parents[2] / "tests" / "scenarios"


def simulate(capsys: pytest.CaptureFixture[str], name: str) -> tuple[int, dict[str, Any]]:
    code = main(["simulate", str(SCENARIOS / name), "--json"])
    captured = capsys.readouterr()
    assert not captured.err or code == 1, captured.err
    return code, json.loads(captured.out)


def test_scale_down_reversed_while_terminating_keeps_the_claim(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = simulate(capsys, "scale-down-reversed-keeps-claims.yaml")
    assert code == 0
    assert [e for e in result["events"] if e["type"] == "PVCDeleted"] == []
    assert result["summary"]["db"]["claimsLost"] == 0
