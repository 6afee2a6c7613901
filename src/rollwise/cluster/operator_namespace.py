"""The operator's namespace as ``rollwise manifests`` writes it into ``deploy/operator.yaml``: also where
``rollwise run`` takes its leader-election Lease by default, so ``rollwise up`` starts with it
(apiserver/storage/bootstrap.py), and ``up``'s controllers read that Lease to stand down while the operator leads
(local/standdown.py)."""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_NAMESPACE", "LABELS", "NAME", "namespace_manifest"]

NAME = "rollwise"
DEFAULT_NAMESPACE = "rollwise-system"
LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "operator"}


def namespace_manifest(name: str = DEFAULT_NAMESPACE) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(LABELS)}}
