"""The catalog import-format registry: detection, conversion, notes and the CLI read its records.

A new format is one :class:`~tooldisc.discovery.importers.ImportFormat` record (with its reader)
plus its tests; the recipe test adds one to the registry and finds it in the CLI's choices,
detection, the policy note and ``catalog validate``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import pytest

import tooldisc.discovery.importers as importers


def test_every_format_list_is_the_registry() -> None:
    from tooldisc.cli.commands.catalog import POLICY_FREE_FORMATS

    names = tuple(f.name for f in importers.REGISTRY)
    assert importers.FORMATS == names == ("tooldisc", "openai", "anthropic", "mcp", "jsonl")
    assert {f.name: f.label for f in importers.REGISTRY} == importers.LABELS
    assert set(POLICY_FREE_FORMATS) == {"jsonl", "openai", "anthropic"}
    assert importers.NATIVE == "tooldisc" and [f.name for f in importers.REGISTRY if f.native] == ["tooldisc"]
    assert importers.choices_text() == "tooldisc, openai, anthropic, mcp or jsonl"
    # a field is evidence of one format only
    owned = [key for f in importers.REGISTRY for key in (*f.fields, *f.field_values)]
    assert len(owned) == len(set(owned)) and not set(owned) & importers._tooldisc_fields()


def test_the_cli_help_lists_every_format() -> None:
    from typer.testing import CliRunner

    from tooldisc.cli.app import build_app

    for args in (("discover", "--help"), ("catalog", "validate", "--help")):
        out = " ".join(CliRunner().invoke(build_app(), list(args), env={"COLUMNS": "300"}).output.split())
        assert importers.choices_text() in out, args


def _read_csv_ish(data: Any, side_effect: str | None, file: str | None) -> dict[str, Any]:
    return {"catalog_version": None,
            "tools": [{"name": t["tool_name"], "description": t.get("summary"), "side_effect": side_effect}
                      for t in data["toolbox"]]}


TOOLBOX = importers.ImportFormat("toolbox", "Toolbox", _read_csv_ish, fields=("tool_name", "summary"),
                                 document_fields=("toolbox_version",))


@pytest.fixture()
def with_toolbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry with one more record, and the lists the module derives from it."""
    registry = (*importers.REGISTRY, TOOLBOX)
    monkeypatch.setattr(importers, "REGISTRY", registry)
    monkeypatch.setattr(importers, "BY_NAME", {f.name: f for f in registry})
    monkeypatch.setattr(importers, "FORMATS", tuple(f.name for f in registry))
    monkeypatch.setattr(importers, "LABELS", {f.name: f.label for f in registry})


def test_recipe_one_record_adds_a_format_everywhere(with_toolbox: None, tmp_path) -> None:
    from tooldisc.cli.options import catalog_format
    from tooldisc.discovery.catalog.io import load_catalog
    from tooldisc.errors import DataError

    assert catalog_format("toolbox") == "toolbox"  # a CLI choice
    doc = {"toolbox_version": 1, "toolbox": [{"tool_name": "get_x", "summary": "Get x"}]}
    assert importers.detect_format(doc) == "toolbox"  # declared by its document field
    assert importers.detect_format({"tools": [{"tool_name": "a"}]}) == "toolbox"  # detected from a tool field
    with pytest.raises(DataError, match="Toolbox field mixed with tooldisc fields"):
        importers.detect_format({"tools": [{"name": "a", "roles": ["r"]}, {"tool_name": "b"}]})
    path = tmp_path / "toolbox.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    catalog = load_catalog(path)
    assert [t.name for t in catalog.tools] == ["get_x"]
    assert catalog.notes == (f"{path}: Toolbox tools carry no policy (roles, permissions, tenant rules); with no "
                             "side effect no tool is offered (convert with --side-effect)",)


def test_recipe_a_line_format_is_chosen_by_its_suffix(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    rows = dataclasses.replace(TOOLBOX, name="rows", label="tools.rows", read=importers._read_rows, fields=(),
                               document_fields=(), lines=True, suffixes=(".rows",), read_only_for_evaluation=True)
    registry = (*importers.REGISTRY, rows)
    monkeypatch.setattr(importers, "REGISTRY", registry)
    monkeypatch.setattr(importers, "BY_NAME", {f.name: f for f in registry})
    from tooldisc.discovery.catalog.io import load_catalog

    path = tmp_path / "bench.rows"
    path.write_text('{"name": "get_x", "description": "Get x"}\n', encoding="utf-8")
    catalog = load_catalog(path)
    assert [(t.name, t.side_effect) for t in catalog.tools] == [("get_x", "none")]
    assert catalog.notes == (f"{path}: a tools.rows carries no policy; for evaluation its tools count as "
                             "read-only (side_effect: none)",)


def test_evidence_is_found_as_before_in_file_order() -> None:
    doc: Mapping[str, Any] = {"result": {"tools": [{"name": "a", "inputSchema": {}}]}, "tools": []}
    assert importers.format_evidence(doc) == [("mcp", "result"), ("tooldisc", "tools")]
    doc = {"tools": [{"type": "function", "function": {}}, {"input_schema": {}}, {"type": "other"}]}
    assert importers.format_evidence(doc) == [("openai", "tools[0].type"), ("anthropic", "tools[1].input_schema")]
    assert importers.detect_format([{"name": "a", "parameters": {}}]) == "openai"
    assert importers.detect_format([{"name": "a"}]) == "anthropic"
    assert importers.detect_format({"tools": []}) == "tooldisc"
