"""The CRD's part for canary steps (``rollingUpdate.steps``, ``api/steps.py``): schema keywords and CEL rules, each
the twin of a rule of ``api.steps.check_steps`` (``api/validation_cel.TWINS``)."""

from __future__ import annotations

from typing import Any

from rollwise.api.steps import DURATION_RULE, MAX_STEPS, ONE_OF_RULE, STEP_KINDS
from rollwise.api.validation_cel import CelRule

__all__ = ["DURATION_CEL", "steps_schema"]

DURATION_CEL = "type(self) == int ? self >= 0 : self.matches('^[0-9]+(s|m|h)?$')"
"""The CEL twin of ``api.steps.parse_duration`` (the analysis CRDs use it too, cluster/crd/analysis.py)."""
_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_PERCENT_RULE = ("type(self) == int ? self >= 0 : "
                 "(self.matches('^[0-9]+%$') && int(self.substring(0, self.size() - 1)) <= 100)")


def _rules(*rules: CelRule) -> dict[str, Any]:
    return {"x-kubernetes-validations": [r.as_schema() for r in rules]}


def steps_schema() -> dict[str, Any]:
    one_of = " + ".join(f"(has(self.{k}) ? 1 : 0)" for k in STEP_KINDS) + " == 1"
    replicas = {"description": "Pods at the update revision once this step is done, highest ordinals first: an "
                               "integer, or a percentage of replicas rounded up ('25%').",
                "x-kubernetes-int-or-string": True, "maxLength": 5,
                "anyOf": [{"type": "integer"}, {"type": "string"}]} | _rules(
        CelRule(rule=_PERCENT_RULE, message="must be an integer of at least 0 or a percentage of replicas ('0%' to "
                                            "'100%')"))
    pause = {"description": "Wait: {duration: D} for D seconds (or '30s', '5m', '1h'); {} until `rollwise rollout "
                            "promote`.", "type": "object",
             "properties": {"duration": {"description": "Seconds, or a number with the unit s, m or h.",
                                         "x-kubernetes-int-or-string": True, "maxLength": 16,
                                         "anyOf": [{"type": "integer"}, {"type": "string"}]}
                            | _rules(CelRule(rule=DURATION_CEL, message=DURATION_RULE))}}
    template = {"description": "A reference to an AnalysisTemplate.", "type": "object", "required": ["templateName"],
                "properties": {"templateName": {"description": "An AnalysisTemplate in the set's namespace.",
                                                "type": "string", "minLength": 1, "maxLength": 253,
                                                "pattern": _SUBDOMAIN}}}
    analysis = {"description": "Run AnalysisTemplates as one AnalysisRun; the step passes when it succeeds, and a "
                               "failed run aborts the rollout (the pods go back to the stable revision).",
                "type": "object", "required": ["templates"],
                "properties": {
                    "templates": {"description": "The AnalysisTemplates to run (at least one).", "type": "array",
                                  "minItems": 1, "maxItems": 16, "items": template},
                    "args": {"description": "Arguments the templates read, by name.", "type": "array",
                             "maxItems": 64,
                             "items": {"description": "One argument.", "type": "object", "required": ["name"],
                                       "properties": {
                                           "name": {"description": "The argument's name.", "type": "string",
                                                    "maxLength": 253},
                                           "value": {"description": "Its value.", "type": "string",
                                                     "maxLength": 4096}}}}}}
    step = {"description": "One step: exactly one of replicas, pause, analysis.", "type": "object",
            "properties": {"replicas": replicas, "pause": pause, "analysis": analysis}} | _rules(
        CelRule(rule=one_of, message=ONE_OF_RULE))
    return {"description": "Canary steps (Argo Rollouts' names): each step sets how many pods run the update "
                           "revision, or waits; after the last step the rest are updated. Where the rollout stands "
                           "is status.currentStepIndex; `rollwise rollout promote` moves it on.",
            "type": "array", "maxItems": MAX_STEPS, "items": step}
