"""The catalog: parsing records into :class:`Tool`, validating them, and hashing.

The catalog is the single source of truth for policy, so parsing is strict: every
rule of DESIGN §3 is checked here, each problem is reported with the JSON path of
the offending value, and defaults are filled in before anything is hashed so that
YAML and JSON of the same content hash alike.
"""

from __future__ import annotations

import functools
import hashlib
import json
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from importlib import resources
from itertools import chain
from operator import attrgetter
from typing import Any

from tooldisc import values
from tooldisc.closed_schema import key_problems
from tooldisc.discovery.catalog.names import is_reserved
from tooldisc.discovery.model import SIDE_EFFECTS, Tool
from tooldisc.discovery.text import MAX_TEXT, sanitize
from tooldisc.documents import native_dumps
from tooldisc.errors import MAX_ERROR_LINE, DataError
from tooldisc.memory import gc_paused
from tooldisc.terminal import clip, escape, is_clean
from tooldisc.values import is_mapping

_LIST_FIELDS = ("roles", "permissions", "domains", "aliases", "keywords", "examples", "companion_tools")
# A record's defaults are the Tool's own (absent or null fields keep them); its flags are its bool fields
_RECORD_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(Tool)
                                    if f.name not in ("definition_hash", "quarantine")}
_FLAG_FIELDS: tuple[str, ...] = tuple(name for name, default in _RECORD_DEFAULTS.items() if type(default) is bool)
_UNTRUSTED_LISTS = ("aliases", "keywords", "examples")
# Identifiers that are printed and compared as written: a control, bidi or line
# separator character in one is an error at load (issue 10 item 12), not a display bug.
_IDENTIFIER_FIELDS = ("name", "namespace", "replacement")
_IDENTIFIER_LISTS = ("roles", "permissions", "companion_tools")
TOOL_FIELDS: tuple[str, ...] = tuple(_RECORD_DEFAULTS)
_SCHEMA_FIELDS = ("parameters", "compact_parameters", "output_schema")
CATALOG_FIELDS: tuple[str, ...] = ("catalog_version", "tools")
# Fields that decide who may reach a tool (DESIGN §4, and the plan's read-only rule): never
# allowed inside extension data, where they would be silently not read (tooldisc.closed_schema).
POLICY_FIELDS: tuple[str, ...] = ("side_effect", "roles", "permissions", "tenant_required", "enabled",
                                  "requires_approval", "always_confirm", "risk_level")


@dataclass(frozen=True)
class Issue:
    """One finding of catalog validation.

    ``error`` (the catalog format itself is broken) stops loading; ``quarantine`` (a
    tool's own JSON Schema is broken) loads the catalog but the tool is never offered
    and ``catalog validate`` fails; ``warning`` is advice.
    """

    level: str
    path: str
    message: str

    def render(self, file: str | None) -> str:
        return ": ".join(p for p in (file, self.path, self.message) if p)


class NameIndex(Mapping[str, int]):
    """Tool name → catalog index, by bisection over the catalog indices in name order.

    A dict would hold an entry and an int object per tool (about 6 MB at 100,000 tools);
    this holds one 4-byte position per tool beside the names. A look-up (the agent's call
    checks, forced names, ``--explain``) is a bisection of a few dozen string comparisons.
    ``order`` is also the index's final tie-break (:attr:`tooldisc.discovery.indexes.index.Index.name_rank`).
    """

    __slots__ = ("names", "order")

    def __init__(self, names: Sequence[str], order: array):
        self.names = names  # catalog order (unique: a catalog refuses duplicate names)
        self.order = order  # catalog indices in name order

    @classmethod
    def of(cls, names: Sequence[str]) -> NameIndex:
        # 4-byte positions while they fit (the typecode numpy reads as int32), else 8
        return cls(names, array("i" if len(names) < 2**31 else "q", sorted(range(len(names)), key=names.__getitem__)))

    def __getitem__(self, name: str) -> int:
        order, names = self.order, self.names
        at = bisect_right(order, name, key=names.__getitem__) - 1  # the last of equal names, as a dict keeps
        if at >= 0 and names[order[at]] == name:
            return order[at]
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


class ToolsByName(Mapping[str, Tool]):
    """A catalog's tools by name, through its :class:`NameIndex` (no dict of 100,000 entries)."""

    __slots__ = ("_index", "_tools")

    def __init__(self, tools: Sequence[Tool], index: NameIndex):
        self._tools, self._index = tools, index

    def __getitem__(self, name: str) -> Tool:
        return self._tools[self._index[name]]

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._tools)


@dataclass(frozen=True)
class Catalog:
    """An immutable, validated catalog. Tool order is the file's; hashes are order-free."""

    tools: tuple[Tool, ...]
    version: str | None = None
    source: str | None = None
    warnings: tuple[Issue, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @cached_property
    def name_index(self) -> NameIndex:
        """Tool name → index in :attr:`tools` (built once, shared with the security index)."""
        return NameIndex.of([t.name for t in self.tools])

    @cached_property
    def by_name(self) -> Mapping[str, Tool]:
        return ToolsByName(self.tools, self.name_index)

    @cached_property
    def hash(self) -> str:
        return catalog_hash(self.tools, self.version)

    def __len__(self) -> int:
        return len(self.tools)

    def roles(self) -> frozenset[str]:
        return frozenset(chain.from_iterable(map(attrgetter("roles"), self.tools)))  # C-level: 100k tools

    def permissions(self) -> frozenset[str]:
        return frozenset(chain.from_iterable(map(attrgetter("permissions"), self.tools)))


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_EXACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)  # as written: keys in their order


def _c_encoder(sort_keys: bool) -> Any:
    """The C encoder of ``_CANONICAL`` (``sort_keys``) or ``_EXACT``, built once: ``JSONEncoder.encode``
    builds it again on every call (a third of the encoding time of a tool record). None where the C
    accelerator is missing."""
    from json import encoder

    if encoder.c_make_encoder is None or encoder.c_encode_basestring is None:
        return None
    return encoder.c_make_encoder({}, _CANONICAL.default, encoder.c_encode_basestring, None, ":", ",", sort_keys,
                                  False, True)


_C_CANONICAL = _c_encoder(True)
_C_EXACT = _c_encoder(False)


def _exact_json(value: Any) -> str:
    """``value`` as JSON with its keys in their order (two values with equal text are the same value)."""
    return _EXACT.encode(value) if _C_EXACT is None else "".join(_C_EXACT(value, 0))


def canonical_json(value: Any) -> str:
    """Sorted keys, no insignificant whitespace, UTF-8 not escaped (DESIGN §3)."""
    if _C_CANONICAL is None or type(value) is str:
        return _CANONICAL.encode(value)
    return "".join(_C_CANONICAL(value, 0))


def tool_to_dict(tool: Tool) -> dict[str, Any]:
    """The canonical record of a tool: every field, defaults filled, lists as lists."""
    return {name: tool_to_dict_value(getattr(tool, name)) for name in TOOL_FIELDS}


def tool_to_dict_value(value: Any) -> Any:
    """One field of :func:`tool_to_dict`: a tuple as a list, a mapping as plain JSON."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return json.loads(json.dumps(value))
    return value


def definition_hash(tool: Tool, texts: Mapping[int, bytes] | None = None) -> str:
    """SHA-256 of the tool's canonical record (DESIGN §3).

    ``texts``: the canonical JSON (UTF-8) already computed for the tool's schemas (by ``id`` of the
    plain-JSON mapping, see :func:`check_catalog`). The record's bytes are then the canonical JSON of
    its other fields (:func:`_fields_json`) with the schemas' bytes put in at their keys' places — the
    same bytes as :func:`canonical_json` of :func:`tool_to_dict`, fed to the hash piece by piece without
    serialising the schemas again. A key is found by its text with the comma before it: inside an
    encoded string a quote is always escaped (``\\"``), so ``,"name":`` only ever occurs as the key itself.
    """
    if texts is None:
        return hashlib.sha256(canonical_json(tool_to_dict(tool)).encode("utf-8")).hexdigest()
    text = _fields_json(dict(zip(_OTHER_FIELDS, _other_values(tool), strict=True)))
    a = text.find(b',"companion_tools":')
    b = text.find(b',"permissions":', a)
    digest = hashlib.sha256(text[:a])
    add = digest.update
    add(b',"compact_parameters":')
    add(_schema_bytes(tool.compact_parameters, texts))
    add(text[a:b])
    add(b',"output_schema":')
    add(_schema_bytes(tool.output_schema, texts))
    add(b',"parameters":')
    add(_schema_bytes(tool.parameters, texts))
    add(text[b:])
    return digest.hexdigest()


def _fields_json(fields: dict[str, Any]) -> bytes:
    """Canonical JSON (UTF-8) of a record's fields other than its schemas, keys already in order: strings,
    booleans, None and tuples of strings (what :class:`Tool` admits there). orjson writes them byte for
    byte as :func:`canonical_json` does (the same escapes: ``tests/discovery/test_load_path.py``) at a
    tenth of its time; without orjson, or for a string it refuses (a lone surrogate), the json module."""
    return _native_json(fields, _canonical_bytes)  # type: ignore[return-value]


def _canonical_bytes(value: Any) -> bytes:
    return canonical_json(value).encode("utf-8")


def _schema_bytes(value: Any, texts: Mapping[int, bytes]) -> bytes:
    if value is None:
        return b"null"
    text = texts.get(id(value))
    return text if text is not None else canonical_json(tool_to_dict_value(value)).encode("utf-8")


def written_key(value: Any) -> bytes | str:
    """A key two plain-JSON values share exactly when they are equal as written: keys in their order,
    ``1``, ``1.0`` and ``true`` apart. orjson's bytes, or the json module's text where orjson cannot
    write the value (an integer past 64 bits, no orjson): the same value always takes the same path,
    and bytes never equal a text. Only for values the hardened parser could return (orjson writes a NaN,
    which it never returns, as ``null``). The bytes are a copy of orjson's: the object orjson returns pins
    the 4 KB block it wrote into (100,000 kept keys held 400 MB)."""
    key = _native_json(value, _exact_json)
    return memoryview(key).tobytes() if type(key) is bytes else key


def _native_json(value: Any, fallback: Callable[[Any], bytes | str]) -> bytes | str:
    """orjson's bytes of ``value`` (keys in their order), or ``fallback``'s where orjson is missing or
    cannot write it."""
    dumps = native_dumps()
    if dumps is not None:
        try:
            return dumps(value)
        except TypeError:
            pass
    return fallback(value)


# The canonical record's keys in order: the schemas sit right before companion_tools (compact_parameters)
# and before permissions (output_schema, parameters); definition_hash relies on it.
_OTHER_FIELDS: tuple[str, ...] = tuple(sorted(f for f in TOOL_FIELDS if f not in _SCHEMA_FIELDS))
_other_values = attrgetter(*_OTHER_FIELDS)


def catalog_hash(tools: Iterable[Tool], version: str | None) -> str:
    pairs = sorted((t.name, t.definition_hash or definition_hash(t)) for t in tools)
    body = canonical_json({"catalog_version": version, "tools": pairs})
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


@functools.cache
def _catalog_schema_text() -> str:
    return resources.files("tooldisc.discovery").joinpath("data/catalog.schema.json").read_text("utf-8")


def _catalog_schema() -> dict[str, Any]:
    return json.loads(_catalog_schema_text())


@functools.cache
def _catalog_validator() -> Any:
    """The catalog schema's validator, built once per process (reading and compiling it cost ~1.5 ms a load)."""
    import jsonschema

    return jsonschema.Draft202012Validator(_catalog_schema())


def _json_path(parts: Iterable[Any]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(root)"


def validate_catalog_data(data: Any, *, plain: bool | None = None) -> list[Issue]:
    """Every problem in a raw catalog document, errors before warnings, in file order.

    ``plain``: the document is plain JSON as the hardened parser returns it (the file
    loaders say so; None: find out with one JSON round trip). Only a plain document is
    checked by the compiled validators first (:mod:`tooldisc.discovery.catalog.schema_fast`), and
    only in one are equal tool schemas checked once.
    """
    return _check(data, plain, {}, {})


def _check(data: Any, plain: bool | None, texts: dict[int, bytes], same: dict[int, Any]) -> list[Issue]:
    """:func:`validate_catalog_data`; ``texts`` receives the canonical JSON of every tool schema of a
    plain document (by ``id``), which the definition hashes reuse, and ``same`` the earlier schema
    equal to one as written (by ``id``), which the records hold instead."""
    if not isinstance(data, Mapping):
        return [Issue("error", "(root)", f"a catalog must be an object with 'tools'; got {'an empty document' if data is None else type(data).__name__}")]
    if plain is None:
        from tooldisc.discovery.catalog.schema_fast import is_plain

        plain = is_plain(data)
    # The closed-schema rule is worded by tooldisc.closed_schema (the nearest known key), not by
    # jsonschema's additionalProperties, which the schema file states for other validators.
    issues = _catalog_schema_issues(data, plain)
    issues.extend(Issue("error", at, message) for at, message in key_problems(data, CATALOG_FIELDS))
    tools = data.get("tools")
    if not isinstance(tools, list):
        return issues
    known = frozenset(TOOL_FIELDS)
    seen: dict[str, int] = {}
    sound: set[tuple[str, Any]] = set()  # (schema kind, written_key) already found sound in this document
    written: dict[Any, tuple[Any, Any]] = {}  # a schema's written_key → (its canonical bytes, the first such object)
    # (parameters, compact_parameters, output_schema) objects, by id, that together gave no finding: what
    # _tool_schema_issues finds depends on those three objects alone (a missing parameters is a warning,
    # never clean), and equal schemas of a streamed document are one object from its parse on, so 100,000
    # tools sharing 180 schemas check about 180 trios. The ids stay the objects' own: `tools` holds them through the loop.
    clean: set[tuple[int, int, int]] = set()
    for i, raw in enumerate(tools):
        if type(raw) is not dict and not isinstance(raw, Mapping):  # a parsed record is a dict: no ABC check
            continue
        where = f"tools[{i}]"
        name = raw.get("name")
        if isinstance(name, str):
            if name in seen:
                issues.append(Issue("error", f"{where}.name", f"duplicate tool name {name!r} (first at tools[{seen[name]}])"))
            else:
                seen[name] = i
            if is_reserved(name):
                issues.append(Issue("error", f"{where}.name", f"the name {name!r} is reserved for tooldisc's "
                                    "meta-tool search_tools (a name that folds to it would be offered beside "
                                    "it); rename the tool"))
        if not _identifiers_printable(raw):  # the exact check only where the quick one fails
            issues.extend(_identifier_issues(raw, where))
        trio = (id(raw.get("parameters")), id(raw.get("compact_parameters")), id(raw.get("output_schema")))
        if trio not in clean:
            found = _tool_schema_issues(raw, where, name, sound if plain else None, texts, written, same)
            if found:
                issues.extend(found)
            elif plain:
                clean.add(trio)
        if not known.issuperset(raw):
            issues.extend(Issue("error", at, message) for at, message in key_problems(raw, known, where, POLICY_FIELDS))
    rank = {"error": 0, "quarantine": 1, "warning": 2}
    return sorted(issues, key=lambda x: rank[x.level])


def _identifiers_printable(raw: Mapping[str, Any]) -> bool:
    """Whether every identifier of a tool is printable text (printable text is clean): the quick form of
    :func:`_identifier_issues`' check, which runs only where this fails (or the name is not a string)."""
    name = raw.get("name")
    if type(name) is not str or not name.isprintable():
        return False
    for key in _IDENTIFIER_FIELDS[1:]:
        value = raw.get(key)
        if isinstance(value, str) and not value.isprintable():
            return False
    for key in _IDENTIFIER_LISTS:
        items = raw.get(key)
        if isinstance(items, list):
            try:
                if not "".join(items).isprintable():
                    return False
            except TypeError:  # a non-string item: a schema error; the exact check skips it as it should
                return False
    return True


def _catalog_schema_issues(data: Mapping[str, Any], plain: bool) -> list[Issue]:
    """The catalog's own JSON Schema: the compiled validator's yes, else jsonschema's findings —
    on the failing tools only when the compiled validator can tell which they are, in the order
    one jsonschema run over the whole document gives (by path as text, then as found)."""
    from tooldisc.discovery.catalog.schema_fast import catalog_validators, valid

    compiled = catalog_validators(_catalog_schema_text()) if plain else None
    if compiled is not None and valid(compiled[0], data):
        return []
    tools = data.get("tools")
    if compiled is None or not isinstance(tools, list):
        found = _jsonschema_errors(_catalog_validator(), data, ())
    else:
        found = _jsonschema_errors(_catalog_validator(), {**data, "tools": []}, ())
        tool_check = _catalog_validator().evolve(schema=_catalog_schema()["$defs"]["tool"])
        for i, raw in enumerate(tools):
            if not valid(compiled[1], raw):
                found += _jsonschema_errors(tool_check, raw, ("tools", i))
    found.sort(key=lambda pe: [str(p) for p in pe[0]])
    return [Issue("error", _json_path(path), clip(_schema_message(e), MAX_ERROR_LINE)) for path, e in found]


def _jsonschema_errors(validator: Any, data: Any, prefix: tuple[Any, ...]) -> list[tuple[tuple[Any, ...], Any]]:
    """(path in the document, error) of jsonschema's findings on ``data`` at ``prefix``; additionalProperties
    is worded by tooldisc.closed_schema instead."""
    return [((*prefix, *e.absolute_path), e) for e in validator.iter_errors(data) if e.validator != "additionalProperties"]


def _identifier_issues(raw: Mapping[str, Any], where: str) -> list[Issue]:
    """Names, roles and permissions must print as what they are: no control characters."""
    out: list[Issue] = []
    values = [(key, raw.get(key)) for key in _IDENTIFIER_FIELDS]
    for key in _IDENTIFIER_LISTS:
        items = raw.get(key)
        if isinstance(items, list):
            values += [(f"{key}[{j}]", v) for j, v in enumerate(items)]
    for place, value in values:
        if isinstance(value, str) and not is_clean(value):
            bad = next(c for c in value if escape(c) != c)
            out.append(Issue("error", f"{where}.{place}", f"control or format character U+{ord(bad):04X} in "
                             f"'{clip(escape(value), 80)}': names must be printable text"))
    return out


def _compact_shape_ok(raw: Mapping[str, Any]) -> bool:
    """Whether the compact schema can be inspected: ``properties`` an object, ``required``
    lists (compact and full). A wrong shape is already a catalog error (issue 10 item 6),
    so the schema checks below skip it instead of raising AttributeError on it."""
    compact, params = raw.get("compact_parameters"), raw.get("parameters")
    if not is_mapping(compact):
        return False
    properties, required = compact.get("properties"), compact.get("required")
    if not (properties is None or is_mapping(properties)) or not (required is None or isinstance(required, list)):
        return False
    if is_mapping(params):
        required = params.get("required")
        return required is None or isinstance(required, list)
    return True


def _schema_message(error: Any) -> str:
    if error.validator == "enum" and list(error.path)[-1:] == ["side_effect"]:
        return f"side_effect must be one of {', '.join(SIDE_EFFECTS)} or null; got {error.instance!r}"
    return error.message


def _tool_schema_issues(raw: Mapping[str, Any], where: str, name: Any, sound: set[tuple[str, Any]] | None = None,
                        texts: dict[int, bytes] | None = None, written: dict[Any, tuple[Any, Any]] | None = None,
                        same: dict[int, Any] | None = None) -> list[Issue]:
    """Quarantine a tool whose embedded schema cannot be evaluated safely (see schema_check).

    ``sound``: for a plain-JSON document, the (kind, JSON as written) of schemas already found
    sound in it — an equal schema is sound too — and each schema's canonical JSON goes into
    ``texts`` by ``id`` for the definition hash, computed once per text as written (``written``,
    which also gives the first object of that text: ``same`` maps a later one's ``id`` to it).
    """
    from tooldisc.discovery.catalog.schema_check import argument_schema_problem, schema_problem

    issues: list[Issue] = []
    params = raw.get("parameters")
    if "parameters" not in raw or params is None:
        label = f"tool {name!r}" if isinstance(name, str) else "tool"
        issues.append(Issue("warning", f"{where}.parameters", f"{label} has no parameters: any arguments will be accepted"))
    compact_ok = _compact_shape_ok(raw)
    for key in ("parameters", "compact_parameters", "output_schema"):
        schema = raw.get(key)
        if is_mapping(schema) and (compact_ok or key != "compact_parameters"):
            kind = "output" if key == "output_schema" else "argument"
            seen = openers = None
            if sound is not None:
                exact = written.get(id(schema))  # a schema object met before (equal schemas shared at parse)
                exact = written_key(schema) if exact is None or exact[1] is not schema else exact[0]
                known = written.get(exact)
                if known is None:
                    known = written[exact] = (canonical_json(schema).encode("utf-8"), schema)
                    written[id(schema)] = (exact, schema)
                elif known[1] is not schema:
                    same[id(schema)] = known[1]
                texts[id(schema)] = text = known[0]
                seen = (kind, exact)
                if seen in sound:
                    continue
                openers = text.count(b"{") + text.count(b"[")  # bounds the nesting: the depth walk is skipped
            check = schema_problem if kind == "output" else argument_schema_problem
            problem = check(schema, plain=sound is not None, openers=openers)
            if problem is not None:
                place = f"{where}.{key}" + ("" if problem.path == "(root)" else f".{problem.path}")
                issues.append(Issue("quarantine", place, problem.message))
            elif seen is not None:
                sound.add(seen)
    compact = raw.get("compact_parameters")
    if compact_ok and is_mapping(params) and is_mapping(compact):
        required = params.get("required") or []
        kept = (compact.get("properties") or {}).keys()
        missing = [r for r in required if isinstance(r, str) and r not in kept]
        if missing:
            issues.append(Issue("error", f"{where}.compact_parameters",
                                f"compact schema drops required field(s) {', '.join(missing)}"))
    return issues


def _as_str(value: Any) -> str | None:
    if value is None:
        return None
    return str(value)


def share_parsed(raw: Any, written: dict[Any, Any], strings: SharedValues) -> Any:
    """A just-parsed tool record with the first equal values of the document: its keys and short texts one
    string object each (``strings``), its list items too, its schemas the first equal as written (``written``:
    :func:`written_key` → object). The record is a new dict (its keys replaced; anything else as given). The
    JSON scanner makes every element's keys anew: 28 keys of 100,000 tools were 140 MB of equal strings. With
    them, a catalog of 100,000 tools repeating 180 schemas and a few dozen roles holds each once from its
    parse on (:func:`tooldisc.json_stream.loads_large_json`); equal values stay equal, so nothing but memory
    changes."""
    if type(raw) is not dict:
        return raw
    keep = strings.setdefault  # C-level: a dict's setdefault, not the table's __missing__
    kind_of = _PARSED_KIND.get
    raw = dict(zip(map(keep, raw, raw), raw.values(), strict=True))
    for key, value in raw.items():  # values replaced in place (the new dict's): its size never changes
        kind = kind_of(key)
        if kind is None:
            continue
        if type(value) is str:
            if kind is _TEXT:
                raw[key] = keep(value, value)
        elif type(value) is list:
            if kind is _LIST and value and _STR_ONLY.issuperset(map(type, value)):
                raw[key] = list(map(keep, value, value))
        elif type(value) is dict and kind is _SCHEMA:
            exact = written_key(value)
            first = written.get(exact)
            if first is None:  # a schema new to the document, kept by its tool: its strings shared too
                first = written[exact] = _shared_json(value, keep)
            raw[key] = first
    return raw


def _shared_json(value: Any, keep: Callable[[str, str], str]) -> Any:
    """A copy of a parsed JSON value whose strings (keys too) are ``keep``'s: a catalog of 100,000 distinct
    schemas repeats ``type``, ``properties`` and ``string`` in every one."""
    kind = type(value)
    if kind is dict:
        return {keep(k, k): _shared_json(v, keep) for k, v in value.items()}
    if kind is list:
        return [_shared_json(v, keep) for v in value]
    return keep(value, value) if kind is str else value


class SharedValues(dict[Any, Any]):
    """One object for each distinct string, and each distinct tuple of strings, of the records built with it.

    A JSON parser (or a generator) makes a new object for every occurrence of a value: 100,000
    tools with the same two roles hold 100,000 equal tuples and 200,000 equal strings, about
    18 MB of headers for what is 30 bytes of text. Built through one table, equal values are one
    object. They are immutable and compare by value, so nothing but memory changes. Share values
    as the records are created: records rebuilt afterwards would leave the old ones' holes beside
    the kept ones (freed memory the process keeps).
    """

    def __missing__(self, key: Any) -> Any:
        self[key] = key
        return key

    def text(self, value: Any) -> Any:
        """The shared string equal to ``value``; anything but a plain string (``None``) as it is."""
        return self[value] if type(value) is str else value

    def strings(self, values: Iterable[Any]) -> tuple[Any, ...]:
        """The shared tuple of the shared strings equal to ``values`` (as a tuple). A tuple holding
        anything but plain strings (a record that skipped validation) is kept as it is: equal is
        not the same there (``1 == 1.0 == True``)."""
        items = tuple(map(self.text, values))
        return self[items] if all(type(x) is str for x in items) else items


def tool_from_dict(raw: Mapping[str, Any], quarantine: str | None = None, shared: SharedValues | None = None,
                   texts: Mapping[int, bytes] | None = None, same: Mapping[int, Any] | None = None) -> Tool:
    """A validated raw record → :class:`Tool`, defaults filled, untrusted text sanitised.

    ``shared``: the table the catalog's records share their strings and lists through
    (:func:`build_catalog` passes one; without it the record holds its own). ``texts``: the
    canonical JSON of the record's schemas, when validation computed it (:func:`definition_hash`).
    ``same``: by ``id``, an earlier schema object equal to one of this record's as written (validation
    found them, :func:`check_catalog`): the record holds that one instead, and equal schemas are one object.
    Written for a catalog load's 100,000 calls: one pass over the keys the record has (most of a tool's
    fields are absent and stay at their defaults), strings shared through the table's C-level
    ``setdefault``, a list shared whole when an equal one was met before, and printable text within
    its limit never through :func:`sanitize` (which returns it unchanged).
    """
    share = SharedValues() if shared is None else shared
    keep = share.setdefault
    record = dict(_RECORD_DEFAULTS)
    kind_of = _FIELD_KIND.get
    for key, value in raw.items():
        kind = kind_of(key)
        if kind is None or value is None:  # the name, description and schemas below; extension data
            continue
        if kind is _TEXT:
            if type(value) is not str:
                value = str(value)
            record[key] = keep(value, value)
        elif kind is _KEEP:
            record[key] = keep(value, value) if type(value) is str else value
        elif kind is _FLAG:
            record[key] = bool(value)
        elif value:
            items = tuple(_clean_items(value) if kind is _ITEMS else value)
            if _STR_ONLY.issuperset(map(type, items)):
                found = share.get(items)
                if found is None:
                    found = tuple(map(keep, items, items))
                    share[found] = found
                record[key] = found
            else:
                record[key] = share.strings(items)
    if not record["schema_version"]:
        record["schema_version"] = "1"
    description = raw.get("description") or ""
    if type(description) is not str or len(description) > MAX_TEXT or not description.isprintable():
        description = sanitize(description)
    record["name"] = raw["name"]
    record["description"] = keep(description, description)
    for key in _SCHEMA_FIELDS:
        schema = raw.get(key)
        if schema is not None:  # an earlier tool's schema equal to this one as written: one object for both
            record[key] = same.get(id(schema), schema) if same else schema
    return with_hash(Tool.of_fields([*record.values(), "", None]), quarantine, texts)


def _clean_items(items: Any) -> Any:
    """An alias, keyword or example list with every item printable text of at most ``_MAX_ITEM`` characters:
    ``items`` itself when they all are (one C-level join tells), else each other item sanitised and cut."""
    try:
        joined = "".join(items)
    except TypeError:  # a non-string item: sanitize decides (and refuses) it
        joined = None
    if joined is not None and joined.isprintable() and (len(joined) <= _MAX_ITEM or max(map(len, items)) <= _MAX_ITEM):
        return items
    return [x if type(x) is str and len(x) <= _MAX_ITEM and x.isprintable() else sanitize(x, _MAX_ITEM) for x in items]


_OPTIONAL_TEXTS = ("namespace", "capability", "risk_level", "replacement", "version")
_SHARED_TEXTS = (*_OPTIONAL_TEXTS, "side_effect", "schema_version")
# How tool_from_dict reads each field a record may hold (None: read apart, or not a field)
_TEXT, _KEEP, _FLAG, _LIST, _ITEMS = "text", "keep", "flag", "list", "items"
_FIELD_KIND: dict[str, str] = {**dict.fromkeys((*_OPTIONAL_TEXTS, "schema_version"), _TEXT), "side_effect": _KEEP,
                               **dict.fromkeys(_FLAG_FIELDS, _FLAG), **dict.fromkeys(_LIST_FIELDS, _LIST),
                               **dict.fromkeys(_UNTRUSTED_LISTS, _ITEMS)}
_SCHEMA = "schema"
# What share_parsed shares of a just-parsed record
_PARSED_KIND: dict[str, str] = {**dict.fromkeys(_SHARED_TEXTS, _TEXT), **dict.fromkeys(_LIST_FIELDS, _LIST),
                                **dict.fromkeys(_SCHEMA_FIELDS, _SCHEMA)}
_MAX_ITEM = 500  # the length an alias, keyword or example is cut to
_STR_ONLY = frozenset((str,))


def with_hash(tool: Tool, quarantine: str | None = None, texts: Mapping[int, bytes] | None = None) -> Tool:
    """``tool`` (just built by the caller, seen by no one else) with its definition hash and
    quarantine set in place: what ``replace`` would return, without building and validating the
    record a second time (the catalog and benchmark loops build 100,000)."""
    object.__setattr__(tool, "definition_hash", definition_hash(tool, texts))
    if quarantine is not None:
        values.string("Tool", "quarantine", quarantine)
        object.__setattr__(tool, "quarantine", quarantine)
    return tool


def build_catalog(data: Any, *, source: str | None = None, notes: Sequence[str] = (),
                  plain: bool | None = None) -> Catalog:
    """Validate a raw catalog document and build the :class:`Catalog`, or raise.

    The error names the first problem; ``tooldisc catalog validate`` lists them all
    (:func:`check_catalog`). ``plain``: as in :func:`validate_catalog_data`.
    """
    issues, catalog = check_catalog(data, source=source, notes=notes, plain=plain)
    if catalog is None:
        errors = [i for i in issues if i.level == "error"]
        more = f" (and {len(errors) - 1} more; run 'tooldisc catalog validate')" if len(errors) > 1 else ""
        first = errors[0]
        raise DataError(first.message + more, file=source, where=first.path)
    return catalog


def check_catalog(data: Any, *, source: str | None = None, notes: Sequence[str] = (),
                  plain: bool | None = None) -> tuple[list[Issue], Catalog | None]:
    """Every issue of a raw catalog document, and the :class:`Catalog` when none is an error
    (validated once: ``catalog validate`` reports both)."""
    texts: dict[int, bytes] = {}
    same: dict[int, Any] = {}
    with gc_paused():  # hundreds of thousands of records, no cycles: see tooldisc.memory
        issues = _check(data, plain, texts, same)
        if any(i.level == "error" for i in issues):
            return issues, None
        quarantined: dict[int, str] = {}
        for issue in issues:
            if issue.level == "quarantine":
                i = int(issue.path.split("]")[0].split("[")[1])
                quarantined.setdefault(i, f"{issue.path}: {issue.message}")
        shared = SharedValues()  # equal strings and lists of the catalog's tools: one object each
        tools = tuple(tool_from_dict(raw, quarantined.get(i), shared, texts or None, same)
                      for i, raw in enumerate(data["tools"]))
        del shared, texts, same
    version = _as_str(data.get("catalog_version"))
    warnings = tuple(i for i in issues if i.level != "error")
    return issues, Catalog(tools=tools, version=version, source=source, warnings=warnings, notes=tuple(notes))


def catalog_from_tools(tools: Iterable[Tool], version: str | None = None, source: str | None = None) -> Catalog:
    """Build a catalog from in-memory tools (tests, synthetic benchmarks)."""
    fixed = tuple(t if t.definition_hash else replace(t, definition_hash=definition_hash(t)) for t in tools)
    names = [t.name for t in fixed]
    if len(set(names)) != len(names):
        raise DataError("duplicate tool names", file=source)
    reserved = next((n for n in names if is_reserved(n)), None)
    if reserved is not None:
        raise DataError(f"the name {reserved!r} is reserved for tooldisc's meta-tool search_tools; rename the tool",
                        file=source)
    return Catalog(tools=fixed, version=version, source=source)


def catalog_to_dict(catalog: Catalog) -> dict[str, Any]:
    return {"catalog_version": catalog.version, "tools": [tool_to_dict(t) for t in catalog.tools]}
