"""``tooldisc bench``: discovery latency, build time and memory at catalog sizes, vs BM25 baselines.

Thin: parse options, call :func:`tooldisc.evaluation.bench.run_bench`, render its
document as the ``bench`` report (:mod:`tooldisc.reports.run_report`: tables with plain
labels, or JSON, Markdown, HTML) on stdout, write the JSON to ``--out``.
The progress bar is on stderr so the JSON on stdout stays machine-readable.
Developer targets are not checked here (``benchmarks/run_bench.py --check`` does).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from tooldisc.cli.common import (
    FormatOption,
    note,
    output_options,
    print_report,
)
from tooldisc.cli.limits import count_option
from tooldisc.cli.options import CatalogFormatOption, load_catalog_option
from tooldisc.cli.options import catalog_format as declared_format
from tooldisc.cli.outputs import Output, output_option
from tooldisc.errors import UsageError


def parse_sizes(value: str) -> tuple[int, ...]:
    """``180,10k,100000`` → ``(180, 10000, 100000)``; anything else is a usage error.

    Each size is at most ``COUNTS["bench_tools"].high`` (a catalog that fits in memory).
    """
    from tooldisc.limits import check_count

    out = []
    for part in value.split(","):
        text = part.strip().lower().replace("_", "")
        mult = 1
        if text.endswith("k"):
            text, mult = text[:-1], 1000
        if not text.isascii() or not text.isdigit() or len(text) > 12 or int(text) * mult < 1:
            raise UsageError(f"--tools must be comma-separated positive integers (e.g. 180,10k,100000); got {value!r}")
        out.append(check_count("bench_tools", int(text) * mult, "--tools (each size)"))
    return tuple(out)


@output_options("bench")
def bench_command(
    tools: Annotated[str, typer.Option("--tools", help="Catalog sizes, comma-separated (10k = 10000).")] = "180,10000,100000",
    queries: Annotated[int, count_option("bench_queries", "--queries",
                                         help="Queries per size (half gold, half for synthetic tools).")] = 200,
    repeats: Annotated[int, count_option("repeats", "--repeats",
                                         help="Timed passes over the queries; figures are medians over passes.")] = 5,
    k: Annotated[int, count_option("k", "--k", help="Tools per offer (and top-k of the baselines).")] = 15,
    baselines: Annotated[bool, typer.Option("--baselines/--no-baselines", help="Also time rank-bm25 and bm25s (dev extra).")] = True,
    seed: Annotated[int, count_option("seed", "--seed", help="Seed of the synthetic catalogs and queries.")] = 0,
    catalog: Annotated[str | None, typer.Option("--catalog", "-c", help="Base catalog to grow synthetic catalogs from. Default: the shipped catalog.")] = None,
    catalog_format: CatalogFormatOption = None,
    gold: Annotated[str | None, typer.Option("--gold", help="Gold set whose queries are half the query set. Default: the shipped gold set.")] = None,
    config: Annotated[str | None, typer.Option("--config", help="Ranker weights YAML (overlays the shipped default); 'default' names the shipped config.")] = None,
    learned: Annotated[str | None, typer.Option("--learned", help="A learned file for --catalog: the synthetic catalogs are grown from that catalog and every variant takes its base tool's expansions.")] = None,
    backend: Annotated[str, typer.Option("--backend", help="Query loops: auto (numba for catalogs large enough for indexed retrieval, when the fast extra is installed), numpy or numba.")] = "auto",
    from_file: Annotated[bool, typer.Option("--from-file/--no-from-file", help="Also write each catalog to a file (JSON; YAML at 10k) and time loading it in-process, and the whole-process discover (cold and warm index cache) and catalog validate.")] = True,
    out: Annotated[Output | None, output_option("--out", "-o", help="Also write the run's JSON document here.")] = None,
    fmt: FormatOption = "table",
) -> None:
    """Time index build, per-query discover latency and memory at catalog sizes, next to rank-bm25 and bm25s.

    Every engine ranks only each query's authorized tools, so the hit columns compare
    like with like.
    """
    from tooldisc.cli.common import dumps_json
    from tooldisc.evaluation.bench import BenchOptions

    sizes = parse_sizes(tools)
    # a bad catalog is one line and exit 2 here, not a traceback from a worker process
    base = load_catalog_option(catalog, catalog_format) if catalog or learned else None
    options = BenchOptions(sizes=sizes, queries=queries, repeats=repeats, k=k, baselines=baselines,
                           seed=seed, catalog=catalog, gold=gold, config=config,
                           catalog_format=declared_format(catalog_format), learned=learned, backend=backend,
                           from_file=from_file)
    if learned:  # refuse a file learned on another catalog before any worker starts
        from tooldisc.discovery.learned import for_grown_catalog
        from tooldisc.discovery.learned.read import load_learned

        for_grown_catalog(load_learned(learned), base, base)
    if baselines:
        missing = [m for m in ("rank_bm25", "bm25s") if not _importable(m)]
        for m in missing:
            note(f"note: baseline {m} is not installed (pip install 'tooldisc[dev]'); it is skipped")
    result = _run_with_progress(options)
    if out:
        out.write(dumps_json(result))
        note(f"wrote {out}")
    print_report(result, "bench", fmt)


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _run_with_progress(options: Any) -> dict[str, Any]:
    from tooldisc.cli.progress import progress_bar
    from tooldisc.evaluation.bench import run_bench

    with progress_bar("bench") as bar:
        return run_bench(options, (lambda phase, done, total: bar.set(done, total, phase)) if bar else None)


def register(app: typer.Typer) -> None:
    app.command("bench")(bench_command)
