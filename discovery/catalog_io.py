"""Reading catalog files: the I/O edge in front of :mod:`tooldisc.discovery.catalog`.

Files are size-limited, decoded as UTF-8 and parsed by the hardened reader of
:mod:`tooldisc.discovery.documents`; the document is then read as exactly one format
(tooldisc, OpenAI, Anthropic, MCP ``tools/list``, or a benchmark ``tools.jsonl``) —
declared, or detected without ambiguity — before strict validation.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tooldisc.discovery.catalog import Catalog, build_catalog
from tooldisc.discovery.documents import parse_document, parse_jsonl, read_text, safe_yaml
from tooldisc.discovery.importers import detect_format, policy_note, to_catalog_document

__all__ = [
    "MAX_CATALOG_BYTES",
    "catalog_max_bytes",
    "default_catalog_path",
    "load_catalog",
    "parse_document",
    "parse_jsonl",
    "read_catalog_document",
    "read_text",
    "safe_yaml",
    "shipped_datasets",
]

MAX_CATALOG_BYTES = 256 * 1024 * 1024
"""A catalog file larger than this is refused before it is read (the bench's 100,000-tool catalog is
about 130 MB as JSON). ``$TOOLDISC_MAX_CATALOG_BYTES`` sets another limit for every command."""
ENV_MAX_BYTES = "TOOLDISC_MAX_CATALOG_BYTES"
EVAL_SIDE_EFFECT_NOTE = (
    "{file}: a tools.jsonl carries no policy; for evaluation its tools count as read-only "
    "(side_effect: none)"
)


def read_catalog_document(
    path: str | os.PathLike[str],
    fmt: str | None = None,
    *,
    side_effect: str | None = None,
    max_bytes: int | None = None,
) -> tuple[dict[str, Any], str]:
    """The raw tooldisc catalog document of ``path`` and the one format it was read as.

    ``fmt`` declares the format (``--catalog-format``); otherwise a ``.jsonl`` name
    means ``tools.jsonl``, a top-level ``catalog_version`` means tooldisc, and
    anything else is detected from the fields — a document mixing two formats is an
    error, never a silent conversion (:func:`~tooldisc.discovery.importers.detect_format`).
    """
    file = str(path)
    text = read_text(path, max_bytes=catalog_max_bytes() if max_bytes is None else max_bytes, what="catalog")
    if fmt == "jsonl" or (fmt is None and Path(file).suffix.lower() == ".jsonl"):
        rows = parse_jsonl(text, file)
        return to_catalog_document(rows, "jsonl", side_effect=side_effect, file=file), "jsonl"
    data = parse_document(text, file)
    detected = detect_format(data, declared=fmt, file=file)
    return to_catalog_document(data, detected, side_effect=side_effect, file=file), detected


def load_catalog(
    path: str | os.PathLike[str],
    *,
    fmt: str | None = None,
    side_effect: str | None = None,
    max_bytes: int | None = None,
) -> Catalog:
    """Load and validate a catalog file of any supported format.

    ``side_effect`` is the policy to give tools whose format carries none (OpenAI,
    Anthropic, un-annotated MCP, ``tools.jsonl``). For a ``tools.jsonl`` without it,
    tools count as read-only for evaluation (DESIGN §6). An imported format carries
    no roles, permissions or tenant rules, and the catalog notes say so.
    """
    file = str(path)
    if side_effect is None and (fmt == "jsonl" or (fmt is None and Path(file).suffix.lower() == ".jsonl")):
        doc, detected = read_catalog_document(path, "jsonl", side_effect="none", max_bytes=max_bytes)
        return build_catalog(doc, source=file, notes=[EVAL_SIDE_EFFECT_NOTE.format(file=file)], plain=True)
    doc, detected = read_catalog_document(path, fmt, side_effect=side_effect, max_bytes=max_bytes)
    note = policy_note(detected, file, side_effect)
    return build_catalog(doc, source=file, notes=[note] if note else [], plain=True)


def catalog_max_bytes() -> int:
    """The catalog size limit: ``$TOOLDISC_MAX_CATALOG_BYTES`` when set (a positive integer), else
    :data:`MAX_CATALOG_BYTES`."""
    from tooldisc.errors import UsageError

    raw = os.environ.get(ENV_MAX_BYTES)
    if raw is None or raw == "":
        return MAX_CATALOG_BYTES
    if not raw.isdigit() or int(raw) < 1:
        raise UsageError(f"${ENV_MAX_BYTES} must be a positive integer (bytes); got {raw!r}")
    return int(raw)


def default_catalog_path() -> Path:
    """The catalog shipped in ``tooldisc.gold``'s package data."""
    from importlib import resources

    return Path(str(resources.files("tooldisc.gold").joinpath("data/catalog.yaml")))


def shipped_datasets() -> list[tuple[Path, Path]]:
    """(catalog, gold set) of every gold set shipped as package data: the default first."""
    data = default_catalog_path().parent
    return [(data / "catalog.yaml", data / "gold.json"), (data / "devops" / "catalog.yaml", data / "devops" / "gold.json")]
