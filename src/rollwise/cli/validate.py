"""``rollwise validate FILE...``: every problem of every manifest or scenario file, with its field path."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

from rollwise.api.defaults import apply_defaults
from rollwise.api.errors import FieldError, InvalidObject
from rollwise.api.features import FeatureGates
from rollwise.cli.render import print_invalid
from rollwise.drivers.sim import parse_scenario
from rollwise.drivers.sim.scenario import check_manifest

__all__ = ["add_validate", "validate_file"]


def add_validate(sub: Any) -> None:
    p = sub.add_parser("validate", help="check manifests and scenario files",
                       description="Check Kubernetes manifests (StatefulSets, one or many YAML documents) and "
                                   "rollwise scenario files. Prints every problem; exit 2 on any.")
    p.add_argument("files", nargs="+", help="manifest or scenario files")
    p.set_defaults(run=run_validate)


def run_validate(args: argparse.Namespace) -> int:
    status = 0
    for name in args.files:
        try:
            kind = validate_file(Path(name))
        except InvalidObject as err:
            print_invalid(err)
            status = 2
        else:
            print(f"{name}: valid {kind}")
    return status


def validate_file(path: Path) -> str:
    """Validate one file; returns what it was (scenario or manifests). Raises InvalidObject with every problem."""
    try:
        text = path.read_text()
    except OSError as err:
        raise InvalidObject([FieldError(path="<file>", rule=f"cannot read: {err.strerror}", value=str(path))],
                            source=str(path)) from err
    try:
        docs = [json.loads(text)] if path.suffix == ".json" else [d for d in yaml.safe_load_all(text) if d is not None]
    except (yaml.YAMLError, json.JSONDecodeError) as err:
        raise InvalidObject([FieldError(path="<file>", rule="not valid YAML/JSON: " + " ".join(str(err).split()),
                                        value=path.name)], source=str(path)) from err
    if len(docs) == 1 and isinstance(docs[0], dict) and "kind" not in docs[0]:
        parse_scenario(docs[0], source=str(path), default_name=path.stem)
        return "scenario"
    errors: list[FieldError] = []
    gates = FeatureGates()
    for i, doc in enumerate(docs):
        prefix = f"[{i}]" if len(docs) > 1 else ""
        checked = check_manifest(doc, prefix or "<root>", gates, errors)
        if checked is not None and checked.get("kind") == "StatefulSet":
            apply_defaults(checked, gates=gates)
    if errors:
        raise InvalidObject([_strip_root(e) for e in errors], source=str(path))
    return "manifest" if len(docs) == 1 else f"manifests ({len(docs)} documents)"


def _strip_root(e: FieldError) -> FieldError:
    path = e.path.removeprefix("<root>.")
    return FieldError(path=path, rule=e.rule, value=e.value, kind=e.kind)
