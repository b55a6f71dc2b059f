"""Token estimates for schemas and offers, without a tokenizer at run time.

A real BPE tokenizer needs its vocabulary, which tooldisc does not ship or download.
Instead the estimate is a linear model over character classes, fitted offline against
a real tokenizer (``benchmarks/token_calibration.py``, o200k_base) and stored with its
measured error in ``data/token_model.json``:

    tokens ≈ intercept + Σ coefficient[class] · count[class]

The classes separate what tokenizers treat differently: Latin letters (long merges,
about four characters per token), Latin words (each word start costs a token),
digits, Arabic-script letters (Persian packs far fewer characters per token),
JSON punctuation, whitespace and everything else. The model never reads text
as instructions; it only counts characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

FEATURES: tuple[str, ...] = (
    "latin_chars", "latin_words", "digits", "arabic_chars", "arabic_words", "punct", "space", "other",
)

_PATTERNS: dict[str, re.Pattern[str]] = {
    "latin_chars": re.compile(r"[A-Za-z]"),
    "latin_words": re.compile(r"[A-Za-z]+"),
    "digits": re.compile(r"[0-9]"),
    "arabic_chars": re.compile(r"[\u0600-\u06FF\u0750-\u077F\u08A0-\u08FF\uFB50-\uFDFF\uFE70-\uFEFF\u200C]"),
    "arabic_words": re.compile(r"[\u0600-\u06FF\u0750-\u077F\u08A0-\u08FF\uFB50-\uFDFF\uFE70-\uFEFF\u200C]+"),
    "punct": re.compile(r"[!-/:-@\[-`{-~]"),
    "space": re.compile(r"\s"),
}


def char_features(text: str) -> dict[str, int]:
    """Counts of each character class of ``text`` (``other`` is what no class claims)."""
    counts = {name: len(p.findall(text)) for name, p in _PATTERNS.items()}
    claimed = counts["latin_chars"] + counts["digits"] + counts["arabic_chars"] + counts["punct"] + counts["space"]
    counts["other"] = max(len(text) - claimed, 0)
    return {f: counts[f] for f in FEATURES}


@dataclass(frozen=True)
class TokenModel:
    """A fitted linear token estimator and the error it was measured with."""

    encoding: str
    intercept: float
    coefficients: Mapping[str, float]
    error: Mapping[str, Any]

    def estimate(self, text: str) -> int:
        """Estimated tokens of ``text``; at least 1 for non-empty text."""
        if not text:
            return 0
        feats = char_features(text)
        value = self.intercept + sum(self.coefficients.get(f, 0.0) * n for f, n in feats.items())
        return max(1, round(value))

    def estimate_json(self, value: Any) -> int:
        """Estimated tokens of ``value`` serialised as compact JSON (UTF-8 kept), as sent on the wire."""
        return self.estimate(json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=False))


def model_from_dict(data: Mapping[str, Any]) -> TokenModel:
    coefs = {str(k): float(v) for k, v in dict(data["coefficients"]).items()}
    return TokenModel(str(data["encoding"]), float(data["intercept"]), coefs, dict(data.get("error", {})))


@lru_cache(maxsize=1)
def default_token_model() -> TokenModel:
    """The shipped calibration (``agent/data/token_model.json``)."""
    text = resources.files("tooldisc.agent").joinpath("data/token_model.json").read_text("utf-8")
    return model_from_dict(json.loads(text))


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text`` under the shipped model."""
    return default_token_model().estimate(text)
