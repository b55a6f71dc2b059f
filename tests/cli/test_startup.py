"""What a one-shot loads before it answers: the command table that lets a run build one command module, and
the import set of ``discover`` and ``eval`` (cold and warm), pinned so that a heavy import cannot creep back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tooldisc.cli import app as app_module
from tooldisc.discovery.kernels import aot

# What discover and eval never need: the table/telemetry engines, the learned-model and chart stacks, the
# pure-Python schema engine (jsonschema-rs answers first; jsonschema only words a refusal), the MCP SDK.
# jsonschema_specifications and referencing (jsonschema's registry): the compiled meta-check reads the meta-schema's
# file. pydantic: typer 0.29 coerces every option through it (+0.1 s a command), so typer is pinned below it.
NEVER = ("polars", "duckdb", "pyarrow", "sklearn", "statsmodels", "altair", "vl_convert", "pandas", "numba",
         "jsonschema", "jsonschema_specifications", "referencing", "mcp", "pyspark", "pydantic")
# Only the cold path builds the n-gram index (scipy.sparse) and meta-checks schemas (RE2 for their patterns).
COLD_ONLY = ("scipy", "re2")

_DUMP = """
import atexit, json, os, runpy, sys
atexit.register(lambda: open(os.environ["MODULES_OUT"], "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["tooldisc", *sys.argv[1:]]
runpy.run_module("tooldisc.cli", run_name="__main__", alter_sys=True)
"""


def _names(typer_app) -> set[str]:
    return {c.name for c in typer_app.registered_commands} | {g.name for g in typer_app.registered_groups}


def test_the_command_table_is_what_the_modules_register() -> None:
    every = set()
    for module in app_module.MODULES:
        names = _names(app_module.build_app((module,)))
        assert names == {name for name, owner in app_module.COMMANDS.items() if owner == module}, module
        every |= names
    assert every == set(app_module.COMMANDS) == _names(app_module.app)


def _modules(tmp_path: Path, *args: str) -> set[str]:
    out = tmp_path / "modules.json"
    env = {"TOOLDISC_CACHE_DIR": str(tmp_path / "cache"), "MODULES_OUT": str(out)}
    proc = subprocess.run([sys.executable, "-c", _DUMP, *args], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, **env})
    assert proc.returncode == 0, proc.stderr
    return {name.split(".")[0] for name in json.loads(out.read_text())}


@pytest.mark.parametrize("args", [("discover", "list unpaid invoices", "--json"), ("eval", "--k", "15", "--json")])
def test_discover_and_eval_import_only_what_they_use(tmp_path: Path, args: tuple[str, ...]) -> None:
    cold = _modules(tmp_path, *args)
    warm = _modules(tmp_path, *args)  # the records and the index read back from the cache
    assert not cold & set(NEVER), sorted(cold & set(NEVER))
    if aot.load() is not None:  # the build's one sparse product is a compiled loop then (make install builds it)
        assert "scipy" not in cold
    assert not warm & set(NEVER + COLD_ONLY), sorted(warm & set(NEVER + COLD_ONLY))
    assert "numpy" in warm and "tooldisc" in warm  # the check sees the modules the run imported
