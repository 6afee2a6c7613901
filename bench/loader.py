"""The document loader (``rollwise.cluster.documents``) on large and hostile input: how long a file at the size
limit takes to read with libyaml and with the pure-Python parser, and how fast each kind of hostile file is refused.

Run: `.venv/bin/python bench/loader.py`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import yaml

from rollwise.api.errors import InvalidObject
from rollwise.cluster import documents
from rollwise.cluster.documents import MAX_DOCUMENT_BYTES, load_documents

POD = ("  - apiVersion: v1\n    kind: Pod\n    metadata: {{name: p-{i}, labels: {{app: web, n: \"{i}\"}}}}\n"
       "    spec: {{containers: [{{name: app, image: \"app:v1\", resources: {{requests: {{cpu: 100m}}}}}}]}}\n")


def big_scenario(limit: int) -> bytes:
    """A scenario file just under ``limit`` bytes: thousands of small pods."""
    head, parts, size, i = "name: big\nobjects:\n", [], 0, 0
    while True:
        part = POD.format(i=i)
        if len(head) + size + len(part) > limit:
            break
        parts.append(part)
        size += len(part)
        i += 1
    return (head + "".join(parts)).encode()


def best_of(fn: Callable[[], object], runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        with contextlib.suppress(InvalidObject):
            fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    data = big_scenario(MAX_DOCUMENT_BYTES)
    rows = [("load a 4 MiB scenario, libyaml (CSafeLoader)", best_of(lambda: load_documents(data, source="big")))]
    c_loader = documents._LOADER
    documents._LOADER = yaml.SafeLoader
    try:
        rows.append(("load the same, pure-Python parser", best_of(lambda: load_documents(data, source="big"), 1)))
    finally:
        documents._LOADER = c_loader
    bomb = ("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 12))).encode()
    hostile = {
        "refuse a 50 MB file (size limit)": b"a: " + b"x" * 50_000_000,
        "refuse an alias bomb (10^12 nodes expanded)": bomb,
        "refuse 1,000,000 nested brackets": b"a: " + b"[" * 1_000_000 + b"]" * 1_000_000,
        "refuse a 4 MiB JSON nested 2,000,000 deep": b"[" * 2_000_000 + b"]" * 2_000_000,
    }
    for label, payload in hostile.items():
        syntax: documents.Syntax = "json" if "JSON" in label else "yaml"
        rows.append((label, best_of(lambda p=payload, s=syntax: load_documents(p, source="x", syntax=s))))
    width = max(len(label) for label, _ in rows)
    print(f"{'case':<{width}}  seconds")
    for label, seconds in rows:
        print(f"{label:<{width}}  {seconds:8.3f}")
    print(f"\n(best of three; pure-Python once.) {len(data):,} bytes in the scenario. "
          "Reproduce: .venv/bin/python bench/loader.py")


if __name__ == "__main__":
    main()
