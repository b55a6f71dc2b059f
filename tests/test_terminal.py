"""Terminal safety: escaping untrusted text, the 300-byte error line, JSON that stays JSON."""

from __future__ import annotations

import json

import pytest

from tooldisc.errors import MAX_ERROR_LINE, DataError, error_line
from tooldisc.terminal import clip, escape, escape_json, is_clean


@pytest.mark.parametrize(("raw", "shown"), [
    ("list_invoices", "list_invoices"),
    ("فاکتورهای پرداخت‌نشده", "فاکتورهای پرداخت‌نشده"),  # ZWNJ kept: Persian needs it
    ("a\x1b[2Jb", "a\\x1b[2Jb"),
    ("row\nOK: fake", "row\\x0aOK: fake"),
    ("tab\there", "tab\\x09here"),
    ("\x9b31m", "\\x9b31m"),  # C1 CSI
    ("abc\u202eevil", "abc\\u202eevil"),
    ("\u2066iso\u2069", "\\u2066iso\\u2069"),
    ("line\u2028sep", "line\\u2028sep"),
    ("bom\ufeff", "bom\\ufeff"),
    ("lone\ud800", "lone\\ud800"),
    (None, ""),
])
def test_escape_shows_every_unsafe_character_as_a_code(raw, shown: str) -> None:
    assert escape(raw) == shown
    assert is_clean(shown)
    assert escape(shown) == shown  # idempotent: escaping twice changes nothing


def test_clip_counts_utf8_bytes_and_never_splits_a_character() -> None:
    assert clip("abc", 3) == "abc"
    cut = clip("م" * 400, 300)
    assert len(cut.encode("utf-8")) <= 300 and cut.endswith("…")
    assert clip("x" * 301, 300) == "x" * 297 + "…"


def test_escape_json_keeps_the_value_and_hides_the_codes() -> None:
    value = {"name": "a\u202eb", "c1": "\x9b", "ok": "فاکتور", "nl": "x\ny"}
    text = json.dumps(value, ensure_ascii=False, indent=2)
    safe = escape_json(text)
    assert json.loads(safe) == value
    assert "\u202e" not in safe and "\x9b" not in safe and "فاکتور" in safe
    plain = json.dumps({"a": "b"}, indent=2)
    assert escape_json(plain) is plain  # byte-identical when nothing needs escaping


def test_the_error_line_is_one_escaped_line_of_at_most_300_bytes() -> None:
    err = DataError("got '" + "\x1b[31m" + "x" * 10_000 + "'\nOK", file="cat\nalog.yaml", where="tools[0]")
    line = error_line(err)
    assert len(line.encode("utf-8")) <= MAX_ERROR_LINE and line.endswith("…")
    assert line.startswith("error: cat\\x0aalog.yaml: tools[0]: got '\\x1b[31mxxx")
    assert "\n" not in line and "\x1b" not in line


def test_a_long_file_name_keeps_its_tail_so_the_message_still_shows() -> None:
    err = DataError("duplicate key 'a'", file="/very" * 100 + "/catalog.yaml", where="line 3 column 1")
    line = error_line(err)
    assert len(line.encode("utf-8")) <= MAX_ERROR_LINE
    assert line.startswith("error: …") and line.endswith("/catalog.yaml: line 3 column 1: duplicate key 'a'")


def test_a_two_gigabyte_message_costs_nothing_to_render() -> None:
    err = DataError("x" * 50_000_000)
    assert len(error_line(err).encode("utf-8")) == MAX_ERROR_LINE
