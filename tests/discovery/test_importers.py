"""Importers: provider tool lists and tools.jsonl become catalogs, conservatively (DESIGN §3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tooldisc.discovery.catalog import build_catalog
from tooldisc.discovery.catalog.io import load_catalog
from tooldisc.discovery.importers import detect_format, mcp_side_effect, to_catalog_document
from tooldisc.errors import DataError

PARAMS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
OPENAI = [{"type": "function", "function": {"name": "get_weather", "description": "Weather now", "parameters": PARAMS}}]
ANTHROPIC = [{"name": "get_weather", "description": "Weather now", "input_schema": PARAMS}]
MCP = {"tools": [
    {"name": "read_file", "description": "Read", "inputSchema": PARAMS, "annotations": {"readOnlyHint": True}},
    {"name": "rm", "description": "Remove", "inputSchema": PARAMS, "annotations": {"destructiveHint": True}},
    {"name": "write_file", "description": "Write", "inputSchema": PARAMS, "annotations": {"readOnlyHint": False}},
    {"name": "plain", "description": "No hints", "inputSchema": PARAMS},
]}


@pytest.mark.parametrize(("data", "fmt"), [
    (OPENAI, "openai"),
    ({"tools": OPENAI}, "openai"),
    (ANTHROPIC, "anthropic"),
    ({"tools": ANTHROPIC}, "anthropic"),
    (MCP, "mcp"),
    ({"jsonrpc": "2.0", "id": 1, "result": MCP}, "mcp"),
    ({"catalog_version": "1", "tools": [{"name": "x", "side_effect": "none"}]}, "tooldisc"),
    ({"catalog_version": "1", "tools": []}, "tooldisc"),
])
def test_detect_format(data, fmt: str) -> None:
    assert detect_format(data) == fmt


def test_openai_and_anthropic_carry_no_policy() -> None:
    for data, fmt in ((OPENAI, "openai"), (ANTHROPIC, "anthropic")):
        tool = build_catalog(to_catalog_document(data, fmt)).tools[0]
        assert (tool.name, tool.description, tool.parameters) == ("get_weather", "Weather now", PARAMS)
        assert tool.side_effect is None  # unknown: never offered until the host says otherwise


def test_side_effect_is_applied_when_given() -> None:
    doc = to_catalog_document(OPENAI, "openai", side_effect="write")
    assert build_catalog(doc).tools[0].side_effect == "write"


def test_mcp_annotations_map_conservatively() -> None:
    catalog = build_catalog(to_catalog_document(MCP, "mcp"))
    assert {t.name: t.side_effect for t in catalog.tools} == {
        "read_file": "none", "rm": "delete", "write_file": None, "plain": None}


def test_mcp_fallback_side_effect_only_for_unannotated_tools() -> None:
    catalog = build_catalog(to_catalog_document(MCP, "mcp", side_effect="write"))
    assert catalog.by_name["read_file"].side_effect == "none"
    assert catalog.by_name["rm"].side_effect == "delete"
    assert catalog.by_name["plain"].side_effect == "write"


@pytest.mark.parametrize(("annotations", "expected"), [
    (None, None), ({}, None), ({"readOnlyHint": True}, "none"), ({"readOnlyHint": True, "destructiveHint": True}, "none"),
    ({"destructiveHint": True}, "delete"), ({"readOnlyHint": "true"}, None), ({"idempotentHint": True}, None),
])
def test_mcp_side_effect(annotations, expected) -> None:
    assert mcp_side_effect(annotations) == expected


def test_provider_tool_without_name_names_its_index() -> None:
    with pytest.raises(DataError, match="missing required field 'name'") as exc:
        to_catalog_document([*OPENAI, {"type": "function", "function": {"description": "x"}}], "openai", file="t.json")
    assert "tools[1]" in str(exc.value) and "t.json" in str(exc.value)


def test_tools_not_a_list_is_refused() -> None:
    with pytest.raises(DataError, match="expected a list of tools"):
        to_catalog_document({"tools": {"a": 1}}, "anthropic")


def test_jsonl_counts_as_read_only_for_evaluation_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    rows = [{"name": "a.b", "description": "first", "parameters": PARAMS, "extra": 1},
            {"name": "c", "description": None, "parameters": None}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    catalog = load_catalog(path)
    assert [t.name for t in catalog.tools] == ["a.b", "c"]
    assert all(t.side_effect == "none" for t in catalog.tools)
    assert catalog.by_name["c"].parameters is None
    assert catalog.notes and "read-only" in catalog.notes[0]
    explicit = load_catalog(path, side_effect="write")
    assert all(t.side_effect == "write" for t in explicit.tools)
    assert explicit.notes and "carry no policy" in explicit.notes[0] and "'write'" in explicit.notes[0]


def test_jsonl_bad_line_names_its_number(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text('{"name": "a"}\n{"name": \n', encoding="utf-8")
    with pytest.raises(DataError, match="line 2"):
        load_catalog(path)


def test_jsonl_row_without_name(tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text('{"name": "a"}\n{"description": "b"}\n', encoding="utf-8")
    with pytest.raises(DataError, match="line 2: missing required field 'name'"):
        load_catalog(path)


def test_unknown_format_is_refused() -> None:
    with pytest.raises(DataError, match="unknown catalog format 'gemini'"):
        to_catalog_document([], "gemini")


@pytest.mark.shared
def test_shared_benchmark_tools_import(shared: Path) -> None:
    bfcl = load_catalog(shared / "benchmarks" / "bfcl" / "tools.jsonl")
    metatool = load_catalog(shared / "benchmarks" / "metatool" / "tools.jsonl")
    assert len(bfcl) == 923 and len(metatool) == 199
    assert all(t.parameters is None for t in metatool.tools)
