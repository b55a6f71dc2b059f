"""The layers of the whole package, read from the source: no import circle, no private import across
subpackages, no crowded folder.

Every import counts, wherever it is written (module top, inside a function, under
``TYPE_CHECKING``): a function-level import hides a circle from Python, not from a reader.
The import package is what pyproject's ``package-dir`` maps (``tooldisc.cli`` → ``cli/``, …),
walked down every sub-folder that is a package. A module's *layer* is its top-level
subpackage (``cli``, ``discovery``, ``metrics``, ``gold``, ``evaluation``, ``canary``,
``agent``, ``reports``), the base modules in ``tooldisc/`` (``errors``, ``limits``, …), or
the public face (``tooldisc/__init__.py``, which nothing below imports).
"""

from __future__ import annotations

import ast
import itertools
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULES = 20  # per folder, directly (``__init__.py`` not counted)

# Edges the parts of issue 26 that own them remove; nothing else may be listed here.
# (importer, imported module): who removes it.
ALLOWED_EDGES: dict[tuple[str, str], str] = {
}
# (importer, "module:name"): who removes it.
ALLOWED_PRIVATE: dict[tuple[str, str], str] = {
    # Discoverer's public seam for learning (part wingsd)
}
# Folders (relative to the repository) that may hold more than MAX_MODULES until their part splits them.
ALLOWED_CROWDED: dict[str, str] = {
}


def package_dirs(root: Path = ROOT) -> dict[str, Path]:
    """pyproject's ``package-dir``: top-level package name → folder."""
    data = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))
    return {name: root / folder for name, folder in data["tool"]["setuptools"]["package-dir"].items()}


def find_modules(dirs: Mapping[str, Path]) -> dict[str, Path]:
    """Dotted module name → file, for every module of every mapped package and its sub-packages."""
    out: dict[str, Path] = {}

    def walk(name: str, folder: Path) -> None:
        out[name] = folder / "__init__.py"
        for path in sorted(folder.glob("*.py")):
            if path.name != "__init__.py":
                out[f"{name}.{path.stem}"] = path
        for sub in sorted(folder.iterdir()):
            sub_name = f"{name}.{sub.name}"
            if (sub / "__init__.py").is_file() and sub_name not in dirs:
                walk(sub_name, sub)

    for name, folder in dirs.items():
        walk(name, folder)
    return out


def imports(name: str, path: Path, modules: Mapping[str, Path]) -> list[tuple[str, str | None, int]]:
    """``(module imported, name taken from it or None, line)`` for every import of a package module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                # ``from pkg import module`` imports the module; ``from module import name``, a name.
                out.append((sub, None, node.lineno) if sub in modules else (base, alias.name, node.lineno))
    return [(target, what, line) for target, what, line in out if target in modules and target != name]


def layer(module: str, tops: Iterable[str]) -> str:
    """The module's top-level subpackage; ``base`` for a module of the root package, ``face`` for the root."""
    tops = list(tops)
    root = min(tops, key=len)
    for top in sorted(tops, key=len, reverse=True):
        if top != root and (module == top or module.startswith(top + ".")):
            return top.rpartition(".")[2]
    return "face" if module == root else "base"


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One circle of ``graph`` as a path whose last node is its first, or None."""
    state: dict[str, int] = {}
    trail: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        trail.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*trail[trail.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        trail.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


class Package:
    """The import graph of one package tree, read once."""

    def __init__(self, dirs: Mapping[str, Path], allowed_edges: Iterable[tuple[str, str]] = (),
                 allowed_private: Iterable[tuple[str, str]] = ()) -> None:
        self.dirs = dict(dirs)
        self.modules = find_modules(self.dirs)
        self.allowed_edges = set(allowed_edges)
        self.allowed_private = set(allowed_private)
        self.edges: dict[str, dict[str, int]] = {}  # importer → imported → first line
        self.private: list[str] = []
        self.used_edges: set[tuple[str, str]] = set()
        self.used_private: set[tuple[str, str]] = set()
        for name, path in self.modules.items():
            deps = self.edges.setdefault(name, {})
            for target, what, line in imports(name, path, self.modules):
                if (name, target) in self.allowed_edges:
                    self.used_edges.add((name, target))
                else:
                    deps.setdefault(target, line)
                privates = [p for p in [*target.split("."), what or ""] if p.startswith("_") and not p.startswith("__")]
                if privates and self.layer(name) != self.layer(target):
                    key = (name, f"{target}:{what}" if what else target)
                    if key in self.allowed_private:
                        self.used_private.add(key)
                    else:
                        self.private.append(f"{self.file(name)}:{line} imports {key[1]} from another layer")

    def layer(self, module: str) -> str:
        return layer(module, self.dirs)

    def file(self, module: str) -> str:
        path = self.modules[module]
        return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name

    def module_cycle(self) -> str | None:
        cycle = find_cycle(self.edges)
        if cycle is None:
            return None
        return " → ".join(f"{a} (line {self.edges[a][b]})" for a, b in itertools.pairwise(cycle)) + \
            f" → {cycle[-1]}"

    def layer_edges(self) -> dict[tuple[str, str], tuple[str, str, int]]:
        """(importer's layer, imported layer) → one example edge (importer, imported, line)."""
        out: dict[tuple[str, str], tuple[str, str, int]] = {}
        for name, deps in sorted(self.edges.items()):
            for target, line in sorted(deps.items()):
                pair = (self.layer(name), self.layer(target))
                if pair[0] != pair[1]:
                    out.setdefault(pair, (name, target, line))
        return out

    def layer_cycle(self) -> str | None:
        examples = self.layer_edges()
        graph: dict[str, set[str]] = {}
        for a, b in examples:
            graph.setdefault(a, set()).add(b)
        cycle = find_cycle(graph)
        if cycle is None:
            return None
        hops = []
        for a, b in itertools.pairwise(cycle):
            src, dst, line = examples[(a, b)]
            hops.append(f"{a} → {b} (e.g. {src} line {line} imports {dst})")
        return "; ".join(hops)

    def folder_sizes(self) -> dict[Path, int]:
        """Modules each package folder holds directly (``__init__.py`` not counted)."""
        folders = {path.parent for path in self.modules.values()}
        return {f: sum(1 for p in f.glob("*.py") if p.name != "__init__.py") for f in sorted(folders)}

    def crowded(self, limit: int = MAX_MODULES, allowed: Iterable[Path] = ()) -> list[str]:
        skip = set(allowed)
        return [f"{folder}: {n} modules directly (at most {limit})"
                for folder, n in self.folder_sizes().items() if n > limit and folder not in skip]


@pytest.fixture(scope="module")
def package() -> Package:
    return Package(package_dirs(), ALLOWED_EDGES, ALLOWED_PRIVATE)


def test_no_import_circle_between_modules(package: Package) -> None:
    assert package.module_cycle() is None, f"import circle: {package.module_cycle()}"


def test_no_import_circle_between_layers(package: Package) -> None:
    assert package.layer_cycle() is None, f"layers import each other in a circle: {package.layer_cycle()}"


def test_no_private_name_imported_from_another_layer(package: Package) -> None:
    assert not package.private, "\n".join(package.private)


def test_no_folder_holds_more_than_twenty_modules(package: Package) -> None:
    crowded = package.crowded(allowed=[ROOT / f for f in ALLOWED_CROWDED])
    assert not crowded, "\n".join(crowded)


def test_the_allowed_exceptions_still_exist(package: Package) -> None:
    """An exception that its part removed must leave the list too, so the list only shrinks."""
    stale: list[object] = [*sorted(set(ALLOWED_EDGES) - package.used_edges),
                           *sorted(set(ALLOWED_PRIVATE) - package.used_private),
                           *[f for f in ALLOWED_CROWDED if package.folder_sizes().get(ROOT / f, 0) <= MAX_MODULES]]
    assert not stale, f"no longer needed, remove from the ALLOWED lists: {stale}"


def test_every_package_folder_is_listed_in_pyproject() -> None:
    """A sub-package missing from ``packages`` works in an editable install and is absent from the wheel."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    listed = set(data["tool"]["setuptools"]["packages"])
    found = {m for m, p in find_modules(package_dirs()).items() if p.name == "__init__.py"}
    assert found <= listed, f"add to pyproject's packages: {sorted(found - listed)}"


# The checker checked: a tiny package with each fault must be caught, with the circle's path shown.

def _write(root: Path, files: Mapping[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return {"pkg": root / "pkg", "pkg.alpha": root / "alpha", "pkg.beta": root / "beta"}


def test_the_checker_finds_a_circle_hidden_in_a_function(tmp_path: Path) -> None:
    dirs = _write(tmp_path, {
        "pkg/__init__.py": "", "pkg/errors.py": "", "alpha/__init__.py": "", "beta/__init__.py": "",
        "alpha/one.py": "from pkg.alpha.two import f\n",
        "alpha/two.py": "def f():\n    from . import one\n",
        "beta/x.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.alpha.one import f\n",
    })
    pkg = Package(dirs)
    assert pkg.module_cycle() == "pkg.alpha.one (line 1) → pkg.alpha.two (line 2) → pkg.alpha.one"
    assert pkg.layer_cycle() is None
    assert Package(dirs, allowed_edges={("pkg.alpha.two", "pkg.alpha.one")}).module_cycle() is None


def test_the_checker_finds_a_circle_between_layers(tmp_path: Path) -> None:
    dirs = _write(tmp_path, {
        "pkg/__init__.py": "from pkg.alpha.a import A\n", "pkg/errors.py": "",
        "alpha/__init__.py": "", "beta/__init__.py": "",
        "alpha/a.py": "from pkg.errors import E\nfrom pkg.beta.b import B\n",
        "beta/b.py": "def g():\n    from pkg.alpha.c import C\n",
        "alpha/c.py": "C = 1\n",
    })
    pkg = Package(dirs)
    assert pkg.module_cycle() is None  # a → b → c: no module circle, but alpha → beta → alpha
    assert pkg.layer_cycle() == ("alpha → beta (e.g. pkg.alpha.a line 2 imports pkg.beta.b); "
                                 "beta → alpha (e.g. pkg.beta.b line 2 imports pkg.alpha.c)")


def test_the_checker_finds_private_imports_and_crowded_folders(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/errors.py": "", "alpha/__init__.py": "", "beta/__init__.py": "",
             "alpha/a.py": "_hidden = 1\n", "alpha/_inner.py": "",
             "alpha/b.py": "from pkg.alpha.a import _hidden\n",  # same layer: allowed
             "beta/x.py": "from pkg.alpha.a import _hidden\nimport pkg.alpha._inner\n"}
    files.update({f"beta/m{i}.py": "" for i in range(20)})  # with x.py: 21 modules
    pkg = Package(_write(tmp_path, files))
    assert [p.split(" ", 1)[1] for p in pkg.private] == [
        "imports pkg.alpha.a:_hidden from another layer", "imports pkg.alpha._inner from another layer"]
    assert len(pkg.crowded()) == 1 and "21 modules" in pkg.crowded()[0] and "beta" in pkg.crowded()[0]
    assert Package(_write(tmp_path, {}), allowed_private={("pkg.beta.x", "pkg.alpha.a:_hidden"),
                                                          ("pkg.beta.x", "pkg.alpha._inner")}).private == []
