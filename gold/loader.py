"""Reading gold sets from JSON, JSONL, YAML and the external benchmark format.

The format is detected from the content, not the file name: a JSON document (an
object with ``queries``, or a list), JSON Lines (one query per line), or YAML (read
with the safe loader). Rows that carry ``relevant`` and no ``primary_expected_tools``
are the external benchmark format (``../shared/benchmarks/README.md``): ``relevant``
→ primary, ``acceptable`` (a list, or the keys of a mapping) → acceptable, intent
read, an empty ``relevant`` is a no-match query, unknown keys are ignored.

Parsing goes through :mod:`tooldisc.documents` (duplicate keys, NaN,
deep nesting and YAML alias bombs are refused). Every document is checked against
``gold/schema/gold.schema.json`` and every problem
is reported as a :class:`~tooldisc.errors.DataError` naming the file and the place
(``queries[12]`` or ``line 13``). ``tooldisc eval`` loads a gold set on every run, so
only ``json`` is imported eagerly; YAML and jsonschema load when they are needed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from tooldisc.closed_schema import unknown_field
from tooldisc.errors import DataError
from tooldisc.gold.model import GoldQuery, GoldSet

MAX_BYTES = 64 * 1024 * 1024
EXTERNAL_NOTE = (
    "external benchmark format: 'relevant' is primary, 'acceptable' is acceptable, intent read; "
    "it carries no policy, so its tools count as read-only (side_effect none)"
)
_LABELS = ("required_capability", "category", "difficulty", "hard_case", "source")
# Keys of an external row that are the row itself, or GoldQuery fields it never sets:
# the rest, when their value is a string, boolean or integer, are slice labels.
_EXTERNAL_KEYS = frozenset({"id", "query", "relevant", "acceptable", "primary_expected_tools", "acceptable_tools",
                            "forbidden_tools", "intent", "no_match", "history", "require_all_primary", "labels"})


def gold_schema() -> dict[str, Any]:
    """The JSON Schema of the gold format, as shipped."""
    return json.loads(resources.files("tooldisc.gold").joinpath("schema/gold.schema.json").read_text("utf-8"))


@lru_cache(maxsize=2)
def _validator(part: str) -> Any:
    """A validator for one part of the schema (``document`` or ``query``), built once.

    Validating against the part directly, rather than the schema's top-level
    ``oneOf``, keeps error paths pointing at the offending query.
    """
    import jsonschema

    schema = gold_schema()
    return jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{part}"})


def load_gold(path: str | Path, *, max_bytes: int = MAX_BYTES, check: bool = True) -> GoldSet:
    """Read a gold set, detecting its format from the content.

    With ``check`` the catalog-free rules of :func:`~tooldisc.gold.validate.validate_gold`
    (duplicate ids, empty queries, a tool both expected and forbidden, no-match with
    expected tools) must hold too; the first error is raised.
    """
    p = Path(path)
    name = str(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise DataError(f"cannot read gold set: {exc.strerror or exc}", file=name) from None
    if size > max_bytes:
        raise DataError(f"file is {size} bytes; the limit is {max_bytes} (max_bytes)", file=name)
    from tooldisc.documents import read_at_most

    try:
        raw = read_at_most(p, max_bytes + 1)  # a pipe or a device: never past the limit
        if len(raw) > max_bytes:
            raise DataError(f"file is over the limit of {max_bytes} bytes (max_bytes)", file=name)
        text = raw.decode("utf-8-sig")
    except OSError as exc:
        raise DataError(f"cannot read gold set: {exc.strerror or exc}", file=name) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text (byte {exc.start})", file=name) from None
    gold = parse_gold(text, source=name)
    if check:
        from tooldisc.gold.validate import validate_gold

        errors = [i for i in validate_gold(gold) if i.level == "error"]
        if errors:
            more = f" (and {len(errors) - 1} more; run 'tooldisc gold validate')" if len(errors) > 1 else ""
            raise DataError(errors[0].message + more, file=name, where=errors[0].where)
    return gold


def parse_gold(text: str, *, source: str | None = None) -> GoldSet:
    """Parse gold-set text (any supported format); ``source`` names it in errors."""
    from tooldisc.documents import bulk

    with bulk(text):  # rows and records, no cycles: MetaTool's 3.5 MB training queries 0.29 → 0.21 s
        return _parse_gold(text, source)


def _parse_gold(text: str, source: str | None) -> GoldSet:
    stripped = text.lstrip()
    if not stripped:
        raise DataError("empty file: a gold set needs queries", file=source)
    if stripped[0] in "{[":
        from tooldisc.documents import loads_json

        try:
            data = loads_json(text, source)
        except json.JSONDecodeError as exc:
            if stripped[0] == "{" and exc.msg == "Extra data":
                return _from_rows(_jsonl_rows(text, source), source)
            raise DataError(f"not valid JSON: {exc.msg}", file=source,
                            where=f"line {exc.lineno}, column {exc.colno}") from None
        if isinstance(data, dict) and "queries" not in data and ("query" in data or "id" in data):
            return _from_rows([(1, data)], source)  # JSON Lines with a single query
        return _from_document(data, source)
    return _from_document(_yaml(text, source), source)


def _yaml(text: str, source: str | None) -> Any:
    from tooldisc.documents import parse_yaml

    return parse_yaml(text, source, prefix="neither JSON nor valid YAML")


def _jsonl_rows(text: str, source: str | None) -> list[tuple[int, Any]]:
    from tooldisc.documents import loads_json

    rows: list[tuple[int, Any]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((lineno, loads_json(line, source, line=lineno)))
        except json.JSONDecodeError as exc:
            raise DataError(f"not valid JSON: {exc.msg} (column {exc.colno})", file=source,
                            where=f"line {lineno}") from None
    return rows


def _from_rows(rows: list[tuple[int, Any]], source: str | None) -> GoldSet:
    for lineno, row in rows:
        errors = _row_errors(row)
        if errors:
            raise DataError(_message(errors[0], []), file=source, where=f"line {lineno}")
    return _build([row for _, row in rows], {}, source)


def _row_errors(row: Any) -> list[Any]:
    """jsonschema's errors for one query row, in path order; none for an external row proved valid outright."""
    if _certainly_valid_external(row) or _compiled_valid("query", row):
        return []
    return sorted(_validator("query").iter_errors(row), key=_error_key)


def _compiled_valid(part: str, data: Any) -> bool:
    """True when the compiled validator accepts plain-JSON ``data`` for this part of the schema; anything
    else is jsonschema's to judge and word (:mod:`tooldisc.discovery.catalog.schema_fast`)."""
    from tooldisc.discovery.catalog import schema_fast

    validator = schema_fast.own_validator(_part_text(part))
    return validator is not None and schema_fast.is_plain(data) and schema_fast.valid(validator, data)


@lru_cache(maxsize=2)
def _part_text(part: str) -> str:
    schema = gold_schema()
    return json.dumps({"$defs": schema["$defs"], "$ref": f"#/$defs/{part}"})


# --- the external rows' fast path -----------------------------------------------------
#
# A training log is tens of thousands of external rows, and jsonschema spends about
# 0.2 ms on each (3 s for MetaTool's 16k: most of `learn`'s loading). The check below
# says "valid" only for a row the schema surely accepts, and nothing else: every row
# it is unsure of, and every invalid one, still goes to jsonschema, so what is
# accepted and every error message stay jsonschema's. It encodes these definitions of
# gold.schema.json; when the shipped ones differ, it is switched off.
_EXTERNAL_DEFS: dict[str, Any] = {
    "query": {
        "description": "Native rows have primary_expected_tools (or no 'relevant'); external rows have 'relevant'.",
        "if": {"type": "object", "required": ["relevant"], "not": {"required": ["primary_expected_tools"]}},
        "then": {"$ref": "#/$defs/external_query"},
        "else": {"$ref": "#/$defs/native_query"},
    },
    "external_query": {
        "type": "object",
        "required": ["id", "query", "relevant"],
        "properties": {
            "id": {"type": ["string", "integer"]},
            "query": {"type": "string"},
            "relevant": {"$ref": "#/$defs/tool_list"},
            "acceptable": {"anyOf": [{"$ref": "#/$defs/tool_list"}, {"type": "object"}, {"type": "null"}]},
            "category": {},
        },
    },
    "tool_list": {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": True},
}


@lru_cache(maxsize=1)
def _fast_path_matches_schema() -> bool:
    defs = gold_schema()["$defs"]
    return all(defs.get(name) == part for name, part in _EXTERNAL_DEFS.items())


def _certainly_valid_external(row: Any) -> bool:
    """True only when ``row`` is an external row that ``_EXTERNAL_DEFS`` accepts.

    Narrower than the schema on purpose (exact types only: an id of ``1.0`` or a
    subclass goes to jsonschema), never wider.
    """
    if type(row) is not dict or "relevant" not in row or "primary_expected_tools" in row:
        return False
    if "id" not in row or "query" not in row or type(row["query"]) is not str:
        return False
    if type(row["id"]) is not str and type(row["id"]) is not int:
        return False
    if not _is_tool_list(row["relevant"]):
        return False
    acceptable = row.get("acceptable")
    if acceptable is not None and type(acceptable) is not dict and not _is_tool_list(acceptable):
        return False
    return _fast_path_matches_schema()


def _is_tool_list(value: Any) -> bool:
    """``tool_list``: a list of distinct non-empty strings."""
    return (type(value) is list and all(type(v) is str and v for v in value)
            and len(set(value)) == len(value))


def _from_document(data: Any, source: str | None) -> GoldSet:
    if not isinstance(data, Mapping | list):
        raise DataError(f"a gold set must be an object with 'queries' or a list of queries; got {_type(data)}",
                        file=source)
    if isinstance(data, Mapping) and not isinstance(data.get("queries"), list):
        got = "nothing" if "queries" not in data else _type(data["queries"])
        raise DataError(f"a gold set needs 'queries', a list of query objects; got {got}", file=source,
                        where="queries" if "queries" in data else None)
    if isinstance(data, list):
        for i, row in enumerate(data):
            found = _row_errors(row)
            if found:
                raise DataError(_message(found[0], []), file=source, where=f"[{i}]")
    errors = sorted(_validator("document").iter_errors(data), key=_error_key) \
        if isinstance(data, Mapping) and not _compiled_valid("document", data) else []
    if errors:
        # name the query an error sits in, and the field relative to it:
        # `queries[12]: intent must be one of ...`
        e = _leaf(errors[0])
        path = list(e.absolute_path)
        record = path[:2] if len(path) >= 2 and path[0] == "queries" else []
        raise DataError(_message(e, record), file=source, where=_path(record) if record else None)
    queries = data["queries"] if isinstance(data, Mapping) else data
    meta = data if isinstance(data, Mapping) else {}
    return _build(queries, meta, source)


def _build(rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any], source: str | None) -> GoldSet:
    external = bool(rows) and _is_external(rows[0])
    queries = tuple(_external_query(r) if _is_external(r) else _native_query(r) for r in rows)
    _check_lengths(queries, source)
    catalog_version = meta.get("catalog_version", meta.get("tool_catalog_version"))
    notes = meta.get("notes") or ()
    notes = (notes,) if isinstance(notes, str) else tuple(notes)
    if external:
        notes = (*notes, EXTERNAL_NOTE)
    return GoldSet(
        queries=queries,
        dataset_version=_opt_str(meta.get("dataset_version")),
        catalog_version=_opt_str(catalog_version),
        source=source,
        notes=notes,
    )


def _check_lengths(queries: Sequence[GoldQuery], source: str | None) -> None:
    """Each request and earlier turn within the one cap every surface applies (tooldisc.limits)."""
    from tooldisc.limits import check_query

    for q in queries:
        check_query(q.query, "the query", error=DataError, file=source, where=f"query {q.id!r}")
        for i, (_, content) in enumerate(q.history):
            check_query(content, f"history[{i}]", error=DataError, file=source, where=f"query {q.id!r}")


def _is_external(row: Mapping[str, Any]) -> bool:
    return "relevant" in row and "primary_expected_tools" not in row


def _opt_str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def _native_query(r: Mapping[str, Any]) -> GoldQuery:
    return GoldQuery(
        id=str(r["id"]),
        query=r["query"],
        primary_expected_tools=tuple(r.get("primary_expected_tools") or ()),
        acceptable_tools=tuple(r.get("acceptable_tools") or ()),
        forbidden_tools=tuple(r.get("forbidden_tools") or ()),
        intent=r["intent"],
        no_match=bool(r.get("no_match", False)),
        history=tuple((t["role"], t["content"]) for t in r.get("history") or ()),
        require_all_primary=bool(r.get("require_all_primary", False)),
        labels=tuple(sorted((r.get("labels") or {}).items())),
        **{key: _opt_str(r.get(key)) for key in _LABELS},
    )


def _external_query(r: Mapping[str, Any]) -> GoldQuery:
    relevant = tuple(r["relevant"])
    acceptable = r.get("acceptable") or ()
    if isinstance(acceptable, Mapping):
        acceptable = tuple(acceptable)  # the keys: alternative names for a relevant tool
    fields: dict[str, str] = {}
    labels: dict[str, str | bool | int] = {}
    for key, value in r.items():
        if key in _EXTERNAL_KEYS or value is None or value == "":
            continue
        if key in _LABELS and isinstance(value, str):
            fields[key] = value  # a known label field (Seal-Tools' difficulty), as a native set has it
        elif isinstance(value, str | bool | int) and not isinstance(value, float):
            labels[key] = value  # any other scalar: MetaTool's subset, Seal-Tools' n_gold_calls
    return GoldQuery(
        id=str(r["id"]),
        query=r["query"],
        primary_expected_tools=relevant,
        acceptable_tools=tuple(t for t in acceptable if t not in relevant),
        intent="read",
        no_match=not relevant,
        labels=tuple(sorted(labels.items())),
        **fields,
    )


# --- turning jsonschema errors into one-line messages ---------------------------------


def _error_key(error: Any) -> tuple:
    return tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in error.absolute_path)


def _path(parts: Sequence[Any]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(root)"


def _type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


_TYPE_NAMES = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean",
               "array": "a list", "object": "an object", "null": "null"}


def _leaf(error: Any) -> Any:
    """Descend through anyOf/oneOf to a failure deeper in the data, if there is one."""
    while error.context:
        deeper = [e for e in error.context if len(e.absolute_path) > len(error.absolute_path)]
        if not deeper:
            break
        error = sorted(deeper, key=_error_key)[0]
    return error


def _message(error: Any, record: Sequence[Any]) -> str:
    """The error relative to its record: ``intent must be one of …; got 'wrte'``."""
    error = _leaf(error)
    field = _path(list(error.absolute_path)[len(record):])
    at_record = field == "(root)"
    if at_record:
        field = "the record"
    value = error.instance
    kind = error.validator
    if kind == "enum":
        return f"{field} must be one of {', '.join(map(str, error.validator_value))}; got {value!r}"
    if kind == "type":
        allowed = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        names = " or ".join(_TYPE_NAMES.get(t, t) for t in allowed)
        return f"{field} must be {names}; got {_type(value)} {_short(value)}".rstrip()
    if kind == "required":
        missing = [k for k in error.validator_value if k not in value]
        where = "" if at_record else f"{field}: "
        return f"{where}missing required field {missing[0]!r}"
    if kind == "additionalProperties":
        known = set(error.schema.get("properties", {}))
        patterns = list(error.schema.get("patternProperties", {}))
        extra = sorted(k for k in value if k not in known and not any(re.search(p, k) for p in patterns))
        where = "" if at_record else f"{field}: "
        return f"{where}{extra[0]}: {unknown_field(extra[0], known, extensions=False)}"
    if kind == "uniqueItems":
        return f"{field} names a tool more than once"
    if kind == "minLength":
        return f"{field} must not be empty"
    if kind == "anyOf" and field.endswith("acceptable"):
        return f"{field} must be a list of tool names or a mapping; got {_type(value)}"
    return f"{field}: {error.message}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
