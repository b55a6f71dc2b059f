"""``tooldisc serve`` reloads (issue 10 item 5): whatever a bad file causes, the old catalog
keeps serving and the failure is reported once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

pytest.importorskip("mcp")


def _replace(path: Path, text: str, bump: int) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + bump * 1_000_000_000))


def test_deep_json_an_alias_bomb_and_a_crash_keep_the_old_catalog(tmp_path: Path, catalog_doc, monkeypatch) -> None:
    from tooldisc.agent.mcp_server import AgentService, CatalogSource

    path = tmp_path / "catalog"  # no suffix: read as JSON, else YAML
    path.write_text(yaml.safe_dump(catalog_doc), encoding="utf-8")
    reports: list[str] = []
    svc = AgentService(CatalogSource(path, report=reports.append), allow_default_context=True)
    good = svc.list_tools().meta["tooldisc/catalog_hash"]

    _replace(path, '{"tools": ' + "[" * 50_000 + "]" * 50_000 + "}", 1)
    for _ in range(3):
        assert svc.list_tools().meta["tooldisc/catalog_hash"] == good
    assert len(reports) == 1 and "nested deeper than 100 levels" in reports[0]
    assert "still serving the previous catalog" in reports[0] and len(reports[0].encode()) <= 300

    bomb = ['a: &a [x,x,x,x,x,x,x,x,x]'] + [f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9)
                                            + "]" for i in range(8)]
    _replace(path, "\n".join(bomb) + "\ntools: [{name: *i}]\n", 2)
    assert svc.list_tools().meta["tooldisc/catalog_hash"] == good
    assert len(reports) == 2 and "YAML aliases expand" in reports[1]

    import tooldisc.discovery.catalog.io as catalog_io

    def crash(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(catalog_io, "load_catalog", crash)
    _replace(path, yaml.safe_dump(catalog_doc), 3)
    for _ in range(2):
        assert svc.list_tools().meta["tooldisc/catalog_hash"] == good  # not "Internal server error"
    assert len(reports) == 3 and "RecursionError" in reports[2]
    monkeypatch.undo()
    path.unlink()
    for _ in range(2):
        assert svc.list_tools().meta["tooldisc/catalog_hash"] == good
    assert len(reports) == 4 and "cannot stat the catalog" in reports[3]  # once, not once per request
    assert not svc.call_tool("list_invoices", {}).is_error
