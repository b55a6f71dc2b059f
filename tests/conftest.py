"""Shared fixtures. Tests that need ../shared skip when it is absent, except under CI=true."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


# Files that take 20 s or more under CI=true (Spark's JVM, the 5,000-example property
# files, the CLI round trips), heaviest first. `make test` runs pytest-xdist's `--dist
# loadfile` with `--no-loadscope-reorder`, so files are handed out in collection order and
# starting these first lets the two workers finish together (longest-first scheduling).
# xdist's default reorder sends the files with the most tests first, which put these
# one-test files last and left one worker running them alone for the final ~45 s.
HEAVY_FIRST = (
    "canary/test_spark.py",
    "canary/test_verdict_fuzz.py",
    "discovery/test_security_property.py",
    "discovery/test_security_property_more.py",
    "canary/test_spark_options.py",
    "canary/test_cli.py",
    "reports/test_browser.py",
    "canary/test_telemetry_one_thing.py",
    "evaluation/test_cli.py",
    "test_docs_commands.py",
    "discovery/test_security_property_session.py",
    "discovery/test_security_property_session_more.py",
    "discovery/test_index_build.py",
    "discovery/test_schema_fast.py",
)


def pytest_configure(config: pytest.Config) -> None:
    """``TOOLDISC_COUNT_SUBPROCESS=1`` counts the tests that start a process (tests/subprocess_count.py)."""
    if os.environ.get("TOOLDISC_COUNT_SUBPROCESS"):
        from tests import subprocess_count

        subprocess_count.register(config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Heavy files first, everything else in its usual order (the sort is stable)."""
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}

    def key(item: pytest.Item) -> int:
        rel = Path(str(item.path)).resolve().relative_to(ROOT / "tests").as_posix()
        return rank.get(rel, len(HEAVY_FIRST))

    items.sort(key=key)


@pytest.fixture(scope="session", autouse=True)
def _index_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every command a test runs (in-process or as a subprocess) keeps its index cache in a
    temporary directory, never in the user's own (``$TOOLDISC_CACHE_DIR``)."""
    os.environ["TOOLDISC_CACHE_DIR"] = str(tmp_path_factory.mktemp("index-cache"))


@pytest.fixture(scope="session")
def shared() -> Path:
    """Path to ../shared; skip (or fail under CI=true) when it is missing."""
    if not (SHARED / "benchmarks").is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{SHARED} is missing but CI=true: CI must run the shared-data tests")
        pytest.skip(f"needs {SHARED} (the shared benchmarks), which is absent")
    return SHARED


def run_cli(*args: str, input: str | None = None, cwd: Path | None = None, env: dict | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real ``tooldisc`` command in a subprocess, as a user would.

    Use it only where the process itself is what a test proves (bad input's exit 2 and one stderr line,
    signals, resource bounds, environment or start-up isolation, an acceptance item another issue asks to
    be proven through the real command); anything else uses :func:`invoke_cli`.
    """
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "tooldisc.cli", *args],
        capture_output=True, text=True, input=input, cwd=cwd, env=full_env, timeout=timeout,
    )


def invoke_cli(*args: str, input: str | None = None, cwd: Path | None = None, env: dict | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``tooldisc`` in this process, through the same entry point (:func:`tooldisc.cli.app.main`), with
    stdin, stdout, stderr, the environment, the working folder and the SIGTERM handler isolated and restored.

    The drop-in for :func:`run_cli` where a test checks what a command prints or writes, not the real
    process: exit codes of the process, bad input through the real command, signals, isolation and startup
    stay in a subprocess (``run_cli``). ``timeout`` is accepted for the same signature and not enforced.
    """
    import io
    import signal

    from tooldisc.cli.app import main

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="", write_through=True)
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_term = signal.getsignal(signal.SIGTERM)
    streams = (sys.stdin, sys.stdout, sys.stderr)
    code: int | str | None = 0
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = io.StringIO(input or "")
        sys.stdout, sys.stderr = out, err
        main(list(args))
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        signal.signal(signal.SIGTERM, saved_term)
    out.flush()
    err.flush()
    returncode = code if isinstance(code, int) else (0 if code is None else 1)
    return subprocess.CompletedProcess(["tooldisc", *args], returncode,
                                       out.buffer.getvalue().decode("utf-8"),  # type: ignore[attr-defined]
                                       err.buffer.getvalue().decode("utf-8"))  # type: ignore[attr-defined]
