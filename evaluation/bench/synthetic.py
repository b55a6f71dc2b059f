"""Seeded synthetic catalogs and queries grown from a real catalog, for benchmarks.

Latency and memory at 10,000–100,000 tools cannot be measured on a 180-tool catalog,
and a big catalog of copies would flatter the index (a handful of distinct texts, a
tiny vocabulary, posting lists of identical length). So each synthetic tool is a
*variant* of a base tool: a new unique name carrying a generated entity and namespace,
a description recombined from its own and another tool's sentences, varied aliases,
keywords and domains — while its policy (side effect, roles, permissions, tenant,
risk, approval) is the base tool's, so the security filter sees a realistic mix.

The entity and namespace words are made by splicing the catalog's own words
(``invoice`` + ``warehouse`` → ``invohouse``), English and Persian alike, so the
vocabulary grows with the catalog (tens of thousands of terms at 100,000 tools) and
word usage follows a Zipf law as in real API catalogs. Everything is a pure function
of (base catalog, size, seed): the same inputs give the same tools and queries.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from tooldisc.discovery.catalog import Catalog, SharedValues, catalog_from_tools, with_hash
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text import tokenize

_SENTENCE = re.compile(r"(?<=[.!?؟])\s+")
_ASCII_WORD = re.compile(r"^[a-z]{4,}$")
_PERSIAN_WORD = re.compile(r"^[\u0600-\u06ff]{3,}$")


@dataclass(frozen=True)
class SyntheticQuery:
    """A benchmark query and the tool(s) it was written for.

    ``intended`` is empty for a no-match query; it is recorded so candidate recall
    can be measured on the same queries whose latency is timed. ``source`` says
    where the query came from: ``gold`` (the shipped gold set), ``catalog`` (a
    tool's own example or alias) or ``synthetic`` (a synthetic tool's alias).
    """

    id: str
    query: str
    intended: tuple[str, ...] = ()
    history: tuple[str, ...] = ()
    source: str = "gold"


@dataclass(frozen=True)
class _Words:
    """Word pools drawn from the base catalog, and Zipf cumulative weights over them."""

    entities: tuple[str, ...]
    entities_fa: tuple[str, ...]
    namespaces: tuple[str, ...]
    cum_entities: tuple[float, ...]
    cum_entities_fa: tuple[float, ...]
    cum_namespaces: tuple[float, ...]


def synthetic_catalog(base: Catalog, n: int, seed: int = 0) -> Catalog:
    """A catalog of exactly ``n`` tools grown from ``base``.

    ``n`` at most ``len(base)`` is a seeded subset of the base tools in file order
    (``n == len(base)`` is the base catalog itself); a larger ``n`` keeps every base
    tool and adds ``n - len(base)`` variants, base tools taken round-robin.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"The 'n' parameter must be an int in the range [1, inf). Got {n!r} instead.")
    tools = base.tools
    if not tools:
        raise ValueError("The 'base' catalog must hold at least one tool. Got an empty catalog instead.")
    version = f"{base.version or 'catalog'}+synthetic-{n}-seed{seed}"
    if n <= len(tools):
        if n == len(tools):
            return catalog_from_tools(tools, version=base.version, source=base.source)
        keep = sorted(random.Random(seed).sample(range(len(tools)), n))
        return catalog_from_tools((tools[i] for i in keep), version=version, source=base.source)
    rng = random.Random(seed)
    words = _word_pools(tools, n - len(tools), rng)
    sentences = [_sentences(t.description) for t in tools]
    taken = {t.name for t in tools}
    extra = []
    order = list(range(len(tools)))
    rng.shuffle(order)
    shared = SharedValues()  # variants repeat aliases, keyword and domain lists: one object each
    for j in range(n - len(tools)):
        b = order[j % len(order)]
        other = rng.randrange(len(tools))
        extra.append(_variant(tools[b], sentences[b], sentences[other], words, taken, rng, shared))
    del shared
    return catalog_from_tools((*tools, *extra), version=version, source=base.source)


def catalog_queries(catalog: Catalog) -> tuple[SyntheticQuery, ...]:
    """Queries from the catalog itself (examples, then aliases): the fallback when no gold set exists."""
    out = []
    for t in catalog.tools:
        for i, text in enumerate((*t.examples, *t.aliases)):
            out.append(SyntheticQuery(f"cat-{t.name}-{i}", text, (t.name,), (), "catalog"))
    return tuple(out)


def synthetic_queries(catalog: Catalog, base_queries: Sequence[SyntheticQuery], n: int,
                      seed: int = 0, *, base_names: frozenset[str] = frozenset()) -> tuple[SyntheticQuery, ...]:
    """``n`` queries: about half ``base_queries`` and half written for synthetic tools.

    A tool outside ``base_names`` counts as synthetic; when there are none (a catalog
    no bigger than its base), the second half comes from the catalog's own examples
    and aliases. The result is shuffled with ``seed``; an intended tool that is not in
    ``catalog`` (a subset catalog) is dropped from ``intended`` so recall stays honest.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"The 'n' parameter must be an int in the range [1, inf). Got {n!r} instead.")
    rng = random.Random(seed)
    names = catalog.by_name
    synthetic = [t for t in catalog.tools if t.name not in base_names] if base_names else []
    own = list(base_queries)
    n_own = min(len(own), n - n // 2) if (synthetic or len(own) >= n) else min(len(own), n)
    picked = _sample_cycle(own, n_own, rng)
    out = [replace(q, intended=tuple(x for x in q.intended if x in names)) for q in picked]
    rest = n - len(out)
    if synthetic:
        for i in range(rest):
            t = synthetic[rng.randrange(len(synthetic))]
            out.append(SyntheticQuery(f"syn-{i}", _query_for(t, rng), (t.name,), (), "synthetic"))
    elif rest:
        out.extend(_sample_cycle(list(catalog_queries(catalog)), rest, rng))
    rng.shuffle(out)
    return tuple(out)


def vocabulary_size(catalog: Catalog) -> int:
    """Distinct word tokens in the searchable text of a catalog (a realism check, not the index's own count)."""
    seen: set[str] = set()
    for t in catalog.tools:
        seen.update(tokenize(" ".join((t.name.replace("_", " "), t.description, *t.aliases, *t.keywords, *t.examples))))
    return len(seen)


def _sample_cycle(items: list[SyntheticQuery], k: int, rng: random.Random) -> list[SyntheticQuery]:
    """``k`` items without replacement, reshuffling and starting over when they run out."""
    out: list[SyntheticQuery] = []
    rounds = 0
    while items and len(out) < k:
        batch = rng.sample(items, min(len(items), k - len(out)))
        out.extend(q if rounds == 0 else replace(q, id=f"{q.id}#{rounds}") for q in batch)
        rounds += 1
    return out


def _query_for(tool: Tool, rng: random.Random) -> str:
    """A request a user might type for a synthetic tool: one of its entity-bearing texts."""
    choices = [a for a in tool.aliases if a] + [e for e in tool.examples if e]
    return choices[rng.randrange(len(choices))] if choices else tool.name.replace("_", " ")


def _sentences(text: str) -> list[str]:
    parts = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    return parts or [text.strip()]


def _variant(base: Tool, own: list[str], other: list[str], words: _Words, taken: set[str],
             rng: random.Random, shared: SharedValues) -> Tool:
    """One synthetic tool: a base tool's policy under new, varied text."""
    entity = _zipf(words.entities, words.cum_entities, rng)
    qualifier = _zipf(words.entities, words.cum_entities, rng)
    ns = _zipf(words.namespaces, words.cum_namespaces, rng)
    entity_fa = _zipf(words.entities_fa, words.cum_entities_fa, rng) if words.entities_fa else entity
    stem = f"{ns}_{base.name}_{entity}"
    name = stem
    for i in itertools.count(2):
        if name not in taken:
            break
        name = f"{stem}_{i}"
    taken.add(name)
    description = (f"{own[0]} Scoped to {entity} {qualifier} records of the {ns} service. "
                   f"{other[rng.randrange(len(other))]}")
    aliases = [f"{a} {entity_fa if _is_persian(a) else entity}" for a in _some(base.aliases, 2, rng)]
    aliases.append(f"{entity} {qualifier} {ns}")
    keywords = (*_some(base.keywords, 3, rng), entity, ns)
    domains = (*base.domains, ns) if rng.random() < 0.5 else base.domains
    examples = tuple(f"{e} {entity_fa if _is_persian(e) else entity}" for e in _some(base.examples, 1, rng))
    tool = replace(
        base, name=name, namespace=ns, description=description, aliases=shared.strings(aliases),
        keywords=shared.strings(keywords), domains=shared.strings(domains), examples=shared.strings(examples),
        is_core=False, companion_tools=(),
        definition_hash="",
    )
    # Hashed here, in place, not by catalog_from_tools: no unhashed record lives on beside the
    # kept one after all n variants, which would leave a hole beside every kept tool (~35 MB at 100k).
    return with_hash(tool)


def _some(items: Sequence[str], k: int, rng: random.Random) -> list[str]:
    if len(items) <= k:
        return list(items)
    return rng.sample(list(items), k)


def _is_persian(text: str) -> bool:
    return any("\u0600" <= ch <= "\u06ff" for ch in text)


def _zipf(pool: Sequence[str], cum: Sequence[float], rng: random.Random) -> str:
    return pool[bisect.bisect_left(cum, rng.random() * cum[-1])]


def _word_pools(tools: Sequence[Tool], n_extra: int, rng: random.Random) -> _Words:
    """Entity and namespace pools sized so the vocabulary grows with the catalog.

    About one new entity word per three synthetic tools and ``2·√n`` namespaces; drawn
    with Zipf weights, so a few words are everywhere and most are rare.
    """
    ascii_words: set[str] = set()
    persian_words: set[str] = set()
    for t in tools:
        text = " ".join((t.name.replace("_", " "), t.description, *t.aliases, *t.keywords))
        for tok in tokenize(text):
            if _ASCII_WORD.match(tok):
                ascii_words.add(tok)
            elif _PERSIAN_WORD.match(tok):
                persian_words.add(tok)
    seed_ascii = sorted(ascii_words) or ["tool", "record", "service"]
    seed_fa = sorted(persian_words)
    known = ascii_words | persian_words
    n_ent = max(16, n_extra // 3)
    n_ns = max(8, int(2 * math.sqrt(n_extra)))
    namespaces = _splice_words(seed_ascii, n_ns, known, rng)
    entities = _splice_words(seed_ascii, n_ent, known | set(namespaces), rng)
    entities_fa = _splice_words(seed_fa, max(8, n_ent // 4), known, rng) if len(seed_fa) >= 2 else ()
    return _Words(entities, entities_fa, namespaces, _zipf_cum(len(entities)),
                  _zipf_cum(len(entities_fa)), _zipf_cum(len(namespaces)))


def _splice_words(seed: Sequence[str], k: int, avoid: set[str], rng: random.Random) -> tuple[str, ...]:
    """``k`` new words: a prefix of one catalog word joined to a suffix of another."""
    out: list[str] = []
    seen = set(avoid)
    tries = 0
    while len(out) < k:
        tries += 1
        a, b = seed[rng.randrange(len(seed))], seed[rng.randrange(len(seed))]
        word = a[: rng.randint(2, max(2, len(a) - 1))] + b[rng.randint(1, max(1, len(b) - 2)):]
        if tries > 50 * k:  # a tiny seed vocabulary: number the words instead of looping forever
            word = f"{word}{tries}"
        if 4 <= len(word) <= 16 and word not in seen:
            seen.add(word)
            out.append(word)
    return tuple(out)


def _zipf_cum(n: int, s: float = 1.0) -> tuple[float, ...]:
    return tuple(itertools.accumulate(1.0 / (r ** s) for r in range(1, n + 1)))
