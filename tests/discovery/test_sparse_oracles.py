"""The sparse indexes against outside implementations: bm25s for BM25, scikit-learn for n-gram TF-IDF.

Like is compared with like. Both oracles get tooldisc's own tokens: bm25s the same
term lists (its default tokenizer would drop one-letter words, use its own stop
words and stem English only), scikit-learn the same tokens joined by spaces (its
``char_wb`` analyzer splits on whitespace and pads each word, as ours does). Known
differences, not compared: BM25F field weights and several fields have no bm25s
equivalent (so one field at weight 1); scikit-learn drops query n-grams outside the
vocabulary, while tooldisc counts them in the query norm (so the queries here use
only known n-grams); and for a word whose padded length is below the smallest n,
``char_wb`` emits the whole padded word where tooldisc emits nothing (impossible
at the shipped n = 3..5, which the test uses).

Tolerances: tooldisc stores float32 weights computed in float64 (bm25s computes in
float32, scikit-learn in float64), so cells agree to a relative 1e-5 (BM25) and an
absolute 1e-6 (unit-length TF-IDF rows).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from tooldisc.discovery.catalog import Catalog
from tooldisc.discovery.catalog.io import load_catalog, shipped_datasets
from tooldisc.discovery.indexes.lexical import LexicalIndex
from tooldisc.discovery.indexes.ngrams import ALL_FIELDS, SHORT_FIELDS, NgramIndex
from tooldisc.discovery.text import tokenize
from tooldisc.discovery.text.fields import field_column, terms


@lru_cache(maxsize=2)
def catalog(which: int) -> Catalog:
    return load_catalog(shipped_datasets()[which][0])


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize(("field", "k1", "b"), [("description", 1.2, 0.75), ("name", 0.64, 0.321),
                                                ("examples", 1.5, 1.0)])
def test_single_field_bm25_equals_bm25s_lucene(which: int, field: str, k1: float, b: float) -> None:
    import bm25s

    tools = catalog(which).tools
    ours = LexicalIndex.build(tools, {field: 1.0}, k1, b, stem=True)
    docs = [terms(text) for text in field_column(tools, field)]
    oracle = bm25s.BM25(method="lucene", k1=k1, b=b)
    oracle.index(docs, show_progress=False)
    matrix = ours.matrix.tocsc()
    assert matrix.shape == (len(tools), len(ours.vocab)) and len(ours.vocab) > 20
    vocab = list(ours.vocab)
    for term in vocab[::7]:  # a one-term query scores that term's column
        column = matrix[:, [ours.vocab[term]]].toarray().ravel()
        np.testing.assert_allclose(column, oracle.get_scores([term]), rtol=1e-5, atol=1e-6, err_msg=term)
    # every cell at once: each tool's row sum is its score for a query of the whole vocabulary
    np.testing.assert_allclose(np.asarray(matrix.sum(axis=1)).ravel(), oracle.get_scores(vocab), rtol=1e-5)
    for text in ("list unpaid invoices", "restart the failing deploy pipeline", "گزارش فروش ماهانه"):
        q = [t for t in dict.fromkeys(terms(text)) if t in ours.vocab]
        if q:
            np.testing.assert_allclose(ours.scores(text), oracle.get_scores(q), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("fields", [ALL_FIELDS, SHORT_FIELDS])
def test_ngram_tfidf_equals_sklearn_char_wb(which: int, fields: tuple[str, ...]) -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    tools = catalog(which).tools
    ours = NgramIndex.build(tools, 3, 5, fields)
    columns = [field_column(tools, f) for f in fields]
    docs = [" ".join(tok for col in columns for tok in tokenize(col[i])) for i in range(len(tools))]
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), lowercase=False, sublinear_tf=True,
                          smooth_idf=True, norm="l2", dtype=np.float64)
    theirs = vec.fit_transform(docs).tocsc()
    assert set(ours.vocab) == set(vec.vocabulary_)
    order = np.array([vec.vocabulary_[g] for g in ours.vocab])  # our column j is their column order[j]
    got = ours.matrix.tocsc()
    want = theirs[:, order]
    assert got.shape == want.shape and got.nnz == want.nnz
    assert abs(got - want).max() <= 1e-6
    for i in (0, len(tools) // 2, len(tools) - 1):  # a tool's own text as a query: every n-gram is known
        tokens = tokenize(docs[i])[:6]
        q = vec.transform([" ".join(tokens)])
        np.testing.assert_allclose(ours.scores(tokens), (theirs @ q.T).toarray().ravel(), atol=1e-6, rtol=0)
