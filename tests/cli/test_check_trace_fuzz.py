"""`rollwise check-trace` on run records damaged the way files get damaged: a value of the wrong type or out of
range, a key gone, lines dropped, repeated or swapped, the file cut short. Whatever the damage, the answer is exit 0,
1 or 2 and never a traceback; 2 names the line on stderr and prints nothing on stdout, and 1 names the line and the
rule that broke."""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import json
import re
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import REPLACEMENTS, paths_in, set_at
from tiers import examples

from rollwise.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "rollwise" / "examples"
DECISION_LOGS = ("rolling-update", "etcd-member-down", "image-typo-fixed")
"""A rolling update, the quorum-aware companion, and a recovery (EnforcedRollingUpdate's forced deletes)."""
CONTROLLER = "system:serviceaccount:kube-system:statefulset-controller"
AUDIT_LOG = [{"time": 1.0 + i, "user": user, "verb": verb, "resource": resource, "namespace": "default",
              "name": name, "resourceVersion": str(10 + i), "code": code}
             for i, (user, verb, resource, name, code) in enumerate([
                 ("admin", "create", "statefulsets.apps", "web", 201),
                 (CONTROLLER, "create", "controllerrevisions.apps", "web-59684b49dc", 201),
                 (CONTROLLER, "create", "persistentvolumeclaims", "data-web-0", 201),
                 (CONTROLLER, "create", "pods", "web-0", 201),
                 (CONTROLLER, "update", "statefulsets.apps", "web", 200),
                 ("admin", "patch", "statefulsets.apps", "web", 200),
                 (CONTROLLER, "delete", "pods", "web-0", 200),
                 (CONTROLLER, "create", "pods", "web-0", 201)])]
"""What `up --audit-log` writes for a one-pod set rolled once (the shape of each entry as `up` writes it)."""
VIOLATION = re.compile(r":\d+: [a-z-]+: ")
MALFORMED = re.compile(r":\d+: ")


@functools.cache
def records() -> dict[str, list[Any]]:
    """Each seed record as its lines (the decision logs from the simulator's `--trace`), made once per process."""
    out: dict[str, list[Any]] = {"audit": AUDIT_LOG}
    with tempfile.TemporaryDirectory() as tmp:
        for stem in DECISION_LOGS:
            path = Path(tmp) / f"{stem}.jsonl"
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(["simulate", str(EXAMPLES / f"{stem}.yaml"), "--json", "--trace", str(path)]) in (0, 1)
            out[stem] = [json.loads(line) for line in path.read_text().splitlines()]
    return out


@st.composite
def damaged(draw: st.DrawFn, seeds: dict[str, list[Any]]) -> str:
    lines = copy.deepcopy(seeds[draw(st.sampled_from(sorted(seeds)))])
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        damage = draw(st.sampled_from(["replace", "replace", "delete", "drop", "repeat", "swap"]))
        if damage in ("replace", "delete"):
            path = draw(st.sampled_from(paths_in(lines[i])))
            if damage == "delete" and path:
                lines[i] = set_at(lines[i], path, None, delete=True)
            else:
                lines[i] = set_at(lines[i], path, copy.deepcopy(draw(REPLACEMENTS)))
        elif damage == "drop" and len(lines) > 1:
            del lines[i]
        elif damage == "repeat":
            lines.insert(i, copy.deepcopy(lines[i]))
        elif damage == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
    text = "".join(json.dumps(line) + "\n" for line in lines)
    return text[: draw(st.integers(0, len(text)))] if draw(st.integers(0, 9)) == 0 else text


@pytest.mark.parametrize("examples", examples(40, 400))
def test_a_damaged_record_exits_0_1_or_2_and_names_the_line(examples: int) -> None:
    seeds = records()  # outside the strategy: the simulator draws from its own seeded random

    @settings(max_examples=examples, deadline=timedelta(seconds=10),
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(text=damaged(seeds))
    def answers(text: str) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "run.jsonl"
            path.write_text(text)
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["check-trace", str(path)])
        assert code in (0, 1, 2), (code, err.getvalue())
        if code == 2:
            assert out.getvalue() == "" and MALFORMED.search(err.getvalue()), err.getvalue()
            assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()
        elif code == 1:
            assert VIOLATION.search(out.getvalue()), out.getvalue()

    answers()
