"""The bundled scenario files: the examples shipped with rollwise and the regression scenarios under tests/.

Manifests among the examples (files with a ``kind``, such as ``explore-web.yaml``, which ``rollwise explore``
reads) are not scenarios and are left out.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's loader where PyYAML has it: the suite reads these files at collection, in every worker."""


def _is_scenario(path: Path) -> bool:
    doc = yaml.load(path.read_text(), Loader=LOADER)
    return isinstance(doc, dict) and "kind" not in doc


SCENARIO_FILES = sorted(p for p in [*(ROOT / "src/rollwise/examples").glob("*.yaml"),
                                    *(ROOT / "tests/scenarios").glob("*.yaml")] if _is_scenario(p))
