"""How the discovery package fits together: no import circles, steps see only the index record."""

from __future__ import annotations

import ast
from pathlib import Path

import tooldisc.discovery as discovery_pkg

PACKAGE = Path(discovery_pkg.__file__).resolve().parent


def _module(path: Path) -> str:
    """``path``'s module name under ``tooldisc.discovery`` ("catalog", "catalog.io"); "" for the package."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}


def _imports(path: Path) -> set[str]:
    """Modules of ``tooldisc.discovery`` (wings included) that ``path`` imports anywhere (type-only and lazy
    imports too): an import of ``a.b.c`` counts as the longest of its prefixes that is a module, and
    ``from a import b`` as ``a.b`` when that is a module (the package ``a`` is only the way in)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            subs = [f"{node.module}.{a.name}" for a in node.names]
            names = [s for s in subs if s.removeprefix("tooldisc.discovery.") in MODULES]
            names = names if len(names) == len(subs) else [node.module, *names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[:2] != ["tooldisc", "discovery"]:
                continue
            for end in range(len(parts), 2, -1):
                if ".".join(parts[2:end]) in MODULES:
                    out.add(".".join(parts[2:end]))
                    break
    return out - {_module(path)}


def test_the_discovery_modules_import_without_a_circle() -> None:
    graph = {name: _imports(path) for name, path in MODULES.items() if name}
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
    assert not importers & {"rank.features", "rank.abstention", "rank.candidates", "config", "indexes.index", "stages",
                            "rank.adaptive"}


def test_every_wing_is_a_package_that_installs_and_no_folder_is_crowded() -> None:
    """A folder without ``__init__.py`` or missing from pyproject's packages would import from the work tree
    and be left out of a wheel; a folder of more than 20 modules hides its parts again."""
    import tomllib

    pyproject = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text("utf-8"))
    packages = set(pyproject["tool"]["setuptools"]["packages"])
    for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir())]:
        if folder.name in ("__pycache__", "data") or "data" in folder.relative_to(PACKAGE).parts:
            continue
        assert (folder / "__init__.py").is_file(), folder
        assert ".".join(["tooldisc", "discovery", *folder.relative_to(PACKAGE).parts]) in packages, folder
        assert len(list(folder.glob("*.py"))) <= 20, folder


def test_features_implement_exactly_the_config_weights() -> None:
    from tooldisc.discovery.config import FEATURE_NAMES
    from tooldisc.discovery.rank.features import FEATURES, TIE_BREAKERS

    assert tuple(FEATURES) == FEATURE_NAMES and set(FEATURES) >= TIE_BREAKERS


def test_steps_receive_the_frozen_index_record_not_the_engine(monkeypatch) -> None:
    import dataclasses

    from tooldisc.discovery import pipeline
    from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog
    from tooldisc.discovery.indexes.index import Index

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


def test_no_wing_module_binds_the_name_of_one_of_its_submodules() -> None:
    """A wing whose ``__init__`` is its main module (``catalog``, ``text``, ``kernels``, ``learned``) must not
    bind a global named like a submodule: importing the submodule rebinds that name on the package, and
    ``from tooldisc.discovery.catalog import cache`` would give the global or the module by import order."""
    for init in PACKAGE.glob("*/__init__.py"):
        subs = {p.stem for p in init.parent.glob("*.py")} | {p.name for p in init.parent.iterdir() if p.is_dir()}
        bound = set()
        for node in ast.parse(init.read_text("utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.module == f"tooldisc.discovery.{init.parent.name}":
                bound |= {a.asname for a in node.names if a.asname}  # the submodule itself, by its name: the same binding
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bound |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        assert not bound & subs, (init, sorted(bound & subs))


def test_no_module_outside_discovery_imports_a_private_discovery_name() -> None:
    """What learning (or any other package) needs from discovery goes through public names: the Discoverer's
    ``retrieved`` / ``ranked`` / ``clause_rankings`` / ``over`` run the real steps instead of private ones."""
    root = PACKAGE.parent
    offenders = []
    for folder in ("tooldisc", "agent", "canary", "cli", "evaluation", "gold", "metrics", "reports"):
        for path in (root / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tooldisc.discovery"):
                    offenders += [f"{path.relative_to(root)}: {node.module}.{a.name}" for a in node.names
                                  if a.name.startswith("_")]
    assert not offenders, offenders
