"""The CustomResourceDefinition, as ``rollwise manifests crd`` prints it and ``deploy/`` holds it: built by
``rollwise.cluster.crd.statefulset`` (which ``rollwise up`` installs too), from the rules
``rollwise.api.validation_cel`` pairs with the controller's validation."""

from __future__ import annotations

from rollwise.cluster.crd.statefulset import COUNT_MINIMUMS, CR_GROUP, CR_VERSION, ENUMS, crd

__all__ = ["COUNT_MINIMUMS", "CRD_FILE", "CR_GROUP", "CR_VERSION", "ENUMS", "crd"]

CRD_FILE = "crd.yaml"
"""Where the generated CRD lives, relative to the kustomize base ``deploy/`` and the chart's templates: the one
place to change when the CRD moves (``deploy/crds/``)."""
