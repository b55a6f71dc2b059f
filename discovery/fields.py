"""The searchable text of a tool, and the terms both tools and queries are matched on.

Every index (BM25F, character n-grams, aliases) reads a tool through
:func:`field_texts` and every query through :func:`terms`, so index and query
agree on what a word is: normalised tokens minus stop words, reduced to a stem
(Snowball English for ASCII words, Snowball Persian for the rest; digits as they are).
With ``stem=False`` only English plurals are folded.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources

import Stemmer
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text import sanitize, split_name, tokenize


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    text = resources.files("tooldisc.discovery").joinpath("data/stopwords.txt").read_text("utf-8")
    words = [w for line in text.splitlines() if not line.startswith("#") for w in tokenize(line)]
    return frozenset(words)


def _parameter_text(name: str, spec: object) -> str:
    """A parameter's words: its split name, its description and its string enum values."""
    parts = [split_name(name)]
    if isinstance(spec, Mapping):
        desc = spec.get("description")
        if isinstance(desc, str):
            parts.append(sanitize(desc, 300))
        enum = spec.get("enum")
        if isinstance(enum, list):
            parts.extend(split_name(v) for v in enum[:50] if isinstance(v, str))
    return " ".join(parts)


def field_texts(tool: Tool) -> dict[str, str]:
    """The searchable text of each field of a tool (DESIGN §5)."""
    param_names = _param_text(tool.parameters)
    return {
        "name": split_name(tool.name),
        "aliases": " \n ".join(tool.aliases),
        "keywords": " \n ".join(tool.keywords),
        "capability": split_name(tool.capability or ""),
        "domains": " ".join(split_name(d) for d in tool.domains),
        "description": tool.description,
        "examples": " \n ".join(tool.examples),
        "parameters": param_names,
    }


def _param_text(params: Mapping[str, object] | None) -> str:
    """Each parameter's split name, description and string enum values."""
    props = (params or {}).get("properties") if isinstance(params or {}, Mapping) else None
    return " \n ".join(_parameter_text(k, v) for k, v in props.items()) if isinstance(props, Mapping) else ""


def terms(text: str, stem: bool = True) -> list[str]:
    """Tokens minus stop words, each reduced to its term: what documents and queries match on."""
    return terms_of_tokens(tokenize(text), stem)


def terms_of_tokens(tokens: list[str], stem: bool = True) -> list[str]:
    stop = stopwords()
    to_term = stem_term if stem else _singular
    return [to_term(t) for t in tokens if t not in stop]


_STEMMERS: dict[str, Stemmer.Stemmer] = {}
_STEM_LOCK = threading.Lock()  # a PyStemmer object is not safe to share between threads


@lru_cache(maxsize=262_144)
def stem_term(token: str) -> str:
    """A normalised token's stem; cached, since a catalog and its queries repeat words."""
    if token.isdigit():
        return token
    language = "english" if token.isascii() else "persian"
    with _STEM_LOCK:
        stemmer = _STEMMERS.get(language)
        if stemmer is None:
            stemmer = _STEMMERS[language] = Stemmer.Stemmer(language)
        return stemmer.stemWord(token) or token


def _singular(token: str) -> str:
    """``invoices`` → ``invoice``, ``categories`` → ``category``; other tokens unchanged."""
    if len(token) <= 3 or not token.isascii() or not token.endswith("s") or token.endswith("ss"):
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("ches", "shes", "xes", "sses")):
        return token[:-2]
    return token[:-1]
