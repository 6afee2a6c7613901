"""``rollwise validate FILE...``: every problem of every manifest or scenario file, with its field path.

A file whose documents are Kubernetes objects (each with a ``kind``) is read as manifests; a single document
without ``kind`` but with scenario fields is a scenario. Items of a ``kind: List`` are checked one by one. Kinds
rollwise neither creates nor reads are reported as not checked (``scenario.manifests.CHECKED_KINDS``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rollwise.api.errors import FieldError, InvalidObject
from rollwise.api.features import FeatureGates
from rollwise.api.lifecycle import hook_on_no_pod
from rollwise.cli.render import print_invalid
from rollwise.cluster.documents import FILE, read_documents
from rollwise.scenario.manifests import CHECKED_KINDS, check_manifest
from rollwise.scenario.scenario import TOP_LEVEL
from rollwise.sim import parse_scenario

__all__ = ["add_validate", "validate_file"]


def add_validate(sub: Any) -> None:
    p = sub.add_parser("validate", help="check manifests and scenario files",
                       description="Check Kubernetes manifests (one or many YAML documents, or a kind: List) and "
                                   "rollwise scenario files, with the API server's strict field validation. Checked "
                                   "kinds: " + ", ".join(CHECKED_KINDS) + "; other kinds are reported as not "
                                   "checked. Prints every problem; exit 2 on any.")
    p.add_argument("files", nargs="+", metavar="FILE", help="manifest or scenario files (YAML or JSON, UTF-8)")
    p.set_defaults(run=run_validate)


def run_validate(args: argparse.Namespace) -> int:
    status = 0
    for name in args.files:
        warnings: list[str] = []
        try:
            kind = validate_file(Path(name), warnings)
        except InvalidObject as err:
            print_invalid(err)
            status = 2
        else:
            print(f"{name}: valid {kind}")
            for warning in warnings:  # valid, so exit 0; as kubectl's "Warning:" lines, on stderr
                print(f"Warning: {name}: {warning}", file=sys.stderr)
    return status


def validate_file(path: Path, warnings: list[str] | None = None) -> str:
    """Validate one file; returns what it was (scenario or manifests). Raises InvalidObject with every problem.
    ``warnings`` receives what is valid but likely not meant (``FIELD: what``)."""
    docs = read_documents(path)
    if not docs:
        raise InvalidObject([FieldError(path=FILE, rule="empty document", value=path.name)], source=str(path))
    if len(docs) == 1 and _looks_like_scenario(docs[0]):
        parse_scenario(docs[0], source=str(path), default_name=path.stem)
        return "scenario"
    errors: list[FieldError] = []
    gates = FeatureGates()
    skipped: list[str] = []
    objects = 0
    for i, doc in enumerate(docs):
        prefix = f"[{i}]" if len(docs) > 1 else ""
        for item_path, item in _items(doc, prefix, errors):
            objects += 1
            check_manifest(item, item_path, gates, errors)
            kind = item.get("kind") if isinstance(item, Mapping) else None
            if kind == "StatefulSet" and warnings is not None and (unheld := hook_on_no_pod(item)) is not None:
                warnings.append(f"{item_path}spec.lifecycle.preDelete.labelsHandler: {unheld}")
            if isinstance(kind, str) and kind and kind not in CHECKED_KINDS:
                skipped.append(kind)
    if errors:
        raise InvalidObject(errors, source=str(path))
    what = "manifest" if objects == 1 else f"manifests ({objects} objects)"
    if skipped:
        what += "; not checked (rollwise does not create or read them): " + ", ".join(sorted(set(skipped)))
    return what


def _looks_like_scenario(doc: Any) -> bool:
    """No ``kind``, and at least one scenario field (a manifest that forgot its kind is reported as one)."""
    return isinstance(doc, Mapping) and "kind" not in doc and "apiVersion" not in doc and "metadata" not in doc \
        and any(k in TOP_LEVEL for k in doc)


def _items(doc: Any, prefix: str, errors: list[FieldError]) -> list[tuple[str, Any]]:
    """The objects of one document: itself, or each item of a ``kind: List`` (``items[i]``)."""
    if not (isinstance(doc, Mapping) and isinstance(doc.get("kind"), str) and doc["kind"].endswith("List")):
        return [(prefix, doc)]
    items = doc.get("items")
    if not isinstance(items, list):
        errors.append(FieldError(path=f"{prefix}.items" if prefix else "items", value=items,
                                 rule="a List needs items (a list of objects)"))
        return []
    base = f"{prefix}.items" if prefix else "items"
    return [(f"{base}[{j}]", item) for j, item in enumerate(items)]
