"""k-anonymous phrases from labelled requests: the query expansions ``tooldisc learn`` keeps.

A request is scrubbed first — e-mail addresses, URLs, quoted text, numbers and
id-like tokens are cut out, and a phrase never spans a cut — then split into word
phrases of one to three tokens that neither start nor end with a stop word. A phrase
is kept for a tool only when at least ``min_requests`` *distinct* requests for that
tool contain it, so no single request (and no single user's wording) is stored.
What is kept is then ranked by how many requests share it times how specific it is to
the tool, de-duplicated, and capped.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from tooldisc.discovery.fields import stopwords
from tooldisc.discovery.text import tokenize

_EMAIL = re.compile(r"\S+@\S+")
_URL = re.compile(r"(?:[a-zA-Z][a-zA-Z0-9+.-]*://|www\.)\S+")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|«[^»]*»|`[^`]*`")
# Mixed-case runs such as ``rOBhSVKGVKe`` (generated ids) and long hex strings.
_IDLIKE = re.compile(r"\b\w*[a-z]\w*[A-Z]\w*[A-Z]\w*\b|\b[0-9a-fA-F-]{16,}\b")
_BREAK = re.compile(r"[|.,;:!?؟،()\[\]{}<>\n]")
MAX_TOKEN_CHARS = 24
MAX_N = 3


def scrub(text: str) -> list[list[str]]:
    """Token runs of ``text`` with personal-looking spans removed; phrases never cross a cut."""
    for pattern in (_EMAIL, _URL, _QUOTED, _IDLIKE):
        text = pattern.sub(" | ", text)
    runs: list[list[str]] = [[]]
    for piece in _BREAK.split(text):
        for tok in tokenize(piece):
            if any(c.isdigit() for c in tok) or len(tok) > MAX_TOKEN_CHARS:
                runs.append([])
            else:
                runs[-1].append(tok)
        runs.append([])
    return [r for r in runs if r]


def phrases(text: str, max_n: int = MAX_N) -> set[str]:
    """Distinct phrases of 1..max_n tokens in ``text``, none starting or ending with a stop word."""
    stop = stopwords()
    out: set[str] = set()
    for run in scrub(text):
        for n in range(1, max_n + 1):
            for i in range(len(run) - n + 1):
                gram = run[i:i + n]
                if gram[0] not in stop and gram[-1] not in stop:
                    out.add(" ".join(gram))
    return out


def shared_phrases(requests: Iterable[tuple[str, set[str], Sequence[str]]], min_requests: int,
                   max_phrases: int) -> dict[str, tuple[tuple[str, int], ...]]:
    """Tool → its kept phrases with the number of distinct requests containing each.

    ``requests`` are (text, its :func:`phrases`, tools that served it). Requests that
    normalise to the same tokens count once per tool. Kept phrases are ordered by ``count × log(1 + T / t)``
    (T tools with phrases, t of them sharing this one), best first, ties by phrase;
    a phrase contained in an already chosen longer one that (almost) the same requests
    share adds nothing and is skipped.
    """
    seen: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for text, found, tools in requests:
        key = tuple(tokenize(text))
        for tool in tools:
            if key in seen[tool]:
                continue
            seen[tool].add(key)
            counts[tool].update(found)
    kept = {t: {p: c for p, c in cnt.items() if c >= min_requests} for t, cnt in counts.items()}
    spread = Counter(p for ps in kept.values() for p in ps)
    n_tools = max(len(kept), 1)
    out: dict[str, tuple[tuple[str, int], ...]] = {}
    for tool in sorted(kept):
        ranked = sorted(kept[tool].items(), key=lambda pc: (-pc[1] * math.log(1 + n_tools / spread[pc[0]]), pc[0]))
        chosen: list[tuple[str, int]] = []
        for p, c in ranked:
            if any(c * 4 <= qc * 5 and f" {p} " in f" {q} " for q, qc in chosen):
                continue
            chosen.append((p, c))
            if len(chosen) >= max_phrases:
                break
        if chosen:
            out[tool] = tuple(chosen)
    return out
