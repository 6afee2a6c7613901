"""Which CEL runtime from PyPI evaluates Kubernetes rules correctly, and how fast (the choice in
``src/rollwise/apiserver/admission/cel_rules.py``).

Run: `.venv/bin/python bench/cel_runtimes.py`. The project depends on ``cel-expr-python`` only; to measure the
others, install them beside it first (`pip install cel-python==0.5.0 common-expression-language==0.10.0`); a
runtime that is not installed is reported as such. Each runtime gets the same 24 expressions, of the kinds CRD rules
and admission policies use, and the same two-comprehension rule timed compiled once, then evaluated.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("has(self.a)", {"self": {"a": 1}}, True),
    ("has(self.b)", {"self": {"a": 1}}, False),
    ("self.l.all(x, x > 0)", {"self": {"l": [1, 2]}}, True),
    ("self.l.exists(x, x > 1)", {"self": {"l": [1, 2]}}, True),
    ("self.m.all(k, k in self.n && self.n[k] == self.m[k])", {"self": {"m": {"a": "1"}, "n": {"a": "1", "b": "2"}}},
     True),
    ("self.s.endsWith('%')", {"self": {"s": "10%"}}, True),
    ("self.s.matches('^[0-9]+%$')", {"self": {"s": "10%"}}, True),
    ("int(self.s.replace('%', '')) > 0", {"self": {"s": "0%"}}, False),
    ("int(self.s.substring(0, self.s.size() - 1)) <= 100", {"self": {"s": "50%"}}, True),
    ("type(self.v) == string", {"self": {"v": "x"}}, True),
    ("type(self.v) == int ? self.v > 0 : true", {"self": {"v": 0}}, False),
    ("string(self.v) == '3'", {"self": {"v": 3}}, True),
    ("self == oldSelf", {"self": {"a": [1, {"b": "c"}]}, "oldSelf": {"a": [1, {"b": "c"}]}}, True),
    ("self.x == oldSelf.x", {"self": {"x": {"p": 1}}, "oldSelf": {"x": {"p": 2}}}, False),
    ("size(self.l) == 2", {"self": {"l": [1, 2]}}, True),
    ("self.l.map(c, c.n).size() == 2", {"self": {"l": [{"n": "a"}, {"n": "b"}]}}, True),
    ("self.l.all(c, self.l.exists_one(d, d.n == c.n))", {"self": {"l": [{"n": "a"}, {"n": "a"}]}}, False),
    ("self.s.lowerAscii() == 'ab'", {"self": {"s": "AB"}}, True),
    ("self.s.split('/').size() == 2", {"self": {"s": "a/b"}}, True),
    ("self.s.lastIndexOf('/') == 1", {"self": {"s": "a/b"}}, True),
    ("!has(self.r) || self.r.all(k, k.size() < 64)", {"self": {"r": {"aa": "b"}}}, True),
    ("self.i == 3", {"self": {"i": 3}}, True),
    ("self.i > 2147483647", {"self": {"i": 2**31}}, True),
    ("has(self.a.b)", {"self": {"a": {"b": None}}}, True),
]
TIMED = "self.m.all(k, k in self.n && self.n[k] == self.m[k]) && self.l.all(x, x > 0)"
TIMED_DATA = {"self": {"m": {f"k{i}": "v" for i in range(10)}, "n": {f"k{i}": "v" for i in range(12)},
                       "l": list(range(1, 20))}}

Compiler = Callable[[str], Callable[[dict[str, Any]], Any]]


def cel_cpp() -> Compiler:
    from cel_expr_python import cel  # type: ignore[import-untyped]  # noqa: PLC0415 - measured only if installed
    from cel_expr_python.ext import ext_strings  # type: ignore[import-untyped]  # noqa: PLC0415
    env = cel.NewEnv(variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN},
                     extensions=[ext_strings.ExtStrings()])

    def compile_(src: str) -> Callable[[dict[str, Any]], Any]:
        expr = env.compile(src)
        return lambda data: expr.eval(data=data).plain_value()
    return compile_


def cel_rust() -> Compiler:
    import cel  # type: ignore[import-not-found]  # noqa: PLC0415 - measured only if installed

    def compile_(src: str) -> Callable[[dict[str, Any]], Any]:
        program = cel.compile(src)
        return program.execute  # type: ignore[no-any-return]
    return compile_


def cel_python() -> Compiler:
    import celpy  # type: ignore[import-not-found]  # noqa: PLC0415 - measured only if installed
    env = celpy.Environment()

    def compile_(src: str) -> Callable[[dict[str, Any]], Any]:
        program = env.program(env.compile(src))
        return lambda data: program.evaluate({k: celpy.json_to_cel(v) for k, v in data.items()})
    return compile_


RUNTIMES = {"cel-expr-python 0.1.3 (cel-cpp)": cel_cpp, "common-expression-language 0.10.0 (cel-rust)": cel_rust,
            "cel-python 0.5.0 (pure Python)": cel_python}


def main() -> None:
    print(f"{'runtime':<46} {'correct':>8} {'compile us':>11} {'eval us':>9}")
    for name, make in RUNTIMES.items():
        try:
            compile_ = make()
        except ImportError:
            print(f"{name:<46} not installed")
            continue
        correct = 0
        for src, data, want in CASES:
            try:
                correct += bool(compile_(src)(data) == want)
            except Exception:  # a runtime that lacks a function fails to compile or to evaluate it
                continue
        start = time.perf_counter()
        for _ in range(200):
            run = compile_(TIMED)
        compile_us = (time.perf_counter() - start) / 200 * 1e6
        start = time.perf_counter()
        for _ in range(2000):
            run(TIMED_DATA)
        eval_us = (time.perf_counter() - start) / 2000 * 1e6
        print(f"{name:<46} {correct:>5}/{len(CASES)} {compile_us:>11.0f} {eval_us:>9.0f}")


if __name__ == "__main__":
    main()
