"""Option bundles shared by every command that discovers (discover, eval, sweep, serve...).

Declared once so that every surface accepts the same catalog, config and context
flags (DESIGN §5), and builds its engine the same way.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import typer

from tooldisc.discovery.importers import choices_text

CatalogOption = Annotated[
    str | None,
    typer.Option("--catalog", "-c", help="Catalog file (YAML/JSON, OpenAI/Anthropic/MCP tools, tools.jsonl). Default: the shipped catalog."),
]
CatalogFormatOption = Annotated[
    str | None,
    typer.Option("--catalog-format", help=f"Read the catalog as exactly this format: {choices_text()}. Default: "
                 "declared by a top-level catalog_version, else detected; a document mixing two formats is refused."),
]
ConfigOption = Annotated[
    str | None, typer.Option("--config", help="Ranker weights YAML (overlays the shipped default); 'default' names the shipped config.")
]
LearnedOption = Annotated[
    str | None, typer.Option("--learned", help="A learned file from 'tooldisc learn': it ranks and may abstain, never authorizes.")
]
KOption = Annotated[str | None, typer.Option("--k", help="How many tools to offer: an integer, or 'auto' for adaptive K. Default: the config's K (15).")]
TenantOption = Annotated[str | None, typer.Option("--tenant", help="Tenant of the request.")]
RoleOption = Annotated[list[str] | None, typer.Option("--role", help="A role of the caller (repeatable).")]
PermissionOption = Annotated[list[str] | None, typer.Option("--permission", help="A permission of the caller (repeatable).")]
ModeOption = Annotated[str | None, typer.Option("--mode", help="Execution mode: analyzer, supervised or autonomous.")]
ForcedOption = Annotated[list[str] | None, typer.Option("--forced", help="A tool name pending approval: skips only the mutation step (repeatable).")]
ContextFileOption = Annotated[str | None, typer.Option("--context-file", help="YAML/JSON with tenant, roles, permissions, mode, forced.")]
NoCacheOption = Annotated[bool, typer.Option(
    "--no-cache", help="Load the catalog and build the index fresh: neither read nor write the on-disk cache "
                       "('tooldisc cache status'). The security filter always runs on the live catalog.")]


# The six context flags, in the order a command's help lists them (DESIGN §5).
CONTEXT_OPTIONS: tuple[tuple[str, Any], ...] = (
    ("mode", ModeOption), ("role", RoleOption), ("permission", PermissionOption), ("tenant", TenantOption),
    ("forced", ForcedOption), ("context_file", ContextFileOption),
)
# The command-line spelling of each, for messages that name the flags given.
CONTEXT_FLAG_NAMES: dict[str, str] = {"mode": "--mode", "role": "--role", "permission": "--permission",
                                      "tenant": "--tenant", "forced": "--forced", "context_file": "--context-file"}

F = TypeVar("F", bound=Callable[..., Any])


def context_options(command: F) -> F:
    """Declare the six context flags once: ``command`` takes ``context: ContextFlags`` instead, and the flags
    stand where that parameter stands (help order unchanged).

    A flag the command declares itself (serve lists ``--context-file`` first) keeps its own place and
    still reaches ``context``. Why a decorator: typer reads options from the signature, so the bundle rewrites
    the signature, as sqlite-utils' ``output_options`` stacks click options.
    """
    signature = inspect.signature(command, eval_str=True)
    own = set(signature.parameters)
    params: list[inspect.Parameter] = []
    for param in signature.parameters.values():
        if param.name != "context":
            params.append(param)
            continue
        params += [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation=hint)
                   for name, hint in CONTEXT_OPTIONS if name not in own]
    added = {p.name for p in params} - own

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        values = {name: (kwargs.pop(name) if name in added else kwargs.get(name)) for name, _ in CONTEXT_OPTIONS}
        return command(context=context_flags(values["tenant"], values["role"], values["permission"],
                                             values["mode"], values["forced"], values["context_file"]), **kwargs)

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params} | {"return": signature.return_annotation}
    return wrapper  # type: ignore[return-value]


@dataclass(frozen=True)
class ContextFlags:
    tenant: str | None = None
    roles: tuple[str, ...] = ()
    permissions: tuple[str, ...] = ()
    mode: str | None = None
    forced: tuple[str, ...] = ()
    context_file: str | None = None

    def given(self) -> tuple[str, ...]:
        """The flags given on the command line, spelled as typed, in help order."""
        values = {"mode": self.mode, "role": self.roles, "permission": self.permissions, "tenant": self.tenant,
                  "forced": self.forced, "context_file": self.context_file}
        return tuple(CONTEXT_FLAG_NAMES[name] for name, _ in CONTEXT_OPTIONS if values[name])


def context_flags(tenant: str | None, role: list[str] | None, permission: list[str] | None,
                  mode: str | None, forced: list[str] | None, context_file: str | None) -> ContextFlags:
    return ContextFlags(tenant, tuple(role or ()), tuple(permission or ()), mode, tuple(forced or ()), context_file)


def catalog_format(value: str | None, option: str = "--catalog-format") -> str | None:
    """A declared catalog format, checked (``auto`` or nothing means "declared or detected")."""
    from tooldisc.discovery.importers import FORMATS
    from tooldisc.errors import UsageError

    if value is None or value == "auto":
        return None
    if value not in FORMATS:
        raise UsageError(f"{option} must be one of auto, {', '.join(FORMATS)}; got {value!r}")
    return value


def load_catalog_option(path: str | None, fmt: str | None = None, cache: Any = None) -> Any:
    """The catalog from ``--catalog`` (read as ``--catalog-format``), or the shipped default;
    ``cache``: the on-disk cache its validated records may come from (:func:`index_cache`).

    Notes (an imported format carries no policy) and quarantined tools go to stderr.
    """
    from tooldisc.cli.common import note
    from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog

    catalog = load_catalog(path if path else default_catalog_path(), fmt=catalog_format(fmt), cache=cache)
    for text in catalog.notes:
        note(f"note: {text}")
    quarantined = [t for t in catalog.tools if t.quarantine]
    for t in quarantined:
        note(f"warning: {catalog.source}: tool {t.name!r} is quarantined and will never be offered: {t.quarantine}")
    return catalog


def load_learned_option(path: str | None) -> Any:
    """The learned file from ``--learned``, verified, or None."""
    if not path:
        return None
    from tooldisc.discovery.learned.read import load_learned

    return load_learned(path)


def index_cache(no_cache: bool) -> Any:
    """The on-disk cache the command line uses for validated catalog records and built indexes
    (``$TOOLDISC_CACHE_DIR`` or the per-user cache directory), or None with ``--no-cache``."""
    if no_cache:
        return None
    from tooldisc.discovery.indexes.cache import IndexCache, NoCacheDirectory

    try:
        return IndexCache.default()
    except NoCacheDirectory as exc:  # the cache only saves time: the command runs as with --no-cache
        from tooldisc.cli.common import note

        note(f"note: {exc.message}; running without it")
        return None


def build_engine(catalog: Any, config: Any, learned: Any = None, cache: Any = None) -> Any:
    """The Discoverer every command builds; a learned file's warnings (stale parts) go to stderr."""
    from tooldisc.cli.common import note
    from tooldisc.discovery.pipeline import Discoverer

    engine = Discoverer(catalog, config, learned=learned, cache=cache)
    for text in engine.notes:
        note(text)
    return engine


def build_context_from(catalog: Any, flags: ContextFlags, *, quiet: bool = False) -> Any:
    """The request context; when the default is used, say so on stderr (DESIGN §5)."""
    from tooldisc.cli.common import note
    from tooldisc.discovery.context import build_context

    ctx = build_context(
        catalog, context_file=flags.context_file, tenant=flags.tenant, roles=flags.roles,
        permissions=flags.permissions, mode=flags.mode, forced=flags.forced,
    )
    if ctx.is_default and not quiet:
        note(default_context_note(ctx))
    return ctx


def default_context_note(ctx: Any) -> str:
    """The stderr line saying the catalog-default context was used (DESIGN §5)."""
    return (f"context: default — every role ({len(ctx.roles)}) and permission ({len(ctx.permissions)}) "
            "the catalog names, tenant 'default', mode autonomous")


def parse_k(value: str | None) -> int | str | None:
    from tooldisc.errors import UsageError

    if value is None:
        return None
    if value == "auto":
        return "auto"
    from tooldisc.limits import K_OPTION
    from tooldisc.params import message

    try:
        k: int | str = int(value)
    except ValueError:
        k = value
    if K_OPTION.problem(k, "--k") is not None:
        raise UsageError(message("--k", K_OPTION.describe(), value))
    return k
