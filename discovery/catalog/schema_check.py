"""Untrusted JSON Schemas, evaluated safely: one checker for the catalog and the guard.

A tool's ``parameters`` come from whoever wrote the catalog (or a remote MCP
server) and the arguments from a model, so plain ``jsonschema`` is not safe here:
it runs ``pattern`` / ``patternProperties`` with Python's backtracking ``re``
(``^(a+)+$`` and 28 characters block for seconds), recurses once per nesting level
(deep arguments, or a ``$ref`` cycle that never consumes the instance, end in a
``RecursionError``), and its default registry fetches a remote ``$ref`` over HTTP.

Two entry points share every rule, so the catalog quarantine and the execution
guard (and ``plan validate``) can never disagree:

* :func:`schema_problem` — a static check of one schema: bounded depth, a valid
  JSON Schema (optional, it is the slow part), ``$ref`` only as a JSON pointer into
  the same document that lands on a subschema, no ``$ref`` cycle that never
  descends into the instance, ``$schema`` / ``$id`` only at the root, no
  ``$dynamicRef``, and every pattern compilable by RE2 (a linear-time engine);
* :func:`validate` — arguments against a schema that passed the static check, with
  RE2 for every pattern, an empty ``$ref`` registry (nothing is ever fetched), a
  depth bound on the arguments checked before any recursion, and the step budget
  of :mod:`tooldisc.discovery.catalog.schema_budget` checked before the validator runs.

Both refuse a schema that can multiply evaluation (``$defs`` that ``allOf`` each
other as a DAG: 2^40 evaluations from 3 KB): the budget is counted from the
schema's shape, not by the validator, so a faster validator keeps it.

Known limit, fail-closed: ``unevaluatedProperties`` together with
``patternProperties`` in one schema is refused, because jsonschema evaluates that
combination with Python's ``re`` internally.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any
from urllib.parse import unquote

from tooldisc.discovery.catalog import schema_fast
from tooldisc.discovery.catalog.schema_budget import (
    MAX_VALIDATION_STEPS,
    SchemaGraph,
    build_graph,
    call_steps,
    own_steps,
    value_steps,
)
from tooldisc.values import JSON_SCALARS, is_mapping

MAX_SCHEMA_DEPTH = 64  # JSON nesting of one schema document (objects and arrays)
MAX_ARGUMENT_DEPTH = 64  # JSON nesting of a call's arguments
RE2_MAX_MEM = 8 << 20  # bytes RE2 may use for one compiled pattern

# 2020-12 keywords whose value is one subschema, a map of subschemas, or a list of them.
_ONE = ("additionalProperties", "contains", "not", "if", "then", "else", "propertyNames",
        "unevaluatedItems", "unevaluatedProperties", "contentSchema", "items")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUBSCHEMA_KEYS = frozenset((*_ONE, *_MAP, *_LIST))
# What _node_problem looks at: a node holding none of them has no problem of its own and adds no use
_NODE_KEYS = frozenset(("$schema", "$id", "$dynamicRef", "$ref", "pattern", "patternProperties",
                        "unevaluatedProperties", "unevaluatedItems"))
# Applicators that evaluate their subschemas against the *same* instance: a cycle
# through only these (and $ref) never ends, whatever the arguments are.
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_LIST = ("allOf", "anyOf", "oneOf")


@dataclass(frozen=True)
class SchemaProblem:
    """Why a schema cannot be evaluated safely; ``path`` is a dotted path inside it."""

    path: str
    message: str

    def render(self) -> str:
        return self.message if self.path == "(root)" else f"{self.path}: {self.message}"


@dataclass(frozen=True)
class Violation:
    """One way the arguments fail the schema."""

    path: tuple[str | int, ...]
    keyword: str
    message: str

    @property
    def where(self) -> str:
        return ".".join(str(p) for p in self.path) or "(root)"


@dataclass(frozen=True)
class Validation:
    """The outcome of :func:`validate`: violations, or why nothing could be evaluated."""

    violations: tuple[Violation, ...] = ()
    unusable: str | None = None

    @property
    def ok(self) -> bool:
        return self.unusable is None and not self.violations


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests objects/arrays deeper than ``limit``, without recursing (only containers
    are stacked: a schema's values are mostly strings)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if type(node) is dict or is_mapping(node):
            children: Any = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if type(child) not in JSON_SCALARS)
    return False


def _dotted(parts: tuple[str | int, ...]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(root)"


def re2_options() -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would otherwise log every rejected pattern on stderr
    options.max_mem = RE2_MAX_MEM
    return options


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> Any:
    """``pattern`` compiled by RE2; raises ``re2.error`` when RE2 cannot compile it."""
    import re2

    return re2.compile(pattern, re2_options())


def pattern_problem(pattern: str) -> str | None:
    """Why RE2 cannot compile ``pattern`` (lookaround, backreference, too big...), or None."""
    import re2

    try:
        compile_pattern(pattern)
    except re2.error as exc:
        why = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        return f"pattern {_short(pattern)} cannot be compiled by the linear-time engine (RE2): {why}"
    return None


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _subschemas(node: Mapping[str, Any]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """(relative path, value) of every subschema position directly under ``node``."""
    for key in _ONE:
        if key in node:
            value = node[key]
            if isinstance(value, list):  # pre-2020 tuple form of items
                yield from (((key, i), v) for i, v in enumerate(value))
            else:
                yield (key,), value
    for key in _MAP:
        value = node.get(key)
        if is_mapping(value):
            yield from (((key, str(k)), v) for k, v in value.items())
    for key in _LIST:
        value = node.get(key)
        if isinstance(value, list):
            yield from (((key, i), v) for i, v in enumerate(value))


def _in_place(node: Mapping[str, Any]) -> Iterator[tuple[str | int, ...]]:
    """Relative paths of the subschemas evaluated against the same instance as ``node``."""
    for key in _IN_PLACE_ONE:
        if is_mapping(node.get(key)):
            yield (key,)
    for key in _IN_PLACE_LIST:
        value = node.get(key)
        if isinstance(value, list):
            yield from ((key, i) for i, v in enumerate(value) if is_mapping(v))
    deps = node.get("dependentSchemas")
    if is_mapping(deps):
        yield from (("dependentSchemas", str(k)) for k, v in deps.items() if is_mapping(v))


def _pointer(ref: str) -> tuple[str, ...] | None:
    """``#`` or ``#/a/b`` → path tokens; anything else (a URL, an anchor) → None."""
    if ref == "#":
        return ()
    if not ref.startswith("#/"):
        return None
    return tuple(unquote(t).replace("~1", "/").replace("~0", "~") for t in ref[2:].split("/"))


def schema_problem(schema: Any, *, meta: bool = True, plain: bool | None = None,
                   openers: int | None = None) -> SchemaProblem | None:
    """The first reason ``schema`` cannot be evaluated safely, or None.

    ``meta`` adds the JSON Schema 2020-12 meta-schema check (about 10 ms a schema):
    the catalog runs it once at load; the guard skips it and relies on the
    quarantine, catching whatever a malformed schema still raises. A schema one
    argument value of which could cost more than the step budget is refused too
    (:mod:`tooldisc.discovery.catalog.schema_budget`). ``plain``: the schema is plain JSON, as the
    parser returns it (None: find out); only plain schemas reach the compiled meta-schema check.
    ``openers``: how many ``{`` and ``[`` the schema's JSON text holds, when the caller has that text (the
    catalog's checks do): nesting is at most that, so within the limit the depth walk is skipped.
    """
    return _analyse(schema, meta=meta, plain=plain, graph=False, openers=openers)[0]


def argument_schema_problem(schema: Any, *, meta: bool = True, plain: bool | None = None,
                            openers: int | None = None) -> SchemaProblem | None:
    """:func:`schema_problem` for a tool's ``parameters``: the root must also describe an object.

    Tool arguments are always a JSON object (the guard refuses anything else) and
    every provider wants ``"type": "object"`` at the root. A root without ``type``
    is read as an object schema (the exporters add it); a root whose ``type`` says
    anything else (``"string"``, ``["object", "null"]``) describes arguments no call
    can have, so the tool is quarantined rather than exported under a type it
    does not declare.
    """
    if is_mapping(schema) and "type" in schema and schema["type"] != "object":
        return SchemaProblem("type", f"an argument schema must have type 'object' at its root (tool arguments are "
                                     f"a JSON object); got {_short(schema['type'])}")
    return schema_problem(schema, meta=meta, plain=plain, openers=openers)


def _analyse(schema: Any, *, meta: bool, plain: bool | None = None, graph: bool = True,
             openers: int | None = None) -> tuple[SchemaProblem | None, SchemaGraph | None]:
    """The structural checks, then the step budget; the evaluation graph when all pass.

    ``plain``: the schema is plain JSON (the parser's output; None: find out), so the
    meta-schema check may ask the compiled validator first (:mod:`.schema_fast`).
    ``graph=False``: the caller needs the verdict only, so a schema with no ``$ref`` and no
    ``unevaluated*`` keyword — where every subschema is evaluated at most once per argument
    value — passes the step budget by the sum of its subschemas' steps when that sum is
    within it, without building the evaluation graph (the same verdict: that sum bounds
    :func:`~tooldisc.discovery.catalog.schema_budget.value_steps` from above).
    """
    if isinstance(schema, bool):
        return None, None
    if not is_mapping(schema):
        return SchemaProblem("(root)", f"a schema must be an object or a boolean; got {type(schema).__name__}"), None
    if (openers is None or openers > MAX_SCHEMA_DEPTH) and json_depth_exceeds(schema, MAX_SCHEMA_DEPTH):
        return SchemaProblem("(root)", f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"), None
    if meta:
        found = _meta_problem(schema, plain)
        if found is not None:
            return found, None
    nodes: dict[tuple[str | int, ...], Mapping[str, Any]] = {}
    positions: dict[tuple[str | int, ...], Any] = {}  # every subschema position, boolean ones included
    refs: list[tuple[tuple[str | int, ...], str]] = []
    uses: set[str] = set()
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, bool):
            positions[path] = node
        if not is_mapping(node):
            continue
        nodes[path] = node
        positions[path] = node
        if not _NODE_KEYS.isdisjoint(node):  # most nodes (a property's type) hold none of these keywords
            problem = _node_problem(path, node, refs, uses)
            if problem is not None:
                return problem, None
        if not _SUBSCHEMA_KEYS.isdisjoint(node):
            stack.extend(((*path, *rel), child) for rel, child in reversed(list(_subschemas(node))))
    if {"patternProperties", "unevaluatedProperties"} <= uses:
        return SchemaProblem("(root)", "unevaluatedProperties together with patternProperties is not supported "
                                       "(it would be evaluated with a backtracking regex engine)"), None
    if not graph and not refs and not uses & {"unevaluatedProperties", "unevaluatedItems"} and \
            sum(map(own_steps, positions.values())) <= MAX_VALIDATION_STEPS:
        return None, None  # a tree evaluated once per value: no cycle, and within the budget
    targets: dict[tuple[str | int, ...], tuple[str | int, ...]] = {}
    by_tokens = {tuple(str(p) for p in path): path for path in positions}
    for path, ref in refs:
        tokens = _pointer(ref)
        if tokens is None:
            return SchemaProblem(_dotted(path), f"$ref {_short(ref)} is not a JSON pointer into this schema "
                                                "(remote and anchor references are never resolved)"), None
        target = by_tokens.get(tokens)
        if target is None:
            return SchemaProblem(_dotted(path), f"$ref {_short(ref)} does not resolve to a subschema of this "
                                                "schema"), None
        targets[path] = target
    cycle = _in_place_cycle(nodes, targets)
    if cycle is not None:
        return SchemaProblem(_dotted(cycle), "$ref cycle that never descends into the arguments "
                                             "(infinite recursion)"), None
    graph = build_graph(positions, targets)
    worst = value_steps(graph, MAX_ARGUMENT_DEPTH)
    if worst.steps > MAX_VALIDATION_STEPS:
        steps = "more than 10^18" if worst.steps >= 10**18 else f"{worst.steps:,}"
        return SchemaProblem(_dotted(worst.heaviest), f"validating one argument value could take {steps} steps, "
                                                      f"over the budget of {MAX_VALIDATION_STEPS:,} ($ref and "
                                                      f"allOf/anyOf/oneOf paths reach this subschema "
                                                      f"{worst.times_text} times)"), None
    return None, graph


def _node_problem(path: tuple[str | int, ...], node: Mapping[str, Any],
                  refs: list[tuple[tuple[str | int, ...], str]], uses: set[str]) -> SchemaProblem | None:
    if path and ("$schema" in node or "$id" in node):
        key = "$schema" if "$schema" in node else "$id"
        return SchemaProblem(_dotted(path), f"{key} is allowed only at the root of a tool schema")
    if "$dynamicRef" in node:
        return SchemaProblem(_dotted(path), "$dynamicRef is not supported in tool schemas")
    ref = node.get("$ref")
    if ref is not None:
        if not isinstance(ref, str):
            return SchemaProblem(_dotted(path), f"$ref must be a string; got {type(ref).__name__}")
        refs.append((path, ref))
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        why = pattern_problem(pattern)
        if why is not None:
            return SchemaProblem(_dotted((*path, "pattern")), why)
    props = node.get("patternProperties")
    if is_mapping(props):
        uses.add("patternProperties")
        for key in props:
            why = pattern_problem(str(key))
            if why is not None:
                return SchemaProblem(_dotted((*path, "patternProperties")), why)
    if "unevaluatedProperties" in node:
        uses.add("unevaluatedProperties")
    if "unevaluatedItems" in node:
        uses.add("unevaluatedItems")
    return None


def _in_place_cycle(nodes: Mapping[tuple[str | int, ...], Mapping[str, Any]],
                    targets: Mapping[tuple[str | int, ...], tuple[str | int, ...]]) -> tuple[str | int, ...] | None:
    """A node on a cycle of same-instance evaluation ($ref and in-place applicators), or None."""
    edges: dict[tuple[str | int, ...], list[tuple[str | int, ...]]] = {}
    for path, node in nodes.items():
        out = [(*path, *rel) for rel in _in_place(node)]
        if path in targets:
            out.append(targets[path])
        edges[path] = [p for p in out if p in nodes]
    state: dict[tuple[str | int, ...], int] = {}  # 1 on the current DFS path, 2 done
    for start in nodes:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(edges[start]))]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return nxt
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(edges[nxt])))
    return None


@cache
def _meta_validator() -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)


def _meta_problem(schema: Mapping[str, Any], plain: bool | None = None) -> SchemaProblem | None:
    """The first meta-schema error (jsonschema's words), or None. The compiled check answers a valid
    schema alone; jsonschema decides every other one (:mod:`.schema_fast`)."""
    if (plain or (plain is None and schema_fast.is_plain(schema))) and schema_fast.meta_valid(schema):
        return None
    # best_match depends on set order (PYTHONHASHSEED); the first error by path is deterministic.
    errors = sorted(_meta_validator().iter_errors(schema),
                    key=lambda e: ([str(p) for p in e.absolute_path], e.message))
    if not errors:
        return None
    first = errors[0]
    return SchemaProblem(_dotted(tuple(first.absolute_path)), f"not a valid JSON Schema: {first.message}")


# --------------------------------------------------------------------------- validation

def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not compile_pattern(pattern).search(instance):
        yield ValidationError(f"{_short(instance)} does not match {_short(pattern)}")


def _matches_any(patterns: Any, key: str) -> bool:
    return any(compile_pattern(p).search(key) for p in patterns)


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        regex = compile_pattern(pattern)
        for key, value in instance.items():
            if regex.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, extra_schema: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError

    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties") or {}
    patterns = schema.get("patternProperties") or {}
    extras = [k for k in instance if k not in declared and not _matches_any(patterns, k)]
    if validator.is_type(extra_schema, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra_schema, path=key)
    elif extra_schema is False and extras:
        names = ", ".join(_short(k, 40) for k in sorted(extras)[:5]) + (", …" if len(extras) > 5 else "")
        yield ValidationError(f"additional properties are not allowed ({names} unexpected)")


@cache
def _validator_class() -> Any:
    """Draft 2020-12 with RE2 behind every keyword that matches a regular expression."""
    import jsonschema
    from jsonschema import validators

    return validators.extend(jsonschema.Draft202012Validator, {
        "pattern": _pattern, "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    })


def validate(schema: Mapping[str, Any] | bool | None, instance: Any) -> Validation:
    """Every violation of ``instance`` against ``schema``, sorted by path then message.

    ``unusable`` is set instead when the arguments nest too deeply, the schema
    fails :func:`schema_problem`, or validating these arguments could take more
    than the step budget (:func:`~tooldisc.discovery.catalog.schema_budget.call_steps`,
    counted before the validator runs); nothing here raises for a hostile schema.
    Valid arguments are recognised by the compiled validator where it may judge the
    schema (:func:`~tooldisc.discovery.catalog.schema_fast.argument_validator`); anything it does
    not accept is judged, and worded, by jsonschema with RE2.
    """
    if json_depth_exceeds(instance, MAX_ARGUMENT_DEPTH):
        return Validation(unusable=f"the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels")
    if schema is None or schema is True:
        return Validation()
    problem, graph, fast = _prepared(schema)
    if problem is not None:
        return Validation(unusable=f"the tool's schema cannot be used: {problem.render()}")
    if schema is False:
        return Validation((Violation((), "false", "the schema accepts no arguments"),))
    if graph is not None and call_steps(graph, instance) > MAX_VALIDATION_STEPS:
        return Validation(unusable=f"validating these arguments would take more than {MAX_VALIDATION_STEPS:,} "
                                   "steps (the step budget); send fewer or smaller values")
    if fast is not None and schema_fast.is_plain(instance) and schema_fast.valid(fast, instance):
        return Validation()
    import referencing

    root = {k: v for k, v in schema.items() if k not in ("$schema", "$id")}  # always 2020-12, never rebased
    validator = _validator_class()(root, registry=referencing.Registry())  # empty: nothing is fetched
    try:
        errors = [Violation(tuple(e.absolute_path), str(e.validator), e.message)
                  for e in validator.iter_errors(instance)]
    except Exception as exc:  # any failure evaluating an untrusted schema refuses, never raises
        return Validation(unusable=f"the tool's schema cannot be evaluated ({type(exc).__name__})")
    errors.sort(key=lambda v: ([str(p) for p in v.path], v.message))
    return Validation(tuple(errors))


def _prepared(schema: Any) -> tuple[SchemaProblem | None, SchemaGraph | None, Any]:
    """The structural verdict, the evaluation graph and the compiled validator (or None) of ``schema``.

    A plain-JSON schema is prepared once per process for its exact text (a call checks its
    tool's schema again each time); any other value is analysed each time, without the
    compiled validator.
    """
    if is_mapping(schema):
        try:
            text = json.dumps(schema, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            text = None
        if text is not None and json.loads(text) == schema:
            return _prepared_text(text)
    problem, graph = _analyse(schema, meta=False)
    return problem, graph, None


@lru_cache(maxsize=256)
def _prepared_text(text: str) -> tuple[SchemaProblem | None, SchemaGraph | None, Any]:
    schema = json.loads(text)  # the cache's own copy: a caller's later edit of its dict changes no entry
    problem, graph = _analyse(schema, meta=False, plain=True)
    if problem is not None:
        return problem, graph, None
    root = {k: v for k, v in schema.items() if k not in ("$schema", "$id")}
    return None, graph, schema_fast.argument_validator(json.dumps(root))
