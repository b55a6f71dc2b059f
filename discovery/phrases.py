"""The phrases of a request: what learned expansions and phrase weights are made of and matched on.

A request is scrubbed first — e-mail addresses, URLs, quoted text, numbers and
id-like tokens are cut out, and a phrase never spans a cut — then split into word
phrases of one to three tokens that neither start nor end with a stop word. ``learn``
counts them over labelled requests (:mod:`tooldisc.evaluation.phrases`); discovery
extracts them from each query to look up learned phrase weights, so both sides agree
on what a phrase is.
"""

from __future__ import annotations

import re

from tooldisc.discovery.fields import stopwords
from tooldisc.discovery.text import tokenize

_EMAIL = re.compile(r"\S+@\S+")
_URL = re.compile(r"(?:[a-zA-Z][a-zA-Z0-9+.-]*://|www\.)\S+")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|«[^»]*»|`[^`]*`")
# Mixed-case runs such as ``rOBhSVKGVKe`` (generated ids) and long hex strings.
_IDLIKE = re.compile(r"\b\w*[a-z]\w*[A-Z]\w*[A-Z]\w*\b|\b[0-9a-fA-F-]{16,}\b")
_BREAK = re.compile(r"[|.,;:!?؟،()\[\]{}<>\n]")
_CUT = re.compile("|".join(p.pattern for p in (_EMAIL, _URL, _QUOTED, _IDLIKE)))  # one pass, same cuts
# What any match of _CUT needs somewhere in the text: "@", "://" or "www.", a quote, a lowercase
# ASCII letter followed in its word by two capitals (a mixed-case id) or 16 hex characters in a row.
# Nine requests in ten have none of them, and this check (possessive runs: no backtracking) costs a
# third of _CUT's scan; when it fails, _CUT.sub would return the text unchanged.
_MAY_CUT = re.compile(r"[@\"“«`]|://|www\.|[a-z][^\sA-Z]*+[A-Z][^\sA-Z]*+[A-Z]|[0-9a-fA-F-]{16}")
_DIGIT = re.compile(r"\d")
MAX_TOKEN_CHARS = 24
MAX_N = 3


def scrub(text: str) -> list[list[str]]:
    """Token runs of ``text`` with personal-looking spans removed; phrases never cross a cut."""
    if _MAY_CUT.search(text):
        text = _CUT.sub(" | ", text)
    runs: list[list[str]] = []
    for piece in _BREAK.split(text):
        toks = tokenize(piece)
        if not toks:
            continue
        # one search over the piece's tokens instead of one per token: most pieces hold no digit
        if _DIGIT.search(" ".join(toks)) is None and max(map(len, toks)) <= MAX_TOKEN_CHARS:
            runs.append(toks)
            continue
        run: list[str] = []
        for tok in toks:
            if len(tok) > MAX_TOKEN_CHARS or _DIGIT.search(tok):
                if run:
                    runs.append(run)
                run = []
            else:
                run.append(tok)
        if run:
            runs.append(run)
    return runs


def phrases(text: str, max_n: int = MAX_N) -> set[str]:
    """Distinct phrases of 1..max_n tokens in ``text``, none starting or ending with a stop word."""
    stop = stopwords()
    out: set[str] = set()
    add = out.add
    for run in scrub(text):
        ok = [t not in stop for t in run]  # each token looked up once, not once per phrase it bounds
        m = len(run)
        for i, t in enumerate(run):
            if ok[i]:
                add(t)
                phrase = t
                for j in range(i + 1, min(i + max_n, m)):
                    phrase = f"{phrase} {run[j]}"  # grown a token at a time, not joined from a slice
                    if ok[j]:
                        add(phrase)
    return out
