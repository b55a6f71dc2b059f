"""The README's notebook example, run as written: two weight files compared, per-query moves plotted."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT

MARKER = "<!-- readme-example: evaluate -->"


def _example() -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    found = re.search(re.escape(MARKER) + r"\s*```python\n(.*?)```", text, re.S)
    assert found, f"README.md lost the example after {MARKER}"
    return found.group(1)


def test_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "configs").mkdir()
    shutil.copy(ROOT / "configs" / "bm25.yaml", tmp_path / "configs" / "bm25.yaml")
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(_example(), "README.md", "exec"), scope)  # the README's own code, unchanged
    cmp, moved = scope["cmp"], scope["moved"]
    assert cmp.measures.height == 10 and cmp.a.config.source.endswith("bm25.yaml")
    assert moved.height > 0 and moved["delta"].null_count() == 0 and (moved["delta"] != 0).all()
    assert moved.height <= cmp.changed.height  # a query whose nDCG moved had its offer change
    html = (tmp_path / "ndcg_per_query.html").read_text("utf-8")
    assert "vega" in html and '"delta"' in html
    assert "verdict" in capsys.readouterr().out
    # offline: no script is fetched, Vega itself is in the page ...
    assert not re.search(r"<script[^>]*\bsrc=", html), "the chart page loads a script from elsewhere"
    # ... and a real browser, with nothing to fetch, draws the bars
    from tests.reports.browser import dump_dom, require_browser

    dom = dump_dom(tmp_path / "ndcg_per_query.html", require_browser())
    bars = re.findall(r'<path aria-label="nDCG@15 per query[^"]*; queries: \d+"[^>]*aria-roledescription="bar" '
                      r'd="M[^"]+h[^"]+"', dom)
    assert len(bars) >= 2, dom[-2000:]
