"""The learned parts' fast paths give the same bits as the plain formulas they replace.

Each oracle here is the straightforward version (whole-catalog gathers, per-term unions,
the document hashed whole): the offer hash depends on every bit of them.
"""

from __future__ import annotations

import importlib.util
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.config import load_config
from tooldisc.discovery.indexes.expansion import (
    AffinityIndex,
    ExpansionIndex,
    cell_keys,
    expansion_texts,
)
from tooldisc.discovery.indexes.index import build_index
from tooldisc.discovery.indexes.sparse import gather_columns
from tooldisc.discovery.kernels import NUMPY, rows_numpy
from tooldisc.discovery.kernels.loops import rows_loop
from tooldisc.discovery.learned import Expansions, Learned, _body, _checksum
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text import tokenize
from tooldisc.discovery.text.phrases import _CUT, _MAY_CUT

WORDS = ("invoice", "unpaid", "bill", "customer", "weather", "paris", "flight", "book", "cancel", "report",
         "export", "stock", "price", "hotel", "café", "فاکتور")


def _catalog(n: int, rng: random.Random):
    tools = [Tool(name=f"t{i:03d}", description=" ".join(rng.sample(WORDS, 3)), side_effect="none") for i in range(n)]
    return catalog_from_tools(tools)


def _phrase_lists(rng: random.Random, k: int) -> list[tuple[tuple[str, int], ...]]:
    out = []
    for _ in range(k):
        words = rng.sample(WORDS, 5)
        out.append(tuple((" ".join(words[i:i + rng.randint(1, 2)]), rng.randint(3, 40)) for i in range(4)))
    return out


def _learned(catalog, rng: random.Random, affinity: bool) -> Learned:
    """Tools share phrase lists (and weight maps) as a grown bench catalog's variants do."""
    lists = _phrase_lists(rng, 4)
    weights = [{p: round(rng.uniform(0.0, 2.0), 6) for p, _ in ps} for ps in lists]
    tools, aff = {}, {}
    for i, t in enumerate(catalog.tools):
        if i % 5 == 4:
            continue  # a tool no request reached
        j = i % len(lists)
        tools[t.name] = (t.definition_hash, lists[j])
        aff[t.name] = weights[j]
    exp = Expansions(3, 8, tools, 1.0, aff if affinity else None, 4.0 if affinity else 0.0, 0.25)
    return Learned(catalog.hash, exp, report={"note": "ünïcode \"quoted\""})


def test_digest_is_the_whole_document_hash() -> None:
    rng = random.Random(1)
    catalog = _catalog(23, rng)
    for affinity in (True, False):
        learned = _learned(catalog, rng, affinity)
        assert learned.digest == _checksum(_body(learned))
    bare = Learned(catalog.hash, report={"x": 1})
    assert bare.digest == _checksum(_body(bare))


def _expansion_oracle(tools, texts, main, k1: float, b: float):
    """The per-term union of expansion and authored rows, as first written."""
    from tooldisc.discovery.indexes.lexical import LexicalIndex
    from tooldisc.discovery.text.fields import TextColumns

    n = len(tools)
    local = LexicalIndex.build(TextColumns(tools, {"expansions": [texts.get(t.name, "") for t in tools]}),
                               {"expansions": 1.0}, k1, b)
    idf = lambda df: float(np.log1p((n - df + 0.5) / (df + 0.5)))  # noqa: E731
    data = local.data.astype(np.float64)
    for term, j in local.vocab.items():
        lo, hi = int(local.indptr[j]), int(local.indptr[j + 1])
        rows = local.rows[lo:hi]
        m = main.vocab.get(term)
        if m is not None:
            rows = np.union1d(rows, main.rows[main.indptr[m]:main.indptr[m + 1]])
        data[lo:hi] *= idf(len(rows)) / idf(hi - lo)
    return local, data.astype(np.float32)


def test_learned_indexes_match_their_oracles_and_subset_reads_match_dense_ones() -> None:
    rng = random.Random(7)
    catalog = _catalog(61, rng)
    cfg = load_config(None)
    ix = build_index(catalog, cfg)
    learned = _learned(catalog, rng, True)
    phrases = {name: ps for name, (_, ps) in learned.expansions.tools.items()}
    texts = expansion_texts(phrases)
    assert texts == {t: " \n ".join(p for p, c in ps for _ in range(max(1, math.isqrt(c)))) for t, ps in phrases.items()}
    exp = ExpansionIndex.build(catalog.tools, texts, ix.lexical, cfg.bm25.k1, cfg.bm25.b)
    local, data = _expansion_oracle(catalog.tools, texts, ix.lexical, cfg.bm25.k1, cfg.bm25.b)
    assert np.array_equal(exp.index.data, data) and np.array_equal(exp.index.rows, local.rows)
    aff = AffinityIndex.build(catalog.tools, learned.expansions.affinity, 0.25)
    cells = sorted((p, i, w) for i, t in enumerate(catalog.tools) for p, w in learned.expansions.affinity.get(t.name, {}).items())
    assert list(aff.vocab) == sorted({p for p, _, _ in cells})
    assert aff.rows.tolist() == [i for _, i, _ in cells] and aff.data.tolist() == [w for _, _, w in cells]
    for q in ("unpaid invoice bill for customer", "book a hotel in paris", "weather weather stock", "nothing here"):
        tokens = tokenize(q)
        for idx in (np.arange(61), np.array([0, 3, 4, 17, 60]), np.array([], dtype=np.int64)):
            assert exp.scores(tokens, idx).tobytes() == exp.scores(tokens)[idx].tobytes()
            assert aff.evidence(q, idx).tobytes() == aff.evidence(q)[idx].tobytes()


@settings(max_examples=60, deadline=None, database=None)
@given(st.integers(1, 40), st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_cell_reads_are_gather_columns_at_those_rows(n_rows: int, n_cols: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    dense = rng.random((n_rows, n_cols)).astype(np.float32) * (rng.random((n_rows, n_cols)) < 0.4)
    from scipy import sparse

    m = sparse.csc_array(dense)
    m.sort_indices()
    keys = cell_keys(m.indptr, m.indices, n_rows)
    ids = rng.choice(n_cols, size=rng.integers(1, n_cols + 1), replace=False)
    weights = rng.integers(1, 4, size=len(ids)).astype(np.float64)
    rows = np.flatnonzero(rng.random(n_rows) < 0.5)
    full = gather_columns(m.indptr, m.indices, m.data, ids.astype(np.int64), weights, n_rows)
    assert rows_numpy(keys, m.data, n_rows, ids.astype(np.int64), weights, rows).astype(np.float32).tobytes() \
        == full[rows].tobytes()


def _cells_case(rng: np.random.Generator, n_rows: int, n_cols: int, wide: bool, data_type: type):
    """A random CSC layout as cell keys (uint32, or int64 when ``wide``), a query's columns and some rows."""
    dense = rng.random((n_rows, n_cols)) * (rng.random((n_rows, n_cols)) < rng.uniform(0.05, 0.9))
    from scipy import sparse

    m = sparse.csc_array(dense.astype(data_type))
    m.sort_indices()
    keys = cell_keys(m.indptr, m.indices, n_rows)
    if wide:
        keys = keys.astype(np.int64)
    ids = rng.choice(n_cols, size=rng.integers(0, n_cols + 1), replace=bool(rng.integers(0, 2)))
    weights = rng.integers(1, 4, size=len(ids)).astype(np.float64)
    rows = np.flatnonzero(rng.random(n_rows) < rng.uniform(0.0, 1.0)).astype(np.int64)
    return keys, m.data, n_rows, ids.astype(np.int64), weights, rows


@settings(max_examples=40, deadline=None, database=None)
@given(st.integers(1, 300), st.integers(1, 9), st.booleans(), st.integers(0, 2**32 - 1))
def test_the_cell_read_loop_is_its_numpy_twin(n_rows: int, n_cols: int, wide: bool, seed: int) -> None:
    """The loop numba compiles, run as Python: galloping finds every cell the key search finds."""
    rng = np.random.default_rng(seed)
    args = _cells_case(rng, n_rows, n_cols, wide, np.float32 if seed % 2 else np.float64)
    assert rows_loop(*args).tobytes() == rows_numpy(*args).tobytes()


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="the fast extra (numba) is not installed")
def test_the_compiled_cell_reads_and_the_learned_features_read_the_same_bits() -> None:
    """Compiled for the layouts the learned indexes hold (uint32 keys; float32 BM25, float64 weights: two
    signatures, each a cold compile in CI); the features' values with either form."""
    from tooldisc.discovery.kernels import kernels

    compiled = kernels("numba").rows
    assert compiled is not rows_numpy and kernels("numpy").rows is rows_numpy is NUMPY.rows
    rng = np.random.default_rng(5)
    for case in range(12):
        args = _cells_case(rng, int(rng.integers(1, 400)), int(rng.integers(1, 12)), False,
                           np.float32 if case % 2 else np.float64)
        assert compiled(*args).tobytes() == rows_numpy(*args).tobytes()
    r = random.Random(3)
    catalog = _catalog(61, r)
    cfg = load_config(None)
    ix = build_index(catalog, cfg)
    learned = _learned(catalog, r, True)
    texts = expansion_texts({name: ps for name, (_, ps) in learned.expansions.tools.items()})
    exp = {c: ExpansionIndex.build(catalog.tools, texts, ix.lexical, cfg.bm25.k1, cfg.bm25.b, True, c)
           for c in (rows_numpy, compiled)}
    aff = {c: AffinityIndex.build(catalog.tools, learned.expansions.affinity, 0.25, c) for c in (rows_numpy, compiled)}
    for q in ("unpaid invoice bill for customer", "book a hotel in paris", "weather weather stock", "nothing here"):
        for idx in (np.arange(61), np.array([0, 3, 4, 17, 60]), np.array([], dtype=np.int64)):
            assert exp[compiled].scores(tokenize(q), idx).tobytes() == exp[rows_numpy].scores(tokenize(q), idx).tobytes()
            assert aff[compiled].evidence(q, idx).tobytes() == aff[rows_numpy].evidence(q, idx).tobytes()


@settings(max_examples=200, deadline=None, database=None)
@given(st.text(alphabet="aBcZf09-@:/w. \"`“«é_\n", max_size=40))
def test_the_cut_pre_check_never_skips_a_cut(text: str) -> None:
    if _CUT.search(text):
        assert _MAY_CUT.search(text)


def test_the_cut_pre_check_sees_every_kind_of_cut() -> None:
    for text in ("mail a@b.c", "see https://x.io", "www.x.io", 'say "hi"', "ref rOBhSVKGVKe", "id deadbeefdeadbeef0"):
        assert _CUT.search(text) and _MAY_CUT.search(text)
    assert not _MAY_CUT.search("What is the weather in Paris, France?")


def _scrub_oracle(text: str) -> list[list[str]]:
    """Each piece's tokens one at a time: a long or digit-bearing token ends the run."""
    import re

    from tooldisc.discovery.text.phrases import _BREAK, _CUT

    runs: list[list[str]] = [[]]
    for piece in _BREAK.split(_CUT.sub(" | ", text)):
        for tok in tokenize(piece):
            if len(tok) > 24 or re.search(r"\d", tok):
                runs.append([])
            else:
                runs[-1].append(tok)
        runs.append([])
    return [r for r in runs if r]


@settings(max_examples=80, deadline=None, database=None)
@given(st.lists(st.sampled_from(("the", "invoice", "a1", "x" * 25, "۴۲", "²", "café", ",", ".", "\n", " ", "(", "_",
                                 "bill", "of", "42", "a@b.c", "Ünï")), max_size=16))
def test_scrub_cuts_at_each_long_or_numeric_token(words: list[str]) -> None:
    from tooldisc.discovery.text.phrases import scrub

    text = " ".join(words)
    assert scrub(text) == _scrub_oracle(text)
    assert scrub("".join(words)) == _scrub_oracle("".join(words))


def _phrases_oracle(text: str, max_n: int = 3) -> set[str]:
    from tooldisc.discovery.text.fields import stopwords
    from tooldisc.discovery.text.phrases import scrub

    stop, out = stopwords(), set()
    for run in scrub(text):
        for n in range(1, max_n + 1):
            for i in range(len(run) - n + 1):
                if run[i] not in stop and run[i + n - 1] not in stop:
                    out.add(" ".join(run[i:i + n]))
    return out


@settings(max_examples=80, deadline=None, database=None)
@given(st.lists(st.sampled_from(("the", "of", "a", "invoice", "unpaid", "to", "bill", "42", ",", "for")), max_size=12),
       st.integers(1, 4))
def test_phrases_are_every_stop_bounded_ngram(words: list[str], max_n: int) -> None:
    from tooldisc.discovery.text.phrases import phrases

    text = " ".join(words)
    assert phrases(text, max_n) == _phrases_oracle(text, max_n)
