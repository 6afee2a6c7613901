"""The analysis providers: how a metric's value is measured, one function per provider key of a metric's
``provider`` block (``api.analysis.PROVIDERS``). I/O: the drivers call them off the event loop (``asyncio.to_thread``,
as ``runtime/role_probes.py``'s GETs run), and the simulator plays recorded values instead.

Each is ``measure_<key>(metric, *, timeout) -> Measured``: ``metric`` is the metric as the run holds it, its
``{{args.NAME}}`` already substituted (``controllers.analysis.Task``), and ``timeout`` the seconds the driver
allows when the block names none. A provider never raises: what went wrong is ``Measured(error=...)``, an Error
measurement, as Argo's providers return one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rollwise.api.analysis import Measured
from rollwise.runtime.analysis_providers.prometheus import measure_prometheus
from rollwise.runtime.analysis_providers.web import measure_web

__all__ = ["DEFAULT_TIMEOUT", "MEASURERS", "Measurer", "measure"]

Measurer = Callable[..., Measured]
"""``measure_<key>(metric: Mapping, *, timeout: float) -> Measured``."""

DEFAULT_TIMEOUT = 10.0
"""Argo's web provider default (``timeoutSeconds``)."""

MEASURERS: dict[str, Measurer] = {
    "web": measure_web,
    "prometheus": measure_prometheus,
}
"""Provider key → its measuring function (a provider of ``api.analysis.PROVIDERS`` not here yet measures as an
Error saying so)."""


def measure(metric: Mapping[str, Any], *, timeout: float = DEFAULT_TIMEOUT) -> Measured:
    """Measure one metric with its provider."""
    provider = metric.get("provider") or {}
    key = next(iter(provider), "")
    measurer = MEASURERS.get(key)
    if measurer is None:
        return Measured(error=f"provider {key or '(none)'} is not supported by this version of rollwise")
    try:
        return measurer(metric, timeout=timeout)
    except Exception as err:  # a provider must not stop the controller; its failure is the measurement's error
        return Measured(error=f"provider {key} failed: {type(err).__name__}: {err}")
