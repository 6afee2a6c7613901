"""The AnalysisRun controller, pure: Argo Rollouts' analysis rules over rollwise's AnalysisRun (``run.py`` decides
and folds measurements in, ``assess.py`` holds the phase rules). Drivers measure (``runtime/analysis_providers``)
and write."""

from rollwise.controllers.analysis.run import (
    AnalysisPlan,
    Task,
    assessed,
    completion_events,
    decide,
    metrics_of,
    next_reconcile,
    record,
    resolve,
)

__all__ = ["AnalysisPlan", "Task", "assessed", "completion_events", "decide", "metrics_of", "next_reconcile",
           "record", "resolve"]
