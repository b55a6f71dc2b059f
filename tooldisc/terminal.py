"""Text made safe to print: control, bidi and line-breaking characters shown as codes.

Tool names, gold queries, file paths and error details come from documents a user did
not write. Printed raw, an ANSI escape repaints the terminal, a newline prints a fake
table row ("OK"), and a direction override makes a line read differently from its
bytes. Every CLI table, echo and error line passes untrusted text through
:func:`escape`, and error lines through :func:`clip` so one never exceeds its budget.
"""

from __future__ import annotations

import unicodedata

# Categories shown as codes: controls (C0, DEL, C1), format characters (bidi
# overrides/isolates, marks, zero-width space, BOM), line/paragraph separators,
# surrogates, private use and unassigned code points. ZWNJ and ZWJ are format
# characters too, but Persian words need them and they cannot move text.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
_KEPT = frozenset({"\u200c", "\u200d"})
ELLIPSIS = "…"


def _code(ch: str) -> str:
    n = ord(ch)
    if n < 0x100:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def _unsafe(ch: str) -> bool:
    return ch not in _KEPT and unicodedata.category(ch) in _ESCAPED_CATEGORIES


def escape(text: object) -> str:
    """``text`` with every unsafe character written as ``\\x1b`` / ``\\u202e`` (None → "").

    Tab and newline are escaped too: a value is printed on one line, so it can never
    start a row of its own. Printable text (Persian included) passes unchanged.
    """
    s = "" if text is None else str(text)
    if s.isprintable():  # fast path: no control, format or separator character at all
        return s
    return "".join(_code(c) if _unsafe(c) else c for c in s)


def escape_json(text: str) -> str:
    """Serialized JSON with every unsafe character inside its strings as ``\\uXXXX``.

    ``json.dumps(ensure_ascii=False)`` escapes only C0 controls; DEL, C1 controls
    and bidi overrides would reach the terminal raw. The result is the same JSON
    value, and byte-identical whenever nothing needed escaping. Newlines outside
    strings are the layout (inside strings JSON has already escaped them).
    """
    if all(line.isprintable() for line in text.split("\n")):
        return text
    return "\n".join(line if line.isprintable() else "".join(_json_code(c) if _unsafe(c) else c for c in line)
                     for line in text.split("\n"))


def _json_code(ch: str) -> str:
    n = ord(ch)
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"


def is_clean(text: str) -> bool:
    """Whether ``text`` holds no character :func:`escape` would rewrite."""
    return text.isprintable() or not any(_unsafe(c) for c in text)


def clip(text: str, max_bytes: int) -> str:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes, ending in "…" when cut.

    Cuts on a character boundary, so the result is always valid UTF-8.
    """
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= max_bytes:
        return text
    budget = max(0, max_bytes - len(ELLIPSIS.encode("utf-8")))
    return raw[:budget].decode("utf-8", "ignore") + ELLIPSIS


def holds_unicode(stream: object) -> bool:
    """Whether ``stream``'s encoding can write every character (a UTF encoding; a stream naming none is
    taken as UTF-8)."""
    import codecs

    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False
