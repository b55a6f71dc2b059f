"""The on-disk index cache: cached and fresh engines offer alike; a bad entry is rebuilt, never trusted."""

from __future__ import annotations

import json
import os
import stat
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import invoke_cli, run_cli
from tests.fuzzing import examples
from tooldisc.discovery.catalog import build_catalog, catalog_to_dict
from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog
from tooldisc.discovery.config import load_config
from tooldisc.discovery.context import build_context
from tooldisc.discovery.indexes import cache as index_cache
from tooldisc.discovery.indexes.cache import IndexCache, NoCacheDirectory, cache_key, key_parts
from tooldisc.discovery.pipeline import Discoverer

CATALOG = load_catalog(default_catalog_path())
WORDS = ["list", "unpaid", "invoices", "delete", "customer", "export", "report", "فاکتور", "حذف", "payment",
         "stock", "warehouse", "send", "email", "create", "tax", "salary", "xyz"]


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> tuple[Discoverer, Discoverer, IndexCache]:
    cache = IndexCache(tmp_path_factory.mktemp("cache"))
    Discoverer(CATALOG, cache=cache)  # stores
    assert cache.status().entries == 1
    return Discoverer(CATALOG), Discoverer(CATALOG, cache=cache), cache  # fresh, read back


def _offer(engine: Discoverer, query: str, ctx, k) -> tuple:
    o = engine.discover(query, ctx, k)
    return o.offer_hash, o.catalog_hash, o.mutation, o.k, [(c.name, c.score, c.features) for c in o.candidates], \
        o.confidence, o.authorized_count, o.retrieval


@settings(max_examples=examples(300, local=40), deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(WORDS), min_size=0, max_size=6),
       roles=st.lists(st.sampled_from(sorted(CATALOG.roles())), max_size=3),
       perms=st.lists(st.sampled_from(sorted(CATALOG.permissions())), max_size=4),
       mode=st.sampled_from(["analyzer", "supervised", "autonomous"]),
       tenant=st.sampled_from([None, "t1"]), k=st.sampled_from([None, 3, "auto"]))
def test_cached_and_fresh_engines_offer_alike(engines, words, roles, perms, mode, tenant, k) -> None:
    fresh, cached, _ = engines
    ctx = build_context(CATALOG, tenant=tenant, roles=tuple(roles), permissions=tuple(perms), mode=mode)
    query = " ".join(words)
    assert _offer(cached, query, ctx, k) == _offer(fresh, query, ctx, k)


def test_only_ranking_arrays_are_stored(engines) -> None:
    _, cached, cache = engines
    (entry,) = cache.entries()
    with np.load(entry, allow_pickle=False) as npz:
        names = set(npz.files)
    assert all(n.split(".")[0] in ("lexical", "ngram", "alias", "__manifest__") for n in names)
    assert cached.index.security is not None and cached.index.catalog is CATALOG  # the live catalog's filter


def test_the_key_covers_order_content_config_learned_and_code() -> None:
    base = key_parts(CATALOG, load_config())
    reordered = replace(CATALOG, tools=CATALOG.tools[::-1])
    doc = catalog_to_dict(CATALOG)
    doc["tools"][0]["description"] += " changed"
    changed = build_catalog(doc)
    weights = load_config().to_mapping()
    weights["bm25"]["k1"] = weights["bm25"]["k1"] + 0.1
    from tooldisc.discovery.config import config_from_mapping

    others = [key_parts(reordered, load_config()), key_parts(changed, load_config()),
              key_parts(CATALOG, config_from_mapping(weights)), key_parts(CATALOG, load_config(), "abc")]
    keys = {cache_key(base), *map(cache_key, others)}
    assert len(keys) == 5
    assert base["code"] == key_parts(CATALOG, load_config())["code"]


def _entry(tmp_path: Path) -> tuple[IndexCache, Path]:
    cache = IndexCache(tmp_path / "c")
    Discoverer(CATALOG, cache=cache)
    (path,) = cache.entries()
    return cache, path


@pytest.mark.parametrize("damage", ["flip", "truncate", "foreign", "empty", "garbage"])
def test_a_bad_entry_is_rebuilt_never_trusted(tmp_path: Path, damage: str) -> None:
    cache, path = _entry(tmp_path)
    raw = bytearray(path.read_bytes())
    if damage == "flip":  # one byte of an array's data: its SHA-256 no longer matches
        with np.load(path, allow_pickle=False) as npz:
            data = npz["lexical.data"].tobytes()
        at = bytes(raw).find(data[:64]) + 16
        raw[at] ^= 0xFF
        path.write_bytes(bytes(raw))
    elif damage == "truncate":
        path.write_bytes(bytes(raw[: len(raw) // 2]))
    elif damage == "foreign":  # another key's entry under this key's name
        other = IndexCache(tmp_path / "o")
        Discoverer(replace(CATALOG, tools=CATALOG.tools[:50]), cache=other)
        (theirs,) = other.entries()
        path.write_bytes(theirs.read_bytes())
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.write_bytes(b"PK\x03\x04" + os.urandom(200))
    key = path.stem
    assert cache.load(key, key_parts(CATALOG, load_config())) is None
    fresh, rebuilt = Discoverer(CATALOG), Discoverer(CATALOG, cache=cache)
    for q in ("list unpaid invoices", "delete customer", "فاکتور"):
        assert _offer(rebuilt, q, None, None) == _offer(fresh, q, None, None)
    assert cache.load(key, key_parts(CATALOG, load_config())) is not None  # replaced by a good one


def test_a_pickled_array_is_refused(tmp_path: Path) -> None:
    cache, path = _entry(tmp_path)
    with np.load(path, allow_pickle=False) as npz:
        arrays = {n: npz[n] for n in npz.files}
    arrays["lexical.data"] = np.array([object()], dtype=object)
    with path.open("wb") as fh:
        np.savez(fh, **arrays)
    assert cache.load(path.stem, key_parts(CATALOG, load_config())) is None


def test_files_respect_the_umask_and_writes_are_atomic(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        _, path = _entry(tmp_path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert not list(path.parent.glob(".*.tmp"))


def test_the_size_bound_evicts_the_least_recently_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_cache, "MAX_ENTRIES", 2)
    cache = IndexCache(tmp_path)
    for n in (30, 40, 50):
        Discoverer(replace(CATALOG, tools=CATALOG.tools[:n]), cache=cache)
    assert cache.status().entries == 2
    monkeypatch.setattr(index_cache, "MAX_BYTES", 1)
    Discoverer(replace(CATALOG, tools=CATALOG.tools[:60]), cache=cache)
    assert cache.status().entries == 1  # only the entry just written is kept


def test_cli_uses_the_cache_and_no_cache_skips_it(tmp_path: Path) -> None:
    env = {"TOOLDISC_CACHE_DIR": str(tmp_path / "cache")}
    args = ("discover", "list unpaid invoices", "--json")
    fresh = invoke_cli(*args, "--no-cache", env=env)
    assert fresh.returncode == 0, fresh.stderr
    assert not (tmp_path / "cache").exists()
    first, second = invoke_cli(*args, env=env), invoke_cli(*args, env=env)
    assert first.returncode == second.returncode == 0
    assert json.loads(first.stdout)["offer_hash"] == json.loads(second.stdout)["offer_hash"] == \
        json.loads(fresh.stdout)["offer_hash"]
    status = invoke_cli("cache", "status", "--json", env=env)
    assert json.loads(status.stdout)["entries"] == 2  # the catalog's validated records and its index
    cleared = invoke_cli("cache", "clear", env=env)
    assert cleared.returncode == 0 and "removed 2" in cleared.stdout
    assert json.loads(invoke_cli("cache", "status", "--json", env=env).stdout)["entries"] == 0


def test_the_python_api_refuses_a_wrong_cache_argument() -> None:
    with pytest.raises(ValueError, match="'cache' parameter"):
        Discoverer(CATALOG, cache="/tmp/somewhere")


def test_eval_and_sweep_take_no_cache_too(tmp_path: Path) -> None:
    env = {"TOOLDISC_CACHE_DIR": str(tmp_path / "cache")}
    for command in (("eval", "--k", "5", "--json", "--no-cache"), ("sweep", "--k", "3,5", "--json", "--no-cache")):
        proc = invoke_cli(*command, env=env)
        assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "cache").exists()
    cold, warm = (invoke_cli("eval", "--k", "5", "--json", env=env) for _ in range(2))
    assert cold.returncode == warm.returncode == 0
    assert json.loads(cold.stdout) == json.loads(warm.stdout)  # the report is byte-stable across cold and warm
    assert IndexCache(tmp_path / "cache").status().entries == 2  # the records and the index


def test_the_catalog_size_limit_can_be_set(tmp_path: Path) -> None:
    small = run_cli("catalog", "stats", str(default_catalog_path()), env={"TOOLDISC_MAX_CATALOG_BYTES": "1000"})
    assert small.returncode == 2 and "over the limit of 1000" in small.stderr
    bad = run_cli("catalog", "stats", str(default_catalog_path()), env={"TOOLDISC_MAX_CATALOG_BYTES": "lots"})
    assert bad.returncode == 2 and "TOOLDISC_MAX_CATALOG_BYTES must be a positive integer" in bad.stderr


def _homeless(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``$HOME`` and a user id without a passwd entry (a container's ``--user``): ``Path.home`` fails."""
    import pathlib

    for name in ("TOOLDISC_CACHE_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)

    def no_home(cls: type) -> pathlib.Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(pathlib.Path, "home", classmethod(no_home))


def test_without_a_home_directory_commands_run_uncached_and_cache_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """It was a traceback. The cache only saves time: a command runs as with ``--no-cache`` and says so in a note;
    ``tooldisc cache`` has nothing to show and stops with one line."""
    uncached = invoke_cli("discover", "list unpaid invoices", "--json", "--no-cache")
    _homeless(monkeypatch)
    with pytest.raises(NoCacheDirectory, match="set TOOLDISC_CACHE_DIR"):
        IndexCache.default()
    for args in (("discover", "list unpaid invoices", "--json"), ("catalog", "stats", str(default_catalog_path()), "--json")):
        run = invoke_cli(*args)
        assert run.returncode == 0, run.stderr
        assert "no home directory for the on-disk cache" in run.stderr and "Traceback" not in run.stderr
    assert json.loads(invoke_cli("discover", "list unpaid invoices", "--json").stdout)["offer_hash"] == \
        json.loads(uncached.stdout)["offer_hash"]
    for args in (("cache", "status"), ("cache", "clear", "--json")):
        stopped = invoke_cli(*args)
        assert stopped.returncode == 2 and stopped.stdout == ""
        assert stopped.stderr.count("\n") == 1 and "set TOOLDISC_CACHE_DIR" in stopped.stderr
