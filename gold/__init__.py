"""Gold query sets: loading, validation, splits, and the shipped default data."""

from tooldisc.gold.loader import MAX_BYTES, gold_schema, load_gold, parse_gold
from tooldisc.gold.model import GoldQuery, GoldSet
from tooldisc.gold.stats import GoldStats, gold_stats, language, split
from tooldisc.gold.validate import GoldIssue, validate_gold

__all__ = [
    "MAX_BYTES",
    "GoldIssue",
    "GoldQuery",
    "GoldSet",
    "GoldStats",
    "gold_schema",
    "gold_stats",
    "language",
    "load_gold",
    "parse_gold",
    "split",
    "validate_gold",
]
