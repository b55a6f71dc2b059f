"""The step budget of schema validation (issue 25 item 5).

The oracle is the validator itself: every keyword function of the guard's
jsonschema class is wrapped with a counter, so the property tests compare the
budget's counts with what the evaluator actually ran, on random schemas (``$defs``
DAGs, in-place applicators, every descending keyword) and random arguments.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.fuzzing import examples
from tooldisc.discovery.catalog.schema_budget import (
    MAX_VALIDATION_STEPS,
    build_graph,
    call_steps,
    value_steps,
)
from tooldisc.discovery.catalog.schema_check import (
    MAX_ARGUMENT_DEPTH,
    _analyse,
    _validator_class,
    argument_schema_problem,
    schema_problem,
    validate,
)


def dag_bomb(levels: int, fan: int = 2) -> dict[str, Any]:
    """The issue's schema: each ``$defs`` level ``allOf`` the next ``fan`` times, no cycle."""
    defs: dict[str, Any] = {f"l{i}": {"allOf": [{"$ref": f"#/$defs/l{i + 1}"}] * fan} for i in range(levels)}
    defs[f"l{levels}"] = {"type": "object"}
    return {"type": "object", "$ref": "#/$defs/l0", "$defs": defs}


def test_the_dag_bomb_is_refused_at_load_quickly_and_names_the_place():
    import json

    schema = dag_bomb(40)
    assert len(json.dumps(schema)) < 3_000
    t0 = time.perf_counter()
    problem = schema_problem(schema)
    assert time.perf_counter() - t0 < 2.0
    assert problem is not None and problem.path == "$defs.l40"
    assert "over the budget of 200,000" in problem.message and "1,099,511,627,776 times" in problem.message
    assert schema_problem(schema) == problem  # deterministic


def test_a_recursive_schema_that_doubles_per_level_is_refused():
    """No $defs DAG: recursion through a descending keyword, twice per level, is 2^depth per value."""
    schema = {"type": "object", "properties": {"x": {"allOf": [{"$ref": "#"}, {"$ref": "#"}]}}}
    problem = schema_problem(schema)
    assert problem is not None and "over the budget" in problem.message
    linear = {"type": "object", "properties": {"x": {"$ref": "#"}, "y": {"$ref": "#"}}}
    assert schema_problem(linear) is None  # plain recursion costs one evaluation per value


def test_the_guard_refuses_an_unquarantined_bomb_without_evaluating_it():
    """A schema built in memory (no catalog quarantine) still never runs 2^40 steps."""
    t0 = time.perf_counter()
    result = validate(dag_bomb(40), {})
    assert time.perf_counter() - t0 < 2.0
    assert result.unusable is not None and "over the budget" in result.unusable


def test_a_call_over_the_budget_is_refused_before_the_validator_runs():
    schema = dag_bomb(8)  # fine for one value: ~6,000 steps
    assert schema_problem(schema) is None
    wide = {"type": "object", "properties": {"rows": {"type": "array", "items": {"$ref": "#/$defs/l0"}}},
            "$defs": schema["$defs"]}
    assert schema_problem(wide) is None
    ok = validate(wide, {"rows": [{}] * 5})
    assert ok.ok
    t0 = time.perf_counter()
    refused = validate(wide, {"rows": [{}] * 1_000})
    assert time.perf_counter() - t0 < 1.0
    assert refused.unusable is not None and "step budget" in refused.unusable
    assert "\n" not in refused.unusable


def test_argument_schemas_need_an_object_root():
    assert argument_schema_problem({"properties": {"a": {"type": "string"}}}) is None  # read as an object
    for bad in ("string", ["object", "null"], "array"):
        problem = argument_schema_problem({"type": bad})
        assert problem is not None and problem.path == "type" and "must have type 'object'" in problem.message
    assert schema_problem({"type": "array"}) is None  # output schemas may be anything


# --------------------------------------------------------------------------- the oracle

def _counting_validator(schema: dict[str, Any]) -> tuple[Any, Counter[int], list[int]]:
    """The guard's validator class with every keyword function counted, per argument value (by id)."""
    import referencing
    from jsonschema import validators

    base = _validator_class()
    per_value: Counter[int] = Counter()
    total = [0]

    def counted(fn: Any) -> Any:
        def run(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
            per_value[id(instance)] += 1
            total[0] += 1
            out = fn(validator, value, instance, schema)
            if out is not None:
                yield from out
        return run

    cls = validators.extend(base, {k: counted(v) for k, v in base.VALIDATORS.items()})
    return cls(schema, registry=referencing.Registry()), per_value, total


KEYS = ("a", "b", "c")


@st.composite
def schemas(draw: st.DrawFn) -> dict[str, Any]:
    """Random 2020-12 schemas: a ``$defs`` DAG (in-place refs only go to later defs), every applicator."""
    ndefs = draw(st.integers(0, 3))
    unevaluated_ok = draw(st.booleans())  # never with patternProperties (refused together, see schema_check)

    def node(depth: int, lowest_def: int, descending: bool) -> Any:
        choices = ["leaf"]
        if depth < 3:
            choices += ["object", "array", "combine", "cond"]
        if ndefs > lowest_def or descending:
            choices.append("ref")
        kind = draw(st.sampled_from(choices))
        if kind == "leaf":
            return draw(st.sampled_from([True, False, {"type": "integer"}, {"type": "string", "pattern": "^a"},
                                         {"enum": [1, "a", [1], {"a": 1}]}, {"const": "a"},
                                         {"type": ["integer", "string"]}, {}]))
        if kind == "ref":
            targets = [f"#/$defs/d{j}" for j in range(lowest_def, ndefs)] + (["#"] if descending else [])
            return {"$ref": draw(st.sampled_from(targets))}
        if kind == "combine":
            key = draw(st.sampled_from(["allOf", "anyOf", "oneOf"]))
            out: dict[str, Any] = {key: [node(depth + 1, lowest_def, False) for _ in range(draw(st.integers(1, 3)))]}
            if draw(st.booleans()):
                out["not"] = node(depth + 1, lowest_def, False)
            return out
        if kind == "cond":
            return {"if": node(depth + 1, lowest_def, False), "then": node(depth + 1, lowest_def, False),
                    "else": node(depth + 1, lowest_def, False)}
        if kind == "object":
            out = {"type": "object", "properties": {k: node(depth + 1, 0, True)
                                                    for k in draw(st.lists(st.sampled_from(KEYS), unique=True))}}
            extra = draw(st.sampled_from(["none", "additional", "unevaluated" if unevaluated_ok else "pattern",
                                          "names", "dependent"]))
            if extra == "additional":
                out["additionalProperties"] = node(depth + 1, 0, True)
            elif extra == "pattern":
                out["patternProperties"] = {"^b": node(depth + 1, 0, True)}
            elif extra == "unevaluated":
                out["allOf"] = [node(depth + 1, lowest_def, False)]
                out["unevaluatedProperties"] = node(depth + 1, 0, True)
            elif extra == "names":
                out["propertyNames"] = {"maxLength": 1}
            elif extra == "dependent":
                out["dependentSchemas"] = {"a": node(depth + 1, lowest_def, False)}
            return out
        out = {"type": "array"}
        extra = draw(st.sampled_from(["items", "prefix", "contains", "unique"]
                                     + (["unevaluated"] if unevaluated_ok else [])))
        if extra == "items":
            out["items"] = node(depth + 1, 0, True)
        elif extra == "prefix":
            out["prefixItems"] = [node(depth + 1, 0, True) for _ in range(draw(st.integers(1, 2)))]
            out["items"] = node(depth + 1, 0, True)
        elif extra == "contains":
            out["contains"] = node(depth + 1, 0, True)
        elif extra == "unevaluated":
            out["prefixItems"] = [node(depth + 1, 0, True)]
            out["unevaluatedItems"] = node(depth + 1, 0, True)
        else:
            out["uniqueItems"] = True
        return out

    defs = {}
    for i in reversed(range(ndefs)):
        defs[f"d{i}"] = node(1, i + 1, False)
    root = node(0, 0, False)
    if not isinstance(root, dict):
        root = {"allOf": [root]}
    if defs:
        root = {**root, "$defs": defs}
    return root


def _fresh_int(i: int) -> int:
    return int(str(10**6 + i))  # a new object each time (not the small-int cache)


@st.composite
def arguments(draw: st.DrawFn) -> Any:
    counter = [0]

    def value(depth: int) -> Any:
        kinds = ["int", "str"] + (["obj", "arr"] if depth < 4 else [])
        kind = draw(st.sampled_from(kinds))
        counter[0] += 1
        if kind == "int":
            return _fresh_int(counter[0])
        if kind == "str":
            return "a" + str(counter[0])
        if kind == "obj":
            return {k + "": value(depth + 1) for k in draw(st.lists(st.sampled_from([*KEYS, "bx"]), unique=True,
                                                                      max_size=4))}
        return [value(depth + 1) for _ in range(draw(st.integers(0, 4)))]

    return {k: value(1) for k in draw(st.lists(st.sampled_from([*KEYS, "bx"]), unique=True, max_size=4))}


@pytest.mark.fuzz
@settings(max_examples=examples(300, local=60), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                                           HealthCheck.filter_too_much])
@given(schemas(), arguments())
def test_the_counts_bound_what_the_validator_runs(schema: dict[str, Any], args: Any):
    """call_steps ≥ every keyword the validator evaluates; value_steps ≥ the keywords run on any one value."""
    problem, graph = _analyse(schema, meta=False)  # the guard's check (the meta-schema check is slow)
    assume(problem is None and graph is not None)
    validator, per_value, total = _counting_validator(schema)
    list(validator.iter_errors(args))
    assert call_steps(graph, args, limit=10**15) >= total[0]
    containers = {id(v) for v in _containers(args)}
    worst = max((n for key, n in per_value.items() if key in containers), default=0)
    assert value_steps(graph, MAX_ARGUMENT_DEPTH, limit=10**15).steps >= worst


def _containers(value: Any) -> list[Any]:
    out, todo = [], [value]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            out.append(v)
            todo.extend(v.values())
        elif isinstance(v, list):
            out.append(v)
            todo.extend(v)
    return out


def test_the_oracle_sees_a_planted_undercount(monkeypatch):
    """The property fails when the budget counts each subschema once, not once per path (a planted bug)."""
    import tooldisc.discovery.catalog.schema_budget as budget

    schema = dag_bomb(6)
    problem, graph = _analyse(schema, meta=False)
    assert problem is None and graph is not None
    validator, _, total = _counting_validator(schema)
    list(validator.iter_errors({}))
    assert call_steps(graph, {}, limit=10**15) >= total[0]
    close = budget._Counter.close
    monkeypatch.setattr(budget._Counter, "close", lambda self, start: dict.fromkeys(close(self, start), 1))
    assert call_steps(graph, {}, limit=10**15) < total[0]


def test_ordinary_catalog_schemas_are_far_under_the_budget(shared):
    """Every tool schema of the shipped and benchmark catalogs passes, with room to spare."""
    import json

    worst = 0
    for name in ("sealtools", "metatool", "bfcl"):
        for line in (shared / "benchmarks" / name / "tools.jsonl").read_text("utf-8").splitlines():
            params = json.loads(line).get("parameters")
            if isinstance(params, dict):
                _, graph = _analyse(params, meta=False)
                if graph is not None:
                    worst = max(worst, value_steps(graph, MAX_ARGUMENT_DEPTH).steps)
    assert 0 < worst < MAX_VALIDATION_STEPS // 20


def test_build_graph_counts_boolean_subschemas_and_ref_targets():
    schema = {"type": "object", "properties": {"a": False, "b": {"$ref": "#/$defs/x"}}, "$defs": {"x": True}}
    problem, graph = _analyse(schema, meta=True)
    assert problem is None and graph is not None
    assert graph.paths[0] == ()
    ids = {p: i for i, p in enumerate(graph.paths)}
    assert graph.in_place[ids[("properties", "b")]] == (ids[("$defs", "x")],)
    assert graph.properties[0] == {"a": ids[("properties", "a")], "b": ids[("properties", "b")]}
    again = build_graph({p: s for p, s in zip(graph.paths, graph.schemas, strict=True)},
                        {("properties", "b"): ("$defs", "x")})
    assert again == graph


@pytest.mark.parametrize("levels", [12, 13])
def test_the_load_limit_and_the_call_limit_agree(levels: int):
    """The 12-level DAG fits the budget at load and for a call; the 13-level one is refused at load."""
    problem, graph = _analyse(dag_bomb(levels), meta=False)
    if levels == 12:
        assert problem is None and graph is not None
        assert call_steps(graph, {}) <= MAX_VALIDATION_STEPS
        assert validate(dag_bomb(levels), {}).ok
    else:
        assert problem is not None and "over the budget" in problem.message


def test_a_long_string_under_a_multiplied_pattern_counts_its_length():
    """RE2 is linear, but 256 evaluations of a 100,000-character string are 25 MB scanned."""
    defs: dict[str, Any] = {f"l{i}": {"allOf": [{"$ref": f"#/$defs/l{i + 1}"}] * 2} for i in range(8)}
    defs["l8"] = {"type": "string", "pattern": "^a+$"}
    schema = {"type": "object", "properties": {"s": {"$ref": "#/$defs/l0"}}, "$defs": defs}
    assert validate(schema, {"s": "a" * 1_000}).ok
    t0 = time.perf_counter()
    refused = validate(schema, {"s": "a" * 200_000})
    assert time.perf_counter() - t0 < 1.0 and refused.unusable is not None and "step budget" in refused.unusable


def test_a_wide_recursive_schema_is_analysed_quickly():
    """Each distinct set of reaching nodes is explored once, not once per depth left."""
    wide = {"type": "object", "properties": {f"p{i}": {"$ref": "#"} for i in range(200)}}
    t0 = time.perf_counter()
    assert schema_problem(wide, meta=False) is None
    assert time.perf_counter() - t0 < 1.0
