"""Checking a gold set: against itself, and against the catalog it is evaluated with.

A gold set that names a tool the catalog lacks would score a ranker against a tool it
can never offer, so that is an error; a different catalog version is only a warning,
since tools usually survive a version bump. Issues come back as data (errors first,
then warnings, each in file order); the loader raises the first error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tooldisc.gold.model import GoldSet


@dataclass(frozen=True)
class GoldIssue:
    """One finding: ``error`` makes a gold set unusable, ``warning`` does not."""

    level: str
    where: str
    message: str

    def render(self, file: str | None = None) -> str:
        return ": ".join(p for p in (file, self.where, self.message) if p)


def _catalog_names(catalog: Any) -> tuple[set[str], str | None]:
    """Tool names (and a version, if known) from a Catalog-like object or an iterable of names."""
    tools = getattr(catalog, "tools", None)
    if tools is not None and not isinstance(catalog, str):
        return {getattr(t, "name", t) for t in tools}, getattr(catalog, "version", None)
    return set(catalog), None


def validate_gold(
    gold: GoldSet,
    catalog: Iterable[str] | Any | None = None,
    *,
    catalog_version: str | None = None,
) -> list[GoldIssue]:
    """Every problem in ``gold``; with ``catalog`` (a Catalog or tool names) also unknown tools.

    ``catalog_version`` overrides the version read from a Catalog object.
    """
    names: set[str] | None = None
    version = catalog_version
    if catalog is not None:
        names, found = _catalog_names(catalog)
        version = catalog_version if catalog_version is not None else found
    errors: list[GoldIssue] = []
    warnings: list[GoldIssue] = []
    if version is not None and gold.catalog_version is not None and str(version) != gold.catalog_version:
        warnings.append(GoldIssue("warning", "catalog_version",
                                  f"gold set was written for catalog {gold.catalog_version!r}; "
                                  f"the catalog is {str(version)!r}"))
    seen: dict[str, int] = {}
    for i, q in enumerate(gold.queries):
        where = f"queries[{i}]"
        label = f"query {q.id!r}"
        if q.id in seen:
            errors.append(GoldIssue("error", where, f"duplicate id {q.id!r} (first at queries[{seen[q.id]}])"))
        else:
            seen[q.id] = i
        if not q.query.strip():
            errors.append(GoldIssue("error", where, f"{label} has an empty query text"))
        expected = set(q.primary_expected_tools) | set(q.acceptable_tools)
        both = sorted(expected & set(q.forbidden_tools))
        if both:
            errors.append(GoldIssue("error", where, f"{label} names {', '.join(both)} as both expected and forbidden"))
        if q.no_match and expected:
            errors.append(GoldIssue("error", where,
                                    f"{label} is no_match but names expected tools {', '.join(sorted(expected))}"))
        if not q.no_match and not q.primary_expected_tools:
            errors.append(GoldIssue("error", where,
                                    f"{label} has no primary_expected_tools; name one or set no_match: true"))
        overlap = sorted(set(q.primary_expected_tools) & set(q.acceptable_tools))
        if overlap:
            warnings.append(GoldIssue("warning", where,
                                      f"{label} lists {', '.join(overlap)} as both primary and acceptable; "
                                      "primary wins"))
        if names is not None:
            for field in ("primary_expected_tools", "acceptable_tools", "forbidden_tools"):
                for tool in getattr(q, field):
                    if tool not in names:
                        errors.append(GoldIssue("error", f"{where}.{field}",
                                                f"{label} names tool {tool!r}, which the catalog lacks"))
    return errors + warnings
