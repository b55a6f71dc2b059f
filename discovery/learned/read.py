"""Reading a learned file: parsing and verifying the document :mod:`.learned` describes.

Kept apart from the records so the validation (every key, type and bound of the format,
each failure a one-line :class:`~tooldisc.errors.DataError` naming its place) reads top to
bottom; callers read files through :func:`load_learned` here.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from tooldisc.closed_schema import check_keys, without_extensions
from tooldisc.discovery.learned import (
    _MAX_PHRASE_CHARS,
    FORMAT,
    MAX_COUNT,
    MAX_LEARNED_BYTES,
    MUTATION_CLASSES,
    VERSION,
    Abstention,
    Expansions,
    Learned,
    LinearModel,
    MutationModel,
    _checksum,
)
from tooldisc.errors import DataError


def load_learned(path: str | os.PathLike[str]) -> Learned:
    """Read and verify a learned file; any problem is a one-line :class:`DataError`."""
    from tooldisc.discovery.catalog.io import read_text

    file = os.fspath(path)
    return parse_learned(read_text(path, max_bytes=MAX_LEARNED_BYTES, what="learned file"), file)


def parse_learned(text: str, file: str | None = None) -> Learned:
    """Parse learned-file text (any extension: recognised by content).

    The hardened JSON reader refuses duplicate keys, NaN/Infinity and deep nesting.
    """
    from tooldisc.documents import loads_json

    try:
        doc = loads_json(text, file)
    except json.JSONDecodeError as exc:
        raise DataError(f"not a tooldisc learned file: invalid JSON ({exc.msg})", file=file,
                        where=f"line {exc.lineno}, column {exc.colno}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise DataError(f"not a tooldisc learned file (expected an object with \"format\": \"{FORMAT}\")", file=file)
    version = doc.get("version")
    if version != VERSION:
        raise DataError(f"learned file version {version!r} is not supported; this tooldisc reads version {VERSION}",
                        file=file, where="version")
    check_keys(doc, ("format", "version", "catalog_hash", "parts", "report", "sha256"), file=file)
    claimed = doc.get("sha256")
    if not isinstance(claimed, str):
        raise DataError("missing its sha256 checksum", file=file, where="sha256")
    body = {k: v for k, v in doc.items() if k != "sha256"}
    if _checksum(body) != claimed:
        raise DataError("checksum mismatch: the file was changed after 'tooldisc learn' wrote it "
                        "(re-run learn instead of editing it)", file=file, where="sha256")
    return _from_body(body, file)


def _fail(msg: str, file: str | None, where: str) -> DataError:
    return DataError(msg, file=file, where=where)


def _str(value: Any, file: str | None, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(f"must be a non-empty string; got {_short(value)}", file, where)
    return value


def _number(value: Any, file: str | None, where: str, bounds: str = "coefficient") -> float:
    """A finite number in the named range of :data:`~tooldisc.discovery.config.RANGES` (the table a
    config's keys are checked with too)."""
    from tooldisc.discovery.config import RANGES

    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(f"must be a finite number; got {_short(value)}", file, where)
    low, high = RANGES[bounds].low, RANGES[bounds].high
    if not low <= value <= high:
        raise _fail(f"must be in [{low:g}, {high:g}] ({bounds}); got {value!r}", file, where)
    return float(value)


def _int(value: Any, file: str | None, where: str, low: int = 1, high: int = MAX_COUNT) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _fail(f"must be an integer in [{low}, {high:g}]; got {_short(value)}", file, where)
    return value


def _mapping(value: Any, file: str | None, where: str, keys: Sequence[str], optional: Sequence[str] = ()) -> dict:
    """An object with ``keys`` (and maybe ``optional``), closed (tooldisc.closed_schema): any other key
    is an error naming the nearest known one; ``x-`` keys are extension data, left out."""
    if not isinstance(value, dict):
        raise _fail(f"must be an object; got {_short(value)}", file, where)
    for k in keys:
        if k not in value:
            raise _fail(f"missing key {k!r}", file, where)
    check_keys(value, (*keys, *optional), where=where, file=file)
    return without_extensions(value)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _linear(raw: Any, file: str | None, where: str, known: frozenset[str] | None,
            optional: Sequence[str] = (), bounds: str = "coefficient") -> LinearModel:
    """``bounds``: the range of the coefficients (a ranker's are feature weights, as in a config)."""
    m = _mapping(raw, file, where, ("features", "coef", "intercept"), optional)
    feats = m["features"]
    if not isinstance(feats, list) or not feats:
        raise _fail("must be a non-empty list of feature names", file, f"{where}.features")
    names = tuple(_str(f, file, f"{where}.features[{i}]") for i, f in enumerate(feats))
    if len(set(names)) != len(names):
        raise _fail("feature names must be distinct", file, f"{where}.features")
    if known is not None:
        for i, f in enumerate(names):
            if f not in known:
                raise _fail(f"unknown feature {f!r} (made by a newer tooldisc?); known: {', '.join(sorted(known))}",
                            file, f"{where}.features[{i}]")
    coef = m["coef"]
    if not isinstance(coef, list) or len(coef) != len(names):
        raise _fail(f"must be a list of {len(names)} numbers, one per feature", file, f"{where}.coef")
    values = np.array([_number(c, file, f"{where}.coef[{i}]", bounds) for i, c in enumerate(coef)], dtype=np.float64)
    return LinearModel(names, values, _number(m["intercept"], file, f"{where}.intercept"))


def _from_body(doc: Mapping[str, Any], file: str | None) -> Learned:
    from tooldisc.discovery.learned.features import RANKER_FEATURES

    catalog_hash = _str(doc.get("catalog_hash"), file, "catalog_hash")
    parts = _mapping(doc.get("parts"), file, "parts", (), ("expansions", "ranker", "clauses", "abstention", "mutation"))
    report = doc.get("report", {})
    if not isinstance(report, dict):
        raise _fail("must be an object", file, "report")
    expansions = ranker = abstention = mutation = clauses = None
    if parts.get("expansions") is not None:
        expansions = _expansions(parts["expansions"], file)
    if parts.get("ranker") is not None:
        ranker = _linear(parts["ranker"], file, "parts.ranker", RANKER_FEATURES, bounds="weight")
    if parts.get("clauses") is not None:
        raw = _mapping(parts["clauses"], file, "parts.clauses", ("weight",))
        clauses = _number(raw["weight"], file, "parts.clauses.weight", "share")
    if parts.get("abstention") is not None:
        abstention = parse_abstention(parts["abstention"], file, "parts.abstention")
    if parts.get("mutation") is not None:
        mutation = _mutation(parts["mutation"], file)
    return Learned(catalog_hash, expansions, ranker, abstention, mutation, report, file, clauses)


@lru_cache(maxsize=1)
def default_abstention() -> Abstention:
    """The abstention model shipped with tooldisc, fitted on its own gold sets (docs/learning.md)."""
    text = resources.files("tooldisc.discovery").joinpath("data/abstention.json").read_text("utf-8")
    return parse_abstention(json.loads(text), "abstention.json")


def parse_abstention(raw: Any, file: str | None, where: str = "abstention") -> Abstention:
    """An abstention model (a learned file's part, or the shipped default's document)."""
    from tooldisc.discovery.learned.features import ABSTENTION_FEATURES

    m = _mapping(raw, file, where, ("features", "coef", "intercept", "threshold", "target_false_abstention"),
                 ("fitted_on",))
    model = _linear({k: m[k] for k in ("features", "coef", "intercept")}, file, where, ABSTENTION_FEATURES)
    return Abstention(model, _number(m["threshold"], file, f"{where}.threshold", "probability"),
                      _number(m["target_false_abstention"], file, f"{where}.target_false_abstention", "probability"))


def _expansions(raw: Any, file: str | None) -> Expansions:
    where = "parts.expansions"
    m = _mapping(raw, file, where, ("min_requests", "max_phrases", "tools", "weight"), ("affinity",))
    aff_spec = None
    if m.get("affinity") is not None:
        a = _mapping(m["affinity"], file, f"{where}.affinity", ("weight", "temperature"))
        aff_spec = (_number(a["weight"], file, f"{where}.affinity.weight", "weight"),
                    _number(a["temperature"], file, f"{where}.affinity.temperature", "affinity_temperature"))
    affinity: dict[str, dict[str, float]] = {}
    k = _int(m["min_requests"], file, f"{where}.min_requests", 2)
    cap = _int(m["max_phrases"], file, f"{where}.max_phrases", 1)
    tools = m["tools"]
    if not isinstance(tools, dict):
        raise _fail("must be an object of tool name → expansions", file, f"{where}.tools")
    out: dict[str, tuple[str, tuple[tuple[str, int], ...]]] = {}
    for name, entry in tools.items():
        at = f"{where}.tools[{json.dumps(name, ensure_ascii=False)}]"
        e = _mapping(entry, file, at, ("definition", "phrases"))
        definition = _str(e["definition"], file, f"{at}.definition")
        phrases = e["phrases"]
        if not isinstance(phrases, list) or len(phrases) > cap:
            raise _fail(f"must be a list of at most {cap} [phrase, count] pairs", file, f"{at}.phrases")
        items = []
        width = 2 if aff_spec is None else 3
        shape = "[phrase, count]" if aff_spec is None else "[phrase, count, weight]"
        for i, pair in enumerate(phrases):
            if (not isinstance(pair, list) or len(pair) != width or not isinstance(pair[0], str)
                    or not pair[0].strip() or len(pair[0]) > _MAX_PHRASE_CHARS):
                raise _fail(f"must be a {shape} list with a phrase of 1–{_MAX_PHRASE_CHARS} characters; "
                            f"got {_short(pair)}", file, f"{at}.phrases[{i}]")
            count = _int(pair[1], file, f"{at}.phrases[{i}][1]", 1)
            if aff_spec is not None:
                w = _number(pair[2], file, f"{at}.phrases[{i}][2]", "weight")
                if w > 0:
                    affinity.setdefault(name, {})[pair[0]] = w
            if count < k:
                raise _fail(f"a phrase shared by {count} requests is below min_requests {k} (k-anonymity)",
                            file, f"{at}.phrases[{i}]")
            items.append((pair[0], count))
        out[name] = (definition, tuple(items))
    weight = _number(m["weight"], file, f"{where}.weight", "weight")
    if aff_spec is None:
        return Expansions(k, cap, out, weight)
    return Expansions(k, cap, out, weight, affinity, aff_spec[0], aff_spec[1])


def _mutation(raw: Any, file: str | None) -> MutationModel:
    where = "parts.mutation"
    m = _mapping(raw, file, where, ("terms", "rules", "intercept", "threshold"))
    terms = m["terms"]
    if not isinstance(terms, dict):
        raise _fail("must be an object of term → coefficient", file, f"{where}.terms")
    coefs = {_str(t, file, f"{where}.terms"): _number(c, file, f"{where}.terms.{t}") for t, c in terms.items()}
    rules = _mapping(m["rules"], file, f"{where}.rules", (), MUTATION_CLASSES)
    rule_coefs = {r: _number(c, file, f"{where}.rules.{r}") for r, c in rules.items()}
    return MutationModel(coefs, rule_coefs, _number(m["intercept"], file, f"{where}.intercept"),
                         _number(m["threshold"], file, f"{where}.threshold", "probability"))
