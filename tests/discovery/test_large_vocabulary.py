"""Index builds past 4,096 tools (several blocks) with more than 65,536 distinct terms.

Term ids are uint16 while a field's vocabulary fits and int32 after; the document
frequency step packs (tool, term) pairs into one integer per block of 4,096 tools. A
catalog with both used to end every build in a casting error (issue 25). These tests
build one with ≥ 70,000 distinct terms and 5,000 tools (indexed retrieval on), check that
the block-by-block build equals the one-block build bit for bit, and that each tool is
found by its own words.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from tooldisc.discovery.catalog import build_catalog
from tooldisc.discovery.config import load_config
from tooldisc.discovery.indexes.lexical import LexicalIndex
from tooldisc.discovery.pipeline import Discoverer

N_TOOLS = 5_000
WORDS_PER_TOOL = 15


def _word(i: int) -> str:
    """A distinct made-up word per ``i`` (letters only: every one is a term of its own)."""
    out, i = "", i + 1
    while i:
        i, r = divmod(i, 26)
        out += chr(97 + r)
    return f"q{out}z"


@cache
def big_catalog():
    tools = [{"name": f"tool_{i}", "side_effect": "none",
              # the name's words are few (uint16 ids), the description's many (int32 ids once past 65,535)
              "description": " ".join(_word(i * WORDS_PER_TOOL + j) for j in range(WORDS_PER_TOOL))}
             for i in range(N_TOOLS)]
    return build_catalog({"catalog_version": "big", "tools": tools}, source="big")


@pytest.fixture(scope="module")
def engine() -> Discoverer:
    return Discoverer(big_catalog(), load_config())


def test_the_build_holds_every_term_and_finds_each_tool_by_its_words(engine: Discoverer) -> None:
    assert len(engine.catalog) > 4_096
    assert len(engine.index.lexical.vocab) >= 70_000
    for i in (0, 4_095, 4_096, 4_999):
        word = _word(i * WORDS_PER_TOOL + 7)
        offer = engine.discover(f"{word} please", None, 5)
        assert offer.names[0] == f"tool_{i}", (word, offer.names)


def test_blocks_equal_one_block_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    from tooldisc.discovery.indexes import lexical

    tools, cfg = big_catalog().tools, load_config()
    blocks = LexicalIndex.build(tools, cfg.fields, cfg.bm25.k1, cfg.bm25.b)
    monkeypatch.setattr(lexical, "BLOCK_TOOLS", 1 << 30)  # one block: document frequencies from the cells
    whole = LexicalIndex.build(tools, cfg.fields, cfg.bm25.k1, cfg.bm25.b)
    assert list(blocks.vocab.items()) == list(whole.vocab.items())
    np.testing.assert_array_equal(blocks.indptr, whole.indptr)
    np.testing.assert_array_equal(blocks.rows, whole.rows)
    np.testing.assert_array_equal(blocks.data.view(np.int32), whole.data.view(np.int32))
