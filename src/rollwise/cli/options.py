"""Options several commands share: loading a scenario with ``--feature-gates`` and ``--strategy`` applied, and
checking an output path (``--plot``, ``demo --out``) before any work is done."""

from __future__ import annotations

import os
from pathlib import Path

from rollwise.api.errors import FieldError, InvalidObject
from rollwise.api.features import parse_gate_flags
from rollwise.scenario.strategy_override import parse_strategy
from rollwise.sim import Scenario, load_scenario

__all__ = ["PLOT_FORMATS", "check_output_dir", "check_plot_path", "load_with_overrides"]

PLOT_FORMATS = ("png", "svg", "pdf")


def load_with_overrides(path: str, *, feature_gates: str = "", strategy: str | None = None) -> Scenario:
    """The scenario at ``path`` with gate and strategy overrides applied and every manifest re-checked against
    them. Raises InvalidObject naming the file (or the flag), the field and the rule."""
    gates: dict[str, bool] = {}
    if feature_gates:
        gates, errors = parse_gate_flags(feature_gates)
        if errors:
            raise InvalidObject(errors, source="--feature-gates")
    override = None
    if strategy is not None:
        override, errors = parse_strategy(strategy)
        if override is None:
            raise InvalidObject(errors, source="--strategy")
    scenario = load_scenario(path)
    if gates:
        scenario = scenario.with_gates(gates)
    if override is not None:
        scenario = scenario.with_strategy(override)
    try:
        return scenario.checked()
    except InvalidObject as err:  # the file alone was valid: the flags made it invalid, so they are named
        flags = " ".join(f for f in (f"--strategy {strategy}" if strategy else "",
                                     f"--feature-gates {feature_gates}" if feature_gates else "") if f)
        raise InvalidObject(err.errors, source=f"{path} with {flags}") from err


def check_plot_path(out: str, *, flag: str = "--plot") -> None:
    """A plot can be written there, in a format its extension names; InvalidObject naming the flag otherwise."""
    path = Path(out)
    _check_writable(path, flag, directory=False)
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in PLOT_FORMATS:
        raise InvalidObject([FieldError(path=flag, kind="Unsupported value", value=out,
                                        rule="the extension names the format; supported: "
                                             + ", ".join(f".{f}" for f in PLOT_FORMATS))], source=flag)


def check_output_dir(out: str, *, flag: str = "--out") -> None:
    _check_writable(Path(out), flag, directory=True)


def _check_writable(path: Path, flag: str, *, directory: bool) -> None:
    problem = None
    if directory and path.exists() and not path.is_dir():
        problem = "exists and is not a directory"
    elif not directory and path.is_dir():
        problem = "is a directory; give a file name such as timeline.png"
    else:
        parent = path if directory else path.parent
        existing = next((p for p in (parent, *parent.parents) if p.exists()), Path("."))
        if not existing.is_dir():
            problem = f"{existing} is not a directory"
        elif not os.access(existing, os.W_OK | os.X_OK):
            problem = f"cannot write in {existing}"
        elif not directory and path.exists() and not os.access(path, os.W_OK):
            problem = "the file exists and cannot be overwritten"
    if problem:
        raise InvalidObject([FieldError(path=flag, value=str(path), rule=problem)], source=flag)
