"""The shipped default catalog (gold/data/catalog.yaml) loads cleanly and is internally coherent."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
import yaml

from tooldisc.discovery.catalog import build_catalog, validate_catalog_data

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "gold" / "data" / "catalog.yaml"
PLAN = ROOT / "gold" / "data" / "catalog_plan.tsv"
PERSIAN = re.compile("[\u0600-\u06ff]")


@pytest.fixture(scope="module")
def raw() -> dict:
    with CATALOG.open(encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@pytest.fixture(scope="module")
def catalog(raw):
    return build_catalog(raw, source=str(CATALOG))


def test_loads_without_errors(raw, catalog):
    issues = validate_catalog_data(raw)
    assert [i for i in issues if i.level == "error"] == []
    # The only warnings are the deliberately shapeless tools.
    warned = sorted(i.path for i in issues if i.level == "warning")
    assert all(p.endswith(".parameters") for p in warned)
    assert len(warned) == 2
    assert catalog.version == "tooldisc-default-1"


def test_size(catalog):
    assert len(catalog) >= 150


def test_all_side_effects_present(catalog):
    effects = {t.side_effect for t in catalog.tools}
    assert {"none", "write", "delete", "export", "execute"} <= effects
    # Two tools deliberately carry no side effect: they must never be offered.
    assert sum(1 for t in catalog.tools if t.side_effect is None) == 2


def test_references_name_existing_tools(catalog):
    names = set(catalog.by_name)
    dangling = [(t.name, c) for t in catalog.tools for c in t.companion_tools if c not in names]
    dangling += [(t.name, t.replacement) for t in catalog.tools if t.replacement and t.replacement not in names]
    assert dangling == []
    for t in catalog.tools:
        if t.deprecated:
            assert t.replacement, f"{t.name} is deprecated without a replacement"


def test_persian_aliases(catalog):
    with_persian = [t.name for t in catalog.tools if any(PERSIAN.search(a) for a in t.aliases)]
    assert len(with_persian) >= 20


def test_plan_matches_catalog(catalog):
    with PLAN.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert rows and list(rows[0]) == ["name", "side_effect", "capability", "purpose"]
    assert [r["name"] for r in rows] == [t.name for t in catalog.tools]
