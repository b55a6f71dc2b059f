"""The learned file: byte-stable round trips, integrity, catalog binding, and the hostile corpus."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tooldisc.discovery.catalog import catalog_from_tools
from tooldisc.discovery.learned import (
    Abstention,
    Expansions,
    Learned,
    LinearModel,
    MutationModel,
    bind,
    dumps_learned,
)
from tooldisc.discovery.learned.read import load_learned, parse_learned
from tooldisc.discovery.model import Tool
from tooldisc.errors import DataError

BAD = Path(__file__).resolve().parents[1] / "data" / "bad" / "learned"

# (file, fragment of the one-line message)
HOSTILE = [
    ("not_json.learned", "invalid JSON"),
    ("a_catalog.json", "not a tooldisc learned file"),
    ("future_version.json", "version 99 is not supported"),
    ("tampered_phrase.json", "checksum mismatch"),
    ("no_checksum.json", "missing its sha256 checksum"),
    ("nan_coef.json", "NaN is not a JSON number"),
    ("coef_out_of_range.json", "parts.ranker.coef[1]: must be in [0, 1000] (weight)"),
    ("unknown_feature.json", "unknown feature 'authorize_all'"),
    ("coef_length.json", "must be a list of 3 numbers"),
    ("below_k_anonymity.json", "below min_requests 3 (k-anonymity)"),
    ("threshold_over_one.json", "parts.abstention.threshold: must be in [0, 1]"),
    ("affinity_temperature_zero.json", "parts.expansions.affinity.temperature: must be in [0.001, 1000]"),
    ("authorize_part.json", "parts.allow_tools: unknown field"),
    ("expansions_weight_huge.json", "parts.expansions.weight: must be in [0, 1000] (weight); got 1e+308"),
    ("ranker_negative_weight.json", "parts.ranker.coef[0]: must be in [0, 1000] (weight); got -1.0"),
    ("misspelled_key.json", "parts.clauses.Weight: unknown field; did you mean 'weight'?"),
    ("deep_nesting.json", "nested deeper than 100 levels"),
    ("pickle.bin", "not UTF-8"),
    ("duplicate_key.json", "duplicate key 'weight'"),
    ("clauses_weight_over_one.json", "parts.clauses.weight: must be in [0, 1]"),
]


def test_every_hostile_file_has_a_case() -> None:
    assert {p.name for p in BAD.iterdir()} == {name for name, _ in HOSTILE}


@pytest.mark.parametrize(("name", "fragment"), HOSTILE)
def test_hostile_learned_file_is_one_line_data_error(name: str, fragment: str) -> None:
    path = BAD / name
    with pytest.raises(DataError) as info:
        load_learned(path)
    line = info.value.one_line()
    assert "\n" not in line and len(line.encode()) <= 300
    assert str(path) in line
    assert fragment in line


def _tools() -> tuple[Tool, ...]:
    return (Tool(name="list_invoices", description="List invoices", side_effect="none"),
            Tool(name="delete_invoice", description="Delete an invoice", side_effect="delete"))


def _learned(catalog) -> Learned:
    h = {t.name: t.definition_hash for t in catalog.tools}
    return Learned(
        catalog_hash=catalog.hash,
        expansions=Expansions(3, 8, {"list_invoices": (h["list_invoices"], (("unpaid invoices", 7), ("bills", 3)))}, 2.0,
                              {"list_invoices": {"bills": 0.75}}, 1.5, 0.1),
        ranker=LinearModel(("bm25", "ngram", "expansion"), np.array([0.4, 1.0, 0.25]), 0.0),
        abstention=Abstention(LinearModel(("bm25_top", "known"), np.array([-1.5, -2.0]), 1.25), 0.6, 0.01),
        mutation=MutationModel({"how": -2.0}, {"WRITE": 0.5}, 1.0, 0.3),
        report={"requests": 10},
    )


def test_round_trip_is_byte_identical_and_reads_back_equal() -> None:
    catalog = catalog_from_tools(_tools())
    text = dumps_learned(_learned(catalog))
    again = parse_learned(text, "x.json")
    assert dumps_learned(again) == text
    assert again.parts == ("expansions", "affinity", "ranker", "abstention", "mutation")
    assert again.expansions.tools["list_invoices"][1] == (("unpaid invoices", 7), ("bills", 3))
    assert again.expansions.affinity == {"list_invoices": {"bills": 0.75}}  # a zero weight is not stored as one
    assert '["unpaid invoices", 7, 0.0]' in text and '["bills", 3, 0.75]' in text  # one row per phrase
    np.testing.assert_allclose(again.ranker.coef, [0.4, 1.0, 0.25])
    assert again.digest == _learned(catalog).digest


def test_any_edit_is_refused_even_a_harmless_one() -> None:
    catalog = catalog_from_tools(_tools())
    text = dumps_learned(_learned(catalog)).replace('"requests": 10', '"requests": 11')
    with pytest.raises(DataError, match="checksum mismatch"):
        parse_learned(text, "x.json")


def test_probability_is_the_logistic_of_the_decision() -> None:
    m = LinearModel(("a", "b"), np.array([1.0, -2.0]), 0.5)
    x = np.array([[0.0, 0.0], [1.0, 1.0], [1e6, 0.0]])
    np.testing.assert_allclose(m.probability(x), [1 / (1 + np.exp(-0.5)), 1 / (1 + np.exp(0.5)), 1.0])


def test_another_catalog_keeps_models_and_drops_stale_expansions_loudly() -> None:
    catalog = catalog_from_tools(_tools())
    learned = _learned(catalog)
    same = bind(learned, catalog)
    assert same.notes == () and set(same.expansions) == {"list_invoices"}
    changed = catalog_from_tools((replace(_tools()[0], description="List every invoice", definition_hash=""),
                                  _tools()[1]))
    bound = bind(learned, changed)
    assert bound.expansions == {}
    assert bound.learned.ranker is learned.ranker
    assert any("1 changed since learning" in n for n in bound.notes)
    assert any("learned on catalog" in n for n in bound.notes)


def test_a_grown_catalog_gives_each_variant_its_base_tools_learned_parts() -> None:
    from tooldisc.discovery.learned import for_grown_catalog
    from tooldisc.errors import UsageError
    from tooldisc.evaluation.bench.synthetic import synthetic_catalog

    catalog = catalog_from_tools(_tools())
    grown = synthetic_catalog(catalog, 12, seed=1)
    moved = for_grown_catalog(_learned(catalog), catalog, grown)
    assert moved.catalog_hash == grown.hash
    variants = [t.name for t in grown.tools if t.name not in ("list_invoices", "delete_invoice")]
    heirs = [n for n in variants if "_list_invoices_" in n]
    assert heirs and set(moved.expansions.tools) == {"list_invoices", *heirs}
    assert all(moved.expansions.affinity[n] == {"bills": 0.75} for n in heirs)
    assert bind(moved, grown).notes == ()  # every kept part binds: nothing stale
    with pytest.raises(UsageError, match="applies to the catalog it was learned on"):
        for_grown_catalog(_learned(catalog), grown, grown)


def test_a_clauses_part_round_trips_and_sets_the_step_weight() -> None:
    from tooldisc.discovery.pipeline import Discoverer

    catalog = catalog_from_tools(_tools())
    learned = replace(_learned(catalog), clauses=0.65)
    again = parse_learned(dumps_learned(learned), "x.json")
    assert again.clauses == 0.65 and "clauses" in again.parts
    assert '"clauses": {\n   "weight": 0.65\n  }' in dumps_learned(learned)
    assert Discoverer(catalog, learned=again).config.clauses.weight == 0.65
    assert Discoverer(catalog, learned=replace(again, clauses=None)).config.clauses.weight == 0.0
