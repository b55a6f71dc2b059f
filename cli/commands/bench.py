"""``tooldisc bench``: discovery latency, build time and memory at catalog sizes, vs BM25 baselines.

Thin: parse options, call :func:`tooldisc.evaluation.bench.run_bench`, render two
tables with plain labels (or the JSON document) on stdout, write the JSON to ``--out``.
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
    print_json,
    stdout_console,
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
    if fmt == "json":
        print_json(result)
    else:
        render_table(result)


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _run_with_progress(options: Any) -> dict[str, Any]:
    from tooldisc.cli.progress import progress_bar
    from tooldisc.evaluation.bench import run_bench

    with progress_bar("bench") as bar:
        return run_bench(options, (lambda phase, done, total: bar.set(done, total, phase)) if bar else None)


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def render_table(result: dict[str, Any]) -> None:
    """tooldisc per size, then the baselines on the same queries, then what the hit column counts."""
    from rich.table import Table

    console = stdout_console()
    k = result["config"]["k"]
    hit = f"hit@{k}"
    main = Table(title="tooldisc discover: index build and time per query (warm; medians over repeats)")
    for col in ("tools", "index terms", "build (s)", "peak memory (MB)", "memory for the build (MB)",
                "p50 (ms)", "p95 (ms)", "p99 (ms)", hit):
        main.add_column(col, justify="right")
    cmp_ = Table(title="the same queries through BM25 baselines")
    for col in ("tools", "engine", "build (s)", "memory for the build (MB)", "p50 (ms)", "p95 (ms)",
                "p95 vs tooldisc", hit):
        cmp_.add_column(col, justify="left" if col == "engine" else "right")
    refused = []
    for size in result["sizes"]:
        own = size["engines"]["tooldisc"]
        rss = own.get("rss_mb") or {}
        lat = own["latency_ms"]
        main.add_row(f"{size['n_tools']:,}", f"{size.get('vocab_terms', 0):,}", f"{own['build_s']['median']:.3f}",
                     _mb(rss.get("process_peak")), _mb(rss.get("peak_growth")), _ms(lat["p50"]),
                     _ms(lat["p95"]), _ms(lat["p99"]), _rate(own.get("hit_at_k")))
        cmp_.add_row(f"{size['n_tools']:,}", "tooldisc", f"{own['build_s']['median']:.3f}", _mb(rss.get("peak_growth")),
                     _ms(lat["p50"]), _ms(lat["p95"]), "1.00×", _rate(own.get("hit_at_k")))
        for name in ("rank_bm25", "bm25s"):
            eng = size["engines"].get(name) or {}
            if not eng.get("available"):
                cmp_.add_row("", name, "—", "—", "—", "—", "—", eng.get("skipped", "skipped"))
                continue
            ratio = size["ratios"].get(name, {})
            cmp_.add_row("", name, f"{eng['build_s']['median']:.3f}", _mb((eng.get("rss_mb") or {}).get("peak_growth")),
                         _ms(eng["latency_ms"]["p50"]), _ms(eng["latency_ms"]["p95"]), _x(ratio.get("p95")),
                         _rate(eng.get("hit_at_k")))
        if size.get("refused_by_security") is not None:
            refused.append(f"{size['refused_by_security']:.0%} at {size['n_tools']:,} tools")
    console.print(main)
    console.print(cmp_)
    if any("from_file" in size for size in result["sizes"]):
        console.print(from_file_table(result["sizes"]))
    judged = ", ".join(f"{s['judged_queries']} of {s['n_queries']}" for s in result["sizes"]
                       if "judged_queries" in s and "n_queries" in s) or "none counted"
    console.print(f"{hit}: share of the judged queries ({judged}: those written for a tool) whose tool is among "
                  f"the first {k} offered. Every engine ranks only the tools the query is authorized to see "
                  "(tooldisc's security filter, default context); rank-bm25 and bm25s are masked to that set.")
    if refused:
        console.print("Judged queries whose tool that filter refuses (so no engine can offer it): "
                      + ", ".join(refused) + ".")
    console.print("p95 vs tooldisc: the baseline's p95 divided by tooldisc's (above 1: tooldisc is faster). "
                  "Peak memory: the whole process's peak from the first build to the last timed query (the "
                  "first query loads numba and the JIT's loops when they run); memory for the build: the "
                  "first build's peak minus the memory in use just before it.")
    console.print(kernels_line(result["sizes"]))
    env = result["environment"]
    git = env.get("git") or {}
    console.print(f"{env['cpu_count']} cores, load after {', '.join(f'{x:.2f}' for x in env.get('loadavg_after') or [])}; "
                  f"python {env['python']}, numpy {env['versions'].get('numpy')}; "
                  f"commit {str(git.get('commit', '?'))[:12]}{' (dirty)' if git.get('dirty') else ''}; "
                  f"{result['config']['queries']} queries × {result['config']['repeats']} repeats, K={k}")


def from_file_table(sizes: list[dict[str, Any]]) -> Any:
    """The catalog as users meet it: from a file, in-process and as whole one-shot processes."""
    from rich.table import Table

    table = Table(title="from a file (medians; × = ratio to the in-memory build of the same size)")
    for col in ("tools", "file (MB)", "load+validate+build (s)", "peak (MB)", "discover cold (s)", "discover warm (s)",
                "one-shot peak (MB)", "catalog validate (s)"):
        table.add_column(col, justify="right")
    for size in sizes:
        f = size.get("from_file")
        if not f:
            continue
        rows = [("json", f.get("in_process_json"))]
        if f.get("in_process_yaml"):
            rows.append(("yaml", f["in_process_yaml"]))
        for fmt, own in rows:
            first = fmt == "json"
            table.add_row(
                f"{size['n_tools']:,}" + ("" if first else " (YAML)"), f"{f['file_mb'][fmt]:,.1f}",
                _s_x(own["total_s"], own["ratio_to_in_memory_build"]), _mb(own["peak_mb"]),
                _s_x(f["discover_cold"]["wall_s"], f["discover_cold"]["ratio_to_in_memory_build"]) if first else "",
                _s_x(f["discover_warm"]["wall_s"], f["discover_warm"]["ratio_to_in_memory_build"]) if first else "",
                f"{_mb(f['discover_cold']['peak_mb'])} / {_mb(f['discover_warm']['peak_mb'])}" if first else "",
                _s_x(f["validate"]["wall_s"], f["validate"]["ratio_to_in_memory_build"]) if first else "")
    return table


def _s_x(seconds: float | None, ratio: float | None) -> str:
    return "—" if seconds is None else f"{seconds:.3f}" + ("" if ratio is None else f" ({ratio:.1f}×)")


def kernels_line(sizes: list[dict[str, Any]]) -> str:
    """Which form of the query loops each size ran (never a silent difference between runs)."""
    ran: dict[str, list[str]] = {}
    for size in sizes:
        engine = size["engines"]["tooldisc"]
        name = engine.get("kernels", "numpy")
        form = engine.get("kernels_form")
        name = f"{name} ({'ahead of time' if form == 'aot' else 'JIT'})" if name == "numba" and form else name
        ran.setdefault(name, []).append(f"{size['n_tools']:,}")
    parts = [f"{name} at {', '.join(n)} tools" for name, n in ran.items()]
    line = "Query loops (kernels): " + "; ".join(parts) + "."
    first = [(size["n_tools"], size["engines"]["tooldisc"].get("first_query")) for size in sizes]
    cold = [f"{f['ms']:,.0f} ms, +{f['rss_growth_mb'] or 0:,.0f} MB (process peak {_mb(f['process_peak_mb'])} MB) "
            f"at {n:,}" for n, f in first if f]
    if cold:
        line += (" First query of the process (not in the build; with numba's JIT it loads numba and the loops): "
                 + "; ".join(cold) + ".")
    if not any(name.startswith("numba") for name in ran):
        line += " The compiled loops need the fast extra (pip install 'tooldisc[fast]') and a catalog of at least retrieval.min_tools tools, or --backend numba; 'tooldisc kernels build' compiles them ahead of time (no numba at run time)."
    return line


def _mb(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}"


def _x(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def register(app: typer.Typer) -> None:
    app.command("bench")(bench_command)
