"""Reading catalog files: the I/O edge in front of :mod:`tooldisc.discovery.catalog`.

Files are size-limited, decoded as UTF-8 and parsed by the hardened reader of
:mod:`tooldisc.documents`; the document is then read as exactly one format
(tooldisc, OpenAI, Anthropic, MCP ``tools/list``, or a benchmark ``tools.jsonl``) —
declared, or detected without ambiguity — before strict validation.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldisc.discovery.catalog import Catalog, build_catalog
from tooldisc.discovery.importers import (
    detect_format,
    line_format,
    policy_note,
    to_catalog_document,
)
from tooldisc.documents import (
    bulk,
    decode_text,
    file_size,
    parse_document,
    parse_jsonl,
    read_bytes,
    read_text,
    safe_yaml,
)
from tooldisc.errors import UsageError
from tooldisc.json_stream import LARGE
from tooldisc.memory import gc_paused

if TYPE_CHECKING:
    from tooldisc.discovery.indexes.cache import IndexCache

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
    "{file}: a {label} carries no policy; for evaluation its tools count as read-only "
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
    limit = catalog_max_bytes() if max_bytes is None else max_bytes
    if _streams(path, fmt, limit):
        with gc_paused():
            found = _streamed_document(path, fmt, side_effect, limit)
        if found is not None:
            return found[0], found[1]
    text = read_text(path, max_bytes=limit, what="catalog")
    with bulk(text):
        return _catalog_document(text, str(path), fmt, side_effect)


def _streams(path: str | os.PathLike[str], fmt: str | None, limit: int) -> bool:
    """Whether ``path`` is read by the streamed JSON reader: a JSON file (not JSON Lines) of :data:`LARGE`
    bytes or more."""
    file = str(path)
    return line_format(file, fmt) is None and Path(file).suffix.lower() == ".json" and \
        file_size(path, max_bytes=limit, what="catalog") >= LARGE


def _catalog_document(text: str, file: str, fmt: str | None, side_effect: str | None) -> tuple[dict[str, Any], str]:
    lines = line_format(file, fmt)
    if lines is not None:
        rows = parse_jsonl(text, file)
        return to_catalog_document(rows, lines.name, side_effect=side_effect, file=file), lines.name
    data = parse_document(text, file)
    detected = detect_format(data, declared=fmt, file=file)
    return to_catalog_document(data, detected, side_effect=side_effect, file=file), detected


def load_catalog(
    path: str | os.PathLike[str],
    *,
    fmt: str | None = None,
    side_effect: str | None = None,
    max_bytes: int | None = None,
    cache: IndexCache | None = None,
) -> Catalog:
    """Load and validate a catalog file of any supported format.

    ``side_effect`` is the policy to give tools whose format carries none (OpenAI,
    Anthropic, un-annotated MCP, ``tools.jsonl``). For a ``tools.jsonl`` without it,
    tools count as read-only for evaluation (DESIGN §6). An imported format carries
    no roles, permissions or tenant rules, and the catalog notes say so.

    ``cache`` (the command line passes :meth:`IndexCache.default`): read the validated records
    stored for exactly these bytes, read this way, by this code, instead of parsing and
    validating again, and store them after a fresh load (:mod:`tooldisc.discovery.catalog.cache`).
    """
    file = str(path)
    notes: list[str] = []
    lines = line_format(file, fmt)
    if side_effect is None and lines is not None and lines.read_only_for_evaluation:
        fmt, side_effect = lines.name, "none"
        notes.append(EVAL_SIDE_EFFECT_NOTE.format(file=file, label=lines.label))
    if cache is not None and not _is_index_cache(cache):
        raise UsageError("The 'cache' parameter must be an IndexCache (tooldisc.IndexCache.default()) or None. "
                         f"Got {type(cache).__name__} instead.")
    limit = catalog_max_bytes() if max_bytes is None else max_bytes
    if _streams(path, fmt, limit):
        loaded = _load_large_json(path, fmt, side_effect, limit, cache, notes)
        if loaded is not None:
            return loaded
    raw = read_bytes(path, max_bytes=limit, what="catalog")
    parts = None
    if cache is not None:
        from tooldisc.discovery.catalog.cache import file_parts

        parts = file_parts(raw, fmt, side_effect)
        found = _cached(cache, parts, file, notes, side_effect)
        if found is not None:
            return found
    # Parsing and validation allocate millions of objects and make no cycles: the collector's passes over
    # them (each walking every object alive) would be a third of a 100,000-tool load.
    with gc_paused():
        text = decode_text(raw, file)
        del raw
        doc, detected = _catalog_document(text, file, fmt, side_effect)
        del text
        catalog = build_catalog(doc, source=file, notes=_notes(notes, detected, file, side_effect), plain=True)
        del doc
    if parts is not None:
        from tooldisc.discovery.catalog.cache import store_records

        store_records(cache, parts, catalog, detected)
    return catalog


def _cached(cache: IndexCache, parts: dict[str, str], file: str, notes: list[str],
            side_effect: str | None) -> Catalog | None:
    from tooldisc.discovery.catalog.cache import read_records

    found = read_records(cache, parts)
    if found is None:
        return None
    tools, version, warnings, detected = found
    return Catalog(tools=tools, version=version, source=file, warnings=warnings,
                   notes=tuple(_notes(notes, detected, file, side_effect)))


def _load_large_json(path: str | os.PathLike[str], fmt: str | None, side_effect: str | None, limit: int,
                     cache: IndexCache | None, notes: list[str]) -> Catalog | None:
    """A large JSON catalog read from the file in pieces (:mod:`tooldisc.json_stream`): never its
    bytes, its whole text and its document at once, equal schemas one object from the parse on. Its
    digest is taken as it is read (the records cache's key is what was parsed, even if the file changes
    meanwhile). None when the whole-file path must decide (a refusal, a syntax error, a file that grew
    past the limit): that path reads it again and words the error as always."""
    file = str(path)
    try:
        if cache is not None:
            from tooldisc.discovery.catalog.cache import file_parts

            found = _cached(cache, file_parts(_file_digest(path, limit), fmt, side_effect), file, notes, side_effect)
            if found is not None:
                return found
        with gc_paused():
            streamed = _streamed_document(path, fmt, side_effect, limit)
            if streamed is None:
                return None
            doc, detected, digest = streamed
            catalog = build_catalog(doc, source=file, notes=_notes(notes, detected, file, side_effect), plain=True)
            del doc, streamed
    except OSError:
        return None
    if cache is not None:
        from tooldisc.discovery.catalog.cache import file_parts, store_records

        store_records(cache, file_parts(digest, fmt, side_effect), catalog, detected)
    return catalog


def _streamed_document(path: str | os.PathLike[str], fmt: str | None, side_effect: str | None,
                       limit: int) -> tuple[dict[str, Any], str, str] | None:
    """The tooldisc catalog document of a large JSON file read in pieces (:mod:`tooldisc.json_stream`),
    the format it was read as, and the SHA-256 of the bytes parsed (taken as they are read: the records
    cache's key is what was parsed, even if the file changes meanwhile); equal schemas are one object from
    the parse on. None when the whole-file path must decide (a refusal, a syntax error, a file that grew
    past the limit, one that cannot be read): that path reads it again and words the error as always."""
    import hashlib

    from tooldisc.discovery.catalog import SharedValues, share_parsed
    from tooldisc.json_stream import loads_large_json

    file = str(path)
    digest, size = hashlib.sha256(), [0]
    try:
        with open(path, "rb") as fh:
            def read(n: int) -> bytes:
                piece = fh.read(n)
                size[0] += len(piece)
                if size[0] > limit:
                    raise ValueError("over the limit")  # the whole-file read refuses it with the usual words
                digest.update(piece)
                return piece

            written: dict[Any, Any] = {}
            strings = SharedValues()
            data = loads_large_json(read, each=lambda tool: share_parsed(tool, written, strings))
    except OSError:
        return None
    written.clear()
    strings.clear()
    if data is None:
        return None
    detected = detect_format(data, declared=fmt, file=file)
    return to_catalog_document(data, detected, side_effect=side_effect, file=file), detected, digest.hexdigest()


def _file_digest(path: str | os.PathLike[str], limit: int) -> str:
    """SHA-256 of the file's bytes; OSError when it grew past ``limit`` (the whole-file read refuses it)."""
    import hashlib

    h, size = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        while piece := fh.read(1 << 22):
            size += len(piece)
            if size > limit:
                raise OSError("over the limit")
            h.update(piece)
    return h.hexdigest()


def _is_index_cache(value: Any) -> bool:
    from tooldisc.discovery.indexes.cache import IndexCache

    return isinstance(value, IndexCache)


def _notes(notes: list[str], detected: str, file: str, side_effect: str | None) -> list[str]:
    """The catalog's notes: the evaluation note of a ``tools.jsonl`` read without a side effect, else what an
    imported format lacks."""
    if notes:
        return notes
    note = policy_note(detected, file, side_effect)
    return [note] if note else []


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
