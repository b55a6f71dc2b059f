"""Reading JSON, JSON Lines and YAML documents that may be hostile: the one hardened parser.

Catalogs, contexts, configs, gold sets, gate files and plans all arrive from outside,
and each of the standard parsers has a way to be fooled or exhausted:

* duplicate keys silently keep the last value (``side_effect: delete`` … then
  ``side_effect: none``), so a duplicate key is an error in JSON and YAML alike;
* JSON ``NaN`` / ``Infinity`` (and ``1e999``) load as floats that cannot be written
  back as JSON, so they are refused, as are YAML ``.nan`` / ``.inf``;
* deep nesting ends in a ``RecursionError`` somewhere downstream, so a document may
  nest at most :data:`MAX_DEPTH` objects/arrays;
* YAML aliases expand exponentially (a 0.5 KB "billion laughs" becomes gigabytes) or
  recursively, so the composed node graph is measured *before* anything is built:
  its expanded size may be at most :data:`ALIAS_EXPANSION` times the nodes written,
  and an alias may not contain itself;
* YAML types JSON has no word for (timestamps, ``!!binary``, ``!!set``, non-string
  keys) are read as JSON would (timestamps stay strings) or refused;
* files are size-limited before they are read.

Every problem is a :class:`~tooldisc.errors.DataError` (or the ``error`` class the
caller passes, e.g. ``ConfigError``) naming the file and, where known, the line.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from functools import cache
from pathlib import Path
from typing import Any

from tooldisc.errors import DataError, ToolDiscError
from tooldisc.memory import gc_paused

MAX_DEPTH = 100
"""Objects/arrays one document may nest; tool schemas sit 4 levels below the root."""
ALIAS_EXPANSION = 10
"""A YAML document may expand (aliases resolved) to this many times the nodes it writes…"""
ALIAS_FLOOR = 100_000
"""…or to this many nodes, whichever is larger: small files may share freely."""

MAX_FILE_BYTES = 64 * 1024 * 1024
"""Default size limit; small documents (contexts, configs, plans) pass a smaller one."""

# From this size on, a parse pauses the garbage collector (tooldisc.memory): a document makes objects and no
# cycles, and the collector's passes over a growing heap were half of a 10,000-tool YAML parse (6.4 → 2.7 s).
BULK_CHARS = 1 << 16


def bulk(text: str) -> AbstractContextManager[None]:
    """The collector paused while ``text`` is parsed, when it is :data:`BULK_CHARS` long or more (a small
    document's parse is left alone: each pause moves what lives into the oldest generation)."""
    return gc_paused() if len(text) >= BULK_CHARS else nullcontext()


ErrorClass = type[ToolDiscError]


class _Refused(Exception):
    """A JSON hook refused a value; the message is completed with a place later."""


# --------------------------------------------------------------------------- files


def read_text(path: str | os.PathLike[str], *, max_bytes: int = MAX_FILE_BYTES, what: str = "file",
              error: ErrorClass = DataError) -> str:
    """UTF-8 text of ``path`` (a BOM is dropped), refused before reading when too big."""
    return decode_text(read_bytes(path, max_bytes=max_bytes, what=what, error=error), str(path), error=error)


def read_bytes(path: str | os.PathLike[str], *, max_bytes: int = MAX_FILE_BYTES, what: str = "file",
               error: ErrorClass = DataError) -> bytes:
    """The bytes of ``path``, refused before reading when too big (:func:`read_text` without the decoding)."""
    file_size(path, max_bytes=max_bytes, what=what, error=error)
    try:
        raw = read_at_most(path, max_bytes + 1)
    except OSError as exc:
        raise error(f"cannot read {what}: {exc.strerror}", file=str(path)) from None
    if len(raw) > max_bytes:  # grew since stat, or a pipe that gave more
        raise error(f"{what} is over the limit of {max_bytes} bytes", file=str(path))
    return raw


_READ_CHUNK = 1 << 24


def read_at_most(path: str | os.PathLike[str], limit: int) -> bytes:
    """At most ``limit`` bytes of ``path``: a regular file in one read of its size (one allocation); a pipe
    (``<(…)``, ``/dev/stdin``) or a device a chunk at a time, never past ``limit``. ``/dev/zero`` given as a
    catalog was read whole — until the kernel killed the process for its memory."""
    import io

    with open(path, "rb") as fh:
        info = os.fstat(fh.fileno())
        buf = io.BytesIO()  # grows in place; its value is handed over without a copy
        if stat.S_ISREG(info.st_mode):
            first = fh.read(min(info.st_size, limit))
            more = fh.read(1) if len(first) < limit else b""
            if not more:
                return first
            buf.write(first)  # the file grew since its size was read
            buf.write(more)
        left = limit - buf.tell()
        while left > 0:
            piece = fh.read(min(left, _READ_CHUNK))
            if not piece:
                break
            buf.write(piece)
            left -= len(piece)
    return buf.getvalue()


def file_size(path: str | os.PathLike[str], *, max_bytes: int = MAX_FILE_BYTES, what: str = "file",
              error: ErrorClass = DataError) -> int:
    """The size of ``path`` as it is about to be read, refused when absent, a directory or over ``max_bytes``."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise error(f"{what} not found", file=str(path)) from None
    except OSError as exc:
        raise error(f"cannot read {what}: {exc.strerror}", file=str(path)) from None
    if p.is_dir():
        raise error(f"expected a {what}, got a directory", file=str(path))
    if size > max_bytes:
        raise error(f"{what} is {size} bytes, over the limit of {max_bytes}", file=str(path))
    return size


def decode_text(raw: bytes, file: str, *, error: ErrorClass = DataError) -> str:
    """``raw`` as UTF-8 text (a BOM is dropped); bytes that are not UTF-8 are refused, naming the first."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8 text (byte {exc.start})", file=file) from None


def load_document(path: str | os.PathLike[str], *, max_bytes: int = MAX_FILE_BYTES, what: str = "file",
                  error: ErrorClass = DataError) -> Any:
    """:func:`read_text` then :func:`parse_document`."""
    return parse_document(read_text(path, max_bytes=max_bytes, what=what, error=error), str(path), error=error)


def parse_document(text: str, file: str, *, error: ErrorClass = DataError) -> Any:
    """JSON or YAML by extension (JSON first, then YAML, for any other name)."""
    suffix = Path(file).suffix.lower()
    if suffix in (".yaml", ".yml"):
        return parse_yaml(text, file, error=error)
    try:
        return loads_json(text, file, error=error)
    except json.JSONDecodeError as exc:
        if suffix == ".json":
            raise error(f"invalid JSON: {exc.msg}", file=file, where=f"line {exc.lineno} column {exc.colno}") from None
    return parse_yaml(text, file, error=error)


# --------------------------------------------------------------------------- JSON


def parse_json(text: str, file: str | None, *, error: ErrorClass = DataError) -> Any:
    """:func:`loads_json` with a syntax error worded as ``invalid JSON: …`` too."""
    try:
        return loads_json(text, file, error=error)
    except json.JSONDecodeError as exc:
        raise error(f"invalid JSON: {exc.msg}", file=file, where=f"line {exc.lineno} column {exc.colno}") from None


def loads_json(text: str, file: str | None = None, *, error: ErrorClass = DataError,
               line: int | None = None) -> Any:
    """``json.loads`` that refuses duplicate keys, NaN/Infinity and deep nesting.

    A syntax error stays a :class:`json.JSONDecodeError` so callers word it their way
    (and can tell "Extra data", i.e. JSON Lines, apart); everything else raises
    ``error``. ``line`` is the line of ``text`` in its file (JSON Lines).
    """
    with bulk(text):  # the parse and the walks after it
        return _loads_json(text, file, error, line)


def _loads_json(text: str, file: str | None, error: ErrorClass, line: int | None) -> Any:
    # Nesting past MAX_DEPTH needs more than MAX_DEPTH brackets: most documents skip the check. A large
    # one is measured on its text before it is parsed (vectorised); a small one walks the parsed value.
    brackets = text.count("[") + text.count("{") > MAX_DEPTH
    deep = _text_nesting_over(text, MAX_DEPTH) if brackets and len(text) >= _TEXT_SCAN_CHARS else None
    try:
        data = _decode(text)
    except _Refused as exc:
        raise error(str(exc), file=file, where=_place(text, _json_offset(text), line)) from None
    except RecursionError:
        raise error(f"nested deeper than {MAX_DEPTH} levels", file=file,
                    where=_place(text, _deep_offset(text), line)) from None
    except json.JSONDecodeError as exc:
        if line is not None:
            exc.lineno = line
        raise
    except ValueError:  # an integer literal past Python's int-from-text digit limit
        long = _LONG_NUMBER.search(text)
        raise error(f"a number literal of more than {_MAX_DIGITS} digits", file=file,
                    where=_place(text, long.start() if long else None, line)) from None
    if isinstance(data, dict | list) and brackets and (_depth_over(data) if deep is None else deep):
        raise error(f"nested deeper than {MAX_DEPTH} levels", file=file,
                    where=_place(text, _deep_offset(text), line))
    m = _LONE_SURROGATE.search(text) if "\\u" in text else None
    if m and _has_lone_surrogate(data):
        raise error("a lone UTF-16 surrogate escape is not text (\\ud800-\\udfff must come in pairs)",
                    file=file, where=_place(text, m.start() if m else None, line))
    return data


# A high surrogate escape not followed by a low one, or a low one not after a high one.
_LONE_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
                             r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def _has_lone_surrogate(data: Any) -> bool:
    """Whether any key or string holds an unpaired surrogate (json.loads pairs the rest)."""
    stack = [data]
    while stack:
        node = stack.pop()
        items = [*node.keys(), *node.values()] if isinstance(node, dict) else node if isinstance(node, list) else [node]
        for v in items:
            if isinstance(v, str):
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    return True
            elif isinstance(v, dict | list):
                stack.append(v)
    return False


@cache
def _strict_decoder() -> json.JSONDecoder:
    """One decoder with the refusing hooks (``json.loads`` with hooks builds one per call)."""
    return json.JSONDecoder(object_pairs_hook=_unique_object, parse_constant=_no_constant,
                            parse_float=_finite_float)


def _decode(text: str) -> Any:
    """The strict decoder's value of ``text``: parsed without the duplicate-key hook and checked by
    :func:`keys_unique` where orjson is there, the hooked parse deciding (and wording) any doubt."""
    decoder, dumps = plain_decoder()
    if decoder is None:
        return _strict_decoder().decode(text)
    data = decoder.decode(text)
    return data if keys_unique(text, 0, len(text), data, dumps) else _strict_decoder().decode(text)


@cache
def plain_decoder() -> tuple[json.JSONDecoder | None, Any]:
    """The strict decoder without its duplicate-key hook, and orjson's ``dumps`` that checks for keys
    given twice instead (:func:`keys_unique`); (None, None) without orjson. The hook is a Python call
    per object (770,000 in a 100,000-tool catalog); without it the C scanner builds each dict itself.
    Numbers and constants keep their refusing hooks."""
    dumps = native_dumps()
    if dumps is None:
        return None, None
    return json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float), dumps


@cache
def _orjson() -> Any:
    """The orjson module, or None where it is not installed (the one place it is imported)."""
    try:
        import orjson
    except ImportError:
        return None
    return orjson


@cache
def native_dumps() -> Callable[[Any], bytes] | None:
    """orjson's ``dumps`` (JSON as UTF-8 bytes, keys in their order, at C speed), or None where orjson is
    not installed: every caller then has the json module's answer, slower, the same."""
    module = _orjson()
    return None if module is None else module.dumps  # type: ignore[no-any-return]


@cache
def native_loads() -> Callable[[bytes], Any] | None:
    """orjson's ``loads`` (several times the json module's speed), or None where orjson is not installed. Only
    for JSON tooldisc wrote itself (a cache entry, checked by its digest): it keeps the last of a key given
    twice, reads an integer past 64 bits as a float, and refuses none of what :func:`loads_json` refuses."""
    module = _orjson()
    return None if module is None else module.loads  # type: ignore[no-any-return]


def keys_unique(text: str, start: int, end: int, value: Any, dumps: Any) -> bool:
    """Whether no object of the value parsed from ``text[start:end]`` was given a key twice, by counting
    colons. Without ``\\u003`` escapes every colon of a decoded string is a colon of the text, so the
    text holds one colon per key as written plus those of its strings; the value written again (orjson
    never escapes a colon) holds one per key kept plus those of the strings kept. A key given twice
    drops a pair, with its colon, so the text holds more. False (the hooked parse decides) when they
    differ, when an escape could hide a colon, or when orjson cannot write the value."""
    if text.find("\\u003", start, end) >= 0:
        return False
    try:
        again = dumps(value)
    except TypeError:
        return False
    return again.count(b":") == text.count(":", start, end)


_MAX_DIGITS = sys.get_int_max_str_digits() or 4300
_LONG_NUMBER = re.compile(rf"\d{{{_MAX_DIGITS + 1},}}")


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"duplicate key {key!r} (JSON keys must be unique)")
            seen.add(key)
    return out


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number (NaN and Infinity are refused)")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Refused(f"number {literal[:40]} is out of range (NaN and Infinity are refused)")
    return value


def _json_offset(text: str) -> int | None:
    """Where the refused value is: the start of the innermost object/array around it.

    Only runs on the error path: the document is parsed again by the pure-Python
    scanner, which lets each object and array record where it starts.
    """
    from json import scanner

    decoder = json.JSONDecoder(object_pairs_hook=_unique_object, parse_constant=_no_constant,
                               parse_float=_finite_float)
    found: list[int] = []

    def wrap(parse: Callable[..., Any]) -> Callable[..., Any]:
        def tracked(s_and_end: tuple[str, int], *args: Any) -> Any:
            try:
                return parse(s_and_end, *args)
            except _Refused:
                if not found:
                    found.append(s_and_end[1] - 1)
                raise
        return tracked

    decoder.parse_object = wrap(decoder.parse_object)  # type: ignore[method-assign]
    decoder.parse_array = wrap(decoder.parse_array)  # type: ignore[method-assign]
    decoder.scan_once = scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        decoder.decode(text)
    except _Refused:
        return found[0] if found else 0
    except (ValueError, RecursionError):
        return None
    return None


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _deep_offset(text: str) -> int | None:
    """The offset of the first object/array opened past :data:`MAX_DEPTH` (error path)."""
    depth = 0
    for m in _JSON_TOKENS.finditer(text):
        tok = m.group()
        if tok in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif tok in "]}":
            depth -= 1
    return None


_TEXT_SCAN_CHARS = 1 << 20  # from this size on, nesting is measured on the text (numpy) instead of the parsed value
_SCAN_CHUNK = 1 << 22
_KEEP = bytes(range(256)).translate(None, b'"[]{}')  # every byte but quotes and brackets: deleted


def _text_nesting_over(text: str, limit: int) -> bool:
    """Whether the JSON ``text`` nests more than ``limit`` objects/arrays (what :func:`_depth_over` finds
    on the parsed value, for text that parses), from the brackets outside its strings.

    In chunks (cut after a run of backslashes and the character it escapes): escaped backslash pairs,
    then escaped quotes, are removed, so every quote left delimits a string; only quotes and brackets
    are kept. The quotes' running parity marks what is inside a string; the other brackets' running
    sum is the nesting. About 30 ms a 10 MB file, against 0.3 s for the walk over its 4 million values.
    """
    import numpy as np

    kept = []
    at, n = 0, len(text)
    while at < n:
        end = min(n, at + _SCAN_CHUNK)
        while end < n and text[end - 1] == "\\":
            end += 1
        kept.append(_unescaped(text[at:end].encode("utf-8", "surrogatepass")).translate(None, _KEEP))
        at = end
    marks = np.frombuffer(b"".join(kept), dtype=np.uint8)
    del kept
    quote = marks == ord('"')
    inside = np.bitwise_xor.accumulate(quote.view(np.uint8))  # 1 from an opening quote to its closing one
    outside = marks[(inside == 0) & ~quote]
    step = np.where((outside == ord("[")) | (outside == ord("{")), 1, -1).astype(np.int32)
    return bool(len(step)) and int(np.cumsum(step).max()) > limit


def _unescaped(raw: bytes) -> bytes:
    """``raw`` without its escape pairs (a backslash and the character it escapes): every quote left
    delimits a string. Escapes are rare in a catalog, so the text is split at its backslashes (a C
    scan) and the escaped characters are dropped piece by piece; a text dense with them (``\\u``
    escapes everywhere) removes the escaped backslashes, then the escaped quotes, in two C passes."""
    count = raw.count(b"\\")
    if count == 0:
        return raw
    if count > _SPLIT_ESCAPES:
        return raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    parts = raw.split(b"\\")
    out = [parts[0]]
    i, n = 1, len(parts)
    while i < n:
        if not parts[i] and i + 1 < n:  # two backslashes in a row: the second is the escaped character
            out.append(parts[i + 1])
            i += 2
        else:
            out.append(parts[i][1:])
            i += 1
    return b"".join(out)


_SPLIT_ESCAPES = 4096


def _depth_over(data: Any) -> bool:
    """Whether parsed JSON nests more than :data:`MAX_DEPTH` objects/arrays (no recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
    return False


def _place(text: str, offset: int | None, line: int | None = None) -> str | None:
    if offset is None:
        return None if line is None else f"line {line}"
    row = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {row if line is None else line} column {col}"


def parse_jsonl(text: str, file: str, *, error: ErrorClass = DataError) -> list[tuple[int, Any]]:
    """``(line number, object)`` for each non-blank line; a bad line names its number."""
    with bulk(text):
        return _jsonl_rows(text, file, error)


def _jsonl_rows(text: str, file: str, error: ErrorClass) -> list[tuple[int, Any]]:
    rows = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = loads_json(raw, file, error=error, line=n)
        except json.JSONDecodeError as exc:
            raise error(f"invalid JSON: {exc.msg}", file=file, where=f"line {n} column {exc.colno}") from None
        if not isinstance(obj, dict):
            raise error("each line must be a JSON object", file=file, where=f"line {n}")
        rows.append((n, obj))
    return rows


# --------------------------------------------------------------------------- YAML


def parse_yaml(text: str, file: str | None, *, error: ErrorClass = DataError, prefix: str = "invalid YAML") -> Any:
    """One YAML document through the safe loader, checked before it is built.

    The node graph is composed first (libyaml bounds its own nesting at 1000), then
    measured — depth, aliases expanded, alias cycles, duplicate and non-string keys —
    and only then constructed, with non-finite floats and non-JSON types refused.
    """
    import yaml

    loader = _strict_loader(error)(text)
    loader.file = file
    try:
        with bulk(text):  # a node graph, then its values
            node = loader.get_single_node()
            if node is None:
                return None
            _check_graph(node, file, error)
            return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else None
        problem = getattr(exc, "problem", None) or "not a YAML document"
        raise error(f"{prefix}: {problem}", file=file, where=where) from None
    finally:
        loader.dispose()


def safe_yaml(text: str) -> Any:
    """YAML text shipped with tooldisc (or a caller's string), with the same hardening."""
    return parse_yaml(text, None)


def _mark(node: Any) -> str:
    m = node.start_mark
    return f"line {m.line + 1} column {m.column + 1}"


def _check_graph(root: Any, file: str | None, error: ErrorClass) -> None:
    """Depth, expanded size, alias cycles and keys of a composed YAML graph, unexpanded.

    An alias is the *same* node object reached twice, so sizes and heights are
    computed once per node (memoised by identity) in an iterative post-order walk.
    """
    import yaml

    mapping, sequence = yaml.MappingNode, yaml.SequenceNode
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    open_: set[int] = set()
    written = 0
    # (node, its children, whether they are done); scalars never enter the stack.
    stack: list[tuple[Any, list[Any], bool]] = []

    def enter(node: Any) -> None:
        nonlocal written
        key = id(node)
        if key in open_:
            raise error("a YAML alias refers to a node that contains it (a recursive structure)",
                        file=file, where=_mark(node))
        if isinstance(node, mapping):
            _check_keys(node, file, error)
            kids = [n for pair in node.value for n in pair]
        else:
            kids = list(node.value)
        written += 1
        open_.add(key)
        stack.append((node, kids, True))
        for k in kids:
            if isinstance(k, mapping | sequence):
                if id(k) not in size:
                    stack.append((k, [], False))
            else:
                written += 1

    if not isinstance(root, mapping | sequence):
        return
    enter(root)
    while stack:
        node, kids, done = stack.pop()
        key = id(node)
        if not done:
            if key not in size:
                enter(node)
            continue
        open_.discard(key)
        total, inner = 1, 0
        for k in kids:
            kk = id(k)
            if kk in size:
                total += size[kk]
                if height[kk] > inner:
                    inner = height[kk]
            else:  # a scalar (or a scalar reached through an alias)
                total += 1
        size[key] = total
        height[key] = inner + 1
        if inner + 1 > MAX_DEPTH:
            raise error(f"nested deeper than {MAX_DEPTH} levels", file=file, where=_mark(node))
    expanded = size[id(root)]
    limit = max(ALIAS_FLOOR, ALIAS_EXPANSION * written)
    if expanded > limit:
        raise error(f"YAML aliases expand {written} nodes written to {expanded}; the limit is {limit} "
                    "(an alias bomb?)", file=file, where=_mark(root))


_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _check_keys(node: Any, file: str | None, error: ErrorClass) -> None:
    """Keys of one mapping as written: strings (as in JSON), each at most once.

    Checked on the composed nodes, before merge keys (``<<``) are flattened in, so a
    key a merge supplies may still be overridden, as YAML intends.
    """
    seen: dict[str, Any] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:
            continue
        if key_node.tag != _STR_TAG:
            shown = repr(key_node.value)[:40] if isinstance(key_node.value, str) else "a collection"
            raise error(f"mapping keys must be strings (as in JSON); got {shown}", file=file, where=_mark(key_node))
        if key_node.value in seen:
            raise error(f"duplicate key {key_node.value!r} (first at {_mark(seen[key_node.value])})",
                        file=file, where=_mark(key_node))
        seen[key_node.value] = key_node


_KEPT_TAG_CHARS = 64  # plain scalars up to this long have their tag kept (longer ones are prose: rarely repeated)


@cache
def _strict_loader(error: ErrorClass) -> Any:
    """A subclass of libyaml's safe loader (PyYAML's when libyaml is absent), built once."""
    import yaml
    from yaml.constructor import SafeConstructor
    from yaml.nodes import ScalarNode

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    assert not base.yaml_path_resolvers  # what makes a tag a function of the scalar alone (resolve below)

    class StrictLoader(base):  # type: ignore[valid-type, misc]
        file: str | None = None

        def __init__(self, stream: Any) -> None:
            super().__init__(stream)
            self.tags: dict[tuple[str, Any], str] = {}

        def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
            """The resolver's tag, kept per short plain scalar: it is a function of its arguments (a safe
            loader has no path resolvers), and a catalog repeats ``type``, ``string`` and ``object`` a
            hundred thousand times; each is otherwise matched against the implicit resolvers' patterns
            again (0.2 s of a 10,000-tool YAML parse)."""
            if kind is not ScalarNode or len(value) > _KEPT_TAG_CHARS:
                return super().resolve(kind, value, implicit)  # type: ignore[no-any-return]
            key = (value, implicit)
            tag = self.tags.get(key)
            if tag is None:
                tag = self.tags[key] = super().resolve(kind, value, implicit)
            return tag  # type: ignore[no-any-return]

        def fail(self, message: str, node: Any) -> None:
            raise error(message, file=self.file, where=_mark(node))

        def construct_yaml_float(self, node: Any) -> float:
            value = SafeConstructor.construct_yaml_float(self, node)
            if not math.isfinite(value):
                self.fail(f"{node.value!r} is not a finite number (NaN and infinity are refused)", node)
            return value

        def construct_yaml_int(self, node: Any) -> int:
            try:
                return SafeConstructor.construct_yaml_int(self, node)
            except ValueError:
                self.fail(f"integer {node.value[:40]!r}… is too long", node)
                raise  # unreachable: fail raises

        def construct_as_string(self, node: Any) -> str:
            return self.construct_scalar(node)

        def refuse_type(self, node: Any) -> None:
            self.fail(f"YAML type {node.tag.rsplit(':', 1)[-1]!r} has no JSON equivalent", node)

    StrictLoader.add_constructor("tag:yaml.org,2002:float", StrictLoader.construct_yaml_float)
    StrictLoader.add_constructor("tag:yaml.org,2002:int", StrictLoader.construct_yaml_int)
    StrictLoader.add_constructor("tag:yaml.org,2002:timestamp", StrictLoader.construct_as_string)
    for tag in ("binary", "set", "omap", "pairs"):
        StrictLoader.add_constructor(f"tag:yaml.org,2002:{tag}", StrictLoader.refuse_type)
    return StrictLoader
