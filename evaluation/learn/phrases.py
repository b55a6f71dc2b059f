"""k-anonymous phrases from labelled requests: the query expansions ``tooldisc learn`` keeps.

A request's phrases come from :func:`tooldisc.discovery.text.phrases.phrases` (scrubbed,
one to three words). A phrase is kept for a tool only when at least
``min_requests`` requests for that tool contain it that are *distinct after
scrubbing*, so no single request (and no single user's wording) is stored: one
request sent six times with only a number, an e-mail address or a quoted name
changed is one request here, since what scrubbing cuts is exactly what differs.
What is kept is then ranked by how many requests share it times how specific it is
to the tool, de-duplicated, and capped.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from tooldisc.discovery.text.phrases import phrases, scrub

__all__ = ["phrases", "scrub", "scrubbed", "shared_phrases"]

Scrubbed = tuple[tuple[str, ...], ...]


def scrubbed(text: str) -> Scrubbed:
    """What is left of a request after scrubbing (its token runs): two requests are distinct
    for k-anonymity only when this differs."""
    return tuple(tuple(run) for run in scrub(text))


def shared_phrases(requests: Iterable[tuple[str | Scrubbed, set[str], Sequence[str]]], min_requests: int,
                   max_phrases: int) -> dict[str, tuple[tuple[str, int], ...]]:
    """Tool → its kept phrases with the number of distinct requests containing each.

    ``requests`` are (text, its :func:`phrases`, tools that served it); the text may
    come already scrubbed (:func:`scrubbed`), so a caller counting the same requests
    over several folds scrubs each once. Requests that are the same after scrubbing
    (the same tokens once numbers, e-mail addresses, URLs, quotes and ids are cut)
    count once per tool. Kept phrases are ordered by ``count × log(1 + T / t)``
    (T tools with phrases, t of them sharing this one), best first, ties by phrase;
    a phrase contained in an already chosen longer one that (almost) the same requests
    share adds nothing and is skipped.
    """
    seen: dict[str, set[Scrubbed]] = defaultdict(set)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for text, found, tools in requests:
        key = text if isinstance(text, tuple) else scrubbed(text)
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
        # the largest count of a chosen phrase that contains each word run: a phrase is skipped when
        # some chosen one contains it with count × 5 ≥ its own × 4, i.e. when the largest such does
        within: dict[str, int] = {}
        for p, c in ranked:
            if c * 4 <= within.get(p, -1) * 5:
                continue
            chosen.append((p, c))
            if len(chosen) >= max_phrases:
                break
            words = p.split(" ")
            for i in range(len(words)):
                for j in range(i + 1, len(words) + 1):
                    run = " ".join(words[i:j])
                    if run != p and within.get(run, -1) < c:
                        within[run] = c
        if chosen:
            out[tool] = tuple(chosen)
    return out
