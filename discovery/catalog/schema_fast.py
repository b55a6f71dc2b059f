"""Compiled JSON Schema checks (jsonschema-rs): a fast first answer that can only agree with jsonschema.

``jsonschema`` (pure Python) stays the reference of every schema decision — the catalog's
own schema, the 2020-12 meta-schema check that quarantines a tool, and the guard's
accept/refuse of a call's arguments. It costs about 5 ms a tool schema, minutes at
100,000 tools. jsonschema-rs answers the same questions in microseconds, so it is asked
first, and only its *yes* is taken as it is:

* compiled says valid → valid (nothing else runs);
* compiled says invalid, cannot read the value, or is not installed → jsonschema decides
  and words the messages, for the failing document only.

A decision can therefore differ from jsonschema's only where jsonschema-rs accepts what
jsonschema refuses. ``tests/discovery/test_schema_fast.py`` looks for that with jsonschema
as the oracle (the hostile corpus, the benchmark catalogs, thousands of generated schemas
and argument sets), and the cases where the two engines read a value differently never
reach the compiled validator:

* **Plain JSON only**: dicts with string keys, lists, strings, numbers, booleans, None —
  what the hardened parser returns. jsonschema-rs reads a tuple as an array where
  jsonschema does not; :func:`is_plain` checks values that did not come from the parser.
* **Patterns stay on RE2**: jsonschema-rs matches ``pattern`` / ``patternProperties`` with
  its own engine (backtracking fancy-regex; ``\\d`` is Unicode there, ASCII in RE2), so an
  argument schema holding either keyword is validated by jsonschema with RE2, as before
  (:mod:`tooldisc.discovery.catalog.schema_check`). The meta-schema's own patterns (``$anchor``) are
  fixed ASCII classes; a schema's ``pattern`` is only a string to it (formats are never
  asserted, by either engine).
* **multipleOf stays in Python**: jsonschema divides floats (``0.3`` is not a multiple of
  ``0.1`` there), jsonschema-rs does not; schemas holding it are validated by jsonschema.
* **Only meta-valid argument schemas**: jsonschema raises on some malformed schemas
  (``items`` as a list in 2020-12) where jsonschema-rs compiles something; the guard uses
  the compiled validator only for schemas that pass the meta-schema check.

Nothing is fetched: the validators are built offline, formats are annotations
(``validate_formats=False``, jsonschema's default), and every ``$ref`` a tool schema may
hold was already checked to point into the schema itself.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache, lru_cache
from typing import Any

# The catalog document: what tooldisc's own schema checks (issue 25's closed keys are
# worded by tooldisc.closed_schema, so additionalProperties is left to it here too).
_UNREAD = ("additionalProperties", "patternProperties")


@cache
def _rs() -> Any:
    """The jsonschema_rs module, or None when it is not installed (jsonschema then decides alone)."""
    try:
        import jsonschema_rs
    except ImportError:
        return None
    return jsonschema_rs


def _compile(schema: Any) -> Any:
    rs = _rs()
    return rs.Draft202012Validator(schema, validate_formats=False, offline=True)


def is_plain(value: Any) -> bool:
    """Whether ``value`` is plain JSON: it survives a JSON round trip unchanged (tuples, non-string keys,
    NaN and objects JSON cannot hold do not). C-speed; for values that did not come from the parser."""
    try:
        return bool(json.loads(json.dumps(value, allow_nan=False)) == value)
    except (TypeError, ValueError, RecursionError):
        return False


@cache
def meta_validator() -> Any:
    """The 2020-12 meta-schema (jsonschema's own copy, so both engines check against the same text), compiled."""
    if _rs() is None:
        return None
    return _compile(meta_schema())


def meta_schema() -> Any:
    """The 2020-12 meta-schema as jsonschema reads it: the file its registry
    (``jsonschema_specifications.REGISTRY``) loads, read directly — the registry's import (with
    ``referencing`` and every draft's schemas) cost a one-shot 60 ms; the registry answers only when the
    file is not where the package keeps it."""
    from importlib.util import find_spec
    from pathlib import Path

    spec = find_spec("jsonschema_specifications")  # a look-up: the package is not imported
    for folder in (spec.submodule_search_locations or ()) if spec is not None else ():
        path = Path(folder, "schemas", "draft202012", "metaschema.json")
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
    from jsonschema_specifications import REGISTRY

    return REGISTRY.contents("https://json-schema.org/draft/2020-12/schema")


def meta_valid(schema: Mapping[str, Any]) -> bool:
    """True when the compiled meta-schema check finds plain-JSON ``schema`` a valid 2020-12 schema;
    False means "ask jsonschema" (invalid, unreadable, or no compiled validator)."""
    validator = meta_validator()
    if validator is None:
        return False
    try:
        return bool(validator.is_valid(schema))
    except Exception:  # a value jsonschema-rs cannot read: jsonschema decides
        return False


def _without_unread(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_unread(v) for k, v in node.items() if k not in _UNREAD}
    if isinstance(node, list):
        return [_without_unread(v) for v in node]
    return node


@cache
def catalog_validators(schema_text: str) -> tuple[Any, Any] | None:
    """The catalog schema compiled twice — the whole document and one tool (``$defs.tool``) — without
    the keywords whose findings tooldisc words itself (closed keys), or None without jsonschema-rs."""
    if _rs() is None:
        return None
    schema = _without_unread(json.loads(schema_text))
    tool = {**schema["$defs"]["tool"]}
    return _compile(schema), _compile(tool)


@lru_cache(maxsize=8)
def own_validator(schema_text: str) -> Any:
    """One of tooldisc's own schemas (JSON text; the gold format's parts), compiled, or None without
    jsonschema-rs. Its patterns are tooldisc's (literal prefixes: the same in every engine)."""
    if _rs() is None:
        return None
    return _compile(json.loads(schema_text))


def valid(validator: Any, instance: Any) -> bool:
    """``validator.is_valid(instance)``; False ("ask jsonschema") when it cannot read the value."""
    try:
        return bool(validator.is_valid(instance))
    except Exception:
        return False


def python_only(schema_text: str) -> bool:
    """Whether an argument schema (as JSON text) holds a keyword the compiled validator must not
    evaluate: ``pattern`` / ``patternProperties`` (RE2's semantics) or ``multipleOf`` (float
    division). Looked for in the text: a property merely named so is sent to jsonschema too."""
    return '"pattern' in schema_text or '"multipleOf"' in schema_text


@lru_cache(maxsize=256)
def argument_validator(schema_text: str) -> Any:
    """The compiled validator of an argument schema (JSON text, ``$schema``/``$id`` removed), or None
    when the guard must use jsonschema for it: a keyword of :func:`python_only`, a schema the
    meta-schema check refuses, one jsonschema-rs cannot compile, or no jsonschema-rs."""
    if _rs() is None or python_only(schema_text):
        return None
    schema = json.loads(schema_text)
    if not isinstance(schema, bool) and not meta_valid(schema):
        return None
    try:
        return _compile(schema)
    except Exception:
        return None
