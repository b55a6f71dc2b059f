"""The faster load path decides as the plain one did: nesting, hashes, sanitising, the catalog's schema check."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzzing import examples
from tooldisc import documents
from tooldisc.discovery.catalog import (
    _catalog_schema,
    _jsonschema_errors,
    check_catalog,
    definition_hash,
    tool_from_dict,
    validate_catalog_data,
)
from tooldisc.discovery.text import _CONTROL, sanitize
from tooldisc.errors import DataError

# Text that JSON must escape or that looks like structure: quotes, backslashes, brackets, keys.
_nasty = st.text(alphabet=['"', "\\", "[", "]", "{", "}", ",", ":", "a", "ü", "\u202e", "\n", "\x00", "ی"],
                 max_size=8)
_json = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-3, 3), _nasty),
                     lambda inner: st.one_of(st.lists(inner, max_size=3),
                                             st.dictionaries(_nasty, inner, max_size=3)), max_leaves=12)


@st.composite
def nested(draw: st.DrawFn) -> object:
    """A value nested about MAX_DEPTH levels deep, with nasty siblings at every level."""
    value = draw(_json)
    small = st.one_of(_nasty, st.lists(_nasty, max_size=2), st.dictionaries(_nasty, _nasty, max_size=1))
    for _ in range(draw(st.integers(documents.MAX_DEPTH - 3, documents.MAX_DEPTH + 2))):
        sibling = draw(small)
        value = [sibling, value] if draw(st.booleans()) else {draw(_nasty) + "k": sibling, draw(_nasty): value}
    return value


@settings(max_examples=examples(500, local=50), deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.data_too_large])
@given(nested(), st.booleans(), st.integers(1, 9))
def test_nesting_on_the_text_equals_the_walk(value: object, ascii_only: bool, chunk: int) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    expected = isinstance(value, dict | list) and documents._depth_over(value)
    assert documents._text_nesting_over(text, documents.MAX_DEPTH) == expected
    saved = documents._SCAN_CHUNK
    documents._SCAN_CHUNK = chunk  # chunks cut inside escapes
    try:
        assert documents._text_nesting_over(text, documents.MAX_DEPTH) == expected
    finally:
        documents._SCAN_CHUNK = saved


def test_large_documents_are_refused_for_nesting_as_before(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "_TEXT_SCAN_CHARS", 1)  # the text scan on a small document
    deep = "[" * 101 + "]" * 101
    with pytest.raises(DataError, match="nested deeper than 100 levels"):
        documents.loads_json(deep)
    ok = "[" * 100 + "]" * 100
    assert documents.loads_json(ok) is not None
    tricky = json.dumps({"a": "[" * 200, "b": [[["\\\"[[["]]]})
    assert documents.loads_json(tricky) == json.loads(tricky)


_tool = st.fixed_dictionaries({"name": st.text(alphabet="abc_.ی", min_size=1, max_size=6)}, optional={
    "description": _nasty, "capability": _nasty, "risk_level": _nasty, "version": st.one_of(_nasty, st.integers()),
    "namespace": _nasty, "aliases": st.lists(_nasty, max_size=3), "keywords": st.lists(_nasty, max_size=2),
    "roles": st.lists(st.text(alphabet="ab", min_size=1, max_size=2), max_size=2),
    "side_effect": st.sampled_from(["none", "write", None]), "enabled": st.booleans(),
    "parameters": st.dictionaries(_nasty, _json, max_size=3), "compact_parameters": st.dictionaries(_nasty, _json, max_size=2),
    "output_schema": st.dictionaries(_nasty, _json, max_size=2)})


@settings(max_examples=examples(1000, local=100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tool)
def test_joined_definition_hash_equals_the_canonical_one(raw: dict) -> None:
    texts: dict[int, bytes] = {}
    from tooldisc.discovery.catalog import canonical_json

    for key in ("parameters", "compact_parameters", "output_schema"):
        if isinstance(raw.get(key), dict):
            texts[id(raw[key])] = canonical_json(raw[key]).encode("utf-8")
    tool = tool_from_dict(raw)
    assert definition_hash(tool, texts) == definition_hash(tool) == tool.definition_hash


def test_the_json_module_alone_gives_the_same_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without orjson (or for a value it refuses) the json module writes every text: the same hashes."""
    from tooldisc.discovery.catalog import canonical_json

    raw = {"name": "a", "description": "x\u200c\"y\\", "roles": ["r"], "aliases": ["\u0641"], "parameters": {"b": 1.5, "a": [True]}}
    texts = {id(raw["parameters"]): canonical_json(raw["parameters"]).encode("utf-8")}
    fast = definition_hash(tool_from_dict(raw), texts)
    monkeypatch.setattr("tooldisc.discovery.catalog.native_dumps", lambda: None)
    assert definition_hash(tool_from_dict(raw), texts) == fast == definition_hash(tool_from_dict(raw))


_written = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([1.0, -0.0, 0.0, 2**70]),
                                  _nasty), lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                   st.dictionaries(_nasty, inner, max_size=3)),
                        max_leaves=10)


@settings(max_examples=examples(1500, local=200), deadline=None)
@given(_written, _written)
def test_written_key_tells_values_apart_exactly_as_their_json_text(a: object, b: object) -> None:
    """Equal schemas are shared by written_key (orjson's bytes): equal exactly when the json module's text is."""
    from tooldisc.discovery.catalog import _exact_json, written_key

    assert (written_key(a) == written_key(b)) == (_exact_json(a) == _exact_json(b))
    assert written_key(a) == written_key(json.loads(json.dumps(a)))


@given(st.text(max_size=30))
def test_sanitize_skips_only_text_the_regex_would_not_change(text: str) -> None:
    assert sanitize(text, 20) == _CONTROL.sub(" ", text)[:20]


def _reference_schema_issues(doc: dict) -> list[tuple[str, str]]:
    import jsonschema

    validator = jsonschema.Draft202012Validator(_catalog_schema())
    found = sorted(_jsonschema_errors(validator, doc, ()), key=lambda pe: [str(p) for p in pe[0]])
    return [(e.validator, ".".join(map(str, path))) for path, e in found]


def test_catalog_schema_errors_keep_one_runs_order_across_tools() -> None:
    """Findings on failing tools only, sorted as one jsonschema run over the document sorts them
    (by path as text: tools[10] before tools[2])."""
    tools = [{"name": f"t{i}", "side_effect": "none"} for i in range(12)]
    tools[2]["roles"] = "admin"
    tools[10]["enabled"] = "yes"
    tools[10]["name"] = 5
    doc = {"catalog_version": {"x": 1}, "tools": tools}
    issues = [i for i in validate_catalog_data(doc) if i.level == "error"]
    schema_paths = [i.path for i in issues if re.match(r"(tools\[\d+\]|catalog_version)", i.path)]
    assert schema_paths[:4] == ["catalog_version", "tools[10].enabled", "tools[10].name", "tools[2].roles"]
    assert [p for _, p in _reference_schema_issues(doc)] == ["catalog_version", "tools.10.enabled", "tools.10.name",
                                                              "tools.2.roles"]
    issues_plain, catalog = check_catalog(doc, plain=True)
    assert catalog is None and [i.path for i in issues_plain if i.level == "error"] == [i.path for i in issues]


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/statm"), reason="reads the resident size from /proc")
def test_kept_schema_keys_do_not_pin_the_block_they_were_written_into() -> None:
    """A catalog of 100,000 distinct schemas keeps 100,000 keys (share_parsed, the checks): orjson's bytes each
    pinned the 4 KB block it wrote into (400 MB), so written_key returns a copy. Measured in a fresh process."""
    import subprocess
    import sys

    code = (
        "from tooldisc.discovery.catalog import written_key\n"
        "def rss(): return int(open('/proc/self/statm').read().split()[1]) * 4096\n"
        "before = rss()\n"
        "kept = [written_key({'type': 'object', 'properties': {f'p{i}': {'type': 'string'}}}) for i in range(50000)]\n"
        "print((rss() - before) // len(kept))\n"
    )
    per_key = int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert per_key < 1024  # about 100 bytes a key and its share of the list; 4 KB when pinned
