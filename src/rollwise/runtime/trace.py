"""The decision log (``--trace FILE``): every reconcile that decided actions, one JSON line each, in the format
``rollwise check-trace`` reads (``invariants/log.py``). The simulator, ``up`` and the operator run the same
controllers, so they write the same log: each hands ``observer(controller)`` the view and plan of a reconcile."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from rollwise.controllers.plan import Plan
from rollwise.controllers.view import SetView
from rollwise.invariants.log import encode
from rollwise.runtime.actors import QUORUM_CONTROLLER

__all__ = ["DecisionLog"]


class DecisionLog:
    """Appends to ``path`` (created if missing); ``close`` when the run ends."""

    def __init__(self, path: Path | str) -> None:
        self._file: TextIO = Path(path).open("a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        self._lock = threading.Lock()  # the operator's controllers decide on one loop, but a log is cheap to guard

    def record(self, controller: str, view: SetView, plan: Plan) -> None:
        if not plan.actions:
            return
        line = json.dumps(encode(view, plan.actions, controller=controller, quorum=controller == QUORUM_CONTROLLER,
                                 requeue_after=plan.requeue_after), default=str, separators=(",", ":"))
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def observer(self, controller: str) -> Callable[[SetView, Plan], None]:
        """An observer for ``SetController.observers`` that logs under ``controller``'s name."""
        return lambda view, plan: self.record(controller, view, plan)

    def close(self) -> None:
        with self._lock:
            self._file.close()
