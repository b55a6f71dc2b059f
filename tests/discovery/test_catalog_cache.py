"""The on-disk cache of validated catalog records: cached and fresh loads give the same records, findings
and offers; a damaged, foreign or stale entry is rebuilt, never trusted; a bad catalog is never stored."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import invoke_cli
from tests.fuzzing import examples
from tooldisc.discovery.catalog import TOOL_FIELDS, Catalog
from tooldisc.discovery.catalog import cache as catalog_cache
from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog
from tooldisc.discovery.context import build_context
from tooldisc.discovery.indexes.cache import IndexCache
from tooldisc.discovery.pipeline import Discoverer
from tooldisc.errors import DataError

ROLES = ["admin", "accountant", "clerk", "viewer"]
PERMS = ["invoices.read", "invoices.write", "stock.read", "reports.export"]
WORDS = ["list", "invoices", "delete", "customer", "export", "stock", "فاکتور", "حذف", "report", "x\u200cy"]
SCHEMAS = [
    {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
    {"properties": {"id": {"type": "integer"}}, "required": ["id"], "type": "object"},  # the same, keys reordered
    {"type": "object", "properties": {"q": {"type": "string", "pattern": "^[a-z]+$"}}},
    {"type": "object", "properties": {"q": {"type": "string", "pattern": "(?=a)"}}},  # quarantined: not RE2
    {"type": "object", "properties": {"n": {"type": "number", "minimum": 1.0}}},
    {"type": "object", "properties": {"n": {"type": "number", "minimum": 1}}},  # 1 is not 1.0 as written
    {"type": "string"},  # quarantined: arguments are an object
    {"type": "object", "$defs": {"a": {"$ref": "#/$defs/a"}}, "properties": {"x": {"$ref": "#/$defs/a"}}},
]


def _records(catalog: Catalog) -> list[tuple]:
    """Every field of every record, those left out of equality too, schemas as written (key order)."""
    out = []
    for t in catalog.tools:
        row = [json.dumps(getattr(t, f)) if f in ("parameters", "compact_parameters", "output_schema")
               else getattr(t, f) for f in TOOL_FIELDS]
        out.append((*row, t.definition_hash, t.quarantine))
    return out


def _same(a: Catalog, b: Catalog) -> None:
    assert _records(a) == _records(b)
    assert a.hash == b.hash and a.version == b.version and a.warnings == b.warnings
    assert a.notes == b.notes and a.source == b.source


tool = st.fixed_dictionaries(
    {"description": st.text(max_size=40), "side_effect": st.sampled_from(["none", "write", "delete", "export", None])},
    optional={
        "roles": st.lists(st.sampled_from(ROLES), max_size=3),
        "permissions": st.lists(st.sampled_from(PERMS), max_size=3),
        "tenant_required": st.booleans(), "enabled": st.booleans(), "requires_approval": st.booleans(),
        "is_core": st.booleans(), "deprecated": st.booleans(), "always_confirm": st.booleans(),
        "aliases": st.lists(st.sampled_from(WORDS), max_size=3), "keywords": st.lists(st.text(max_size=8), max_size=3),
        "examples": st.lists(st.sampled_from(WORDS), max_size=2), "domains": st.lists(st.sampled_from(WORDS), max_size=2),
        "parameters": st.sampled_from(SCHEMAS), "output_schema": st.sampled_from(SCHEMAS[:2] + SCHEMAS[4:6]),
        "version": st.sampled_from(["1", 2, 2.5, None]), "schema_version": st.sampled_from(["1", "2", 3, None]),
        "namespace": st.sampled_from(["sales", "stock", None]), "capability": st.sampled_from(["a.b", None]),
        "risk_level": st.sampled_from(["low", "high", None]), "replacement": st.sampled_from(["t0", None]),
        "companion_tools": st.lists(st.sampled_from(["t0", "t1"]), max_size=2),
    })


@settings(max_examples=examples(150, local=25), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(tools=st.lists(tool, min_size=1, max_size=12), version=st.sampled_from(["v1", 3, None]),
       suffix=st.sampled_from([".json", ".yaml"]), words=st.lists(st.sampled_from(WORDS), max_size=4),
       roles=st.lists(st.sampled_from(ROLES), max_size=2), perms=st.lists(st.sampled_from(PERMS), max_size=3),
       mode=st.sampled_from(["analyzer", "supervised", "autonomous"]), tenant=st.sampled_from([None, "t"]))
def test_cached_and_fresh_loads_give_the_same_records_findings_and_offers(
        tmp_path_factory: pytest.TempPathFactory, tools, version, suffix, words, roles, perms, mode, tenant) -> None:
    tmp = tmp_path_factory.mktemp("records")
    doc = {"catalog_version": version, "tools": [{"name": f"t{i}", **t} for i, t in enumerate(tools)]}
    path = tmp / f"catalog{suffix}"
    path.write_text(json.dumps(doc, ensure_ascii=False) if suffix == ".json" else yaml.safe_dump(doc, allow_unicode=True),
                    encoding="utf-8")
    cache = IndexCache(tmp / "cache")
    fresh = load_catalog(path)
    stored = load_catalog(path, cache=cache)
    assert cache.status().entries == 1
    assert catalog_cache.read_records(cache, catalog_cache.file_parts(path.read_bytes(), None, None)) is not None
    read = load_catalog(path, cache=cache)
    _same(fresh, stored)
    _same(fresh, read)
    # the security filter runs on the records read back as on fresh ones: the same offers, hashes included
    ctx = build_context(fresh, tenant=tenant, roles=tuple(roles), permissions=tuple(perms), mode=mode)
    query = " ".join(words)
    a, b = Discoverer(fresh).discover(query, ctx), Discoverer(read).discover(query, ctx)
    assert a.to_dict() == b.to_dict()


def _entry(cache: IndexCache) -> Path:
    (found,) = cache.entries()
    return found


def test_a_damaged_foreign_or_stale_entry_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_bytes(default_catalog_path().read_bytes())
    cache = IndexCache(tmp_path / "cache")
    fresh = load_catalog(path)
    load_catalog(path, cache=cache)
    entry = _entry(cache)
    good = entry.read_bytes()
    assert catalog_cache.read_records(cache, catalog_cache.file_parts(path.read_bytes(), None, None)) is not None
    with np.load(entry, allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files if name != "__manifest__"}
    text = arrays["strings.text"].tobytes()
    damaged = [good[: len(good) // 2], good[:-7] + b"garbage", b"", good.replace(text[:64], text[:63] + b"!")]
    # entries that decode but lie about themselves, with digests recomputed: still refused, then rebuilt
    parts = catalog_cache.file_parts(path.read_bytes(), None, None)
    for name, lie in (("columns", arrays["columns"][:, :-1]), ("strings.ends", arrays["strings.ends"] + 1),
                      ("flags", arrays["flags"][:-1]), ("hashes", arrays["hashes"][:-2]),
                      ("lists.items", arrays["lists.items"] * 0)):
        cache.store_arrays(entry.stem, parts, {**arrays, name: lie}, {"catalog": catalog_cache.FORMAT})
        damaged.append(entry.read_bytes())
    for bad in damaged:
        entry.write_bytes(bad)
        assert catalog_cache.read_records(cache, catalog_cache.file_parts(path.read_bytes(), None, None)) is None
        _same(fresh, load_catalog(path, cache=cache))  # rebuilt …
        assert entry.read_bytes() == good  # … and replaced
    # another file's entry under this key is foreign: its parts are not this file's
    other = tmp_path / "other.yaml"
    other.write_text(path.read_text(encoding="utf-8").replace("catalog_version:", "x-note: 1\ncatalog_version:", 1),
                     encoding="utf-8")
    load_catalog(other, cache=cache)
    assert cache.status().entries == 2  # one byte changed is another key
    entries = cache.entries()
    foreign = next(p for p in entries if p != entry)
    entry.write_bytes(foreign.read_bytes())
    assert catalog_cache.read_records(cache, catalog_cache.file_parts(path.read_bytes(), None, None)) is None
    _same(fresh, load_catalog(path, cache=cache))


def test_the_key_covers_the_bytes_the_format_and_the_side_effect(tmp_path: Path) -> None:
    raw = default_catalog_path().read_bytes()
    parts = [catalog_cache.file_parts(raw, None, None), catalog_cache.file_parts(raw + b"\n", None, None),
             catalog_cache.file_parts(raw, "tooldisc", None), catalog_cache.file_parts(raw, None, "none")]
    assert len({json.dumps(p, sort_keys=True) for p in parts}) == 4
    tools = tmp_path / "tools.jsonl"
    tools.write_text('{"name": "a", "description": "list invoices"}\n{"name": "b", "description": "delete"}\n',
                     encoding="utf-8")
    cache = IndexCache(tmp_path / "cache")
    for side_effect in (None, "write", None, "write"):
        cached = load_catalog(tools, side_effect=side_effect, cache=cache)
        _same(load_catalog(tools, side_effect=side_effect), cached)
    assert cache.status().entries == 2


def test_a_catalog_with_errors_is_never_stored(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"tools": [{"name": "a", "Roles": ["admin"]}]}), encoding="utf-8")
    cache = IndexCache(tmp_path / "cache")
    for _ in range(2):
        with pytest.raises(DataError, match="Roles"):
            load_catalog(path, cache=cache)
    assert cache.status().entries == 0


def test_equal_schemas_are_one_object_and_key_order_is_kept(tmp_path: Path) -> None:
    doc = {"tools": [{"name": f"t{i}", "side_effect": "none", "parameters": SCHEMAS[i % 2]} for i in range(6)]}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    cat = load_catalog(path)
    assert [list(t.parameters) for t in cat.tools] == [list(SCHEMAS[i % 2]) for i in range(6)]
    assert len({id(t.parameters) for t in cat.tools}) == 2  # one object per schema as written
    assert len({t.definition_hash for t in cat.tools}) == 6


def test_the_python_api_refuses_a_wrong_cache_argument(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'cache' parameter"):
        load_catalog(default_catalog_path(), cache=str(tmp_path))  # type: ignore[arg-type]


def test_cli_discover_reads_the_records_back_and_no_cache_reads_nothing(tmp_path: Path) -> None:
    env = {"TOOLDISC_CACHE_DIR": str(tmp_path / "cache")}
    cat = tmp_path / "c.json"
    doc = {"catalog_version": "1", "tools": [
        {"name": "list_invoices", "description": "List unpaid invoices", "side_effect": "none", "parameters": SCHEMAS[0]},
        {"name": "bad", "description": "quarantined invoices", "side_effect": "none", "parameters": SCHEMAS[3]}]}
    cat.write_text(json.dumps(doc), encoding="utf-8")
    args = ("discover", "list unpaid invoices", "--catalog", str(cat), "--json")
    runs = [invoke_cli(*args, "--no-cache", env=env), invoke_cli(*args, env=env), invoke_cli(*args, env=env)]
    assert [r.returncode for r in runs] == [0, 0, 0]
    assert len({r.stdout for r in runs}) == 1 and len({r.stderr for r in runs}) == 1  # the quarantine note too
    assert "quarantined" in runs[0].stderr
    assert IndexCache(tmp_path / "cache").status().entries == 2


_JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.sampled_from([0.0, -0.0, 1e16, 1e-7, 2.5e300]),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=12)


@settings(max_examples=examples(1000, local=200), deadline=None)
@given(_JSONISH)
def test_the_entry_s_json_reads_back_the_value_it_was_written_from(value: object) -> None:
    """The entry's schemas and findings are written by orjson (the json module past 64-bit integers, which
    orjson reads back as floats: this test found it) and read by the writer's reader: the value read back is
    the value written, types and key order included (``1``, ``1.0`` and ``true`` told apart), as the json
    module alone reads it."""
    from tooldisc.discovery.catalog import _exact_json

    stored = catalog_cache._json_arrays(value)
    assert _exact_json(catalog_cache._json_value(stored)) == _exact_json(value)
    assert _exact_json(json.loads(stored["about.json"].tobytes().decode("utf-8"))) == _exact_json(value)


def _reading_commands(tmp_path: Path) -> dict[str, tuple[str, ...]]:
    """Every command that reads a catalog and builds no index, with arguments that succeed on ``c.json``."""
    from tooldisc.evaluation.inputs import default_gold_path

    cat = tmp_path / "c.json"
    doc = {"catalog_version": "1", "tools": [
        {"name": "customers.search", "description": "Find customers", "side_effect": "none", "parameters": SCHEMAS[0]},
        {"name": "bad", "description": "quarantined", "side_effect": "none", "parameters": SCHEMAS[3]}]}
    cat.write_text(json.dumps(doc), encoding="utf-8")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"decision": "tools", "actions": [{"id": "a1", "tool": "customers.search", "arguments": {}}]}),
                    encoding="utf-8")
    return {"catalog stats": ("catalog", "stats", str(cat), "--json"),
            "catalog diff": ("catalog", "diff", str(cat), str(default_catalog_path()), "--json"),
            "gold validate": ("gold", "validate", str(default_gold_path()), "--catalog", str(default_catalog_path()), "--json"),
            "plan validate": ("plan", "validate", str(plan), "--catalog", str(cat), "--json")}


@pytest.mark.parametrize("name", ["catalog stats", "catalog diff", "gold validate", "plan validate"])
def test_commands_that_only_read_a_catalog_read_its_records_back_too(tmp_path: Path, name: str) -> None:
    """A repeated ``catalog stats`` or ``diff`` in CI starts warm as ``discover`` does (a 10k YAML catalog's stats:
    3.4 → 0.3 s); ``--no-cache`` neither reads nor writes; the output is the same either way."""
    args = _reading_commands(tmp_path)[name]
    env = {"TOOLDISC_CACHE_DIR": str(tmp_path / "cache")}
    fresh = invoke_cli(*args, "--no-cache", env=env)
    assert not (tmp_path / "cache").exists()
    cold = invoke_cli(*args, env=env)
    stored = _files(tmp_path / "cache")
    warm = invoke_cli(*args, env=env)
    assert fresh.returncode == cold.returncode == warm.returncode and fresh.returncode in (0, 1), fresh.stderr
    assert fresh.stdout == cold.stdout == warm.stdout and fresh.stderr == cold.stderr == warm.stderr
    expected = 2 if name == "catalog diff" else 1  # one entry of records per catalog read
    assert IndexCache(tmp_path / "cache").status().entries == expected
    assert _files(tmp_path / "cache") == stored  # the warm run read the entry: it wrote no file anew (temp, rename)


def _files(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_ino) for p in root.rglob("*") if p.is_file())
