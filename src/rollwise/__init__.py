"""rollwise: the StatefulSet controller, upstream-faithful, plus the update strategies the KEPs describe.

The library surface: ``reconcile`` (the pure controller), ``Plan`` and ``SetView`` (its input and output), and
``load_scenario`` / ``run_scenario`` (the simulator). They load on first use, so importing one layer (say
``rollwise.api``) does not pull in the simulator.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

__all__ = ["Plan", "SetView", "load_scenario", "reconcile", "run_scenario"]

_HOMES = {
    "Plan": "rollwise.controllers.plan",
    "SetView": "rollwise.controllers.view",
    "reconcile": "rollwise.controllers.statefulset",
    "load_scenario": "rollwise.sim",
    "run_scenario": "rollwise.sim",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'rollwise' has no attribute {name!r}")
