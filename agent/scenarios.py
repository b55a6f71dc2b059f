"""Golden planning scenarios (seed 000) as data: ``agent/data/scenarios/*.yaml``.

Each file names a catalog (beside it), the routed tools, and cases: a plan and the
finding codes it must produce, in order. The promotion gate for a shadow planner
requires them all to pass (DESIGN §7).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from tooldisc.agent.plan import PlanReport, parse_plan, validate_plan
from tooldisc.discovery.catalog import Catalog
from tooldisc.errors import DataError


@dataclass(frozen=True)
class ScenarioCase:
    scenario: str
    name: str
    plan: Any
    expect: tuple[str, ...]
    routed: tuple[str, ...]
    catalog: Catalog

    def run(self) -> PlanReport:
        return validate_plan(parse_plan(self.plan, file=f"{self.scenario}: {self.name}"), self.catalog, self.routed)


def scenario_dir() -> Path:
    return Path(str(resources.files("tooldisc.agent").joinpath("data/scenarios")))


def load_scenarios(directory: str | Path | None = None) -> tuple[ScenarioCase, ...]:
    """Every case of every scenario file, sorted by file name then case order."""
    from tooldisc.discovery.catalog.io import load_catalog, parse_document, read_text

    root = Path(directory) if directory else scenario_dir()
    catalogs: dict[str, Catalog] = {}
    cases: list[ScenarioCase] = []
    for path in sorted(root.glob("*.yaml")):
        doc = parse_document(read_text(path, what="scenario"), str(path))
        if not isinstance(doc, dict) or "cases" not in doc:
            continue  # the catalog file
        cat_name = doc.get("catalog")
        if not isinstance(cat_name, str):
            raise DataError("a scenario must name its catalog file", file=str(path), where="catalog")
        if cat_name not in catalogs:
            catalogs[cat_name] = load_catalog(root / cat_name)
        for i, case in enumerate(doc["cases"]):
            if not isinstance(case, dict) or "plan" not in case:
                raise DataError("a case needs 'plan' and 'expect'", file=str(path), where=f"cases[{i}]")
            cases.append(ScenarioCase(str(doc.get("name", path.stem)), str(case.get("name", i)), case["plan"],
                                      tuple(case.get("expect") or ()), tuple(doc.get("routed") or ()),
                                      catalogs[cat_name]))
    return tuple(cases)
