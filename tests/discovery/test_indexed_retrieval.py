"""Indexed candidate retrieval: at most N candidates, all authorized, close to exhaustive ranking."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog
from tooldisc.discovery.config import config_from_mapping, load_config
from tooldisc.discovery.pipeline import Discoverer
from tooldisc.gold.loader import load_gold

N = 20


@pytest.fixture(scope="module")
def engine() -> Discoverer:
    """The shipped catalog with the index switched on for any authorized set of 50+ tools.

    The numpy loops: the compiled ones give the same offers bit for bit (test_kernels.py),
    and compiling them here too would cost a second cold compile in a CI worker.
    """
    cfg = config_from_mapping({"retrieval": {"min_tools": 50, "candidates": N}}, base=load_config())
    return Discoverer(load_catalog(default_catalog_path()), cfg, backend="numpy")


@pytest.fixture(scope="module")
def queries() -> list[str]:
    gold = load_gold(default_catalog_path().parent / "gold.json")
    return [q.query for q in gold.queries if not q.no_match]


def test_at_most_n_candidates_all_authorized(engine: Discoverer, queries: list[str]) -> None:
    for q in queries[:120]:
        authorized, retrieved, method = engine.candidates(q)
        assert method in ("indexed", "full")
        assert set(retrieved.tolist()) <= set(authorized.tolist())
        if method == "indexed":
            assert 0 < len(retrieved) <= N


def test_best_lexical_match_is_always_a_candidate(engine: Discoverer, queries: list[str]) -> None:
    for q in queries[:120]:
        authorized, retrieved, method = engine.candidates(q)
        lexical = engine.index.lexical.scores(q)[authorized]
        if method == "indexed" and lexical.max() > 0:
            assert authorized[int(np.argmax(lexical))] in set(retrieved.tolist())


def test_indexed_offers_hold_most_of_the_exhaustive_top5(engine: Discoverer, queries: list[str]) -> None:
    kept = []
    for q in queries:
        reference = engine.discover_exhaustive(q, k=5).names
        if reference:
            got = set(engine.discover(q, k=5).names)
            kept.append(sum(n in got for n in reference) / len(reference))
    assert np.mean(kept) >= 0.97  # 20 of ~100 authorized tools; 1.0 when written


def test_candidates_equal_the_dense_estimate_over_the_authorized_set(engine: Discoverer, queries: list[str]) -> None:
    """Walking only the tools a query reaches picks exactly what scoring every authorized tool picks."""
    from tests.discovery.ngram_oracle import rare_estimate
    from tooldisc.discovery.rank.candidates import index_candidates, top_positive
    from tooldisc.discovery.rank.features import wanted_side_effect
    from tooldisc.discovery.text import tokenize

    ix, cfg = engine.index, engine.config
    for q in queries[:120]:
        tokens = tokenize(q)
        mutation = ix.classifier.classify(q, tokens)
        authorized = ix.authorized(engine.default_context, mutation)
        lexical = ix.lexical.scores(tokens)
        lex = lexical[authorized]
        half = top_positive(authorized, lex, N // 2)
        rare = rare_estimate(ix.ngram, max(2 * N, ix.size // 4), ix.ngram.query_vector(tokens))[authorized]
        top = float(lex.max(initial=0.0))
        lexn = lex / top if top > 0 else lex
        estimate = cfg.weight("bm25") * lexn + cfg.weight("ngram") * rare
        estimate += cfg.weight("prior") * wanted_side_effect(ix, authorized, mutation) * np.maximum(lexn, rare)
        best = top_positive(authorized, estimate, N, ordered=True)
        expected = np.sort(np.concatenate([half, best[~np.isin(best, half)][: N - len(half)]]))
        np.testing.assert_array_equal(index_candidates(authorized, tokens, lexical, ix, None, mutation), expected)


def test_stale_or_empty_index_falls_back_to_the_authorized_set(engine: Discoverer) -> None:
    empty = engine.discover("zzqx")  # nothing in any index: rank the authorized set, say why
    assert empty.retrieval == "full" and empty.fallback_reason == "empty"
    stale = Discoverer(engine.catalog, engine.config, index=replace(engine.index, built_from="not-this-catalog"))
    offer = stale.discover("show unpaid invoices")
    assert offer.retrieval == "full" and offer.fallback_reason == "stale_index"
    authorized, retrieved, method = stale.candidates("show unpaid invoices")
    assert method == "full" and np.array_equal(retrieved, authorized)


def test_content_words_read_the_candidates_counts_bit_for_bit(engine: Discoverer, queries: list[str]) -> None:
    """The content words' cosines from the retrieve step's shared counts equal a fresh read of the index."""
    from tooldisc.discovery.pipeline import authorize, retrieve
    from tooldisc.discovery.text.fields import stopwords

    ix, stop, read = engine.index, stopwords(), 0
    for q in queries[:50]:
        ret = retrieve(authorize(engine._request(q, None, None, ()), ix), ix)
        content = [t for t in ret.authorized.request.tokens if t not in stop]
        if ret.method != "indexed" or not content:
            continue
        for tools in (ret.indices, ret.indices[::3], ret.authorized.indices[:7]):  # the last: not all candidates
            got = ix.ngram.scores_subset(content, tools, shared=ret.ngram_counts)
            assert got.tobytes() == ix.ngram.scores_subset(content, tools).tobytes()
        read += ret.ngram_counts.slots(ret.indices[::3], ix.ngram.query_vector(content)[0]) is not None
    assert read >= 15
