"""Reading catalog files: the I/O edge in front of :mod:`tooldisc.discovery.catalog`.

Files are size-limited, decoded as UTF-8, parsed with a safe YAML loader or JSON,
and their format detected (tooldisc, OpenAI, Anthropic, MCP ``tools/list``, or a
benchmark ``tools.jsonl``) before strict validation.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tooldisc.discovery.catalog import Catalog, build_catalog
from tooldisc.discovery.importers import detect_format, to_catalog_document

from tooldisc.errors import DataError

MAX_CATALOG_BYTES = 64 * 1024 * 1024
EVAL_SIDE_EFFECT_NOTE = (
    "{file}: a tools.jsonl carries no policy; for evaluation its tools count as read-only "
    "(side_effect: none)"
)


def read_text(path: str | os.PathLike[str], *, max_bytes: int = MAX_CATALOG_BYTES, what: str = "file") -> str:
    """UTF-8 text of ``path`` or a one-line :class:`DataError` saying why not."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise DataError(f"{what} not found", file=str(path)) from None
    except OSError as exc:
        raise DataError(f"cannot read {what}: {exc.strerror}", file=str(path)) from None
    if p.is_dir():
        raise DataError(f"expected a {what}, got a directory", file=str(path))
    if size > max_bytes:
        raise DataError(f"{what} is {size} bytes, over the limit of {max_bytes}", file=str(path))
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read {what}: {exc.strerror}", file=str(path)) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text (byte {exc.start})", file=str(path)) from None


def parse_document(text: str, file: str) -> Any:
    """JSON or YAML by extension (JSON first for unknown ones), with line/column on error."""
    suffix = Path(file).suffix.lower()
    if suffix in (".yaml", ".yml"):
        return _parse_yaml(text, file)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if suffix == ".json":
            raise DataError(f"invalid JSON: {exc.msg}", file=file, where=f"line {exc.lineno} column {exc.colno}") from None
    return _parse_yaml(text, file)


def safe_yaml(text: str) -> Any:
    """YAML through libyaml's safe loader when available (4× faster), else PyYAML's."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _parse_yaml(text: str, file: str) -> Any:
    import yaml

    try:
        return safe_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark else None
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise DataError(f"invalid YAML: {problem}", file=file, where=where) from None


def parse_jsonl(text: str, file: str) -> list[tuple[int, Any]]:
    """``(line number, object)`` for each non-blank line; a bad line names its number."""
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"invalid JSON: {exc.msg}", file=file, where=f"line {n} column {exc.colno}") from None
        if not isinstance(obj, dict):
            raise DataError("each line must be a JSON object", file=file, where=f"line {n}")
        rows.append((n, obj))
    return rows


def load_catalog(
    path: str | os.PathLike[str],
    *,
    fmt: str | None = None,
    side_effect: str | None = None,
    max_bytes: int = MAX_CATALOG_BYTES,
) -> Catalog:
    """Load and validate a catalog file of any supported format.

    ``side_effect`` is the policy to give tools whose format carries none (OpenAI,
    Anthropic, un-annotated MCP, ``tools.jsonl``). For a ``tools.jsonl`` without it,
    tools count as read-only for evaluation (DESIGN §6) and the catalog notes say so.
    """
    file = str(path)
    text = read_text(path, max_bytes=max_bytes, what="catalog")
    notes: list[str] = []
    if fmt == "jsonl" or (fmt is None and Path(file).suffix.lower() == ".jsonl"):
        rows = parse_jsonl(text, file)
        if side_effect is None:
            side_effect = "none"
            notes.append(EVAL_SIDE_EFFECT_NOTE.format(file=file))
        doc = to_catalog_document(rows, "jsonl", side_effect=side_effect, file=file)
    else:
        data = parse_document(text, file)
        detected = fmt or detect_format(data)
        doc = to_catalog_document(data, detected, side_effect=side_effect, file=file)
    return build_catalog(doc, source=file, notes=notes)


def default_catalog_path() -> Path:
    """The catalog shipped in ``tooldisc.gold``'s package data."""
    from importlib import resources

    return Path(str(resources.files("tooldisc.gold").joinpath("data/catalog.yaml")))


def shipped_datasets() -> list[tuple[Path, Path]]:
    """(catalog, gold set) of every gold set shipped as package data: the default first."""
    data = default_catalog_path().parent
    return [(data / "catalog.yaml", data / "gold.json"), (data / "devops" / "catalog.yaml", data / "devops" / "gold.json")]
