"""A large JSON catalog parsed from its bytes piece by piece: never the whole text and the whole document at once.

A 100,000-tool catalog is 130 MB of UTF-8; decoded, Persian text makes it a 260 MB string, and the
parsed document is 370 MB more: parsing the whole text held both (790 MB). Here the bytes are
decoded a chunk at a time and the root object's values — above all the big array (``tools``), element
by element — are parsed from a window of text that is dropped as it is consumed, so the peak is the
bytes and the document.

The same parser decides: every value goes through the hardened decoder of
:mod:`tooldisc.documents` (NaN and infinities, long numbers refused by its hooks; a key given twice
found by its colon count, the hooked parse deciding any doubt: :func:`tooldisc.documents.keys_unique`),
nesting is measured on each element's text as the whole-text parse measures it, and a lone surrogate
escape is looked for the same way. Anything this reader does not take plainly — a
refusal, a syntax error, a root that is not an object, a key given twice, bytes that are not UTF-8 —
makes it answer None, and the caller parses the whole text as before, which refuses the document with
its message and place. So it returns exactly what that parse returns, or nothing
(``tests/discovery/test_json_stream.py`` compares them on generated documents cut at every size).
"""

from __future__ import annotations

import codecs
import io
import json
from collections.abc import Callable
from json.decoder import WHITESPACE, scanstring
from typing import Any

from tooldisc import documents

CHUNK = 1 << 22  # bytes decoded at a time (4 MiB)
LARGE = 1 << 24  # the catalog loader streams files from this size on (16 MiB): below it the whole text is cheap


class _Window:
    """The decoded text not yet consumed, grown a chunk at a time from the bytes."""

    def __init__(self, read: Callable[[int], bytes], chunk: int):
        self.read, self.chunk, self.eof = read, chunk, False
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.text, self.pos = "", 0

    def more(self) -> bool:
        """Append the next chunk, dropping what was consumed; False at the end of the bytes."""
        if self.eof:
            return False
        piece = self.read(self.chunk)
        self.eof = not piece
        text = self.decoder.decode(piece, final=self.eof)  # UnicodeDecodeError: give up
        self.drop()
        self.text += text
        return True

    def drop(self) -> None:
        self.text, self.pos = self.text[self.pos:], 0

    def skip(self) -> str:
        """Skip whitespace; the next character ("" at the end of the document)."""
        while True:
            self.pos = WHITESPACE.match(self.text, self.pos).end()
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.more():
                return ""


class _GiveUp(Exception):
    """The whole-text parse decides (and words) this document."""


def loads_large_json(raw: bytes | Callable[[int], bytes], *, array_key: str = "tools", each: Callable[[Any], Any] | None = None,
                     chunk: int = CHUNK) -> Any | None:
    """The JSON document of ``raw`` (bytes, or a function reading the next ``n`` bytes, ``b""`` at the end) as
    :func:`tooldisc.documents.loads_json` returns it for its text, parsed piece by piece (see
    the module docstring), or None: anything the whole-text parse must decide. ``each`` is called with
    every element of the array as it is parsed and returns what the array holds in its place (the catalog
    loader shares equal keys, texts and schemas there, before the next one is parsed)."""
    read = io.BytesIO(raw).read if isinstance(raw, bytes) else raw
    try:
        return _parse(_Window(read, chunk), array_key, each)
    except (_GiveUp, UnicodeDecodeError, RecursionError, ValueError, documents._Refused):
        return None


def _scan(w: _Window, scan: Any, after: str) -> tuple[Any, int]:
    """The value at the window's position and where it ends, taken only once the window holds the
    character after it (one of ``after``, or the end of the bytes): a number cut by the window's end
    (``1`` of ``1.5``) would parse as another number."""
    while True:
        try:
            value, end = scan(w.text, w.pos)
        except (StopIteration, json.JSONDecodeError):
            if w.more():
                continue
            raise _GiveUp from None
        nxt = WHITESPACE.match(w.text, end).end()
        if (nxt == len(w.text) or w.text[nxt] not in after) and w.more():
            continue
        return value, end


def _value(w: _Window, scan: Any) -> Any:
    """One value of the root object at the window's position."""
    value, end = _scan(w, scan, ",}")
    _check_text(w.text, documents.MAX_DEPTH - 1, w.pos, end)
    w.pos = end
    return value


def _check_text(text: str, limit: int, start: int = 0, end: int | None = None) -> None:
    """What the whole-text parse refuses after parsing, in ``text[start:end]`` (one value, read where it
    lies: no copy unless a quick count finds a candidate): nesting past ``limit`` below this piece's level,
    a lone surrogate escape. The nesting needs more than ``limit`` brackets, the escape a ``\\u``."""
    end = len(text) if end is None else end
    if text.find("\\u", start, end) >= 0 and documents._LONE_SURROGATE.search(text[start:end]):
        raise _GiveUp
    if text.count("[", start, end) + text.count("{", start, end) > limit and \
            documents._text_nesting_over(text[start:end], limit):
        raise _GiveUp


def _key(w: _Window) -> str:
    while True:
        try:
            key, end = scanstring(w.text, w.pos + 1, True)
        except json.JSONDecodeError:
            if w.more():
                continue
            raise _GiveUp from None
        _check_text(w.text, 0, w.pos, end)
        w.pos = end
        return key


def _parse(w: _Window, array_key: str, each: Callable[[Any], Any] | None) -> dict[str, Any]:
    scan = documents._strict_decoder().scan_once
    if w.skip() != "{":
        raise _GiveUp
    w.pos += 1
    out: dict[str, Any] = {}
    if w.skip() == "}":
        w.pos += 1
    else:
        while True:
            if w.skip() != '"':
                raise _GiveUp
            key = _key(w)
            if key in out or w.skip() != ":":
                raise _GiveUp
            w.pos += 1
            first = w.skip()
            out[key] = _array(w, scan, each) if key == array_key and first == "[" else _value(w, scan)
            sep = w.skip()
            w.pos += 1
            if sep == "}":
                break
            if sep != ",":
                raise _GiveUp
    if w.skip() != "":  # extra data after the document
        raise _GiveUp
    return out


def _array(w: _Window, scan: Any, each: Callable[[Any], Any] | None) -> list[Any]:
    """The array at the window's position, element by element; each element's text is checked (nesting
    below the array's level, surrogates) as it is parsed, and dropped from the window as it moves on.
    Elements are balanced, so nesting measured per element is what the whole array's text gives."""
    w.pos += 1
    items: list[Any] = []
    if w.skip() == "]":
        w.pos += 1
        return items
    limit = documents.MAX_DEPTH - 2
    decoder, dumps = documents.plain_decoder()
    plain = None if decoder is None else decoder.scan_once
    while True:
        w.skip()
        value, end = _scan(w, plain or scan, ",]")
        _check_text(w.text, limit, w.pos, end)
        if plain is not None and not documents.keys_unique(w.text, w.pos, end, value, dumps):
            value, end = scan(w.text, w.pos)  # the hooked parse: refuses a key given twice, or agrees
        if each is not None:
            value = each(value)
        items.append(value)
        w.pos = end
        sep = w.skip()
        if sep == "]":
            w.pos += 1
            return items
        if sep != ",":
            raise _GiveUp
        w.pos += 1
        if w.pos > w.chunk:  # the window stays about one chunk long
            w.drop()
