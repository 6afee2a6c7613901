"""The CRD's part for pre-delete hooks (``spec.lifecycle``, ``api/lifecycle.py``): schema keywords and CEL rules,
each the twin of a rule of ``api.lifecycle.check_lifecycle`` (``api/validation_cel.TWINS``); the label keys are
the admission policy's (``KEY_MAPS``), as for every label map of the set."""

from __future__ import annotations

from typing import Any

from rollwise.api.lifecycle import LIFECYCLE_STATE_LABEL
from rollwise.api.validation_cel import LABEL_VALUE, MAX_LIST, CelRule, qualified_name_rule

__all__ = ["lifecycle_schema"]


def _rules(*rules: CelRule) -> dict[str, Any]:
    return {"x-kubernetes-validations": [r.as_schema() for r in rules]}


def lifecycle_schema() -> dict[str, Any]:
    labels = {"description": "Labels (key: value) the application's agent puts on its pods and removes once a pod "
                             "marked rollwise.dev/lifecycle-state=PreparingDelete has drained. While a pod carries "
                             "any of them with that value, the controller does not delete it.",
              "type": "object", "additionalProperties": {"type": "string", "maxLength": 63, "pattern": LABEL_VALUE}
              } | _rules(CelRule(rule=f"!('{LIFECYCLE_STATE_LABEL}' in self)",
                                 message="must not name the controller's own lifecycle-state label"))
    finalizers = {"description": "Finalizers the application's agent puts on its pods and removes once drained; "
                                 "while a pod carries any of them, the controller does not delete it.",
                  "type": "array", "maxItems": MAX_LIST,
                  "items": {"type": "string", "maxLength": 316}
                  | _rules(CelRule(rule=qualified_name_rule("self"), message="must be a qualified name: an optional "
                                   "DNS subdomain prefix and '/', then at most 63 of [-A-Za-z0-9_.]"))
                  } | _rules(CelRule(rule="self.all(f, self.exists_one(g, g == f))", message="must be unique",
                                     reason="FieldValueDuplicate"))
    pre = {"description": "OpenKruise's pre-delete hook: before any voluntary deletion (a rollout step, Recreate, a "
                          "progress-timeout replacement, a scale-in) the controller labels the pod "
                          "rollwise.dev/lifecycle-state=PreparingDelete and waits until it carries none of these "
                          "labels and finalizers. A Failed pod is replaced without waiting.",
           "type": "object",
           "properties": {
               "labelsHandler": labels,
               "finalizersHandler": finalizers,
               "timeoutSeconds": {"description": "Seconds a marked pod may stay hooked; then the rollout halts "
                                                 "(Progressing=False, reason PreDeleteHookTimeout) naming the pod "
                                                 "and the hook. The pod is never deleted silently.",
                                  "type": "integer", "format": "int32", "minimum": 1, "maximum": 2**31 - 1},
           }} | _rules(CelRule(rule="(has(self.labelsHandler) && size(self.labelsHandler) > 0) || "
                                    "(has(self.finalizersHandler) && size(self.finalizersHandler) > 0)",
                               message="must name at least one label (labelsHandler) or finalizer "
                                       "(finalizersHandler)", reason="FieldValueRequired"))
    return {"description": "Hooks around the pods' lifecycle: preDelete.", "type": "object",
            "properties": {"preDelete": pre}}
