"""Benchmark: how long a validation at the step budget takes, per kind of schema work.

The step budget (:mod:`tooldisc.discovery.catalog.schema_budget`) counts steps from the
schema's shape and the arguments; this measures what a step costs with the real
validator (:func:`tooldisc.discovery.catalog.schema_check.validate`'s jsonschema with RE2),
so the budget can be set to a time: for each kind of work below, a schema and
arguments are scaled until the counted steps are near the budget, then validated.
Reported per kind: counted steps, seconds, microseconds per step. The slowest kind
bounds how long one call at the budget can hold the server.

    .venv/bin/python benchmarks/schema_budget.py [--repeat 3] [--out result.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import time
from collections.abc import Callable
from typing import Any

from tooldisc.discovery.catalog.schema_budget import MAX_VALIDATION_STEPS, call_steps
from tooldisc.discovery.catalog.schema_check import _analyse, _validator_class

Case = Callable[[int], tuple[dict[str, Any], Any]]


def dag(n: int) -> tuple[dict[str, Any], Any]:
    """$defs levels that each allOf the next twice (the bomb, at a depth under the budget)."""
    defs: dict[str, Any] = {f"l{i}": {"allOf": [{"$ref": f"#/$defs/l{i + 1}"}] * 2} for i in range(n)}
    defs[f"l{n}"] = {"type": "object"}
    return {"type": "object", "$ref": "#/$defs/l0", "$defs": defs}, {}


def rows(n: int) -> tuple[dict[str, Any], Any]:
    """An array of n objects with ten typed, bounded properties."""
    row = {"type": "object", "properties": {f"p{i}": {"type": "integer", "minimum": 0} for i in range(10)},
           "required": ["p0"]}
    return ({"type": "object", "properties": {"rows": {"type": "array", "items": row}}},
            {"rows": [{f"p{i}": i for i in range(10)} for _ in range(n)]})


def enum_scan(n: int) -> tuple[dict[str, Any], Any]:
    """n strings, each checked against a 200-value enum (the last value matches)."""
    values = [f"v{i}" for i in range(200)]
    return ({"type": "object", "properties": {"xs": {"type": "array", "items": {"enum": values}}}},
            {"xs": ["v199"] * n})


def unique_objects(n: int) -> tuple[dict[str, Any], Any]:
    """uniqueItems over n distinct objects (the evaluator's quadratic fallback)."""
    return ({"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": True}}},
            {"xs": [{"a": i} for i in range(n)]})


def any_of(n: int) -> tuple[dict[str, Any], Any]:
    """n values, each tried against 20 anyOf branches of which only the last fits."""
    branches = [{"type": "object", "required": [f"k{i}"]} for i in range(20)]
    return ({"type": "object", "properties": {"xs": {"type": "array", "items": {"anyOf": branches}}}},
            {"xs": [{"k19": 1}] * n})


def unevaluated(n: int) -> tuple[dict[str, Any], Any]:
    """unevaluatedProperties over nested allOf: the evaluator re-validates to find evaluated keys."""
    inner: dict[str, Any] = {"properties": {"a": {"type": "integer"}}}
    for _ in range(4):
        inner = {"allOf": [inner, {"properties": {"b": {"type": "integer"}}}]}
    return ({"type": "object", "properties": {"xs": {"type": "array", "items": {
        **inner, "unevaluatedProperties": False}}}}, {"xs": [{"a": 1, "b": 2}] * n})


def pattern_keys(n: int) -> tuple[dict[str, Any], Any]:
    """An object of n keys against five patternProperties and additionalProperties."""
    pats = {f"^p{i}_": {"type": "integer"} for i in range(5)}
    return ({"type": "object", "patternProperties": pats, "additionalProperties": {"type": "string"}},
            {f"p{i % 5}_{i}": i for i in range(n)})


def recursive_tree(n: int) -> tuple[dict[str, Any], Any]:
    """A recursive node schema against a chain of n nodes, 60 deep, repeated."""
    schema = {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}},
                                              "name": {"type": "string"}}}
    chain: dict[str, Any] = {"name": "leaf"}
    for _ in range(60):
        chain = {"name": "n", "children": [chain]}
    return schema, {"name": "root", "children": [chain] * max(1, n // 60)}


def long_string(n: int) -> tuple[dict[str, Any], Any]:
    """One string of n characters matched by a pattern 256 times (8 levels of allOf fan-out)."""
    defs: dict[str, Any] = {f"l{i}": {"allOf": [{"$ref": f"#/$defs/l{i + 1}"}] * 2} for i in range(8)}
    defs["l8"] = {"type": "string", "pattern": "^a+$"}
    return ({"type": "object", "properties": {"s": {"$ref": "#/$defs/l0"}}, "$defs": defs}, {"s": "a" * n})


CASES: dict[str, Case] = {"dag": dag, "rows": rows, "enum_scan": enum_scan, "unique_objects": unique_objects,
                          "any_of": any_of, "unevaluated": unevaluated, "pattern_keys": pattern_keys,
                          "recursive_tree": recursive_tree, "long_string": long_string}


def _counted(case: Case, n: int) -> tuple[int, dict[str, Any], Any]:
    schema, args = case(n)
    problem, graph = _analyse(schema, meta=False)
    if problem is not None or graph is None:
        return MAX_VALIDATION_STEPS + 1, schema, args
    return call_steps(graph, args, 10**12), schema, args


def _largest_under_budget(case: Case, dag_like: bool) -> tuple[int, int, dict[str, Any], Any]:
    """The largest size whose counted steps stay within the budget (doubling, then bisection)."""
    lo, hi = 1, 2
    while _counted(case, hi)[0] <= MAX_VALIDATION_STEPS and hi < (64 if dag_like else 10**7):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _counted(case, mid)[0] <= MAX_VALIDATION_STEPS:
            lo = mid
        else:
            hi = mid
    steps, schema, args = _counted(case, lo)
    return lo, steps, schema, args


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=None)
    ns = parser.parse_args()
    import referencing

    results = []
    for name, case in CASES.items():
        n, steps, schema, args = _largest_under_budget(case, name == "dag")
        root = {k: v for k, v in schema.items() if k not in ("$schema", "$id")}
        best = float("inf")
        for _ in range(ns.repeat):
            validator = _validator_class()(root, registry=referencing.Registry())
            t0 = time.perf_counter()
            list(validator.iter_errors(args))
            best = min(best, time.perf_counter() - t0)
        row = {"case": name, "size": n, "steps": steps, "seconds": round(best, 3),
               "us_per_step": round(best / steps * 1e6, 2)}
        results.append(row)
        print(f"{name:16} size {n:>8}  steps {steps:>9,}  {best:7.3f} s  {row['us_per_step']:6.2f} µs/step")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    doc = {"budget": MAX_VALIDATION_STEPS, "commit": commit, "python": platform.python_version(),
           "machine": platform.machine(), "results": results,
           "slowest_seconds_at_budget": max(r["us_per_step"] for r in results) * MAX_VALIDATION_STEPS / 1e6}
    print(f"slowest kind at the full budget: {doc['slowest_seconds_at_budget']:.2f} s")
    if ns.out:
        with open(ns.out, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2)


if __name__ == "__main__":
    main()
