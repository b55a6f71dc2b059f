"""``tooldisc serve``: tooldisc as an MCP server on stdio (needs the ``mcp`` extra).

``tools/list`` is ``search_tools`` plus a capped discovery offer for the context;
``tools/call`` passes the execution guard, then goes to the handler (a no-op echo
unless ``--handler module:function`` names one). The catalog reloads when its file
changes; a bad new file is reported on stderr and the old catalog keeps serving.

Fail closed: a server answers any client, so it never falls back to DESIGN §5's
default context (every role and permission, autonomous) on its own. It needs a
context (``--context-file`` or context flags) or the explicit opt-in
``--allow-default-context``; otherwise it exits 2 saying how.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tooldisc.cli.options import (
    CatalogFormatOption,
    CatalogOption,
    ConfigOption,
    ContextFileOption,
    ContextFlags,
    KOption,
    LearnedOption,
    NoCacheOption,
    build_context_from,
    context_options,
    index_cache,
    load_catalog_option,
    load_learned_option,
    parse_k,
)
from tooldisc.cli.outputs import AppendOutput, append_option


@context_options
def serve_command(
    catalog: CatalogOption = None,
    catalog_format: CatalogFormatOption = None,
    context_file: ContextFileOption = None,
    events: Annotated[AppendOutput | None, append_option(
        "--events", help="Append a DESIGN §7 telemetry event per list and call to this JSONL file.")] = None,
    handler: Annotated[str | None, typer.Option("--handler", help="module:function called as f(name, arguments) for calls that pass the guard. Default: a no-op echo.")] = None,
    k: KOption = None,
    context: ContextFlags = ContextFlags(),
    config: ConfigOption = None,
    allow_default_context: Annotated[bool, typer.Option(
        "--allow-default-context",
        help="Serve with the default context (every role and permission the catalog names, tenant "
             "'default', autonomous) when no context is given. Off by default: serve needs a context.")] = False,
    learned: LearnedOption = None,
    no_cache: NoCacheOption = False,
    interleave: Annotated[str | None, typer.Option(
        "--interleave", help="Interleave a challenger ranker B with the served one (A) on --percent of requests: "
                             "'default' (the shipped config), a ranker config file, or a learned file. Judge it "
                             "with 'canary verdict --profile interleaving'.")] = None,
    experiment: Annotated[str | None, typer.Option(
        "--experiment", help="The interleaving experiment's name (with --interleave).")] = None,
    salt: Annotated[str | None, typer.Option(
        "--salt", help="Its assignment salt (with --interleave; default: the experiment name).")] = None,
    percent: Annotated[float | None, typer.Option(
        "--percent", help="Share of requests interleaved, 0-100 in 0.01 steps (with --interleave).")] = None,
) -> None:
    """Serve the catalog over MCP (stdio): offers per request, guarded calls, search_tools.

    Needs a context: --context-file, context flags, or --allow-default-context.
    """
    from tooldisc.errors import MissingExtraError, UsageError

    try:
        import mcp  # noqa: F401
    except ImportError:
        raise MissingExtraError("tooldisc serve", "mcp", "mcp") from None
    given = bool(context.given())
    if not given and not allow_default_context:
        raise UsageError("tooldisc serve needs a context: pass --context-file FILE or context flags (--tenant, "
                         "--role, --permission, --mode), or --allow-default-context to serve every role and "
                         "permission of the catalog in autonomous mode")
    if given and allow_default_context:
        raise UsageError("give a context (--context-file or context flags) or --allow-default-context, not both")
    if interleave is None and (experiment is not None or salt is not None or percent is not None):
        raise UsageError("--experiment, --salt and --percent configure --interleave; give --interleave B too")
    if interleave is not None and (experiment is None or percent is None):
        raise UsageError("--interleave needs --experiment NAME and --percent P (the share of requests interleaved)")
    if interleave is not None and events is None:
        raise UsageError("--interleave needs --events FILE: the interleaving verdict reads that telemetry")
    from tooldisc.agent.mcp_server import (
        AgentService,
        CatalogSource,
        echo_handler,
        file_stamp,
        serve_stdio,
    )
    from tooldisc.agent.sink import JsonlSink, Telemetry
    from tooldisc.discovery.catalog.io import default_catalog_path
    from tooldisc.discovery.config import load_config

    plan = None
    if interleave is not None:  # B's file and the plan are checked before anything is loaded
        from tooldisc.agent.interleaving import Interleave, challenger

        assert experiment is not None and percent is not None
        b_config, b_learned = challenger(interleave)
        try:
            plan = Interleave(experiment, percent, b_config, b_learned, salt)
        except (TypeError, ValueError) as exc:  # one line naming the option, exit 2
            raise UsageError(f"--interleave: {exc}") from None
    path = catalog or default_catalog_path()
    cache = index_cache(no_cache)
    try:
        stamp = file_stamp(path)  # before the read: a change while it is read is a reload later
    except OSError:
        stamp = None
    cat = load_catalog_option(catalog, catalog_format, cache)  # fail fast (exit 2) on a bad catalog
    ctx = build_context_from(cat, context)  # the default one says so on stderr
    declared = None if catalog_format in (None, "auto") else catalog_format  # checked by load_catalog_option
    # the catalog just read is the one served (read once), unless the file could not be stamped
    source = CatalogSource(path, load_config(config), fmt=declared, learned=load_learned_option(learned),
                           cache=cache, loaded=None if stamp is None else (cat, stamp))
    telemetry = None
    if events is not None:
        events.close()  # checked (and created) while the options were read; the sink appends by name
        telemetry = Telemetry(JsonlSink(events.path), channel="mcp")
    # The default context follows catalog reloads (None: recomputed from each new catalog).
    service = AgentService(source, None if ctx.is_default else ctx,
                           _load_handler(handler) if handler else echo_handler, telemetry, parse_k(k),
                           allow_default_context=allow_default_context, interleave=plan)
    serve_stdio(service)


def _load_handler(spec: str):
    import importlib

    from tooldisc.errors import UsageError

    module, _, attr = spec.partition(":")
    if not module or not attr:
        raise UsageError(f"--handler must be module:function; got {spec!r}")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"--handler {spec!r} cannot be loaded: {exc}") from None
    if not callable(fn):
        raise UsageError(f"--handler {spec!r} is not callable")
    return fn


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
