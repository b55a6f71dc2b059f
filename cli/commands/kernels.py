"""``tooldisc kernels``: which form of the compiled query loops a process runs, and building the ahead-of-time one.

Thin glue over :mod:`tooldisc.discovery.kernels.aot` and :mod:`~tooldisc.discovery.kernels.build`. ``tooldisc kernels`` (or ``status``)
says whether a query will run the ahead-of-time module, numba's JIT or numpy, and why;
``tooldisc kernels build`` compiles the module (numba and a C compiler needed, once per
change of the loops or of the numba, numpy or Python versions; ``make install`` runs it).
"""

from __future__ import annotations

import time
from typing import Annotated

import typer

from tooldisc.cli.common import (
    FormatOption,
    echo,
    note,
    output_options,
    print_json,
)

kernels_app = typer.Typer(name="kernels", help="The compiled query loops: which form runs (without a command: "
                          "the status), and building the ahead-of-time module (no numba at run time).",
                          invoke_without_command=True, add_completion=False, rich_markup_mode=None)


@kernels_app.callback()
def _default(ctx: typer.Context) -> None:
    """Without a command: the status (which form of the query loops will run, and why)."""
    if ctx.invoked_subcommand is None:
        status_command()


@kernels_app.command("status")
@output_options("kernels-status")
def status_command(fmt: FormatOption = "table") -> None:
    """Say which form of the compiled query loops a catalog large enough for them will run, and why."""
    from tooldisc.discovery.kernels.aot import status

    found = status()
    if fmt == "json":
        print_json(found.to_dict())
        return
    echo(f"form: {found.form} ({found.reason})")
    if found.path:
        target = "this machine's CPU" if found.to_dict()["cpu"] == "host" else "the generic CPU"
        echo(f"module: {found.path} (compiled for {target})")


@kernels_app.command("build")
@output_options("kernels-build")
def build_command(
    force: Annotated[bool, typer.Option("--force", help="Compile even when the matching module exists.")] = False,
    fmt: FormatOption = "table",
) -> None:
    """Compile the query loops into an extension module that needs neither numba nor LLVM to run.

    Nothing is compiled when the module matching the loops' sources and the numba, numpy
    and Python versions is already there. The directory is $TOOLDISC_KERNELS_DIR, else
    $XDG_CACHE_HOME/tooldisc/kernels (~/.cache/tooldisc/kernels).
    """
    from tooldisc.discovery.kernels.aot import key, signature_count
    from tooldisc.discovery.kernels.build import build

    start = time.perf_counter()
    path, compiled = build(force=force,
                           progress=lambda what: note(f"kernels: {what}"))
    seconds = time.perf_counter() - start
    if fmt == "json":
        print_json({"path": str(path), "compiled": compiled, "seconds": round(seconds, 2), "key": key(),
                    "signatures": signature_count()})
        return
    if compiled:
        echo(f"compiled {signature_count()} loop signatures in {seconds:.1f} s: {path}")
    else:
        echo(f"up to date: {path}")


def register(app: typer.Typer) -> None:
    app.add_typer(kernels_app, name="kernels")
