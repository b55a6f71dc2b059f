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
    """Compiled word lists; ``classify`` is pure and allocation-light."""

    rules: tuple[tuple[str, _Rules], ...]
    light_verbs: frozenset[str]
    suffixes: tuple[str, ...]

    def classify(self, query: str) -> str:
        tokens = tokenize(query)
        if not tokens:
            return UNKNOWN
        for name, rules in self.rules:
            if self._matches(tokens, rules):
                return name
        return UNKNOWN

    def _matches(self, tokens: list[str], rules: _Rules) -> bool:
        for phrase in rules.phrases:
            n = len(phrase)
            for i in range(len(tokens) - n + 1):
                if tuple(tokens[i:i + n]) == phrase:
                    return True
        for i, tok in enumerate(tokens):
            if rules.prefixes and tok.startswith(rules.prefixes):
                return True
            stem = self._stem_of(tok, rules.stems)
            if stem is not None:
                nxt = tokens[i + 1:i + 3]
                if any(t in self.light_verbs for t in nxt):
                    return True
        return False

    def _stem_of(self, token: str, stems: frozenset[str]) -> str | None:
        if token in stems:
            return token
        for suffix in self.suffixes:
            if token.endswith(suffix) and token[: -len(suffix)] in stems:
                return token[: -len(suffix)]
        return None


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
