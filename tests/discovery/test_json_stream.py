"""A large JSON catalog parsed piece by piece returns exactly what the whole-text parse returns, or nothing
(and the whole-text parse then decides); the catalog loader gives the same catalog, findings and errors."""

from __future__ import annotations

import json
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import run_cli
from tests.fuzzing import examples
from tooldisc import documents, json_stream
from tooldisc.discovery.catalog import io as catalog_io
from tooldisc.discovery.catalog.io import load_catalog
from tooldisc.documents import MAX_DEPTH, loads_json
from tooldisc.errors import DataError

TEXT = st.text(alphabet=st.sampled_from([*'ab "\\/\n\t[]{},:', "\u0641", "\u200c", "\U0001f600", "\x00"]),
               max_size=12)
SCALAR = st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False,
                                                                             allow_infinity=False) | TEXT
VALUE = st.recursive(SCALAR, lambda c: st.lists(c, max_size=4) | st.dictionaries(TEXT, c, max_size=4), max_leaves=12)


def _whole(raw: bytes) -> tuple[bool, str | None]:
    """(parsed, the value as JSON text) by the whole-text parse with the duplicate-key hook on every object
    (the oracle: no colon count), or (False, None) when it refuses."""
    try:
        with patch.object(documents, "plain_decoder", lambda: (None, None)):
            return True, json.dumps(loads_json(raw.decode("utf-8-sig")))
    except (ValueError, UnicodeDecodeError, DataError):
        return False, None


@settings(max_examples=examples(1500, local=200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(elements=st.lists(st.from_regex(r"\A[ab:]{0,3}\Z") | st.just("\\u003a"), max_size=4), nested=st.booleans())
def test_the_whole_text_parse_counts_colons_as_the_hook_decides(elements: list[str], nested: bool) -> None:
    """The whole-text parse without the hook (orjson there) refuses and returns what the hooked one does."""
    body = "{" + ", ".join(f'"{k}": "{k}"' for k in elements) + "}"
    text = '{"x": [' + body + "]}" if nested else body
    _, whole = _whole(text.encode())
    try:
        got = json.dumps(loads_json(text))
    except DataError:
        got = None
    assert got == whole


def _stream(raw: bytes, chunk: int) -> str | None:
    got = json_stream.loads_large_json(raw, chunk=chunk)
    return None if got is None else json.dumps(got)


@settings(max_examples=examples(1500, local=200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools=st.lists(VALUE, max_size=6), extra=st.dictionaries(TEXT, VALUE, max_size=3),
       tools_first=st.booleans(), ascii_=st.booleans(), indent=st.sampled_from([None, 0, 2]),
       chunk=st.integers(1, 64), bom=st.booleans())
def test_the_stream_returns_what_the_whole_text_parse_returns(tools, extra, tools_first, ascii_, indent, chunk,
                                                              bom) -> None:
    doc = {"tools": tools, **{k: v for k, v in extra.items() if k != "tools"}}
    if not tools_first:
        doc = {**{k: v for k, v in doc.items() if k != "tools"}, "tools": tools}
    raw = (b"\xef\xbb\xbf" if bom else b"") + json.dumps(doc, ensure_ascii=ascii_, indent=indent).encode()
    ok, whole = _whole(raw)
    got = _stream(raw, chunk)
    if not ok:
        assert got is None
        return
    assert got == whole
    if "\\ud" not in raw.decode("utf-8-sig").lower():  # nothing for the whole-text parse to look at again
        assert got is not None


@settings(max_examples=examples(1500, local=200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from([*'{}[]",:0123456789.e-tfnrul \\"ab', "\ud800", "\\ud800", '"tools"']),
                    max_size=40).map("".join),
       chunk=st.integers(1, 16))
def test_on_any_text_the_stream_never_answers_what_the_whole_parse_refuses(text, chunk) -> None:
    raw = text.encode("utf-8", "surrogatepass")
    ok, whole = _whole(raw)
    got = _stream(raw, chunk)
    assert got is None or (ok and got == whole)


@pytest.mark.parametrize("depth", [MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH + 5])
@pytest.mark.parametrize("where", ["tools", "other"])
def test_nesting_is_refused_at_the_same_depth(depth: int, where: str) -> None:
    deep: object = 1
    for _ in range(depth):
        deep = [deep]
    doc = {"tools": [{"name": "a"}, deep] if where == "tools" else [], "x": deep if where == "other" else 0}
    raw = json.dumps(doc).encode()
    ok, whole = _whole(raw)
    for chunk in (3, 1 << 20):
        assert _stream(raw, chunk) == (whole if ok else None)
    assert ok == (depth + 2 + (1 if where == "tools" else 0) <= MAX_DEPTH + 1)


def test_duplicate_keys_nan_and_extra_data_go_to_the_whole_parse() -> None:
    for text in ['{"tools": [{"a": 1, "a": 2}]}', '{"tools": [], "tools": []}', '{"tools": [NaN]}',
                 '{"tools": [1e999]}', '{"tools": []} x', '{"tools": [1,]}', '[1, 2]', '{"tools": ["\\ud800"]}',
                 '{"tools": [12', '{"tools": [1]}\n\n', '{"tools": [-0.0, 1.5e3, true, null]}']:
        raw = text.encode()
        ok, whole = _whole(raw)
        for chunk in (1, 2, 5, 1 << 20):
            got = _stream(raw, chunk)
            assert got is None if not ok else got in (whole, None), (text, chunk)
    assert _stream(b'{"tools": [1]}\n\n', 1) == "{\"tools\": [1]}"
    assert _stream(b"\xff{}", 4) is None  # not UTF-8


# Raw JSON text whose objects may give a key twice, with colons in keys and strings, written plainly or
# escaped (\u003a hides a colon from a count of the text): the element parser without the duplicate-key
# hook counts colons instead, and must refuse exactly what the hooked parse refuses.
_KEY = st.sampled_from(["a", "b", "a:b", ":", "\\u003a", "c\\u003A", "\\u0061", "\\\\u003a", "\u0641:"])
_SCALAR_TEXT = st.sampled_from(['1', '2.5', '-0', 'true', 'null', '"x"', '":"', '"a:b:c"', '"\\u003a"',
                                '"\\u003A:"', '"\\":"', '12345678901234567890123', '"\u0641"'])
_RAW = st.recursive(_SCALAR_TEXT, lambda inner: (
    st.lists(st.tuples(_KEY, inner), max_size=4).map(lambda pairs: "{" + ",".join(f'"{k}":{v}' for k, v in pairs) + "}")
    | st.lists(inner, max_size=3).map(lambda items: "[" + ",".join(items) + "]")), max_leaves=10)


@settings(max_examples=examples(3000, local=300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(elements=st.lists(_RAW, min_size=1, max_size=4), chunk=st.sampled_from([1, 3, 7, 1 << 20]))
def test_a_key_given_twice_is_refused_without_the_hook_as_with_it(elements: list[str], chunk: int) -> None:
    raw = ('{"tools": [' + ", ".join(elements) + "]}").encode()
    ok, whole = _whole(raw)
    got = _stream(raw, chunk)
    assert got == (whole if ok else None), raw


def test_the_colon_count_tells_a_key_given_twice() -> None:
    decoder, dumps = documents.plain_decoder()
    if decoder is None:
        pytest.skip("orjson is not installed: every element goes through the hooked parse")
    for text, unique in [('{"a": 1, "b": "x:y"}', True), ('{"a": 1, "a": "x:y"}', False),
                         ('{"a:": {"b": 1}, "a:": 2}', False), ('[{"k": 1}, {"k": 2}]', True),
                         ('{"a": "\\u003a", "a": 1}', False), ('{"a": "\\u003a"}', False)]:
        value, end = decoder.scan_once(text, 0)
        assert documents.keys_unique(text, 0, end, value, dumps) is unique, text


def _big_catalog(tmp_path: Path, tools: list[dict]) -> Path:
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"catalog_version": "1", "tools": tools}, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def small_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog_io, "LARGE", 1)  # stream every JSON catalog in these tests


def test_the_loader_streams_large_json_to_the_same_catalog(tmp_path: Path, small_large) -> None:
    schema = {"type": "object", "properties": {"id": {"type": "integer"}}}
    tools = [{"name": f"t{i}", "description": "فهرست " * (i % 3), "side_effect": "none",
              "parameters": dict(schema), "roles": ["a"]} for i in range(50)]
    tools.append({"name": "q", "side_effect": "none", "parameters": {"properties": {"p": {"pattern": "(?=x)"}}}})
    path = _big_catalog(tmp_path, tools)
    streamed = load_catalog(path)
    whole = catalog_io.build_catalog(json.loads(path.read_text(encoding="utf-8")), source=str(path), plain=True)
    assert [(t, t.definition_hash, t.quarantine) for t in streamed.tools] == \
        [(t, t.definition_hash, t.quarantine) for t in whole.tools]
    assert streamed.warnings == whole.warnings and streamed.hash == whole.hash
    assert len({id(t.parameters) for t in streamed.tools}) == 2  # equal schemas are one object from the parse on


def test_the_loader_words_a_bad_large_file_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.json"
    cases = [(b'{"tools": [{"name": "a"}, {"name": "b", "name": "c"}]}', {}, "duplicate key 'name'"),
             (b'{"tools": [{"name": "\xff"}]}', {}, r"not UTF-8 text \(byte 21\)"),
             (b'{"tools": [{"name": "a"}]}', {"max_bytes": 10}, "over the limit of 10"),
             (b'{"tools": [{"name": "a"}]', {}, "invalid JSON")]
    for raw, kwargs, words in cases:
        path.write_bytes(raw)
        messages = []
        for large in (1, 1 << 40):  # streamed, then read whole as before
            monkeypatch.setattr(catalog_io, "LARGE", large)
            with pytest.raises(DataError, match=words) as refused:
                load_catalog(path, **kwargs)
            messages.append(str(refused.value))
        assert messages[0] == messages[1]


@settings(max_examples=examples(300, local=60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tools=st.lists(st.fixed_dictionaries({}, optional={
    "name": TEXT, "roles": st.lists(st.sampled_from(["owner", "admin", ""]), max_size=3),
    "parameters": st.sampled_from([{"type": "object"}, {"type": "object", "properties": {}}, None]),
    "namespace": st.sampled_from(["a", "b"]), "x-extra": VALUE}), max_size=6), chunk=st.integers(1, 64))
def test_what_each_returns_is_what_the_array_holds(tools: list[dict], chunk: int) -> None:
    """The loader's hook hands back a new record with shared keys and values: the document is the one the
    whole-text parse gives, and equal keys, roles and schemas of different tools (and the strings inside
    different schemas) are one object."""
    from tooldisc.discovery.catalog import SharedValues, share_parsed

    raw = json.dumps({"tools": tools}).encode()
    written: dict = {}
    strings = SharedValues()
    got = json_stream.loads_large_json(raw, each=lambda tool: share_parsed(tool, written, strings), chunk=chunk)
    assert json.dumps(got) == _whole(raw)[1]
    firsts: dict = {}  # the first equal string met
    schemas: dict = {}  # the first equal schema met, by its text
    for tool in got["tools"]:
        for key, value in tool.items():
            assert firsts.setdefault(key, key) is key
            if key == "parameters" and value is not None:
                assert schemas.setdefault(json.dumps(value), value) is value
                assert all(firsts.setdefault(k, k) is k and firsts.setdefault(v, v) is v
                           for k, v in value.items() if type(v) is str)  # inside distinct schemas too
            if key in ("roles", "namespace"):
                assert all(firsts.setdefault(item, item) is item for item in ([value] if key == "namespace" else value))


_OK_TOOL = {"name": "list_invoices", "side_effect": "none", "parameters": {"type": "object"}}


@pytest.mark.parametrize(("late", "words"), [
    ('{"name": "b", "side_effect": "none", "side_effect": "delete"}', "duplicate key 'side_effect'"),
    ('{"name": "b", "side_effect": "none", "superuser": true}', "superuser"),
    ('{"name": "b", "side_effect": "none", "roles": 5}', "tools[1].roles"),
    ('{"name": "b", "side_effect": "none", "parameters": {"type": "object", "required": [], "required": ["x"]}}',
     "duplicate key 'required'"),
])
def test_a_streamed_file_with_bad_input_fails_closed_through_the_real_command(tmp_path: Path, late: str,
                                                                               words: str) -> None:
    """A file past the streaming size (whitespace pads it, so it is cheap to write): a key given twice, an
    unknown key, a wrong type — in a tool the stream reads after a good one — is one line naming the file,
    exit 2, no traceback, as for a small file."""
    path = tmp_path / "big.json"
    with path.open("w", encoding="utf-8") as fh:
        fh.write('{"catalog_version": "1", "tools": [' + json.dumps(_OK_TOOL) + ",")
        fh.write(" " * json_stream.LARGE)
        fh.write(late + "]}")
    assert path.stat().st_size >= catalog_io.LARGE
    done = run_cli("discover", "list invoices", "--catalog", str(path), "--no-cache")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and words in lines[0], done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_an_unreadable_large_catalog_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A path ending in .json that is a directory: the streaming check reads its size first, and refuses."""
    path = tmp_path / "big.json"
    path.mkdir()
    done = run_cli("discover", "list invoices", "--catalog", str(path), "--no-cache")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and str(path) in done.stderr
    assert "Traceback" not in done.stderr
