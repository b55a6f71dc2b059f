"""Opt-in pytest plugin: which tests start a process, and what they start.

Issue 26 asks that a test spawn a subprocess only where it proves something about the real
process (exit codes of bad input, signals, isolation, startup); this plugin is how the count
is measured. ``tests/conftest.py`` registers it when ``TOOLDISC_COUNT_SUBPROCESS`` is set, so
an ordinary run pays nothing (an audit hook cannot be removed once added)::

    TOOLDISC_COUNT_SUBPROCESS=1 pytest -q                 # summary at the end
    TOOLDISC_COUNT_SUBPROCESS=/tmp/spawns.json pytest -q  # summary, and every test id to a file

A spawn is seen through the interpreter's audit events (``subprocess.Popen``, ``os.system``,
``os.posix_spawn``, ``os.fork``), so it counts whatever starts it: ``run_cli``, a library the
command uses (Spark's JVM, a C compiler), or ``make``. It is charged to the test whose setup,
call or teardown was running; a module fixture's spawns go to the first test that asked for it.
Under pytest-xdist each worker records into the test's ``user_properties`` and the controller
adds them up.
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

PROPERTY = "spawned"
_EVENTS = ("subprocess.Popen", "os.system", "os.posix_spawn", "os.fork")
_running: list[pytest.Item] = []  # the test whose phase is running on this worker, if any
_hooked = False


def _label(event: str, args: tuple[Any, ...]) -> str:
    """A short name for what was started: ``tooldisc`` for the command itself, else the program."""
    if event == "os.fork":
        return "fork"
    if event == "os.system":
        argv = str(args[0]).split()
    else:
        raw = args[1] if len(args) > 1 else args[0]
        argv = [os.fsdecode(a) for a in ([raw] if isinstance(raw, (str, bytes)) else list(raw or ()))]
        if len(argv) == 1 and " " in argv[0]:
            argv = argv[0].split()
    if not argv:
        return "?"
    if "tooldisc.cli" in argv or Path(argv[0]).name == "tooldisc":
        return "tooldisc"
    return Path(argv[0]).name


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in _EVENTS and _running:
        item = _running[-1]
        entry = (PROPERTY, _label(event, args))
        if entry not in item.user_properties:
            item.user_properties.append(entry)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    _running.append(item)
    try:
        return (yield)
    finally:
        _running.pop()


class _Tally:
    """Controller side: the spawns each test id reported, summed at the end of the run."""

    def __init__(self) -> None:
        self.spawns: dict[str, set[str]] = defaultdict(set)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == PROPERTY:
                self.spawns[report.nodeid].add(str(value))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        tests = dict(sorted(self.spawns.items()))
        cli = [t for t, kinds in tests.items() if "tooldisc" in kinds]
        per_file: dict[str, int] = defaultdict(int)
        for test in tests:
            per_file[test.split("::", 1)[0]] += 1
        write = terminalreporter.write_line
        terminalreporter.section("subprocess count (TOOLDISC_COUNT_SUBPROCESS)")
        for path, n in sorted(per_file.items(), key=lambda kv: (-kv[1], kv[0])):
            write(f"{n:4d}  {path}")
        write(f"{len(tests)} tests started a process; {len(cli)} of them ran the tooldisc command")
        target = os.environ.get("TOOLDISC_COUNT_SUBPROCESS", "")
        if target not in ("", "1"):
            Path(target).write_text(json.dumps({t: sorted(k) for t, k in tests.items()}, indent=1) + "\n")
            write(f"test ids written to {target}")


def register(config: pytest.Config) -> None:
    """Add the audit hook to this process (once) and, outside an xdist worker, the tally."""
    global _hooked
    if not _hooked:
        sys.addaudithook(_audit)
        _hooked = True
    config.pluginmanager.register(sys.modules[__name__], "tooldisc-subprocess-count")
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Tally(), "tooldisc-subprocess-tally")
