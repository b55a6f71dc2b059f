"""The searchable text of a tool, and the terms both tools and queries are matched on.

:func:`field_column` is the one definition of a field's text: every index reads it
one column at a time (through :class:`TextColumns`), and :func:`field_texts` is the
same function on a single tool. Every query goes through :func:`terms`, so index and
query agree on what a word is: normalised tokens minus stop words, reduced to a stem
(Snowball English for ASCII words, Snowball Persian for the rest; digits as they
are). With ``stem=False`` only English plurals are folded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from importlib import resources
from operator import attrgetter
from typing import Any

import Stemmer

from tooldisc.discovery.config import FIELDS
from tooldisc.discovery.model import Tool
from tooldisc.discovery.text import sanitize, split_name, split_names, tokenize


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    text = resources.files("tooldisc.discovery").joinpath("data/stopwords.txt").read_text("utf-8")
    words = [w for line in text.splitlines() if not line.startswith("#") for w in tokenize(line)]
    return frozenset(words)


# --- the searchable text ---------------------------------------------------------------


_LIST_FIELDS = ("aliases", "keywords", "examples")
_JOIN = " \n "  # a piece boundary for the tokeniser: items never run into each other


def field_column(tools: Sequence[Tool], field: str) -> list[str]:
    """The searchable text of ``field`` for each tool (DESIGN §5); an unknown field is empty.

    List fields join their items with ``" \\n "``; :func:`field_pieces` is the same
    column with list fields left as their items.
    """
    return [x if isinstance(x, str) else _JOIN.join(x) for x in field_pieces(tools, field)]


class _Memo(dict):
    """A value per distinct key, computed on first use (a C-level ``map`` over a column)."""

    def __init__(self, make: Callable[[Any], str]):
        super().__init__()
        self.make = make

    def __missing__(self, key: Any) -> str:
        self[key] = value = self.make(key)
        return value


def field_pieces(tools: Sequence[Tool], field: str) -> list[str] | list[tuple[str, ...]]:
    """:func:`field_column`, except that list fields stay tuples of their items.

    The tokeniser reads items as pieces directly, with no join and split. ``split_name``
    runs once per distinct capability, domain list and parameter schema (variants of a
    tool share them), and over all names as one joined string.
    """
    if field == "name":
        return split_names([t.name for t in tools])
    if field in _LIST_FIELDS or field == "description":
        return list(map(attrgetter(field), tools))
    if field == "capability":
        return list(map(_Memo(lambda c: split_name(c or "")).__getitem__, [t.capability for t in tools]))
    if field == "domains":
        one = _Memo(split_name)
        return list(map(_Memo(lambda d: " ".join(map(one.__getitem__, d))).__getitem__, [t.domains for t in tools]))
    if field == "parameters":
        params = {id(t.parameters): t.parameters for t in tools}  # the schemas outlive this call: ids are stable keys
        return list(map(_Memo(lambda i: _parameters_text(params[i])).__getitem__, [id(t.parameters) for t in tools]))
    return [""] * len(tools)


def field_texts(tool: Tool) -> dict[str, str]:
    """The searchable text of each field of one tool: :func:`field_column` on a single tool."""
    return {f: field_column((tool,), f)[0] for f in FIELDS}


class TextColumns:
    """The text to index, one field column at a time: the tools' own fields plus ``extra`` ones.

    ``extra`` maps a field name to one text per tool (in tool order) that is indexed
    but is not part of the tool record (learned text, say): it never reaches the
    tools' definition hashes or policy. An extra column replaces an authored field of
    the same name.
    """

    def __init__(self, tools: Sequence[Tool], extra: Mapping[str, Sequence[str]] | None = None):
        self.tools = tools
        self.extra = dict(extra or {})
        for name, texts in self.extra.items():
            if len(texts) != len(tools):
                raise ValueError(f"The extra column {name!r} must hold one text per tool ({len(tools)}). "
                                 f"Got {len(texts)} instead.")

    def __len__(self) -> int:
        return len(self.tools)

    def column(self, field: str) -> list[str]:
        """The field's text per tool (:func:`field_column`)."""
        if field in self.extra:
            return [str(x) for x in self.extra[field]]
        return field_column(self.tools, field)

    def pieces(self, field: str) -> list[str] | list[tuple[str, ...]]:
        """The same column in the tokeniser's form (:func:`field_pieces`)."""
        if field in self.extra:
            return [str(x) for x in self.extra[field]]
        return field_pieces(self.tools, field)


def as_columns(source: TextColumns | Sequence[Tool]) -> TextColumns:
    """Index builders take tools or prepared columns alike."""
    return source if isinstance(source, TextColumns) else TextColumns(source)


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


def _parameters_text(params: Mapping[str, object] | None) -> str:
    """Each parameter's split name, description and string enum values."""
    props = (params or {}).get("properties") if isinstance(params or {}, Mapping) else None
    return " \n ".join(_parameter_text(k, v) for k, v in props.items()) if isinstance(props, Mapping) else ""


# --- terms -------------------------------------------------------------------------------


def terms(text: str, stem: bool = True) -> list[str]:
    """Tokens minus stop words, each reduced to its term: what documents and queries match on."""
    return terms_of_tokens(tokenize(text), stem)


def terms_of_tokens(tokens: list[str], stem: bool = True) -> list[str]:
    stop = stopwords()
    to_term = term_function(stem)
    return [to_term(t) for t in tokens if t not in stop]


def term_function(stem: bool) -> Callable[[str], str]:
    """The token → term map: Snowball stems, or English plural folding only."""
    return stem_term if stem else singular


_STEMMERS: dict[str, Stemmer.Stemmer] = {}
# PyStemmer's own word cache off: index builds stem each distinct word once (its cache kept
# ~97k entries, about 5 MB, after a 100k-tool build) and stem_term has its own lru_cache.
_NO_CACHE = 0
_STEM_LOCK = threading.Lock()  # a PyStemmer object is not safe to share between threads


def terms_of_words(words: list[str], stem: bool = True) -> list[str]:
    """The term of each distinct normalised token (no stop-word check), in batches and uncached.

    What :func:`stem_term` / :func:`singular` give one at a time; index builds map each
    distinct raw token once, so caching them would only hold memory.
    """
    if not stem:
        return [singular(w) for w in words]
    out = list(words)
    for language, pick in (("english", str.isascii), ("persian", lambda w: not w.isascii())):
        at = [i for i, w in enumerate(words) if pick(w) and not w.isdigit()]
        if not at:
            continue
        with _STEM_LOCK:
            stemmer = _STEMMERS.get(language)
            if stemmer is None:
                stemmer = _STEMMERS[language] = Stemmer.Stemmer(language, _NO_CACHE)
            stems = stemmer.stemWords([words[i] for i in at])
        for i, st in zip(at, stems, strict=True):
            out[i] = st or words[i]
    return out


@lru_cache(maxsize=262_144)
def stem_term(token: str) -> str:
    """A normalised token's stem; cached, since a catalog and its queries repeat words."""
    if token.isdigit():
        return token
    language = "english" if token.isascii() else "persian"
    with _STEM_LOCK:
        stemmer = _STEMMERS.get(language)
        if stemmer is None:
            stemmer = _STEMMERS[language] = Stemmer.Stemmer(language, _NO_CACHE)
        return stemmer.stemWord(token) or token


def singular(token: str) -> str:
    """``invoices`` → ``invoice``, ``categories`` → ``category``; other tokens unchanged."""
    if len(token) <= 3 or not token.isascii() or not token.endswith("s") or token.endswith("ss"):
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("ches", "shes", "xes", "sses")):
        return token[:-2]
    return token[:-1]
