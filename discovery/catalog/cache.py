"""The on-disk cache of validated catalog records: warm one-shots skip parsing and validation.

A catalog's records — every :class:`~tooldisc.discovery.model.Tool` with its definition hash and
quarantine, the catalog version and its findings — are a pure function of the file's bytes, the
format they are read as (``--catalog-format``, the side effect given to a format without policy)
and the code that reads them. So they are kept beside the index cache
(:mod:`tooldisc.discovery.indexes.cache`, the same directory, bounds and ``tooldisc cache``
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
from collections.abc import Mapping, Sequence
from dataclasses import fields
from functools import cache
from operator import attrgetter
from pathlib import Path
from typing import Any

from tooldisc.discovery.catalog import Catalog, Issue
from tooldisc.discovery.model import Tool
from tooldisc.documents import native_dumps, native_loads

FORMAT = "tooldisc-catalog-records-2"
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
    from tooldisc.discovery.indexes.cache import environment_text

    discovery = Path(__file__).resolve().parent.parent  # the discovery package, its wings included
    core = Path(sys.modules["tooldisc"].__file__ or "").resolve().parent
    h = hashlib.sha256()
    for p in sorted([*discovery.rglob("*.py"), *(discovery / "data").glob("*"), *core.glob("*.py")]):
        if p.is_file():
            h.update(f"{p.parent.name}/{p.name}".encode() + b"\0" + p.read_bytes() + b"\0")
    h.update(environment_text(_DISTS).encode())
    return h.hexdigest()


def read_records(cache_dir: Any, parts: Mapping[str, str]) -> tuple[tuple[Tool, ...], str | None, tuple[Issue, ...], str] | None:
    """(records, catalog version, findings, format read as) stored for ``parts``, or None (absent, stale,
    foreign or damaged: the caller loads the file fresh and stores it again)."""
    from tooldisc.discovery.indexes.cache import cache_key

    key = cache_key(parts)
    entry = cache_dir.load(key, parts)
    if entry is None or entry["manifest"].get("catalog") != FORMAT:
        return None
    try:
        return decode(entry["arrays"])
    except Exception:  # any entry that does not decode into valid records is rebuilt like a damaged one
        return None


def store_records(cache_dir: Any, parts: Mapping[str, str], catalog: Catalog, detected: str) -> None:
    """Store ``catalog``'s records and findings under ``parts`` (a failure to write is not an error)."""
    from tooldisc.discovery.indexes.cache import cache_key
    from tooldisc.discovery.text.columns import release_memory

    release_memory(len(catalog))  # the parse's freed pages back first: the entry is built in them, not above them
    cache_dir.store_arrays(cache_key(parts), parts, encode(catalog, detected), {"catalog": FORMAT})


def _utf8(text: str) -> Any:
    return _bytes_array(text.encode("utf-8", "surrogatepass"))


def encode(catalog: Catalog, detected: str) -> dict[str, Any]:
    """The records and findings of ``catalog`` as the arrays of the module docstring: the string table as
    one UTF-8 text and its ends, the lists as string indices and their ends, one int32 column per field,
    the flags as bits, the hashes as one text; the schemas and findings as JSON."""
    import numpy as np

    tools = catalog.tools
    n = len(tools)
    strings, lists = _Table(), _Table()
    strings[None] = 0  # None is the table's first entry
    index = strings.__getitem__
    columns = np.empty((len(_TEXTS) + len(_LISTS) + len(_SCHEMAS), n), dtype=np.int32)  # no list of ints held
    for at, name in enumerate(_TEXTS):
        columns[at] = np.fromiter(map(index, map(attrgetter(name), tools)), dtype=np.int32, count=n)
    for at, name in enumerate(_LISTS, start=len(_TEXTS)):
        columns[at] = np.fromiter(map(lists.__getitem__, map(attrgetter(name), tools)), dtype=np.int32, count=n)
    schemas: dict[str, list[Any]] = {}
    for at, name in enumerate(_SCHEMAS, start=len(_TEXTS) + len(_LISTS)):
        ids, firsts = _Table(), {}  # the schema objects as the records hold them: one shared by tools stored once
        for i, value in enumerate(map(attrgetter(name), tools)):
            if value is None:
                columns[at, i] = -1
            else:
                columns[at, i] = ids[id(value)]
                firsts.setdefault(id(value), value)
        schemas[name] = list(firsts.values())
    flags = np.zeros(len(tools), dtype=np.uint8)
    for bit, name in enumerate(_FLAGS):
        flags |= np.fromiter(map(attrgetter(name), tools), dtype=bool, count=len(tools)).astype(np.uint8) << bit
    items = np.fromiter((index(x) for key in lists for x in key), dtype=np.int32)  # before the table is written
    table = list(strings)[1:]
    arrays = {
        "columns": columns,
        "flags": flags,
        "lists.items": items,
        "lists.ends": np.cumsum([len(key) for key in lists], dtype=np.int64),
        "strings.ends": np.cumsum([len(x) for x in table], dtype=np.int64),
        "hashes": _utf8("".join(t.definition_hash for t in tools)),
        **_json_arrays({"version": catalog.version, "detected": detected, "count": len(tools), "schemas": schemas,
                        "warnings": [[i.level, i.path, i.message] for i in catalog.warnings]}),
    }
    del columns, items, strings, lists
    arrays["strings.text"] = _utf8_pieces(table)
    return arrays


def _json_arrays(value: Any) -> dict[str, Any]:
    """``value`` as JSON in a uint8 array (``about.json``) and the reader that gets it back exactly
    (``about.reader``): orjson's bytes, read by orjson; or the json module's where orjson cannot write the
    value (an integer past 64 bits, which orjson would read back as a float), read by the json module.
    A catalog of 100,000 distinct schemas is 40 MB of it."""
    dumps = native_dumps()
    if dumps is not None:
        try:
            return {"about.json": _bytes_array(dumps(value)), "about.reader": _utf8("orjson")}
        except TypeError:
            pass
    return {"about.json": _utf8(json.dumps(value, ensure_ascii=False, separators=(",", ":"))),
            "about.reader": _utf8("json")}


def _json_value(arrays: Mapping[str, Any]) -> Any:
    """:func:`_json_arrays`' inverse (the json module reads what orjson wrote exactly too)."""
    raw = arrays["about.json"].tobytes()
    loads = native_loads()
    if loads is not None and arrays["about.reader"].tobytes() == b"orjson":
        return loads(raw)
    return json.loads(raw.decode("utf-8"))


def _bytes_array(raw: bytes) -> Any:
    import numpy as np

    return np.frombuffer(raw, dtype=np.uint8)


def _utf8_pieces(table: list[str]) -> Any:
    """The UTF-8 of the strings joined, encoded a few thousand at a time: never the whole text (twice the
    bytes for Persian) beside its encoding."""
    import numpy as np

    out = bytearray()
    for at in range(0, len(table), 4096):
        out += "".join(table[at:at + 4096]).encode("utf-8", "surrogatepass")
    return np.frombuffer(out, dtype=np.uint8)


def decode(arrays: Mapping[str, Any]) -> tuple[tuple[Tool, ...], str | None, tuple[Issue, ...], str]:
    """:func:`encode`'s inverse: every record through the :class:`Tool` constructor (which checks its fields)."""
    about = _json_value(arrays)
    n = about["count"]
    text = arrays["strings.text"].tobytes().decode("utf-8", "surrogatepass")
    ends = arrays["strings.ends"].tolist()
    if (ends and ends[-1] != len(text)) or any(b < a for a, b in zip([0, *ends[:-1]], ends, strict=True)):
        raise ValueError("the stored string table does not fit its text")
    table: list[Any] = [None, *map(text.__getitem__, map(slice, [0, *ends[:-1]], ends))]
    items = list(map(table.__getitem__, arrays["lists.items"].tolist()))
    list_ends = arrays["lists.ends"].tolist()
    lists = [tuple(items[a:b]) for a, b in zip([0, *list_ends[:-1]], list_ends, strict=True)]
    if (list_ends and list_ends[-1] != len(items)) or None in items:
        raise ValueError("the stored lists do not fit their items")
    columns = arrays["columns"]
    if columns.shape != (len(_TEXTS) + len(_LISTS) + len(_SCHEMAS), n) or columns.min(initial=0) < -1:
        raise ValueError("the stored columns disagree on the number of tools")
    cols: dict[str, Sequence[Any]] = {}
    at = 0
    for name in _TEXTS:
        cols[name] = list(map(table.__getitem__, columns[at].tolist()))
        at += 1
    for name in _LISTS:
        cols[name] = list(map(lists.__getitem__, columns[at].tolist()))
        at += 1
    for name in _SCHEMAS:
        stored = [*about["schemas"][name], None]  # -1 is None
        cols[name] = list(map(stored.__getitem__, columns[at].tolist()))
        at += 1
    flags = arrays["flags"]
    if flags.shape != (n,):
        raise ValueError("the stored flags disagree on the number of tools")
    for bit, name in enumerate(_FLAGS):
        cols[name] = ((flags >> bit) & 1).astype(bool).tolist()
    hashes = arrays["hashes"].tobytes().decode("ascii")
    if len(hashes) != n * _HASH:
        raise ValueError("the stored hashes disagree on the number of tools")
    cols["definition_hash"] = [hashes[i:i + _HASH] for i in range(0, n * _HASH, _HASH)]
    tools = tuple(map(Tool.of_fields, zip(*(cols[name] for name in _FIELDS), strict=True)))
    if len({t.name for t in tools}) != n:
        raise ValueError("the stored records repeat a name")
    warnings = tuple(Issue(str(level), str(path), str(message)) for level, path, message in about["warnings"])
    version, detected = about["version"], about["detected"]
    if not (version is None or type(version) is str) or type(detected) is not str:
        raise ValueError("the stored catalog version or format is not text")
    return tools, version, warnings, detected
