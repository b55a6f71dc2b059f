"""The vectorised index builds equal a straightforward per-tool reference, array for array.

``LexicalIndex.build``, ``NgramIndex.build`` and ``AliasIndex.build`` tokenise distinct
sentences once, map distinct tokens once and aggregate with numpy/scipy; the oracles
here loop over tools and call ``terms`` / ``tokenize`` / ``char_ngrams`` exactly as the
module docstrings define the indexes. Checked on the shipped catalog, a 2,000-tool
synthetic catalog and hypothesis-generated tiny catalogs (random Unicode included), and
through whole offers for the shipped gold queries.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache, lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tooldisc.discovery import text as text_mod
from tooldisc.discovery.catalog import Catalog
from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog
from tooldisc.discovery.config import FIELDS, RankerConfig, config_from_mapping, load_config
from tooldisc.discovery.indexes.aliases import AliasIndex
from tooldisc.discovery.indexes.lexical import LexicalIndex
from tooldisc.discovery.indexes.ngrams import ALL_FIELDS, SHORT_FIELDS, NgramIndex, char_ngrams
from tooldisc.discovery.model import Tool
from tooldisc.discovery.pipeline import Discoverer
from tooldisc.discovery.text import normalize, tokenize
from tooldisc.discovery.text.columns import RawTokens, token_ids
from tooldisc.discovery.text.fields import field_column, field_texts, stopwords, terms
from tooldisc.evaluation.bench.synthetic import synthetic_catalog

TUNED_WEIGHTS = {"bm25": 0.216, "ngram": 0.778, "alias": 0.052, "prior": 0.522, "history": 0.416}


# ---------------------------------------------------------------- reference builds


def ref_lexical(tools: Sequence[Tool], field_weights: Mapping[str, float], k1: float, b: float) -> LexicalIndex:
    """BM25F per the lexical.py docstring, one tool at a time.

    Term ids: fields in config order, each field's not-yet-seen tokens in sorted order.
    Per field, a tool's norm is ``weight / (1 - b + b·len/avg_len)`` (float32, as stored);
    ``tfw`` adds count × norm over fields in order; a cell is ``idf·tfw/(k1 + tfw)``.
    """
    n = len(tools)
    stop = stopwords()
    texts = [field_texts(t) for t in tools]
    vocab: dict[str, int] = {}
    tfw: dict[tuple[int, int], float] = {}
    for field, weight in field_weights.items():
        if weight <= 0:
            continue
        for tok in sorted({tok for tt in texts for tok in tokenize(tt.get(field, ""))}):
            if tok not in stop:
                vocab.setdefault(terms(tok)[0], len(vocab))
        per_tool = [terms(tt.get(field, "")) for tt in texts]
        lens = np.array([len(ts) for ts in per_tool], dtype=np.float64)
        if not lens.sum():
            continue
        with np.errstate(divide="ignore"):  # b = 1 and an empty field: that tool has no cell
            norm = (weight / (1.0 - b + b * lens / lens.mean())).astype(np.float32)
        for d, ts in enumerate(per_tool):
            for term, count in Counter(ts).items():
                key = (vocab[term], d)
                tfw[key] = tfw.get(key, 0.0) + count * float(norm[d])
    if not tfw:
        return LexicalIndex({}, np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32), n)
    cells = sorted(tfw)
    df = Counter(j for j, _ in cells)
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([df[j] for j in range(len(vocab))])
    idf = {j: math.log1p((n - c + 0.5) / (c + 0.5)) for j, c in df.items()}
    data = np.array([idf[j] * tfw[j, d] / (k1 + tfw[j, d]) for j, d in cells], dtype=np.float32)
    return LexicalIndex(vocab, indptr, np.array([d for _, d in cells], dtype=np.int32), data, n)


def ref_ngram(tools: Sequence[Tool], lo: int, hi: int, fields: Sequence[str]) -> NgramIndex:
    """Char n-gram TF-IDF per the ngrams.py docstring, one tool and one token at a time.

    Tokens are numbered in sorted order (the build numbers them otherwise; nothing
    outside the index sees token ids); n-grams by their packed key: length, then code points.
    """
    n = len(tools)
    per_tool = [Counter(tok for f in fields for tok in tokenize(field_texts(t)[f])) for t in tools]
    tokens = sorted({tok for c in per_tool for tok in c})
    tid = {tok: i for i, tok in enumerate(tokens)}
    chars = sorted({ch for tok in tokens for ch in f" {tok} "})
    alphabet = {ch: i + 1 for i, ch in enumerate(chars)}
    bits = max(1, len(alphabet).bit_length())

    def key(gram: str) -> int:
        out = 0
        for ch in gram:
            out = (out << bits) | alphabet[ch]
        return out

    token_grams = [Counter(char_ngrams([tok], lo, hi)) for tok in tokens]
    grams = sorted({g for c in token_grams for g in c}, key=key)
    gid = {g: i for i, g in enumerate(grams)}
    counts = []  # per tool: n-gram id → count, summed over its tokens
    for c in per_tool:
        tool_counts: Counter[int] = Counter()
        for tok, m in c.items():
            for g, k in token_grams[tid[tok]].items():
                tool_counts[gid[g]] += m * k
        counts.append(tool_counts)
    df = np.zeros(len(grams))
    for c in counts:
        for j in c:
            df[j] += 1
    idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
    norms = np.array([math.sqrt(sum(((1.0 + math.log(c[j])) * idf[j]) ** 2 for j in sorted(c))) for c in counts])

    def csr(rows: list[dict[int, int]], width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(r) for r in rows])
        cols = np.array([j for r in rows for j in sorted(r)], dtype=np.int32)
        vals = np.array([r[j] for r in rows for j in sorted(r)], dtype=np.int64)
        return ptr, cols, vals

    by_tool = [{tid[tok]: m for tok, m in c.items()} for c in per_tool]
    by_token: list[dict[int, int]] = [{} for _ in tokens]
    for t, row in enumerate(by_tool):
        for k, m in row.items():
            by_token[k][t] = m
    by_gram: list[dict[int, int]] = [{} for _ in grams]
    for k, c in enumerate(token_grams):
        for g, m in c.items():
            by_gram[gid[g]][k] = m
    tp, tt, tc = csr(by_tool, len(tokens))
    kp, kt, kc = csr(by_token, n)
    gp, gt, gc = csr(by_gram, len(tokens))
    small = np.uint8 if max([*tc, *kc, *gc, 0]) < 256 else np.uint16
    keys = np.array([key(g) for g in grams], dtype=np.int64 if bits * hi <= 63 else object)
    return NgramIndex(keys, alphabet, bits, idf, df.astype(np.int32), norms, tp, tt, tc.astype(small), kp, kt,
                      kc.astype(small), gp, gt, gc.astype(small), n, lo, hi)


def ref_alias(tools: Sequence[Tool]) -> AliasIndex:
    """One alias per non-empty phrase; its distinct term ids; columns sorted by (term, alias)."""
    vocab: dict[str, int] = {}
    pairs, lengths, owners = [], [], []
    for i, tool in enumerate(tools):
        for phrase in (*tool.aliases, *tool.keywords):
            ids = sorted({vocab.setdefault(w, len(vocab)) for w in terms(phrase)})
            if ids:
                pairs += [(j, len(lengths)) for j in ids]
                lengths.append(len(ids))
                owners.append(i)
    pairs.sort()
    col_ptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    col_ptr[1:] = np.cumsum(np.bincount(np.array([j for j, _ in pairs], dtype=np.int64), minlength=len(vocab)))
    rows = np.array([a for _, a in pairs], dtype=np.int32)
    return AliasIndex(vocab, col_ptr, rows, np.ones(len(rows), dtype=np.float32),
                      np.array(lengths, dtype=np.float32), np.array(owners, dtype=np.int64), len(tools))


# ---------------------------------------------------------------- comparisons


def assert_same(got: object, want: object, arrays: Sequence[str], float_arrays: Sequence[str]) -> None:
    assert list(got.vocab.items()) == list(want.vocab.items())  # type: ignore[attr-defined]
    for name in arrays:
        g, w = getattr(got, name), getattr(want, name)
        assert g.dtype == w.dtype, name
        np.testing.assert_array_equal(g, w, err_msg=name)
    for name in float_arrays:
        g, w = getattr(got, name), getattr(want, name)
        assert g.dtype == w.dtype and g.shape == w.shape, name
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=name)


def check_lexical(tools: Sequence[Tool], fields: Mapping[str, float], k1: float, b: float,
                  want: LexicalIndex | None = None) -> None:
    got, want = LexicalIndex.build(tools, fields, k1, b), want or ref_lexical(tools, fields, k1, b)
    assert got.n_docs == want.n_docs
    assert_same(got, want, ("indptr", "rows"), ("data",))


def check_ngram(tools: Sequence[Tool], lo: int, hi: int, fields: Sequence[str], want: NgramIndex | None = None) -> None:
    """Equal where numbering cannot differ; the tools × n-grams counts and weights equal cell for cell."""
    got, want = NgramIndex.build(tools, lo, hi, fields), want or ref_ngram(tools, lo, hi, fields)
    assert (got.n_docs, got.lo, got.hi, got.bits, got.alphabet) == (want.n_docs, want.lo, want.hi, want.bits, want.alphabet)
    assert got.keys.dtype == want.keys.dtype and list(got.keys) == list(want.keys)
    np.testing.assert_array_equal(got.df, want.df)
    np.testing.assert_array_equal(got.idf, want.idf)
    np.testing.assert_allclose(got.norms, want.norms, rtol=1e-12, atol=0)
    assert got.grams() == want.grams() and list(got.vocab) == got.grams()

    def counts(ix: NgramIndex, by: str):
        from scipy import sparse

        n_tok = len(ix.token_ptr) - 1
        t = sparse.csr_array((ix.tool_counts.astype(np.int64), ix.tool_tokens, ix.tool_ptr), shape=(ix.n_docs, n_tok))
        if by == "token":  # the same T, read through the token-major arrays
            t = sparse.csc_array((ix.token_counts.astype(np.int64), ix.token_tools, ix.token_ptr),
                                 shape=(ix.n_docs, n_tok))
        g = sparse.csc_array((ix.gram_counts.astype(np.int64), ix.gram_tokens, ix.gram_ptr), shape=(n_tok, len(ix.keys)))
        return (t @ g).toarray()

    np.testing.assert_array_equal(counts(got, "tool"), counts(want, "tool"))
    np.testing.assert_array_equal(counts(got, "token"), counts(want, "tool"))
    for arr in ("tool_ptr", "token_ptr", "gram_ptr"):
        assert getattr(got, arr).dtype == np.int64
    g, w = got.matrix, want.matrix
    assert g.dtype == w.dtype == np.float32 and g.shape == w.shape and g.nnz == w.nnz
    np.testing.assert_allclose(g.toarray(), w.toarray(), rtol=1e-6, atol=0)


def check_alias(tools: Sequence[Tool], want: AliasIndex | None = None) -> None:
    got, want = AliasIndex.build(tools), want or ref_alias(tools)
    assert got.n_tools == want.n_tools
    assert_same(got, want, ("col_ptr", "col_rows", "col_data", "alias_len", "alias_tool"), ())


@lru_cache(maxsize=1)
def shipped() -> Catalog:
    return load_catalog(default_catalog_path())


@lru_cache(maxsize=1)
def synthetic_2000() -> Catalog:
    return synthetic_catalog(shipped(), 2000, 0)


def tuned_config() -> RankerConfig:
    return config_from_mapping({"weights": TUNED_WEIGHTS}, base=load_config())


CATALOGS = {"shipped": shipped, "synthetic_2000": synthetic_2000}


@cache
def cached_ref_lexical(which: str, k1: float, b: float) -> LexicalIndex:
    return ref_lexical(CATALOGS[which]().tools, load_config().fields, k1, b)


@cache
def cached_ref_ngram(which: str, lo: int, hi: int, fields: tuple[str, ...]) -> NgramIndex:
    return ref_ngram(CATALOGS[which]().tools, lo, hi, fields)


@cache
def cached_ref_alias(which: str) -> AliasIndex:
    return ref_alias(CATALOGS[which]().tools)


@pytest.mark.parametrize("which", sorted(CATALOGS))
def test_lexical_equals_reference(which: str) -> None:
    cfg = load_config()
    for k1, b in ((cfg.bm25.k1, cfg.bm25.b), (1.2, 0.75)):
        check_lexical(CATALOGS[which]().tools, cfg.fields, k1, b, cached_ref_lexical(which, k1, b))


@pytest.mark.parametrize("which", sorted(CATALOGS))
def test_ngram_equals_reference(which: str) -> None:
    for fields in (ALL_FIELDS, SHORT_FIELDS) if which == "shipped" else (ALL_FIELDS,):  # random catalogs cover more
        check_ngram(CATALOGS[which]().tools, 3, 5, fields, cached_ref_ngram(which, 3, 5, fields))


def test_ngram_blocks_kept_or_recomputed_give_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Document frequencies and norms over many blocks of C, some kept from the first pass and some
    multiplied again (a budget of a few blocks), equal the one-block build (checked against the
    reference above) bit for bit."""
    from tooldisc.discovery.indexes import ngrams

    tools = shipped().tools
    whole = NgramIndex.build(tools, 3, 5, ALL_FIELDS)
    monkeypatch.setattr(ngrams, "_NORM_BLOCK", 16)
    monkeypatch.setattr(ngrams, "_KEEP_BYTES", 40_000)  # a few of the 12 blocks
    blocks = NgramIndex.build(tools, 3, 5, ALL_FIELDS)
    np.testing.assert_array_equal(blocks.df, whole.df)
    np.testing.assert_array_equal(blocks.norms.view(np.int64), whole.norms.view(np.int64))


def test_lexical_blocks_give_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Document frequencies by a plain sort per block (``term_df``), cells block by block and kept
    tokens counted per block of tools (``_segment_counts``; fields some tools leave empty) equal
    the one-block build (checked against the reference above) bit for bit."""
    from tooldisc.discovery.indexes import lexical

    tools, cfg = shipped().tools, load_config()
    whole = LexicalIndex.build(tools, cfg.fields, cfg.bm25.k1, cfg.bm25.b)
    monkeypatch.setattr(lexical, "BLOCK_TOOLS", 7)  # 23 blocks, the last one short
    monkeypatch.setattr(lexical, "_COUNT_TOOLS", 5)
    blocks = LexicalIndex.build(tools, cfg.fields, cfg.bm25.k1, cfg.bm25.b)
    assert list(blocks.vocab.items()) == list(whole.vocab.items())
    np.testing.assert_array_equal(blocks.indptr, whole.indptr)
    np.testing.assert_array_equal(blocks.rows, whole.rows)
    np.testing.assert_array_equal(blocks.data.view(np.int32), whole.data.view(np.int32))


@pytest.mark.parametrize("which", sorted(CATALOGS))
def test_ngram_scores_of_a_subset_equal_the_whole_and_the_matrix(which: str) -> None:
    """Exact cosines of a few tools equal those of all tools (factored or by kept columns), bit for bit, and the weights' product."""
    ix = NgramIndex.build(CATALOGS[which]().tools, 3, 5, ALL_FIELDS)
    by_gram = NgramIndex.build(CATALOGS[which]().tools, 3, 5, ALL_FIELDS, columns=True)
    assert ix.columns is None and by_gram.columns is not None
    matrix = ix.matrix.tocsr()
    few = np.arange(0, ix.n_docs, max(1, ix.n_docs // 40))
    for query, _ in gold_queries()[:40]:
        ids, w = qv = ix.query_vector(tokenize(query))
        full = ix.scores(tokenize(query))
        np.testing.assert_array_equal(by_gram.scores(tokenize(query)), full)  # the kept columns: same bits
        np.testing.assert_array_equal(ix.scores_subset([], few, qv), full[few])
        np.testing.assert_array_equal(ix.scores_subset([], few[::-1], qv), full[few[::-1]])
        q = np.zeros(matrix.shape[1], dtype=np.float32)
        q[ids] = w
        np.testing.assert_allclose(full, matrix @ q, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("which", sorted(CATALOGS))
def test_rare_estimate_oracle_equals_its_formula(which: str) -> None:
    """The dense reference of the candidate estimate (tests/discovery/ngram_oracle.py) equals Σ over a tool's
    tokens of (1 + ln count) · the token's rare n-gram share, over the tool's norm."""
    from scipy import sparse

    from tests.discovery.ngram_oracle import rare_estimate

    ix = NgramIndex.build(CATALOGS[which]().tools, 3, 5, SHORT_FIELDS)
    n_tok = len(ix.token_ptr) - 1
    t = sparse.csr_array((1.0 + np.log(ix.tool_counts.astype(np.float64)), ix.tool_tokens, ix.tool_ptr),
                         shape=(ix.n_docs, n_tok))
    g = sparse.csc_array((1.0 + np.log(ix.gram_counts.astype(np.float64)), ix.gram_tokens, ix.gram_ptr),
                         shape=(n_tok, len(ix.keys)))
    max_df = max(2, ix.n_docs // 4)
    for query, _ in gold_queries()[:40]:
        qv = ids, w = ix.query_vector(tokenize(query))
        dense = rare_estimate(ix, max_df, qv)
        q = np.zeros(len(ix.keys))
        rare = ix.df[ids] <= max_df
        q[ids[rare]] = w[rare] * ix.idf[ids[rare]]
        with np.errstate(invalid="ignore", divide="ignore"):
            expected = np.nan_to_num(t @ (g @ q) / ix.norms)
        np.testing.assert_allclose(dense, expected, rtol=1e-9, atol=1e-12)
        assert (dense >= 0).all() and np.array_equal(dense > 0, expected > 0)


def test_ngram_keys_too_wide_for_int64_are_python_ints() -> None:
    """An alphabet × n-gram length beyond 63 bits packs keys as Python ints: the same index."""
    tools = shipped().tools[:40]
    check_ngram(tools, 3, 12, SHORT_FIELDS)
    assert NgramIndex.build(tools, 3, 12, SHORT_FIELDS).keys.dtype == object


@pytest.mark.parametrize("which", sorted(CATALOGS))
def test_alias_equals_reference(which: str) -> None:
    check_alias(CATALOGS[which]().tools, cached_ref_alias(which))


def test_columns_and_tokens_equal_per_tool_calls() -> None:
    tools = synthetic_2000().tools
    columns = {f: field_column(tools, f) for f in (*FIELDS, "no_such_field")}
    table = RawTokens()
    for f, column in columns.items():
        assert column == [field_texts(t).get(f, "") for t in tools], f
        ids, ptr = token_ids(column, table)
        names = table.names()
        assert [[names[i] for i in ids[ptr[k]:ptr[k + 1]]] for k in range(len(tools))] == [tokenize(x) for x in column]


def test_columns_tokenised_together_number_tokens_as_one_call_per_column() -> None:
    """Several fields in one pass (small catalogs): the same ids and offsets per field and the same token
    numbering as one call per field in turn, with texts and pieces shared across fields and non-ASCII ones."""
    from tooldisc.discovery.text.columns import columns_token_ids
    from tooldisc.discovery.text.fields import field_pieces

    tools = [*shipped().tools[:150], Tool(name="فاکتور_فروش", description="فاکتور. Invoice list. فاکتور",
                                          aliases=("invoice list", "فاکتور"), keywords=("Invoice list",))]
    columns = [field_pieces(tools, f) for f in (*FIELDS, "no_such_field")]
    one, together = RawTokens(), RawTokens()
    apart = [token_ids(c, one) for c in columns]
    for (ids, ptr), (ids2, ptr2) in zip(apart, columns_token_ids(columns, together), strict=True):
        np.testing.assert_array_equal(ids, ids2)
        np.testing.assert_array_equal(ptr, ptr2)
    assert one.names() == together.names()
    with pytest.raises(ValueError, match="at most"):
        columns_token_ids([["a"] * 10_000, ["b"] * 10_000], RawTokens())


@lru_cache(maxsize=1)
def gold_queries() -> tuple[tuple[str, tuple[str, ...]], ...]:
    from tooldisc.evaluation.inputs import default_gold_path
    from tooldisc.gold.loader import load_gold

    gold = load_gold(default_gold_path(), check=False)
    return tuple((q.query, tuple(c for r, c in q.history if r == "user")) for q in gold.queries)


@pytest.mark.parametrize(("which", "config"),
                         [("shipped", "default"), ("shipped", "tuned"), ("synthetic_2000", "tuned")])
def test_offers_equal_with_reference_indexes(which: str, config: str) -> None:
    """Gold queries get the same offers (names, scores, hashes) from reference-built indexes."""
    catalog = CATALOGS[which]()
    cfg = tuned_config() if config == "tuned" else load_config()
    engine = Discoverer(catalog, cfg)
    ix = engine.index
    fields = ALL_FIELDS if len(catalog) <= cfg.ngram.long_fields_max_tools else SHORT_FIELDS
    oracle = Discoverer(catalog, cfg, index=replace(
        ix, lexical=cached_ref_lexical(which, cfg.bm25.k1, cfg.bm25.b),
        ngram=None if ix.ngram is None else cached_ref_ngram(which, cfg.ngram.lo, cfg.ngram.hi, fields),
        alias=None if ix.alias is None else cached_ref_alias(which)))
    queries = gold_queries()
    assert queries
    for query, history in queries[:60] if which != "shipped" else queries:
        got, want = engine.discover(query, history=history), oracle.discover(query, history=history)
        assert [(c.name, c.score) for c in got.candidates] == [(c.name, c.score) for c in want.candidates], query
        assert got.offer_hash == want.offer_hash


# ---------------------------------------------------------------- random catalogs

# Mostly characters that exercise folding (Arabic/Persian twins, digits, ZWNJ, diacritics,
# compatibility forms, case, separators, NUL and the sentence split "". ""), plus any code point.
_ALPHABET = st.one_of(
    st.sampled_from(list("abcXYZ019_ -.:/&\n\x00\x1eيكةۀأإٱؤیکهاو۱٢\u200c\u200d\u0640\u064b\u0670ﬁ①ＡΣςİß. ")),
    st.characters(blacklist_categories=("Cs",)),
)
_TEXT = st.text(_ALPHABET, max_size=40)


def _printable(name: str) -> str:
    from tooldisc.terminal import is_clean

    return "".join(c for c in name if is_clean(c))
_WORDS = st.lists(st.sampled_from(["invoice", "invoices", "the", "bill", "فاکتور", "فاكتور", "Stock", "a. b", " \n ", "x \n y. "])
                  | _TEXT,
                  max_size=4)


@st.composite
def tools(draw: st.DrawFn) -> list[Tool]:
    out = []
    for i in range(draw(st.integers(0, 6))):
        params = draw(st.sampled_from([None, {"type": "object", "properties": {"invoiceId": {}, "due_date": {}}},
                                       {"type": "object", "properties": {}}, {"type": "object"}]))
        out.append(Tool(
            # a name holds no control or format character (the loader's rule, and Tool's): those drawn are left out
            name=_printable(f"t{i}_" + draw(st.sampled_from(["createInvoice", "sales.create", "ns::x", "a-b/c", ""]))
                            + draw(_TEXT)),
            description=draw(st.sampled_from(["", "Creates an invoice. Sends it. ", "Creates an invoice. "])) + draw(_TEXT),
            aliases=tuple(draw(_WORDS)), keywords=tuple(draw(_WORDS)), examples=tuple(draw(_WORDS)),
            domains=tuple(draw(st.lists(st.sampled_from(["sales", "inventory.stock", "hrPayroll"]) | _TEXT, max_size=3))),
            capability=draw(st.none() | st.sampled_from(["sales.invoice", "stockAdjust"]) | _TEXT),
            parameters=params,
        ))
    return out


_SLOW = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SLOW
@given(tools(), st.dictionaries(st.sampled_from([*FIELDS, "unknown"]), st.sampled_from([0.0, 0.5, 1.0, 3.0]), max_size=9),
       st.sampled_from([0.0, 0.64, 1.2]), st.sampled_from([0.0, 0.321, 0.75, 1.0]))
def test_lexical_random_catalogs(ts: list[Tool], fields: dict[str, float], k1: float, b: float) -> None:
    check_lexical(ts, fields, k1, b)


@_SLOW
@given(tools(), st.integers(1, 5), st.integers(1, 6), st.sampled_from([ALL_FIELDS, SHORT_FIELDS, ("description",), ()]))
def test_ngram_random_catalogs(ts: list[Tool], lo: int, hi: int, fields: tuple[str, ...]) -> None:
    check_ngram(ts, lo, hi, fields)


@_SLOW
@given(tools())
def test_alias_random_catalogs(ts: list[Tool]) -> None:
    check_alias(ts)


@_SLOW
@given(st.lists(_TEXT | st.text(max_size=60), max_size=8))
def test_token_ids_random_unicode(texts: list[str]) -> None:
    table = RawTokens()
    for column in (texts, [t + ". " + t for t in texts], [". ".join(texts)], [" \n ".join(texts), *texts]):
        ids, ptr = token_ids(column, table)
        names = table.names()
        assert [[names[i] for i in ids[ptr[k]:ptr[k + 1]]] for k in range(len(column))] == [tokenize(t) for t in column]


def _normalize_reference(text: str) -> str:
    """``normalize`` as first written: NFKC, fold mapped letters, strip diacritics, casefold."""
    text = text_mod._MAPPED.sub(lambda m: m.group().translate(text_mod._CHAR_MAP), unicodedata.normalize("NFKC", text))
    return re.sub("[\u064b-\u065f\u0670\u06d6-\u06ed]", "", text).casefold()


@settings(max_examples=500, deadline=None)
@given(_TEXT | st.text())
def test_normalize_equals_reference(text: str) -> None:
    assert normalize(text) == _normalize_reference(text)


def test_normalize_every_code_point() -> None:
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert normalize(every) == _normalize_reference(every)
    for c in range(128):
        assert normalize(chr(c)) == _normalize_reference(chr(c))


_NAME_CHARS = st.one_of(st.sampled_from(list("abcXYZ09._-/&: \t\x1c\x1f\x00\u3000\xa0فاکتورÉé")),
                        st.characters(blacklist_categories=("Cs",)))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(_NAME_CHARS, max_size=20) | st.sampled_from(["createInvoice", "HTTPServer_v2", "a__b", "x.y-z"]),
                max_size=12))
def test_split_names_equals_split_name(names: list[str]) -> None:
    """The joined-string splitter (translate for ASCII, camel-case only where a capital is) is ``split_name`` per name."""
    assert text_mod.split_names(names) == [text_mod.split_name(x) for x in names]
    ascii_names = [x.encode("ascii", "ignore").decode().replace(":", "") for x in names]
    assert text_mod.split_names(ascii_names) == [text_mod.split_name(x) for x in ascii_names]
