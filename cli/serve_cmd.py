"""``tooldisc serve``: tooldisc as an MCP server on stdio (needs the ``mcp`` extra).

``tools/list`` is ``search_tools`` plus a capped discovery offer for the context;
``tools/call`` passes the execution guard, then goes to the handler (a no-op echo
unless ``--handler module:function`` names one). The catalog reloads when its file
changes; a bad new file is reported on stderr and the old catalog keeps serving.
"""

from __future__ import annotations

from typing import Annotated

import typer
from tooldisc.cli.options import (
    CatalogOption,
    ConfigOption,
    ContextFileOption,
    ForcedOption,
    KOption,
    ModeOption,
    PermissionOption,
    RoleOption,
    TenantOption,
    build_context_from,
    context_flags,
    load_catalog_option,
    parse_k,
)


def serve_command(
    catalog: CatalogOption = None,
    context_file: ContextFileOption = None,
    events: Annotated[str | None, typer.Option("--events", help="Append a DESIGN §7 telemetry event per list and call to this JSONL file.")] = None,
    handler: Annotated[str | None, typer.Option("--handler", help="module:function called as f(name, arguments) for calls that pass the guard. Default: a no-op echo.")] = None,
    k: KOption = None,
    mode: ModeOption = None,
    role: RoleOption = None,
    permission: PermissionOption = None,
    tenant: TenantOption = None,
    forced: ForcedOption = None,
    config: ConfigOption = None,
) -> None:
    """Serve the catalog over MCP (stdio): offers per request, guarded calls, search_tools."""
    from tooldisc.errors import MissingExtraError

    try:
        import mcp  # noqa: F401
    except ImportError:
        raise MissingExtraError("tooldisc serve", "mcp", "mcp") from None
    from tooldisc.agent.mcp_server import AgentService, CatalogSource, echo_handler, serve_stdio
    from tooldisc.agent.sink import JsonlSink, Telemetry
    from tooldisc.discovery.catalog_io import default_catalog_path
    from tooldisc.discovery.config import load_config

    cat = load_catalog_option(catalog)  # fail fast (exit 2) on a bad catalog
    flags = context_flags(tenant, role, permission, mode, forced, context_file)
    given = any((tenant, role, permission, mode, forced, context_file))
    ctx = build_context_from(cat, flags) if given else None
    if ctx is None:
        build_context_from(cat, flags)  # says on stderr that the default context is used
    source = CatalogSource(catalog or default_catalog_path(), load_config(config))
    telemetry = Telemetry(JsonlSink(events), channel="mcp") if events else None
    service = AgentService(source, ctx, _load_handler(handler) if handler else echo_handler, telemetry, parse_k(k))
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
