"""The one table of failing reasons (api/reasons.py) holds every reason a controller sets with `Progressing=False`,
read from the controllers' source: a halt added without its row would be one the tools wait through; and every
face that judges a rollout (the projection behind `status`, `get` and the dashboard; the metrics) fails on each."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest

from rollwise.api.reasons import FAILING_REASONS, failing_reason
from rollwise.projection import project
from rollwise.runtime.metrics import RuntimeMetrics
from rollwise.runtime.samples import ROLLOUT_FAILED, MetricsRegistry

CONTROLLERS = Path(__file__).resolve().parents[2] / "src" / "rollwise" / "controllers"


def _value(node: ast.expr | None, module: Any) -> str | None:
    """A reason as written: a string literal, or a name the module binds to one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        found = getattr(module, node.id, None)
        return found if isinstance(found, str) else None
    return None


def _false_progressing_reasons() -> dict[str, list[str]]:
    """reason -> where: dict literals ``{"type": "Progressing", "status": "False", "reason": R}``, condition updates
    ``.update(status="False", reason=R)``, condition builders called with ``"Progressing", "False", R``, and what a
    halt sets (``halt_reason``, its default included)."""
    found: dict[str, list[str]] = {}
    for path in sorted(CONTROLLERS.rglob("*.py")):
        name = "rollwise." + ".".join(path.relative_to(CONTROLLERS.parent).with_suffix("").parts)
        module = importlib.import_module(name.removesuffix(".__init__"))
        for node in ast.walk(ast.parse(path.read_text())):
            reason: str | None = None
            if isinstance(node, ast.Dict):
                items = {k.value: v for k, v in zip(node.keys, node.values, strict=True)
                         if isinstance(k, ast.Constant)}
                if _value(items.get("status"), module) == "False" and "reason" in items \
                        and _value(items.get("type"), module) in ("Progressing", None):
                    reason = _value(items["reason"], module)
                    halt = isinstance(items["reason"], ast.Attribute) and items["reason"].attr == "halt_reason"
                    if reason is None and not halt and _value(items.get("type"), module) == "Progressing":
                        reason = f"<unresolved {ast.unparse(items['reason'])}>"
            elif isinstance(node, ast.Call):
                kw = {k.arg: k.value for k in node.keywords}
                if _value(kw.get("status"), module) == "False" and "reason" in kw:  # condition.update(...)
                    reason = _value(kw["reason"], module)
                said = [_value(a, module) for a in node.args]  # _condition(old, "Progressing", "False", R, ...)
                for i in range(len(said) - 2):
                    if said[i:i + 2] == ["Progressing", "False"]:
                        reason = said[i + 2]
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    pairs = zip(target.elts, node.value.elts, strict=False) \
                        if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple) else [(target,
                                                                                                     node.value)]
                    for t, v in pairs:
                        named = t.attr if isinstance(t, ast.Attribute) else t.id if isinstance(t, ast.Name) else ""
                        if named == "halt_reason":
                            reason = _value(v, module)
            if reason is not None:
                found.setdefault(reason, []).append(f"{path.relative_to(CONTROLLERS.parent)}:"
                                                    f"{getattr(node, 'lineno', 0)}")
    return found


def test_every_reason_a_controller_sets_with_progressing_false_is_in_the_table() -> None:
    found = _false_progressing_reasons()
    for known, where in (("ProgressDeadlineExceeded", "deployment/"), ("SafetyHalt", "context.py"),
                         ("InvalidSpec", "statefulset/__init__.py"), ("PreDeleteHookTimeout", "hooks.py"),
                         ("InPlaceUpdateImpossible", "in_place.py"), ("ClaimResizeRefused", "claim_updates.py")):
        assert any(where in place for place in found.get(known, ())), f"the scan no longer sees {known} in {where}"
    missing = {reason: where for reason, where in found.items() if reason not in FAILING_REASONS}
    assert not missing, f"Progressing=False reasons missing from api/reasons.py: {missing}"


def _set(reason: str, status: str = "False") -> dict[str, Any]:
    return {"apiVersion": "apps.rollwise.dev/v1alpha1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default", "uid": "u1", "generation": 2},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}},
            "status": {"observedGeneration": 2, "updateRevision": "web-b", "currentRevision": "web-a",
                       "replicas": 2, "updatedReplicas": 1, "availableReplicas": 2,
                       "conditions": [{"type": "Progressing", "status": status, "reason": reason,
                                       "message": "halted on web-1"}]}}


@pytest.mark.parametrize("reason", sorted(FAILING_REASONS))
def test_each_failing_reason_fails_the_view_and_sets_the_metric(reason: str) -> None:
    view = project(_set(reason), kind="rsts", pods=(), now=0.0)
    assert (view.failed, view.state, view.message) == (True, "Degraded", f"{reason}: halted on web-1")
    metrics = MetricsRegistry()
    metrics.observe_set(None, _set(reason), 0.0)
    labels = (("namespace", "default"), ("reason", reason), ("statefulset", "web"))
    assert metrics.gauges[(ROLLOUT_FAILED, labels)] == 1.0
    exported = RuntimeMetrics(plan_samples=metrics).registry  # what the operator's /metrics serves
    assert exported.get_sample_value(ROLLOUT_FAILED, dict(labels)) == 1.0
    metrics.observe_set(_set(reason), _set("RolloutInProgress", "True"), 1.0)
    assert metrics.gauges[(ROLLOUT_FAILED, labels)] == 0.0, "cleared once the set no longer fails"


def test_a_reason_that_waits_is_not_a_failure() -> None:
    assert failing_reason([{"type": "Progressing", "status": "True", "reason": "RolloutInProgress"}]) is None
    assert failing_reason([{"type": "Progressing", "status": "Unknown", "reason": "RolloutPaused"}]) is None
    assert not project(_set("RolloutInProgress", "True"), kind="rsts", pods=(), now=0.0).failed
    metrics = MetricsRegistry()
    metrics.observe_set(None, _set("RolloutInProgress", "True"), 0.0)
    assert not [k for k in metrics.gauges if k[0] == ROLLOUT_FAILED], "a set that never failed has no series"
