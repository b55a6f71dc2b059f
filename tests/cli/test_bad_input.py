"""The bad-input corpus: every malformed file reaches the user as one line, exit 2.

Each row names a file under ``tests/data/bad/``, the command that reads it, and a
fragment the message must contain. The rule under test (STYLE 7–8): exit code 2,
stderr exactly one line starting with ``error: `` that names the file, no traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli

BAD = ROOT / "tests" / "data" / "bad"
OK_CATALOG = str(ROOT / "tests" / "cli" / "data" / "ok_catalog.yaml")


def _discover_catalog(f: str) -> list[str]:
    return ["discover", "x", "--catalog", f]


def _discover_config(f: str) -> list[str]:
    # Context flags keep the default-context note off stderr, so the error is the only line.
    return ["discover", "x", "--catalog", OK_CATALOG, "--tenant", "t1", "--config", f]


def _discover_context(f: str) -> list[str]:
    return ["discover", "x", "--catalog", OK_CATALOG, "--context-file", f]


def _validate(f: str) -> list[str]:
    return ["catalog", "validate", f]


def _stats(f: str) -> list[str]:
    return ["catalog", "stats", f]


def _diff_new(f: str) -> list[str]:
    return ["catalog", "diff", OK_CATALOG, f]


# (file under tests/data/bad, command builder, expected message fragment)
CASES: list[tuple[str, object, str]] = [
    ("catalog_invalid_json.json", _discover_catalog, "invalid JSON"),
    ("catalog_invalid_yaml.yaml", _discover_catalog, "invalid YAML"),
    ("catalog_python_tag.yaml", _discover_catalog, "could not determine a constructor"),
    ("catalog_not_object.yaml", _discover_catalog, "must be an object with 'tools'"),
    ("catalog_tools_not_list.yaml", _discover_catalog, "is not of type 'array'"),
    ("catalog_no_name.yaml", _discover_catalog, "'name' is a required property"),
    ("catalog_duplicate_names.yaml", _discover_catalog, "duplicate tool name 'list_invoices'"),
    ("catalog_unknown_side_effect.yaml", _discover_catalog, "tools[0].side_effect: side_effect must be one of"),
    ("catalog_roles_wrong_type.yaml", _discover_catalog, "tools[0].roles:"),
    ("catalog_compact_drops_required.yaml", _discover_catalog, "compact schema drops required field(s) amount"),
    ("catalog_not_utf8.yaml", _discover_catalog, "not UTF-8"),
    ("catalog_empty.yaml", _discover_catalog, "empty document"),
    ("a_directory.yaml", _discover_catalog, "got a directory"),
    ("does_not_exist.yaml", _discover_catalog, "not found"),
    ("config_unknown_key.yaml", _discover_config, "unknown key 'boost_everything'"),
    ("config_k_zero.yaml", _discover_config, "The 'k' parameter must be an int in the range [1, 1000]. Got 0"),
    ("config_weight_string.yaml", _discover_config, "weights.bm25: must be a number; got 'high'"),
    ("config_min_k_over_max_k.yaml", _discover_config, "adaptive.min_k (12) must not exceed adaptive.max_k (5)"),
    ("context_unknown_key.yaml", _discover_context, "unknown key 'superuser'"),
    ("context_mode_god.yaml", _discover_context, "mode must be one of analyzer, supervised, autonomous; got 'god'"),
    ("context_roles_not_list.yaml", _discover_context, "roles must be a list of non-empty strings"),
    # The catalog commands read files the same way.
    ("catalog_invalid_json.json", _validate, "invalid JSON"),
    ("catalog_not_utf8.yaml", _stats, "not UTF-8"),
    ("catalog_duplicate_names.yaml", _diff_new, "duplicate tool name"),
]


def test_corpus_is_large_enough_and_every_file_is_used() -> None:
    # per-kind folders carry their own tests: telemetry/ (tests/canary/test_hostile_telemetry.py),
    # schemas/ (tests/agent/test_bad_schemas.py).
    on_disk = {p.name for p in BAD.iterdir() if not p.name.startswith(".") and p.name not in {"telemetry", "schemas"}}
    used = {name for name, _, _ in CASES}
    assert len(on_disk) >= 18
    assert on_disk <= used, f"files without a case: {sorted(on_disk - used)}"


@pytest.mark.parametrize(("name", "command", "fragment"), CASES, ids=[f"{c[1].__name__}:{c[0]}" for c in CASES])
def test_bad_input_is_one_line_exit_2(name: str, command, fragment: str) -> None:
    path = str(BAD / name)
    proc = run_cli(*command(path))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    assert path in lines[0]
    assert fragment in lines[0]


def test_python_tag_is_never_constructed(tmp_path: Path) -> None:
    """A safe loader refuses the tag before anything runs (no file appears)."""
    marker = tmp_path / "pwned"
    doc = tmp_path / "evil.yaml"
    doc.write_text(f"tools:\n  - !!python/object/apply:os.system ['touch {marker}']\n", encoding="utf-8")
    proc = run_cli("discover", "x", "--catalog", str(doc))
    assert proc.returncode == 2
    assert not marker.exists()
