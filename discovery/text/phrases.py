"""The phrases of a request: what learned expansions and phrase weights are made of and matched on.

A request is scrubbed first — e-mail addresses, URLs, quoted text, numbers and
id-like tokens are cut out, and a phrase never spans a cut — then split into word
phrases of one to three tokens that neither start nor end with a stop word. ``learn``
counts them over labelled requests (:mod:`tooldisc.evaluation.learn.phrases`); discovery
extracts them from each query to look up learned phrase weights, so both sides agree
on what a phrase is.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from tooldisc.discovery.text import tokenize
from tooldisc.discovery.text.fields import stopwords

_EMAIL = re.compile(r"\S+@\S+")
_URL = re.compile(r"(?:[a-zA-Z][a-zA-Z0-9+.-]*://|www\.)\S+")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|«[^»]*»|`[^`]*`")
# Mixed-case runs such as ``rOBhSVKGVKe`` (generated ids) and long hex strings.
_IDLIKE = re.compile(r"\b\w*[a-z]\w*[A-Z]\w*[A-Z]\w*\b|\b[0-9a-fA-F-]{16,}\b")
_BREAK = re.compile(r"[|.,;:!?؟،()\[\]{}<>\n]")
# What is cut, as one regex: the definition. Python's engine backtracks, and on a long run
# without spaces every start position rescans the run (quadratic: 40,000 characters took
# seconds), so :func:`cut` finds the same matches in one linear pass; tests hold it to this.
_CUT = re.compile("|".join(p.pattern for p in (_EMAIL, _URL, _QUOTED, _IDLIKE)))
# What any match of _CUT needs somewhere in the text: "@", "://" or "www.", a quote, a lowercase
# ASCII letter followed in its word by two capitals (a mixed-case id) or 16 hex characters in a
# row. Nine requests in ten have none of them, and when this check fails, _CUT would change
# nothing. Linear: the mixed-case test starts only where a run of non-space, non-capital
# characters starts, checks that the run holds a lowercase letter, and takes the run whole.
_MAY_CUT = re.compile(r"[@\"“«`]|://|www\.|(?<![^\sA-Z])(?=[^\sA-Z]*?[a-z])[^\sA-Z]*+[A-Z][^\sA-Z]*+[A-Z]"
                      r"|[0-9a-fA-F-]{16}")
_DIGIT = re.compile(r"\d")
MAX_TOKEN_CHARS = 24
MAX_N = 3

# The pieces cut() finds each alternative of _CUT with, each linear: a run is matched once from
# its first character (a lookbehind refuses every later start without scanning).
_CHUNK = re.compile(r"\S+")
_WORD = re.compile(r"\w+")
_SCHEME_RUN = re.compile(r"(?<![a-zA-Z0-9+.-])[a-zA-Z0-9+.-]++(?=://\S)")
_LETTER = re.compile(r"[a-zA-Z]")
_WWW = re.compile(r"www\.(?=\S)")
_HEX_RUN = re.compile(r"(?<![0-9a-fA-F-])[0-9a-fA-F-]{16,}+")
_DASHES = re.compile(r"-+")
_LOWER, _UPPER = re.compile(r"[a-z]"), re.compile(r"[A-Z]")
_PAIRS = (('"', '"'), ("“", "”"), ("«", "»"), ("`", "`"))


def _is_word(text: str, i: int) -> bool:
    """``\\w`` at ``i`` (outside the text: no), as ``re`` decides it for ``\\b``."""
    return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")


def _candidates(text: str) -> list[list[tuple[int, int, int, bool]]]:
    """Per alternative of _CUT, in its order: ``(first, last, end, letter)`` — the alternative matches
    at every start in ``first..last`` (inclusive; with ``letter``, only at an ASCII letter), ending at
    ``end``; sorted by start.

    The e-mail and scheme alternatives match from many starts of one run to the same end (the
    chunk's end), so they are ranges; the others match at single starts.
    """
    email: list[tuple[int, int, int, bool]] = []
    starts: list[int] = []
    ends: list[int] = []
    for m in _CHUNK.finditer(text):
        s, e = m.span()
        starts.append(s)
        ends.append(e)
        if "@" in m.group():
            # \S+@\S+ from p: an "@" after p with a character after it; the match runs to the chunk's end
            at = text.rfind("@", s, e - 1)
            if at > s:
                email.append((s, at - 1, e, False))
    url: list[tuple[int, int, int, bool]] = []
    if "://" in text or "www." in text:
        def end_of(i: int) -> int:
            return ends[bisect_right(starts, i) - 1]

        # a scheme: from any ASCII letter of the run before "://"; "www.": from its first "w"
        url = [(m.start(), m.end() - 1, end_of(m.start()), True) for m in _SCHEME_RUN.finditer(text)]
        url += [(m.start(), m.start(), end_of(m.start()), False) for m in _WWW.finditer(text)]
        url.sort()
    quoted: list[tuple[int, int, int, bool]] = []
    for opener, closer in _PAIRS:
        if opener not in text:
            continue
        close = [m.start() for m in re.finditer(re.escape(closer), text)]
        # an opener closes at the next closer after it (for '"' and '`', the next of its own kind);
        # every opener is listed, and cut() skips the ones inside a match it took
        for m in re.finditer(re.escape(opener), text):
            j = bisect_right(close, m.start())
            if j < len(close):
                quoted.append((m.start(), m.start(), close[j] + 1, False))
    quoted.sort()
    mixed: list[tuple[int, int, int, bool]] = []
    if _MAY_MIX.search(text):
        for m in _WORD.finditer(text):  # a whole word holding a lowercase, then two capitals
            s, e = m.span()
            low = _LOWER.search(text, s, e)
            up = _UPPER.search(text, low.end(), e) if low else None
            if up and _UPPER.search(text, up.end(), e):
                mixed.append((s, s, e, False))
    hexes: list[tuple[int, int, int, bool]] = []
    for m in _HEX_RUN.finditer(text):
        h0, hi = m.span()
        # \b inside the run sits where hex digits and dashes meet; at its ends, against the neighbours
        bounds = [h0] if _is_word(text, h0 - 1) != _is_word(text, h0) else []
        for d in _DASHES.finditer(text, h0, hi):
            bounds += [q for q in d.span() if h0 < q < hi]
        last = hi if _is_word(text, hi - 1) != _is_word(text, hi) else (bounds[-1] if bounds else -1)
        hexes += [(q, q, last, False) for q in bounds if q + 16 <= last]
    return [email, url, quoted, mixed, hexes]


_MAY_MIX = re.compile(r"[A-Z][^\WA-Z]*+[A-Z]")


def cut(text: str, replacement: str = " | ") -> str:
    """``_CUT.sub(replacement, text)`` in time linear in ``text``: the same matches, the same result.

    ``re.sub`` scans left to right; at each position the first alternative that matches
    wins, and the scan resumes after the match. Here every alternative's possible matches
    are listed first (linear passes), then merged in that order; each list is read once.
    """
    alts = _candidates(text)
    at = [0] * len(alts)
    pos, last, out = 0, 0, []
    while True:
        best: tuple[int, int] | None = None
        for a, items in enumerate(alts):
            i, found = at[a], None
            while i < len(items):
                first, final, end, letter = items[i]
                if final >= pos:
                    start = max(first, pos)
                    if not letter:
                        found = start
                        break
                    hit = _LETTER.search(text, start, final + 1)
                    if hit is not None:
                        # a later start in this run finds this letter again (or the run is behind it)
                        items[i] = (hit.start(), final, end, letter)
                        found = hit.start()
                        break
                i += 1
            at[a] = i
            if found is not None and (best is None or found < best[0]):
                best = (found, items[i][2])
        if best is None:
            break
        out += [text[last:best[0]], replacement]
        last = pos = best[1]
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def scrub(text: str) -> list[list[str]]:
    """Token runs of ``text`` with personal-looking spans removed; phrases never cross a cut."""
    if _MAY_CUT.search(text):
        text = cut(text)
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
    return run_phrases(scrub(text), max_n)


def run_phrases(runs: list[list[str]], max_n: int = MAX_N) -> set[str]:
    """The phrases of already scrubbed token runs (:func:`scrub`): what :func:`phrases` returns for their text."""
    stop = stopwords()
    out: set[str] = set()
    add = out.add
    for run in runs:
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
