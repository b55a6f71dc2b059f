"""What a query wants to do to data: the mutation class that drives the §4 matrix.

Word lists live in ``data/mutation.yaml`` (Persian and English), not in code.
Priority DESTRUCTIVE > EXECUTE > EXPORT > WRITE > READ; nothing recognised is
UNKNOWN, which the filter treats as READ.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from tooldisc.discovery.security import DESTRUCTIVE, EXECUTE, EXPORT, READ, UNKNOWN, WRITE
from tooldisc.discovery.text import tokenize

from tooldisc.errors import ConfigError

PRIORITY = (DESTRUCTIVE, EXECUTE, EXPORT, WRITE, READ)


@dataclass(frozen=True)
class _Rules:
    phrases: tuple[tuple[str, ...], ...]
    stems: frozenset[str]
    prefixes: tuple[str, ...]


@dataclass(frozen=True)
class MutationClassifier:
    """Word lists compiled into lookup tables, so classifying costs one pass over tokens.

    ``classify`` returns the highest-priority class any rule matches.
    """

    rules: tuple[tuple[str, _Rules], ...]
    light_verbs: frozenset[str]
    suffixes: tuple[str, ...]

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
        object.__setattr__(self, "_single", single)
        object.__setattr__(self, "_multi", multi)
        object.__setattr__(self, "_stems", stems)
        object.__setattr__(self, "_prefixes", tuple(prefixes))

    def classify(self, query: str) -> str:
        return self.classify_tokens(tokenize(query))

    def classify_tokens(self, tokens: list[str]) -> str:
        if not tokens:
            return UNKNOWN
        best = len(self.rules)
        single, multi, stems = self._single, self._multi, self._stems  # type: ignore[attr-defined]
        n = len(tokens)
        for i, tok in enumerate(tokens):
            rank = single.get(tok)
            if rank is not None and rank < best:
                best = rank
            for phrase, rank in multi.get(tok, ()):
                if rank < best and tuple(tokens[i:i + len(phrase)]) == phrase:
                    best = rank
            rank = stems.get(tok)
            if rank is not None and rank < best and any(
                t in self.light_verbs for t in tokens[i + 1:min(i + 3, n)]
            ):
                best = rank
            for prefix, rank in self._prefixes:  # type: ignore[attr-defined]
                if rank < best and tok.startswith(prefix):
                    best = rank
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
        rules.append((name, _Rules(tuple(p for p in phrases if p), frozenset(s for s in stems if s), prefixes)))
    light = frozenset(" ".join(tokenize(v)) for v in _tok_list(data.get("light_verbs"), "light_verbs", file))
    suffixes = tuple(_tok_list(data.get("object_suffixes"), "object_suffixes", file))
    return MutationClassifier(tuple(rules), light, suffixes)


@lru_cache(maxsize=8)
def load_classifier(path: str | None = None) -> MutationClassifier:
    """The shipped word lists, or a user's file with the same layout."""
    import yaml

    if path is None:
        text = resources.files("tooldisc.discovery").joinpath("data/mutation.yaml").read_text("utf-8")
        file = "mutation.yaml"
    else:
        from tooldisc.discovery.catalog_io import read_text

        text, file = read_text(path, what="mutation word list"), os.fspath(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", file=file) from None
    return classifier_from_mapping(data, file)
