"""A metric's ``successCondition`` and ``failureCondition``: CEL expressions over one variable, ``result`` (the
measured value as JSON gives it: ``result > 0.05``, ``result[0] >= 0.95``, ``result.ok == true``).

Compiled by the same CEL runtime the CRD rules use (``cel-expr-python``; ``apiserver/admission/cel_rules.py`` says
why that one), once per expression. A condition that does not compile is refused when the template is validated;
one that fails to evaluate on a value, or gives something other than a boolean, makes that measurement an Error, as
Argo's ``evaluate.EvaluateResult`` does for its expressions. Pure: no I/O.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped]

__all__ = ["CONDITION_VARIABLE", "compile_error", "evaluate_condition"]

CONDITION_VARIABLE = "result"


@lru_cache(maxsize=1)
def _env() -> Any:
    return cel.NewEnv(variables={CONDITION_VARIABLE: cel.Type.DYN})


@lru_cache(maxsize=1024)
def _compiled(expression: str) -> tuple[Any, str | None]:
    try:
        return _env().compile(expression), None
    except Exception as err:  # the binding raises its own status errors; each is a compile failure
        return None, str(err).replace("\n", " ")


def compile_error(expression: str) -> str | None:
    """Why ``expression`` does not compile, or None."""
    return _compiled(expression)[1]


def evaluate_condition(expression: str, result: Any) -> tuple[bool | None, str | None]:
    """(the condition's truth, None), or (None, why it could not be evaluated)."""
    program, error = _compiled(expression)
    if program is None:
        return None, f"condition {expression!r} does not compile: {error}"
    try:
        value = program.eval(data={CONDITION_VARIABLE: result})
    except Exception as err:  # a value the binding cannot convert
        return None, f"condition {expression!r}: {err}"
    if value.type().name() in ("ERROR", "*error*"):  # the name the binding gives an evaluation error
        return None, f"condition {expression!r}: {value.value()}"
    plain = value.plain_value()
    if not isinstance(plain, bool):
        return None, f"condition {expression!r} gave {plain!r}, not true or false"
    return plain, None
