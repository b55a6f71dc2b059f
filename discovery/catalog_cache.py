"""The on-disk cache of validated catalog records: warm one-shots skip parsing and validation.

A catalog's records — every :class:`~tooldisc.discovery.model.Tool` with its definition hash and
quarantine, the catalog version and its findings — are a pure function of the file's bytes, the
format they are read as (``--catalog-format``, the side effect given to a format without policy)
and the code that reads them. So they are kept beside the index cache
(:mod:`tooldisc.discovery.index_cache`, the same directory, bounds and ``tooldisc cache``
commands) under a key made of exactly those, and read back instead of parsing and validating the
file again: a fresh load cannot decide differently from the same bytes with the same code.

* **The key**: SHA-256 of the file's bytes (read, and size-limited, as for a fresh load), the
  declared format and side effect, the cache format, and a digest of the reading code — the
  ``discovery`` and ``tooldisc`` package sources and data (catalog schema, parser, importers, schema
  checks) and the versions of Python, Unicode, jsonschema, jsonschema-rs, RE2 and PyYAML, whose
  decisions a load depends on. A file that changed by one byte is another key.
* **Only what the file says**: the records and findings. The catalog's source and notes (which name
  the path) are made by the loading process; the security filter, the authorized sets and the index
  are built from these records in every process, as from a fresh load.
* **Never pickle**: JSON in an ``.npz`` whose every array is checked by SHA-256 on load (the index
  cache's container). A stale, foreign, truncated or damaged entry is rebuilt and replaced, never
  trusted; every record is built through the :class:`Tool` constructor, which checks its fields.
* A catalog with errors is never stored (its load raises, as a fresh one does).

The layout is columnar: one table of distinct strings, one of distinct string lists, one of the
distinct schema objects, and per field a column of indices into them, so a load rebuilds 100,000
records from a few C-level passes and equal strings and lists are one object each (as
:class:`~tooldisc.discovery.catalog.SharedValues` makes them in a fresh load).
"""

from __future__ import annotations

import hashlib
import json
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import fields
from functools import cache
from itertools import starmap
from operator import attrgetter
from pathlib import Path
from typing import Any

from tooldisc.discovery.catalog import Catalog, Issue
from tooldisc.discovery.model import Tool

FORMAT = "tooldisc-catalog-records-1"
_PAYLOAD = "catalog.json"
_FLAGS = ("requires_approval", "always_confirm", "tenant_required", "is_core", "enabled", "deprecated")
_TEXTS = ("name", "description", "schema_version", "version", "namespace", "risk_level", "capability",
          "replacement", "side_effect", "quarantine")  # a string, or None (-1)
_LISTS = ("roles", "permissions", "domains", "aliases", "keywords", "examples", "companion_tools")
_SCHEMAS = ("parameters", "compact_parameters", "output_schema")
_FIELDS = tuple(f.name for f in fields(Tool))
_HASH = 64  # hex characters of a definition hash
# the packages whose decisions a catalog load depends on (with the sources digested below)
_DISTS = ("jsonschema", "jsonschema-rs", "google-re2", "pyyaml", "jsonschema-specifications", "referencing")


class _Table(dict[Any, int]):
    """Value → its index, given in order of first use (the table is the keys in that order)."""

    def __missing__(self, key: Any) -> int:
        self[key] = at = len(self)
        return at


def file_parts(raw: bytes | str, fmt: str | None, side_effect: str | None) -> dict[str, str]:
    """What the records of a catalog file depend on, each part a digest or a plain value (the key);
    ``raw``: the file's bytes, or their SHA-256 (hex) when the file was read in pieces."""
    return {
        "format": FORMAT,
        "file": raw if isinstance(raw, str) else hashlib.sha256(raw).hexdigest(),
        "read_as": json.dumps([fmt, side_effect]),
        "code": code_digest(),
    }


@cache
def code_digest() -> str:
    """SHA-256 over the ``discovery`` and ``tooldisc`` packages' sources and data files and the versions of
    what a load's decisions depend on: any edit of the reading code, or another engine, is another key."""
    from importlib import metadata

    discovery = Path(__file__).resolve().parent
    core = Path(sys.modules["tooldisc"].__file__ or "").resolve().parent
    h = hashlib.sha256()
    for p in sorted([*discovery.glob("*.py"), *(discovery / "data").glob("*"), *core.glob("*.py")]):
        if p.is_file():
            h.update(f"{p.parent.name}/{p.name}".encode() + b"\0" + p.read_bytes() + b"\0")
    versions = []
    for dist in _DISTS:
        try:
            versions.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{dist}=none")
    h.update(";".join([*versions, sys.version, f"unicode={unicodedata.unidata_version}"]).encode())
    return h.hexdigest()


def read_records(cache_dir: Any, parts: Mapping[str, str]) -> tuple[tuple[Tool, ...], str | None, tuple[Issue, ...], str] | None:
    """(records, catalog version, findings, format read as) stored for ``parts``, or None (absent, stale,
    foreign or damaged: the caller loads the file fresh and stores it again)."""
    from tooldisc.discovery.index_cache import cache_key

    key = cache_key(parts)
    entry = cache_dir.load(key, parts)
    if entry is None or entry["manifest"].get("catalog") != FORMAT:
        return None
    try:
        return decode(entry["arrays"][_PAYLOAD].tobytes())
    except Exception:  # any entry that does not decode into valid records is rebuilt like a damaged one
        return None


def store_records(cache_dir: Any, parts: Mapping[str, str], catalog: Catalog, detected: str) -> None:
    """Store ``catalog``'s records and findings under ``parts`` (a failure to write is not an error)."""
    import numpy as np

    from tooldisc.discovery.index_cache import cache_key

    payload = np.frombuffer(encode(catalog, detected), dtype=np.uint8)
    cache_dir.store_arrays(cache_key(parts), parts, {_PAYLOAD: payload}, {"catalog": FORMAT})


def encode(catalog: Catalog, detected: str) -> bytes:
    """The records and findings of ``catalog`` as the columnar JSON of the module docstring."""
    tools = catalog.tools
    strings, lists = _Table(), _Table()
    strings[None] = 0  # None is the table's first entry
    index = strings.__getitem__
    schemas: dict[str, list[Any]] = {}
    columns: dict[str, Any] = {}
    for name in _TEXTS:
        columns[name] = list(map(index, map(attrgetter(name), tools)))
    for name in _LISTS:
        columns[name] = list(map(lists.__getitem__, map(attrgetter(name), tools)))
    for name in _SCHEMAS:  # the schema objects as the records hold them: an object shared by tools is stored once
        values = list(map(attrgetter(name), tools))
        ids = _Table()
        columns[name] = [-1 if v is None else ids[id(v)] for v in values]
        firsts = {}
        for v in values:
            if v is not None:
                firsts.setdefault(id(v), v)
        schemas[name] = list(firsts.values())
    flags = [0] * len(tools)
    for bit, name in enumerate(_FLAGS):
        mask = 1 << bit
        flags = [f | mask if v else f for f, v in zip(flags, map(attrgetter(name), tools), strict=True)]
    columns["flags"] = flags
    list_items = [list(map(index, items)) for items in lists]  # before the string table is written out
    body = {
        "version": catalog.version,
        "detected": detected,
        "count": len(tools),
        "strings": list(strings),
        "lists": list_items,
        "schemas": schemas,
        "columns": columns,
        "hashes": "".join(t.definition_hash for t in tools),
        "warnings": [[i.level, i.path, i.message] for i in catalog.warnings],
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def decode(payload: bytes) -> tuple[tuple[Tool, ...], str | None, tuple[Issue, ...], str]:
    """:func:`encode`'s inverse: every record through the :class:`Tool` constructor (which checks its fields)."""
    body = json.loads(payload)
    n = body["count"]
    table = body["strings"]
    if table[:1] != [None] or any(type(x) is not str for x in table[1:]):
        raise ValueError("the stored string table is not None and strings")
    text = table.__getitem__
    lists = [tuple(map(text, items)) for items in body["lists"]]
    columns = body["columns"]
    cols: dict[str, Sequence[Any]] = {}
    for name in _TEXTS:
        cols[name] = list(map(text, columns[name]))
    for name in _LISTS:
        cols[name] = list(map(lists.__getitem__, columns[name]))
    for name in _SCHEMAS:
        stored = [*body["schemas"][name], None]
        cols[name] = list(map(stored.__getitem__, columns[name]))
    flags = columns["flags"]
    for bit, name in enumerate(_FLAGS):
        mask = 1 << bit
        cols[name] = [bool(f & mask) for f in flags]
    hashes = body["hashes"]
    if len(hashes) != n * _HASH or any(len(c) != n for c in cols.values()):
        raise ValueError("the stored columns disagree on the number of tools")
    cols["definition_hash"] = [hashes[i:i + _HASH] for i in range(0, n * _HASH, _HASH)]
    tools = tuple(starmap(Tool, zip(*(cols[name] for name in _FIELDS), strict=True)))
    if len({t.name for t in tools}) != n:
        raise ValueError("the stored records repeat a name")
    warnings = tuple(Issue(str(level), str(path), str(message)) for level, path, message in body["warnings"])
    version, detected = body["version"], body["detected"]
    if not (version is None or type(version) is str) or type(detected) is not str:
        raise ValueError("the stored catalog version or format is not text")
    return tools, version, warnings, detected
