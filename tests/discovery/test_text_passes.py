"""Every pass over a request's text is linear, and the linear forms equal the regexes they replace.

Issue 25 item 8: with a learned file a 40,000-character request took 7.2 s (the phrase
cut rescanned a run without spaces from every start), and 10,000 spaces took half a
minute to split into clauses. Each pass is timed on 10 KB and on 1 MB of text built to
hit every pattern's worst case; linear work grows about 100 times (cache effects up to
~300), quadratic work 10,000 times, so the bound of 1,000 separates them on a loaded
machine without measuring absolute time. The requests a user can send are capped
(:data:`tooldisc.limits.MAX_QUERY_CHARS`); the passes are timed past the cap, directly.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.config import load_config
from tooldisc.discovery.learned import Expansions, Learned
from tooldisc.discovery.model import Tool
from tooldisc.discovery.mutation import _QUOTED, load_classifier, quoted_spans
from tooldisc.discovery.pipeline import Discoverer, _history_texts
from tooldisc.discovery.rank.clauses import _SEQUENCE, split_clauses
from tooldisc.discovery.stages import Request
from tooldisc.discovery.text import tokenize
from tooldisc.discovery.text.phrases import _CUT, _MAY_CUT, cut, phrases
from tooldisc.evaluation.learn.phrases import scrubbed, shared_phrases
from tooldisc.limits import MAX_QUERY_CHARS

MAX_RATIO = 1_000
# The worst case of every pattern: runs a backtracking engine rescans (hex and scheme characters,
# mixed case, unclosed quotes, spaces, "and" before spaces), cuts, clause and sentence breaks.
SEGMENTS = ("a", "aB", "“", " ", "x@", "a. ", " and", "http://", "deadbeef-", "فاکتور ", " 'a", "1 ", "\n",
            "delete ", "then ", "«", "www.")


def adversarial(n: int) -> str:
    per = n // len(SEGMENTS)
    return "".join((s * (per // len(s) + 1))[:per] for s in SEGMENTS)


def _seconds(fn: Callable[[str], Any], text: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - t0)
    return best


def _ratio(fn: Callable[[str], Any]) -> float:
    small, big = adversarial(10_000), adversarial(1_000_000)
    fn(small)  # warm: caches, lazy tables
    return _seconds(fn, big, 1) / max(_seconds(fn, small, 5), 1e-6)


@cache
def _engine() -> Discoverer:
    """A catalog with learned expansions and phrase weights: every step's pass runs (the clauses step's
    split is timed on its own: on, it ranks each clause again, the same passes on parts of the text)."""
    rng = random.Random(0)
    words = ("invoice", "unpaid", "bill", "customer", "report", "export", "stock", "فاکتور", "delete", "hotel")
    tools = [Tool(name=f"t{i:02d}", description=" ".join(rng.sample(words, 3)), side_effect="none") for i in range(40)]
    catalog = catalog_from_tools(tools)
    phrases_of = {t.name: (t.definition_hash, (("unpaid invoice", 5), ("bill", 4))) for t in catalog.tools[:20]}
    weights = {t.name: {"unpaid invoice": 1.5, "bill": 0.5} for t in catalog.tools[:20]}
    learned = Learned(catalog.hash, Expansions(3, 8, phrases_of, 1.0, weights, 4.0, 0.25))
    return Discoverer(catalog, load_config(), learned=learned)


def _request(text: str) -> Any:
    """One request through every step, past the cap (a Request is built as discover() builds it)."""
    engine = _engine()
    req = Request(text, engine.default_context, 10, _history_texts(()), tuple(tokenize(text)), None, 10)
    return engine._run(req)


PASSES: dict[str, Callable[[str], Any]] = {
    "discover (every step, learned file)": _request,
    "phrases (scrub and cut)": phrases,
    "mutation class (quoted spans, clauses)": load_classifier().classify,
    "clauses": split_clauses,
    "tokenize": tokenize,
    "learn: k-anonymous phrases": lambda text: shared_phrases([(scrubbed(text), phrases(text), ("t",))], 1, 10),
}


@pytest.mark.parametrize("name", list(PASSES))
def test_each_text_pass_is_linear(name: str) -> None:
    ratio = _ratio(PASSES[name])
    assert ratio < MAX_RATIO, f"{name}: 1 MB took {ratio:.0f} times as long as 10 KB (linear: ~100)"


@pytest.mark.parametrize("unit", ["abc.", "xyz aBc."])
def test_the_cut_pre_check_is_linear_where_it_finds_nothing(unit: str) -> None:
    """Lowercase runs with no capital pair and no 16 hex digits: the pre-check must read them once."""
    small, big = unit * (10_000 // len(unit)), unit * (1_000_000 // len(unit))
    assert _MAY_CUT.search(small) is None
    ratio = _seconds(_MAY_CUT.search, big, 1) / max(_seconds(_MAY_CUT.search, small, 5), 1e-6)
    assert ratio < MAX_RATIO, ratio


def test_a_request_at_the_cap_takes_well_under_a_second() -> None:
    """The cap keeps the linear constant small: the worst request a user can send, end to end."""
    text = adversarial(MAX_QUERY_CHARS)
    assert len(text) <= MAX_QUERY_CHARS
    engine = _engine()
    engine.discover(text[:100])
    t0 = time.perf_counter()
    engine.discover(text)
    assert time.perf_counter() - t0 < 2.0


# --- the linear forms equal the definitions -------------------------------------------------

CUT_ALPHABET = "aBcZf09-@:/w. \"`“”«»é_\nE1"


@settings(max_examples=600, deadline=None, database=None)
@given(st.text(alphabet=CUT_ALPHABET, max_size=40))
def test_cut_equals_the_regex_sub(text: str) -> None:
    assert cut(text) == _CUT.sub(" | ", text)


# The pre-check as first written: it tried the mixed-case test from every lowercase letter (quadratic).
_MAY_CUT_DEFINITION = re.compile(r"[@\"“«`]|://|www\.|[a-z][^\sA-Z]*+[A-Z][^\sA-Z]*+[A-Z]|[0-9a-fA-F-]{16}")


@settings(max_examples=600, deadline=None, database=None)
@given(st.text(alphabet=CUT_ALPHABET + " \t", max_size=40))
def test_the_cut_pre_check_equals_its_definition(text: str) -> None:
    assert bool(_MAY_CUT.search(text)) == bool(_MAY_CUT_DEFINITION.search(text))


@settings(max_examples=600, deadline=None, database=None)
@given(st.text(alphabet="a'\"`“”«»‘’ \n_é1", max_size=30))
def test_quoted_spans_equal_the_regex(text: str) -> None:
    assert quoted_spans(text) == [m.span() for m in _QUOTED.finditer(text)]


# The clause markers as first written; the shipped pattern only starts a white-space run's match at
# the run's first character, possessively, which is what makes it linear.
_SEQUENCE_DEFINITION = re.compile(
    r"(?:,\s*|\s+)(?:and\s+)?then\b,?\s*"
    r"|(?:,\s*(?:and\s+)?|\s+and\s+)(?:after\s+that|afterwards|next|finally|lastly|additionally|also|moreover|"
    r"furthermore|subsequently|besides)\b,?\s*"
    r"|(?:[،,]\s*|\s+)(?:و\s+)?(?:سپس|بعدش|بعد\s+از\s+آن|و\s+بعد|همچنین|در\s+ضمن|در\s+پایان)(?=\s)\s*",
    re.IGNORECASE,
)
CLAUSE_WORDS = ("then", "Then", "and", "after", "that", "afterwards", "next", "also", "x", "invoice", ",", " ", "  ",
                "\t", "\n", ".", ";", "و", "سپس", "بعدش", "بعد", "از", "آن", "همچنین", "در", "ضمن", "پایان", "،",
                "\u00a0", "then,")


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(st.sampled_from(CLAUSE_WORDS), max_size=14))
def test_clause_markers_equal_their_definition(words: list[str]) -> None:
    text = "".join(words)
    assert _SEQUENCE.split(text) == _SEQUENCE_DEFINITION.split(text)
    assert split_clauses(text) == _split_clauses_definition(text)


def _split_clauses_definition(text: str, min_tokens: int = 2, max_clauses: int = 8) -> tuple[str, ...]:
    """split_clauses as first written (joining a short piece into the one before at once)."""
    from tooldisc.discovery.rank.clauses import _SENTENCE

    pieces: list[str] = []
    for sentence in _SENTENCE.split(text):
        for part in _SEQUENCE_DEFINITION.split(sentence):
            part = part.strip(" \t,،")
            if not part:
                continue
            if pieces and len(tokenize(part)) < min_tokens:
                pieces[-1] = f"{pieces[-1]} {part}"
            else:
                pieces.append(part)
    if pieces and len(tokenize(pieces[0])) < min_tokens and len(pieces) > 1:
        pieces[1] = f"{pieces[0]} {pieces[1]}"
        pieces.pop(0)
    if len(pieces) > max_clauses:
        pieces[max_clauses - 1:] = [" ".join(pieces[max_clauses - 1:])]
    return tuple(pieces)


def test_python_word_and_space_classes_are_what_the_linear_forms_assume() -> None:
    """The linear forms test ``\\w`` as ``str.isalnum() or '_'`` (for ``\\b``): true for every code point."""
    chars = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    by_regex = set(re.findall(r"\w", chars))
    by_str = {c for c in chars if c.isalnum() or c == "_"}
    assert by_regex == by_str
