"""Fork server for the hostile-input corpus (run as a script by ``tests/cli/bad_corpus.py``).

A fresh interpreter per corpus file spends ~0.7 s importing typer, rich and
jsonschema before it reads a byte. This process imports the CLI once; for each
request (one JSON line on stdin) it forks a child that is a process of its own:
it sets ``RLIMIT_AS``, points fds 0/1/2 at /dev/null and two files, and calls the
console entry point ``tooldisc.cli.app.main(argv)`` exactly as ``tooldisc ARGV``
would. The parent kills the child at the deadline and answers with one JSON line:
exit code, signal, whether it timed out, and the wall time.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
import traceback


def _child(request: dict) -> int:
    from tooldisc.cli.app import main

    os.chdir(request["cwd"])
    if request.get("umask") is not None:  # what `umask N && tooldisc ARGV` would run under
        os.umask(int(request["umask"]))
    limit = int(request["address_space"])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    sys.argv = ["tooldisc", *request["argv"]]
    code = 0
    try:
        main(request["argv"])
    except SystemExit as exc:  # what the interpreter does with an exit code
        if isinstance(exc.code, int):
            code = exc.code
        elif exc.code is not None:
            sys.stderr.write(f"{exc.code}\n")
            code = 1
    except BaseException:  # an uncaught error: a traceback and exit 1, as in a real run
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = code or 120
    return code


def _serve_one(request: dict) -> dict:
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            code = _child(request)
        finally:
            os._exit(code)
    deadline = start + float(request["timeout"])
    timed_out = False
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            timed_out = True
            break
        time.sleep(0.002)
    return {
        "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "timed_out": timed_out,
        "seconds": round(time.monotonic() - start, 3),
    }


# Imported once here and inherited by every fork: the CLI and what its commands import
# lazily (the real command imports them too, just later and every time).
PRELOAD = (
    "tooldisc.cli.app", "tooldisc.discovery.catalog.io", "tooldisc.discovery.catalog", "tooldisc.discovery.pipeline",
    "tooldisc.discovery.config", "tooldisc.gold.loader", "tooldisc.gold.validate", "tooldisc.canary.duckdb.ingest",
    "tooldisc.canary.verdict", "tooldisc.agent.plan", "jsonschema", "yaml", "rich.console", "rich.table", "duckdb",
    "typer._adapters",  # typer imports it (and pydantic, ~0.3 s) when it first parses a value
)


def _build_the_command_once() -> None:
    """typer rebuilds the click command from the annotations of every command on each
    call (~0.15 s, most of a corpus case). The result is the same every time, so the
    server builds it once and each fork inherits its own copy; parsing, the command
    and its error handling still run in the child exactly as in ``tooldisc ARGV``."""
    import typer.main

    from tooldisc.cli.app import app

    built, build = typer.main.get_command(app), typer.main.get_command
    typer.main.get_command = lambda typer_app: built if typer_app is app else build(typer_app)


def main() -> None:
    import contextlib
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(ModuleNotFoundError):  # only a head start: the child imports what it needs
            importlib.import_module(name)
    _build_the_command_once()

    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(_serve_one(json.loads(line))) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
