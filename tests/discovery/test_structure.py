"""How the discovery package fits together: no import circles, steps see only the index record."""

from __future__ import annotations

import ast
from pathlib import Path

import tooldisc.discovery as discovery_pkg

PACKAGE = Path(discovery_pkg.__file__).resolve().parent


def _imports(path: Path) -> set[str]:
    """Modules of ``tooldisc.discovery`` that ``path`` imports anywhere (type-only and lazy imports too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if name.startswith("tooldisc.discovery.") and (PACKAGE / f"{name.split('.')[2]}.py").exists():
                out.add(name.split(".")[2])
    return out - {path.stem}


def test_the_discovery_modules_import_without_a_circle() -> None:
    graph = {p.stem: _imports(p) for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            assert state.get(nxt) != 1, " → ".join([*trail, node, nxt])
            if nxt not in state:
                visit(nxt, [*trail, node])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])
    importers = {m for m, deps in graph.items() if "pipeline" in deps}
    assert not importers & {"features", "abstention", "candidates", "config", "index", "stages", "adaptive"}


def test_features_implement_exactly_the_config_weights() -> None:
    from tooldisc.discovery.config import FEATURE_NAMES
    from tooldisc.discovery.features import FEATURES, TIE_BREAKERS

    assert tuple(FEATURES) == FEATURE_NAMES and set(FEATURES) >= TIE_BREAKERS


def test_steps_receive_the_frozen_index_record_not_the_engine(monkeypatch) -> None:
    import dataclasses

    from tooldisc.discovery import pipeline
    from tooldisc.discovery.catalog_io import default_catalog_path, load_catalog
    from tooldisc.discovery.index import Index

    seen = []
    steps = []
    for step in pipeline.STEPS:
        def spy(state, ix, _step=step):
            seen.append(type(ix))
            return _step(state, ix)
        spy.__name__ = step.__name__
        steps.append(spy)
    monkeypatch.setattr(pipeline, "STEPS", tuple(steps))
    engine = pipeline.Discoverer(load_catalog(default_catalog_path()))
    assert engine.discover("unpaid invoices").names
    assert seen == [Index] * len(pipeline.STEPS)
    assert dataclasses.is_dataclass(engine.index) and type(engine.index).__dataclass_params__.frozen
