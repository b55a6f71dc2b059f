"""What a query wants to do to data: the mutation class that drives the §4 matrix.

Word lists live in ``data/mutation.yaml`` (Persian and English), not in code.
Priority DESTRUCTIVE > EXECUTE > EXPORT > WRITE > READ; nothing recognised is
UNKNOWN, which the filter treats as READ.

A last step only ever narrows (:class:`Narrowing`): text that does not ask for the
change — a negated clause ("I don't want to delete, list invoices"), quoted text
(``show the 'delete' button help``) and how-to / what-is questions ("how do I export
customers?") — is set aside and the rest classified again. When that gives
another class the request is READ; it can never become a wider or different one.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources

from tooldisc.discovery.security import DESTRUCTIVE, EXECUTE, EXPORT, READ, UNKNOWN, WRITE
from tooldisc.discovery.text import tokenize
from tooldisc.errors import ConfigError

PRIORITY = (DESTRUCTIVE, EXECUTE, EXPORT, WRITE, READ)
_PRONOUN_SUFFIXES = ("م", "ش", "ت", "شو", "مو", "شون")


@dataclass(frozen=True)
class _Rules:
    phrases: tuple[tuple[str, ...], ...]
    stems: frozenset[str]
    prefixes: tuple[str, ...]
    leading: frozenset[str] = frozenset()
    clause_start: frozenset[str] = frozenset()


# Quoted spans: straight and typographic double quotes, guillemets, backticks, and single
# quotes that are not an apostrophe inside a word (don't, invoice's). The regex is the
# definition; :func:`quoted_spans` finds its matches in linear time (the engine would rescan a
# line from every unclosed “ — quadratic), and tests hold the two equal.
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”|«[^»\n]*»|`[^`\n]*`|‘[^’\n]*’|(?<![\w\'])\'[^\'\n]+\'(?![\w\'])')
_QUOTE_PAIRS = {'"': '"', "“": "”", "«": "»", "`": "`", "‘": "’", "'": "'"}
_OPENERS = re.compile("[" + re.escape("".join(_QUOTE_PAIRS)) + "]")


def _positions(text: str, ch: str) -> list[int]:
    out, i = [], text.find(ch)
    while i >= 0:
        out.append(i)
        i = text.find(ch, i + 1)
    return out


def _word_or_quote(text: str, i: int) -> bool:
    return 0 <= i < len(text) and (text[i].isalnum() or text[i] in "_'")


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """``[m.span() for m in _QUOTED.finditer(text)]``, in time linear in ``text``.

    Every alternative opens with its own character, so at most one can match at a
    position: there, the span runs to the next closer when no line break comes first
    (a single quote also needs a character inside, no word or quote just before it
    and none just after its closer). The scan then takes spans left to right, skipping
    any that start inside the one taken.
    """
    if not _OPENERS.search(text):
        return []
    breaks = _positions(text, "\n")
    closers = {c: _positions(text, c) for c in set(_QUOTE_PAIRS.values()) if c in text}
    found: list[tuple[int, int]] = []
    for m in _OPENERS.finditer(text):
        p, opener = m.start(), m.group()
        close = closers.get(_QUOTE_PAIRS[opener], [])
        j = bisect_right(close, p)
        if j == len(close):
            continue
        q = close[j]
        b = bisect_right(breaks, p)
        if b < len(breaks) and breaks[b] < q:
            continue
        if opener == "'" and (q == p + 1 or _word_or_quote(text, p - 1) or _word_or_quote(text, q + 1)):
            continue
        found.append((p, q + 1))
    spans: list[tuple[int, int]] = []
    pos = 0
    for start, end in found:
        if start >= pos:
            spans.append((start, end))
            pos = end
    return spans
# Clause ends: these always; a comma, period, Persian comma or colon only before a space (not 1,200 or 2.5).
_CLAUSE_END = re.compile(r"[;!?؛؟\n]|[,.،:](?=\s|$)")


@dataclass(frozen=True)
class Narrowing:
    """Word lists for the narrowing step; empty lists turn it off.

    ``breaks`` end a clause (besides punctuation); ``negate_rest`` negate the rest of
    their clause (English: the negation precedes the verb); ``negate_clause`` negate
    the whole clause (Persian is verb-final: "حذفش نکن", "فایل نمی‌خوام");
    ``negate_prefixes`` mark a token as such a negated verb (نمی…); a clause that
    opens with ``question_openers`` or holds a ``question_phrases`` sequence is a
    question and asks for nothing.
    """

    breaks: frozenset[str] = frozenset()
    negate_rest: frozenset[str] = frozenset()
    negate_clause: frozenset[str] = frozenset()
    negate_prefixes: tuple[str, ...] = ()
    question_openers: frozenset[str] = frozenset()
    question_phrases: tuple[tuple[str, ...], ...] = ()

    @property
    def enabled(self) -> bool:
        return bool(self.breaks or self.negate_rest or self.negate_clause or self.negate_prefixes
                    or self.question_openers or self.question_phrases)

    def _is_question(self, tokens: list[str]) -> bool:
        if tokens[0] in self.question_openers or () in self.question_phrases:
            return True
        by_first = self._phrases_by_first
        return any(tuple(tokens[i:i + len(p)]) == p for i, tok in enumerate(tokens) for p in by_first.get(tok, ()))

    @cached_property
    def _phrases_by_first(self) -> dict[str, tuple[tuple[str, ...], ...]]:
        """The question phrases by their first word: a clause is scanned once, not once per phrase."""
        out: dict[str, list[tuple[str, ...]]] = {}
        for p in self.question_phrases:
            if p:
                out.setdefault(p[0], []).append(p)
        return {k: tuple(v) for k, v in out.items()}

    def _negates_clause(self, token: str) -> bool:
        return token in self.negate_clause or token.startswith(self.negate_prefixes)

    def kept_clauses(self, query: str) -> tuple[list[list[str]], bool]:
        """The clauses that still ask for something, as tokens, and whether anything was set aside."""
        dropped = False
        spans = quoted_spans(query)
        if spans:
            unquoted = " ".join(query[a:b] for a, b in zip((0, *(e for _, e in spans)), (*(s for s, _ in spans), len(query)),
                                                           strict=True))
            if tokenize(unquoted):  # a fully quoted request stays as it is
                dropped = bool(tokenize(" ".join(query[s:e] for s, e in spans)))
                query = unquoted
        kept: list[list[str]] = []
        for part in _CLAUSE_END.split(query):
            clause: list[str] = []
            for tok in [*tokenize(part), None]:
                if tok is not None and tok not in self.breaks:
                    clause.append(tok)
                    continue
                if clause:
                    rest, cut = self._narrow_clause(clause)
                    dropped = dropped or cut
                    if rest:
                        kept.append(rest)
                clause = []
        return kept, dropped

    def _narrow_clause(self, tokens: list[str]) -> tuple[list[str], bool]:
        if self._is_question(tokens) or any(self._negates_clause(t) for t in tokens):
            return [], True
        for i, tok in enumerate(tokens):
            if tok in self.negate_rest:
                return tokens[:i], True
        return tokens, False


@dataclass(frozen=True)
class MutationClassifier:
    """Word lists compiled into lookup tables, so classifying costs one pass over tokens.

    ``classify`` returns the highest-priority class any rule matches.
    """

    rules: tuple[tuple[str, _Rules], ...]
    light_verbs: frozenset[str]
    suffixes: tuple[str, ...]
    negations: frozenset[str] = frozenset()
    not_imperative_after: frozenset[str] = frozenset()
    generic_write: frozenset[str] = frozenset()
    read_stems: frozenset[str] = frozenset()
    clause_openers: frozenset[str] = frozenset()
    question_words: frozenset[str] = frozenset()
    question_openers: frozenset[str] = frozenset()
    narrowing: Narrowing = field(default_factory=Narrowing)

    def __post_init__(self) -> None:
        single: dict[str, int] = {}
        multi: dict[str, list[tuple[tuple[str, ...], int]]] = {}
        stems: dict[str, int] = {}
        prefixes: list[tuple[str, int]] = []
        for rank, (_name, rules) in enumerate(self.rules):
            for phrase in rules.phrases:
                if len(phrase) == 1:
                    single.setdefault(phrase[0], rank)
                else:
                    multi.setdefault(phrase[0], []).append((phrase, rank))
            for stem in rules.stems:
                for form in (stem, *(stem + sfx for sfx in self.suffixes)):
                    stems.setdefault(form, rank)
            prefixes.extend((p, rank) for p in rules.prefixes)
        leading: dict[str, int] = {}
        for rank, (_name, rules) in enumerate(self.rules):
            for stem in rules.leading:
                leading.setdefault(stem, rank)
        object.__setattr__(self, "_leading", leading)
        clause: dict[str, int] = {}
        for rank, (_name, rules) in enumerate(self.rules):
            for word in rules.clause_start:
                clause.setdefault(word, rank)
        object.__setattr__(self, "_clause", clause)
        object.__setattr__(self, "_write_rank", next(i for i, (n, _) in enumerate(self.rules) if n == WRITE))
        object.__setattr__(self, "_single", single)
        object.__setattr__(self, "_multi", multi)
        object.__setattr__(self, "_stems", stems)
        # prefixes grouped by rank, best first: one ``startswith`` per class instead of one per prefix
        object.__setattr__(self, "_prefixes", tuple(
            (rank, tuple(p for p, r in prefixes if r == rank)) for rank in sorted({r for _, r in prefixes})))
        # a token no rule names and no prefix starts cannot change the class: one look-up passes it by
        object.__setattr__(self, "_named", frozenset().union(single, multi, stems, leading, clause, self.generic_write))
        object.__setattr__(self, "_any_prefix", tuple(p for p, _ in prefixes))

    def _is_read_stem(self, token: str) -> bool:
        """``کمکم`` / ``نگاش``: a read verb's noun with a pronoun suffix is still a read."""
        if token in self.read_stems:
            return True
        return any(token.endswith(sfx) and token[: -len(sfx)] in self.read_stems for sfx in _PRONOUN_SUFFIXES)

    def classify(self, query: str, tokens: list[str] | None = None) -> str:
        """The request's class: the word rules, then the narrowing step (which only narrows).

        ``tokens`` are ``tokenize(query)`` when the caller already has them.
        """
        base = self.classify_tokens(tokenize(query) if tokens is None else list(tokens))
        if base in (READ, UNKNOWN) or not self.narrowing.enabled:
            return base
        kept, dropped = self.narrowing.kept_clauses(query)
        if not dropped:
            return base
        ranks = [PRIORITY.index(c) for c in map(self.classify_tokens, kept) if c != UNKNOWN]
        narrowed = PRIORITY[min(ranks)] if ranks else UNKNOWN
        # Setting text aside may expose a different verb; only "the same class" or READ is a narrowing.
        return base if narrowed == base else READ

    def classify_tokens(self, tokens: list[str]) -> str:
        if not tokens:
            return UNKNOWN
        best = len(self.rules)
        single, multi, stems = self._single, self._multi, self._stems  # type: ignore[attr-defined]
        neg = self.negations
        n = len(tokens)
        asks_how = not self.question_words.isdisjoint(tokens)
        is_question = tokens[0] in self.question_openers
        named, any_prefix = self._named, self._any_prefix  # type: ignore[attr-defined]
        for i, tok in enumerate(tokens):
            if tok not in named and not tok.startswith(any_prefix):
                continue  # no rule below can match it
            negated = i > 0 and (tokens[i - 1] in neg or (i > 1 and tokens[i - 2] in neg))
            nxt = tokens[i + 1:min(i + 3, n)]
            if nxt and nxt[0] in neg:
                negated = True
            if negated:
                continue
            rank = single.get(tok)
            if rank is not None and rank < best:
                best = rank
            for phrase, rank in multi.get(tok, ()):
                if rank < best and tuple(tokens[i:i + len(phrase)]) == phrase:
                    best = rank
            rank = self._clause.get(tok)  # type: ignore[attr-defined]
            if (rank is not None and rank < best and not is_question
                    and (i == 0 or tokens[i - 1] in self.clause_openers)):
                best = rank
            rank = stems.get(tok)
            if (rank is not None and rank < best and any(t in self.light_verbs for t in nxt)
                    and not (asks_how and self.rules[rank][0] == WRITE)):
                best = rank
            if i == 0:
                rank = self._leading.get(tok)  # type: ignore[attr-defined]
                if rank is not None and rank < best and not (nxt and nxt[0] in self.not_imperative_after):
                    best = rank
            for rank, group in self._prefixes:  # type: ignore[attr-defined]
                if rank >= best:
                    break
                if tok.startswith(group):
                    best = rank
                    break
            if tok in self.generic_write and i > 0 and not asks_how and self._write_rank < best:  # type: ignore[attr-defined]
                prev = tokens[i - 1]
                # Latin words are judged by the English lists, not by the Persian light verb.
                if not self._is_read_stem(prev) and prev not in neg and not prev.isdigit() and not prev.isascii():
                    best = self._write_rank  # type: ignore[attr-defined]
            if best == 0:
                break
        return self.rules[best][0] if best < len(self.rules) else UNKNOWN


def _tok_list(values: object, where: str, file: str) -> list[str]:
    if values is None:
        return []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ConfigError("must be a list of strings", file=file, where=where)
    return values


def classifier_from_mapping(data: object, file: str = "mutation.yaml") -> MutationClassifier:
    if not isinstance(data, dict) or not isinstance(data.get("classes"), dict):
        raise ConfigError("expected a mapping with 'classes'", file=file)
    classes = data["classes"]
    rules = []
    for name in PRIORITY:
        spec = classes.get(name) or {}
        phrases = tuple(tuple(tokenize(p)) for p in _tok_list(spec.get("phrases"), f"classes.{name}.phrases", file))
        stems = frozenset(" ".join(tokenize(s)) for s in _tok_list(spec.get("stems"), f"classes.{name}.stems", file))
        prefixes = tuple(" ".join(tokenize(p)) for p in _tok_list(spec.get("prefixes"), f"classes.{name}.prefixes", file))
        leading = frozenset(" ".join(tokenize(x)) for x in _tok_list(spec.get("leading"), f"classes.{name}.leading", file))
        clause = frozenset(" ".join(tokenize(x)) for x in _tok_list(spec.get("clause_start"), f"classes.{name}.clause_start", file))
        rules.append((name, _Rules(tuple(p for p in phrases if p), frozenset(s for s in stems if s), prefixes,
                                   frozenset(x for x in leading if x), frozenset(x for x in clause if x))))

    def words(key: str) -> frozenset[str]:
        return frozenset(" ".join(tokenize(v)) for v in _tok_list(data.get(key), key, file))

    suffixes = tuple(_tok_list(data.get("object_suffixes"), "object_suffixes", file))
    return MutationClassifier(tuple(rules), words("light_verbs"), suffixes, words("negations"),
                              words("not_imperative_after"), words("generic_write_light_verbs"), words("read_stems"),
                              words("clause_openers"), words("question_words"), words("question_openers"),
                              _narrowing(data.get("narrowing"), file))


def _narrowing(data: object, file: str) -> Narrowing:
    """The ``narrowing`` block; absent means no narrowing step (a user's older word list)."""
    if data is None:
        return Narrowing()
    if not isinstance(data, dict):
        raise ConfigError("must be a mapping", file=file, where="narrowing")

    def words(key: str) -> frozenset[str]:
        return frozenset(" ".join(tokenize(v)) for v in _tok_list(data.get(key), f"narrowing.{key}", file))

    phrases = tuple(tuple(tokenize(p)) for p in _tok_list(data.get("question_phrases"), "narrowing.question_phrases", file))
    prefixes = tuple(" ".join(tokenize(p)) for p in _tok_list(data.get("negate_prefixes"), "narrowing.negate_prefixes", file))
    return Narrowing(words("breaks"), words("negate_rest"), words("negate_clause"), tuple(p for p in prefixes if p),
                     words("question_openers"), tuple(p for p in phrases if p))


@lru_cache(maxsize=8)
def load_classifier(path: str | None = None) -> MutationClassifier:
    """The shipped word lists, or a user's file with the same layout."""
    import yaml

    from tooldisc.discovery.catalog.io import safe_yaml

    if path is None:
        text = resources.files("tooldisc.discovery").joinpath("data/mutation.yaml").read_text("utf-8")
        file = "mutation.yaml"
    else:
        from tooldisc.discovery.catalog.io import read_text

        text, file = read_text(path, what="mutation word list"), os.fspath(path)
    try:
        data = safe_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", file=file) from None
    return classifier_from_mapping(data, file)
