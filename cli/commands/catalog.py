"""``tooldisc catalog``: validate, stats, convert and diff catalogs.

Exit codes (STYLE 8): ``validate`` 0 clean, 1 when the catalog parses but has errors or
quarantined tools, 2 when it cannot be read or parsed; ``diff`` 1 when a change
loosens policy (a CI review gate); every other failure is bad input, exit 2.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from tooldisc.cli.common import (
    FormatOption,
    echo,
    note,
    output_options,
    print_json,
    print_report,
)
from tooldisc.cli.options import NoCacheOption
from tooldisc.cli.outputs import Output, output_option
from tooldisc.discovery.importers import REGISTRY as IMPORT_FORMATS
from tooldisc.discovery.importers import choices_text
from tooldisc.errors import UsageError

POLICY_FREE_FORMATS = tuple(f.name for f in IMPORT_FORMATS if f.policy == "none")
_PERSIAN = re.compile("[\u0600-\u06ff\ufb50-\ufdff\ufe70-\ufeff]")

catalog_app = typer.Typer(
    name="catalog",
    help="Validate, summarise, convert and diff tool catalogs.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

PathArg = Annotated[str, typer.Argument(help="Catalog file (YAML/JSON, OpenAI/Anthropic/MCP tools, tools.jsonl).")]
FromOption = Annotated[
    str, typer.Option("--from", "--catalog-format",
                      help=f"Read the file as exactly this format: auto, {choices_text()}. auto: declared by a "
                           "top-level catalog_version, else detected; a document mixing two formats is refused.")
]


def _source_format(value: str) -> str | None:
    from tooldisc.cli.options import catalog_format

    return catalog_format(value, "--from/--catalog-format")


def read_catalog_document(path: str, fmt: str | None, side_effect: str | None = None) -> tuple[Any, str]:
    """The raw tooldisc catalog document of ``path`` and the one format it was read as.

    Separate from ``load_catalog`` because ``validate`` must list every issue of a
    document that does not build, and ``convert`` must know the source format before
    it decides whether a side effect is required.
    """
    from tooldisc.discovery.catalog.io import read_catalog_document as read

    return read(path, fmt, side_effect=side_effect)


# --------------------------------------------------------------------------- validate

@catalog_app.command("validate")
@output_options("catalog-validate")
def validate_command(
    path: PathArg,
    source: FromOption = "auto",
    fmt: FormatOption = "table",
) -> None:
    """List every issue (errors, quarantined tools, warnings) with its file and JSON path.

    Exit 0 when there are no errors or quarantines, 1 when there are, 2 when the file
    cannot be read or parsed.
    """
    from tooldisc.discovery.catalog import check_catalog
    from tooldisc.discovery.importers import carries_policy, policy_note

    doc, detected = read_catalog_document(path, _source_format(source))
    policy = policy_note(detected, path, None)
    issues, catalog = check_catalog(doc, source=path, plain=True)  # validated once: the issues, and the catalog
    counts = Counter(i.level for i in issues)
    failed = bool(counts["error"] or counts["quarantine"])
    summary: dict[str, Any] = {
        "file": path,
        "format": detected,
        "carries_policy": carries_policy(detected),
        "notes": [policy] if policy else [],
        "valid": not failed,
        "counts": {lvl: counts[lvl] for lvl in ("error", "quarantine", "warning")},
        "issues": [{"level": i.level, "file": path, "path": i.path, "message": i.message} for i in issues],
        "tools": None,
        "unknown_side_effect": None,
        "catalog_hash": None,
    }
    if catalog is not None:
        summary["tools"] = len(catalog)
        summary["unknown_side_effect"] = sum(1 for t in catalog.tools if t.side_effect is None)
        summary["catalog_hash"] = catalog.hash
    print_report(summary, "catalog-validate", fmt)
    if failed:
        raise typer.Exit(1)


# --------------------------------------------------------------------------- stats

def _has_persian(tool: Any) -> bool:
    texts = [tool.name, tool.description, *tool.aliases, *tool.keywords, *tool.examples]
    return any(_PERSIAN.search(t) for t in texts if t)


def catalog_stats(catalog: Any) -> dict[str, Any]:
    """Tool counts by policy and discovery fields: what a reviewer checks first."""
    tools = catalog.tools

    def by(values: list[str]) -> dict[str, int]:
        return dict(sorted(Counter(values).items()))

    return {
        "file": catalog.source,
        "catalog_version": catalog.version,
        "catalog_hash": catalog.hash,
        "tools": len(tools),
        "side_effect": by([t.side_effect or "unknown" for t in tools]),
        "domain": by([d for t in tools for d in t.domains] + ["(none)" for t in tools if not t.domains]),
        "namespace": by([t.namespace or "(none)" for t in tools]),
        "capability_prefix": by([t.capability.split(".")[0] if t.capability else "(none)" for t in tools]),
        "with_parameters": sum(1 for t in tools if t.parameters is not None),
        "without_parameters": sum(1 for t in tools if t.parameters is None),
        "with_compact_parameters": sum(1 for t in tools if t.compact_parameters is not None),
        "with_aliases": sum(1 for t in tools if t.aliases),
        "with_persian_text": sum(1 for t in tools if _has_persian(t)),
        "enabled": sum(1 for t in tools if t.enabled),
        "disabled": sum(1 for t in tools if not t.enabled),
        "deprecated": sum(1 for t in tools if t.deprecated),
        "quarantined": sum(1 for t in tools if t.quarantine),
    }


@catalog_app.command("stats")
@output_options("catalog-stats")
def stats_command(
    path: PathArg,
    source: FromOption = "auto",
    no_cache: NoCacheOption = False,
    fmt: FormatOption = "table",
) -> None:
    """Tool counts by side effect, domain, namespace and capability prefix, and the catalog hash."""
    from tooldisc.cli.options import index_cache, load_catalog_option

    print_report(catalog_stats(load_catalog_option(path, source, index_cache(no_cache))), "catalog-stats", fmt)


# --------------------------------------------------------------------------- convert

@catalog_app.command("convert")
@output_options("catalog-convert")
def convert_command(
    src: Annotated[str, typer.Argument(help="Source file in any supported format.")],
    to: Annotated[str, typer.Option("--to", help="Target format: tooldisc, openai, anthropic or mcp.")],
    out_path: Annotated[Output, output_option("--out", "-o", help="Output file; .yaml/.yml writes YAML, .json JSON.")],
    source: FromOption = "auto",
    side_effect: Annotated[str | None, typer.Option(
        "--side-effect",
        help="Side effect for every tool of a format without policy (tools.jsonl, OpenAI, Anthropic; "
             "un-annotated MCP tools). Required for the policy-free formats.")] = None,
    compact: Annotated[bool, typer.Option("--compact", help="Provider formats: use compact_parameters where present.")] = False,
    fmt: FormatOption = "table",
) -> None:
    """Convert a catalog between tooldisc, OpenAI, Anthropic and MCP formats.

    Importing a tools.jsonl or OpenAI/Anthropic tools needs an explicit --side-effect:
    those formats carry no policy, and guessing one would be a security decision.
    """
    from tooldisc.discovery.catalog import build_catalog, catalog_to_dict
    from tooldisc.discovery.catalog.exporters import PROVIDERS, render
    from tooldisc.discovery.catalog.names import NameMap
    from tooldisc.discovery.importers import carries_policy, policy_note
    from tooldisc.discovery.model import SIDE_EFFECTS
    from tooldisc.params import Options, checked

    checked(Options(("tooldisc", *PROVIDERS)), to, "--to", UsageError)
    if side_effect is not None:
        checked(Options(tuple(SIDE_EFFECTS)), side_effect, "--side-effect", UsageError)
    suffix = Path(out_path.path).suffix.lower()
    if suffix not in (".json", ".yaml", ".yml"):
        raise UsageError(f"--out must end in .json, .yaml or .yml; got {out_path.path!r}")
    doc, detected = read_catalog_document(src, _source_format(source), side_effect)
    if detected in POLICY_FREE_FORMATS and side_effect is None:
        raise UsageError(
            f"a {detected} tools list carries no policy; give --side-effect "
            f"({'|'.join(SIDE_EFFECTS)}) to say what its tools do", file=src,
        )
    if carries_policy(detected) and side_effect is not None:
        raise UsageError("--side-effect applies only to formats without policy; this is a tooldisc catalog", file=src)
    catalog = build_catalog(doc, source=src, plain=True)
    # A quarantined tool's schema is broken and it is never offered, so a provider
    # export leaves it out; a tooldisc catalog keeps it so the fix can be made there.
    for t in catalog.tools:
        if t.quarantine:
            left = "" if to == "tooldisc" else " (left out of the export)"
            note(f"warning: {src}: tool {t.name!r} is quarantined{left}: {t.quarantine}")
    renamed: dict[str, str] = {}
    if to == "tooldisc":
        body: Any = catalog_to_dict(catalog)
        exported = len(catalog)
    else:
        tools = [t for t in catalog.tools if not t.quarantine]
        names = NameMap(t.name for t in catalog.tools)
        renamed = {k: v for k, v in names.renamed.items() if k in {t.name for t in tools}}
        body = render(tools, to, names=names, compact=compact)
        exported = len(tools)
    out_path.write(_serialize(body, suffix))
    policy = policy_note(detected, src, side_effect)
    if policy:
        note(f"note: {policy}")
    if renamed:
        note(f"note: {len(renamed)} name(s) mapped to provider-safe names; "
             "NameMap(catalog tool names) rebuilds the same mapping to map calls back")
    result = {"source": src, "from": detected, "to": to, "out": out_path.path, "tools": exported,
              "renamed": renamed, "catalog_hash": catalog.hash}
    if fmt == "json":
        print_json(result)
    else:
        echo(f"wrote {out_path}: {exported} tools, {detected} → {to}" + (f", {len(renamed)} renamed" if renamed else ""))


def _serialize(body: Any, suffix: str) -> str:
    if suffix == ".json":
        import json

        return json.dumps(body, ensure_ascii=False, indent=2) + "\n"
    import yaml

    return yaml.safe_dump(body, allow_unicode=True, sort_keys=False, width=100)


# --------------------------------------------------------------------------- diff

@catalog_app.command("diff")
@output_options("catalog-diff")
def diff_command(
    old: Annotated[str, typer.Argument(help="The catalog before the change.")],
    new: Annotated[str, typer.Argument(help="The catalog after the change.")],
    source: FromOption = "auto",
    no_cache: NoCacheOption = False,
    fmt: FormatOption = "table",
) -> None:
    """Added, removed and changed tools; exit 1 when a change loosens policy (for CI review).

    An added tool loosens policy unless it is read-only and names both roles and
    permissions: a new delete tool open to every role is exactly what review is for.
    """
    from tooldisc.cli.options import index_cache, load_catalog_option
    from tooldisc.discovery.catalog.diff import diff_catalogs

    cache = index_cache(no_cache)
    diff = diff_catalogs(load_catalog_option(old, source, cache), load_catalog_option(new, source, cache))
    document = {"old": old, "new": new, **diff.to_dict()}
    if fmt == "json":
        print_json(document)
    elif fmt in ("md", "html"):
        from tooldisc.reports.render import render

        sys.stdout.write(render(document, "catalog-diff", fmt))
    else:
        for line in _diff_text(diff, old, new):
            echo(line)
    if diff.loosens:
        raise typer.Exit(1)


def _diff_text(diff: Any, old: str, new: str) -> list[str]:
    lines = [f"{old} → {new}: {len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed"]
    lines += [f"+ {n}" for n in diff.added]
    lines += [f"- {n}" for n in diff.removed]
    lines += [f"~ {c.name}: {', '.join(c.fields)}" for c in diff.changed]
    if diff.findings:
        lines.append(f"POLICY LOOSENED ({len(diff.findings)} finding(s)):")
        lines += [f"! {f.tool}: {f.field}: {f.message}" for f in diff.findings]
    else:
        lines.append("policy: no loosening")
    return lines


def register(app: typer.Typer) -> None:
    app.add_typer(catalog_app, name="catalog")
