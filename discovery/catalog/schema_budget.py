"""The step budget of schema validation: one place that bounds what validating a call may cost.

A JSON Schema is a program its author wrote and the arguments are input its model
wrote. Evaluation re-runs a subschema once for every way it is reached, so a 3 KB
schema whose ``$defs`` each ``allOf`` the next twice, 40 levels deep, costs 2^40
evaluations for one argument value — no cycle, nothing the structural checks of
:mod:`tooldisc.discovery.catalog.schema_check` refuse — and one call stalls the server.

This module counts *steps*: a step is about one keyword evaluated on one argument
value (its weights, :func:`own_steps`, follow what the evaluator does for each keyword;
``$ref`` resolution weighs more). The count depends on the schema's shape and on
the arguments, never on the validator's internals, so a compiled validator can
replace ``jsonschema`` and keep the same budget:

* :func:`value_steps` — load time, the schema alone: the most steps any *one*
  argument value (at any depth the guard accepts) can cost, over every path an
  argument can take through the schema (each key named in ``properties``, each
  ``prefixItems`` index, any other key or item). Above
  :data:`MAX_VALIDATION_STEPS` the tool is quarantined (``catalog validate`` exits 1).
* :func:`call_steps` — call time, the schema and these arguments: an upper bound on
  the steps of this validation, found by walking the arguments with counts instead
  of evaluating (a subschema reached ``n`` ways is counted ``n`` times in one
  multiplication, so the walk itself stays cheap). Above the budget the call is
  refused before the validator runs.

Both follow the evaluator's worst case: every branch of ``anyOf`` / ``if`` /
``then`` / ``else`` is counted, ``patternProperties`` and ``additionalProperties``
reach every key, and a node with ``unevaluatedProperties`` / ``unevaluatedItems``
costs its whole subtree ``height + 2`` times (the evaluator re-validates its
in-place subschemas to find the evaluated keys, once per level of nesting).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tooldisc.values import is_mapping

# Steps one call's validation may take. Measured with jsonschema 4.26 on the
# development machine (benchmarks/schema_budget.py, nine kinds of work scaled to the
# budget): 0.8-4.1 µs a step, the slowest being anyOf fan-out and long strings under a
# pattern, so a call at the budget validates in under a second and the server answers on.
MAX_VALIDATION_STEPS = 200_000
NODE_STEPS = 4  # entering a subschema (the evaluator's descend, its validator copy) costs several keyword steps
REF_STEPS = 8  # so does resolving a $ref (pointer lookup, a resolver and a validator copy)
ENUM_PER_STEP = 4  # enum/const compare values in C-speed equality: four comparisons a step
CHARS_PER_STEP = 256  # RE2 scans text (encoded to UTF-8 first): 256 characters cost about a step
_SATURATED = 10**18  # counts stop growing here: a 2^(10^4) bomb never becomes a 10^4-digit integer

Path = tuple[str | int, ...]

# Keywords whose subschema applies to the same value as the node (besides $ref).
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_LIST = ("allOf", "anyOf", "oneOf")
# Keywords whose subschemas apply to every key / every item of the value.
_EVERY_KEY = ("additionalProperties", "unevaluatedProperties")
_EVERY_ITEM = ("contains", "unevaluatedItems")


def _sat(value: int) -> int:
    return value if value < _SATURATED else _SATURATED


@dataclass(frozen=True)
class SchemaGraph:
    """A schema as the evaluator walks it: node ids, in-place edges and descents.

    Node 0 is the root. Every subschema position is a node, boolean ones too (a
    boolean schema costs one step). ``order`` lists node ids so that every in-place
    edge goes forward (the structural check has refused in-place cycles).
    """

    paths: tuple[Path, ...]
    own: tuple[int, ...]  # steps of one evaluation of the node, before its subschemas
    in_place: tuple[tuple[int, ...], ...]  # subschemas evaluated against the same value, with repeats
    factor: tuple[int, ...]  # 1, or height + 2 for a node with unevaluatedProperties / unevaluatedItems
    reach: tuple[int, ...]  # in-place paths leaving the node, itself included (saturating)
    properties: tuple[Mapping[str, int], ...]  # key → node, for the value's key of that name
    every_key: tuple[tuple[int, ...], ...]  # patternProperties (any pattern may match), additional, unevaluated
    names: tuple[int | None, ...]  # propertyNames: evaluated against each key string
    prefix: tuple[tuple[int, ...], ...]  # prefixItems (or items in its old list form), by index
    rest: tuple[int | None, ...]  # items: every index past the prefix
    every_item: tuple[tuple[int, ...], ...]  # contains, unevaluatedItems
    schemas: tuple[Any, ...]  # the subschema of each node (for the call-time extras)
    order: tuple[int, ...]

    def descends(self, node: int) -> bool:
        return bool(self.properties[node] or self.every_key[node] or self.names[node] is not None
                    or self.prefix[node] or self.rest[node] is not None or self.every_item[node])


_SIZED = ("properties", "required", "type", "dependentSchemas")  # keywords that cost a step per entry


def own_steps(node: Any) -> int:
    """Steps of one evaluation of ``node`` against one value, not counting its subschemas."""
    if type(node) is not dict and not is_mapping(node):
        return NODE_STEPS
    steps = NODE_STEPS + len(node)
    get = node.get
    for key in _SIZED:
        value = get(key)  # absent, or a type name (a string): the common answers, told first
        if value is not None and type(value) is not str and (isinstance(value, list) or is_mapping(value)):
            steps += len(value)
    if isinstance(get("enum"), list):
        steps += -(-len(node["enum"]) // ENUM_PER_STEP)
    deps = get("dependentRequired")
    if deps is not None and is_mapping(deps):
        steps += sum(len(v) for v in deps.values() if isinstance(v, list))
    if "$ref" in node:
        steps += REF_STEPS
    return steps


def build_graph(positions: Mapping[Path, Any], targets: Mapping[Path, Path]) -> SchemaGraph:
    """The evaluation graph of a schema from its subschema ``positions`` (path → subschema, the root first).

    ``targets`` maps the path of each ``$ref`` to the position it resolves to. The
    schema must have passed the structural checks (bounded depth, local ``$ref``
    only, no in-place cycle): :func:`tooldisc.discovery.catalog.schema_check.schema_problem`
    builds the graph after them.
    """
    paths = [p for p, node in positions.items() if isinstance(node, bool) or is_mapping(node)]
    ids = {p: i for i, p in enumerate(paths)}
    schemas = [positions[p] for p in paths]
    n = len(paths)
    in_place: list[tuple[int, ...]] = []
    props: list[Mapping[str, int]] = []
    every_key: list[tuple[int, ...]] = []
    names: list[int | None] = []
    prefix: list[tuple[int, ...]] = []
    rest: list[int | None] = []
    every_item: list[tuple[int, ...]] = []
    unevaluated: list[bool] = []
    for i in range(n):
        node, path = schemas[i], paths[i]
        if not is_mapping(node):
            in_place.append(())
            props.append({})
            every_key.append(())
            names.append(None)
            prefix.append(())
            rest.append(None)
            every_item.append(())
            unevaluated.append(False)
            continue

        def at(*rel: str | int, path: Path = path) -> int | None:
            return ids.get((*path, *rel))

        edges = [at(k) for k in _IN_PLACE_ONE if k in node]
        for key in _IN_PLACE_LIST:
            if isinstance(node.get(key), list):
                edges += [at(key, j) for j in range(len(node[key]))]
        if is_mapping(node.get("dependentSchemas")):
            edges += [at("dependentSchemas", str(k)) for k in node["dependentSchemas"]]
        if path in targets:
            edges.append(ids.get(targets[path]))
        in_place.append(tuple(e for e in edges if e is not None))
        declared = node.get("properties")
        props.append({str(k): j for k in declared if (j := at("properties", str(k))) is not None}
                     if is_mapping(declared) else {})
        patterns = node.get("patternProperties")
        keys = [at("patternProperties", str(k)) for k in patterns] if is_mapping(patterns) else []
        keys += [at(k) for k in _EVERY_KEY if k in node]
        every_key.append(tuple(k for k in keys if k is not None))
        names.append(at("propertyNames") if "propertyNames" in node else None)
        items = node.get("items")
        if isinstance(items, list):  # the pre-2020 tuple form of items
            prefix.append(tuple(j for j in (at("items", x) for x in range(len(items))) if j is not None))
            rest.append(None)
        else:
            listed = node.get("prefixItems")
            count = len(listed) if isinstance(listed, list) else 0
            prefix.append(tuple(j for j in (at("prefixItems", x) for x in range(count)) if j is not None))
            rest.append(at("items") if "items" in node else None)
        every_item.append(tuple(j for j in (at(k) for k in _EVERY_ITEM if k in node) if j is not None))
        unevaluated.append("unevaluatedProperties" in node or "unevaluatedItems" in node)
    order = _topological(in_place)
    height = [0] * n
    reach = [1] * n
    for i in reversed(order):  # children before parents
        for c in in_place[i]:
            height[i] = max(height[i], height[c] + 1)
            reach[i] = _sat(reach[i] + reach[c])
    factor = [height[i] + 2 if unevaluated[i] else 1 for i in range(n)]
    return SchemaGraph(tuple(paths), tuple(own_steps(s) for s in schemas), tuple(in_place), tuple(factor), tuple(reach),
                       tuple(props), tuple(every_key), tuple(names), tuple(prefix), tuple(rest), tuple(every_item),
                       tuple(schemas), order)


def _topological(edges: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """Node ids with every edge going forward (Kahn; ties by id, so the order is fixed)."""
    indegree = [0] * len(edges)
    for out in edges:
        for c in out:
            indegree[c] += 1
    ready = [i for i in range(len(edges)) if indegree[i] == 0]
    ready.reverse()
    order: list[int] = []
    while ready:
        i = ready.pop()
        order.append(i)
        for c in edges[i]:
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    if len(order) != len(edges):  # an in-place cycle: the structural check refuses these first
        raise ValueError("the schema's in-place references form a cycle")
    return tuple(order)


class _Counter:
    """In-place closures of start sets, with the counts of every way a node is reached."""

    def __init__(self, graph: SchemaGraph):
        self.graph = graph
        self.rank = {node: r for r, node in enumerate(graph.order)}
        self._memo: dict[frozenset[tuple[int, int]], dict[int, int]] = {}

    def close(self, start: Mapping[int, int]) -> dict[int, int]:
        """node → how many times it is evaluated on a value that ``start`` reaches (``start``: node → count)."""
        key = frozenset(start.items())
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        g = self.graph
        seen = set(start)
        todo = list(start)
        while todo:
            for c in g.in_place[todo.pop()]:
                if c not in seen:
                    seen.add(c)
                    todo.append(c)
        arrived = dict(start)
        out: dict[int, int] = {}
        for node in sorted(seen, key=self.rank.__getitem__):
            count = _sat(arrived.get(node, 0) * g.factor[node])
            out[node] = count
            for c in g.in_place[node]:
                arrived[c] = _sat(arrived.get(c, 0) + count)
        if len(self._memo) < 4096:
            self._memo[key] = out
        return out


def _add(into: dict[int, int], node: int | None, count: int) -> None:
    if node is not None:
        into[node] = _sat(into.get(node, 0) + count)


@dataclass(frozen=True)
class Steps:
    """A step count and the node evaluated most often for it (what to name in a message)."""

    steps: int
    heaviest: Path
    times: int

    @property
    def times_text(self) -> str:
        return "more than 10^18" if self.times >= _SATURATED else f"{self.times:,}"


MAX_STATES = 20_000  # distinct sets of nodes reaching a value that value_steps explores before it sums instead


def _heaviest(graph: SchemaGraph, closed: Mapping[int, int], total: int) -> Steps:
    node, times = max(closed.items(), key=lambda kv: (kv[1], [str(p) for p in graph.paths[kv[0]]]))
    return Steps(total, graph.paths[node], times)


def _child_starts(graph: SchemaGraph, closed: Mapping[int, int]) -> list[dict[int, int]]:
    """The sets of nodes (with counts) that can reach one child of a value that ``closed`` reaches.

    One per key named in some ``properties`` (with every node that reaches any key),
    one per ``prefixItems`` index and one past them, and the key strings
    (``propertyNames``): the children a single argument value can really have.
    """
    desc = [(node, count) for node, count in closed.items() if graph.descends(node)]
    if not desc:
        return []
    anykey: dict[int, int] = {}
    names: dict[int, int] = {}
    anyitem: dict[int, int] = {}
    rest: dict[int, int] = {}
    keys: set[str] = set()
    width = 0
    for node, count in desc:
        for j in graph.every_key[node]:
            _add(anykey, j, count)
        for j in graph.every_item[node]:
            _add(anyitem, j, count)
        _add(names, graph.names[node], count)
        _add(rest, graph.rest[node], count)
        keys.update(graph.properties[node])
        width = max(width, len(graph.prefix[node]))
    out: list[dict[int, int]] = []
    for key in sorted(keys):  # a named key also gets every node that reaches any key
        start = dict(anykey)
        for node, count in desc:
            _add(start, graph.properties[node].get(key), count)
        out.append(start)
    if not keys and anykey:
        out.append(anykey)
    for index in range(width):
        start = dict(anyitem)
        for node, count in desc:
            before = graph.prefix[node]
            _add(start, before[index] if index < len(before) else graph.rest[node], count)
        out.append(start)
    beyond = dict(anyitem)
    for node, count in rest.items():
        _add(beyond, node, count)
    out += [s for s in (beyond, names) if s]
    return out


def value_steps(graph: SchemaGraph, max_depth: int, limit: int = MAX_VALIDATION_STEPS) -> Steps:
    """The most steps one argument value (nested at most ``max_depth`` levels deep) can cost.

    Follows every path an argument can take through the schema (each named key,
    each prefix index, every other key or item) and counts, for the value at its
    end, every node that reaches it: the count is per value, so a recursive tree
    schema (``properties: {left: {$ref: "#"}, right: {$ref: "#"}}``) costs one
    evaluation per node, while ``allOf: [{$ref: "#"}, {$ref: "#"}]`` doubles per
    level. Breadth first, each distinct set of reaching nodes (a *state*) is
    explored once, at the shallowest depth it occurs: deeper occurrences have less
    depth left, so they reach nothing new. Past :data:`MAX_STATES` states the bound
    sums every path of a level instead (larger, still an upper bound). Stops once
    over ``limit``.
    """
    counter = _Counter(graph)
    seen: set[frozenset[tuple[int, int]]] = set()
    worst = Steps(0, (), 0)
    frontier: list[dict[int, int]] = [{0: 1}]
    for depth in range(max_depth + 1):
        following: list[dict[int, int]] = []
        for start in frontier:
            key = frozenset(start.items())
            if key in seen:
                continue
            if len(seen) >= MAX_STATES:
                return _level_steps(graph, counter, max_depth, limit)
            seen.add(key)
            closed = counter.close(start)
            total = _sat(sum(count * graph.own[node] for node, count in closed.items()))
            if total > worst.steps:
                worst = _heaviest(graph, closed, total)
                if total > limit:
                    return worst
            if depth < max_depth:
                following.extend(_child_starts(graph, closed))
        if not following:
            break
        frontier = following
    return worst


def _level_steps(graph: SchemaGraph, counter: _Counter, max_depth: int, limit: int) -> Steps:
    """A looser bound: every node that can reach *any* value at depth ``d``, summed."""
    start: dict[int, int] = {0: 1}
    worst = Steps(0, (), 0)
    for _ in range(max_depth + 1):
        closed = counter.close(start)
        total = _sat(sum(count * graph.own[node] for node, count in closed.items()))
        if total > worst.steps:
            worst = _heaviest(graph, closed, total)
        if total > limit:
            break
        start = {}
        for node, count in closed.items():
            for child in (*graph.properties[node].values(), *graph.every_key[node], *graph.prefix[node],
                          *graph.every_item[node]):
                _add(start, child, count)
            _add(start, graph.names[node], count)
            _add(start, graph.rest[node], count)
        if not start:
            break
    return worst


def _size(value: Any, cap: int) -> int:
    """JSON values in ``value`` (itself included; a long string counts once per CHARS_PER_STEP), up to ``cap``."""
    count, todo = 0, [value]
    while todo and count <= cap:
        node = todo.pop()
        count += 1
        if isinstance(node, str):
            count += len(node) // CHARS_PER_STEP
        elif is_mapping(node):
            todo.extend(node.values())
            todo.extend(node.keys())
        elif isinstance(node, list | tuple):
            todo.extend(node)
    return count


def _extra(schema: Any, value: Any, reach: int, cap: int) -> int:
    """Steps of one evaluation of ``schema`` that grow with ``value`` (equality scans, key matching)."""
    if not is_mapping(schema):
        return 0
    steps = 0
    if isinstance(schema.get("enum"), list) or "const" in schema or (
            schema.get("uniqueItems") is True and isinstance(value, list)):
        size = _size(value, cap)
        if isinstance(schema.get("enum"), list):  # the first comparison per member is in own_steps
            steps += len(schema["enum"]) * (size - 1) // ENUM_PER_STEP
        if "const" in schema:
            steps += size // ENUM_PER_STEP
        if schema.get("uniqueItems") is True and isinstance(value, list):
            steps += len(value) * size
    if isinstance(value, str) and "pattern" in schema:  # RE2 is linear in the text
        steps += len(value) // CHARS_PER_STEP
    if is_mapping(value):
        patterns = schema.get("patternProperties")
        npat = len(patterns) if is_mapping(patterns) else 0
        scans = len(value) + sum(len(k) for k in value if isinstance(k, str)) // CHARS_PER_STEP
        steps += npat * scans
        if "additionalProperties" in schema:
            steps += scans * (1 + npat)
        if "unevaluatedProperties" in schema:  # a list of evaluated keys, searched once per key
            steps += 2 * reach * len(value) * len(value)
    if isinstance(value, list) and "unevaluatedItems" in schema:
        steps += 2 * reach * len(value) * len(value)
    return _sat(steps)


def call_steps(graph: SchemaGraph, arguments: Any, limit: int = MAX_VALIDATION_STEPS) -> int:
    """An upper bound on the steps of validating ``arguments``; stops counting once over ``limit``.

    The walk visits each argument value once with the count of every node that
    reaches it, so it costs about as much as the arguments are large, whatever the
    schema multiplies.
    """
    counter = _Counter(graph)
    total = 0
    todo: list[tuple[Any, dict[int, int]]] = [(arguments, {0: 1})]
    while todo:
        value, start = todo.pop()
        closed = counter.close(start)
        for node, count in closed.items():
            total = _sat(total + count * (graph.own[node] + _extra(graph.schemas[node], value, graph.reach[node],
                                                                   limit)))
        if total > limit:
            return total
        desc = [(node, count) for node, count in closed.items() if graph.descends(node)]
        if not desc:
            continue
        if is_mapping(value):
            for key, child in value.items():
                nxt: dict[int, int] = {}
                named: dict[int, int] = {}
                for node, count in desc:
                    _add(nxt, graph.properties[node].get(key), count)
                    for j in graph.every_key[node]:
                        _add(nxt, j, count)
                    _add(named, graph.names[node], count)
                for target, start_set in ((child, nxt), (key, named)):
                    if start_set:
                        todo.append((target, start_set))
                        total += 1  # the descent itself, so a wide object cannot queue for free
                if total > limit:
                    return total
        elif isinstance(value, list):
            for index, child in enumerate(value):
                nxt = {}
                for node, count in desc:
                    before = graph.prefix[node]
                    if index < len(before):
                        _add(nxt, before[index], count)
                    elif graph.rest[node] is not None:
                        _add(nxt, graph.rest[node], count)
                    for j in graph.every_item[node]:
                        _add(nxt, j, count)
                if nxt:
                    todo.append((child, nxt))
                    total += 1
                    if total > limit:
                        return total
        if total > limit:
            return total
    return total
