"""Locations Spark reads (file, directory, glob, hive folders, s3a://, hdfs://, a table).

The Spark engine reads what the DuckDB engine reads, but where the data lives is
Spark's business: a local path is checked here first (a typo fails before the JVM
starts), anything with a scheme is handed to Spark, and Spark's "path not found" or
"cannot read" becomes one :class:`~tooldisc.errors.DataError` naming the location.

The format comes from the location's suffix (``events/*.parquet``), from the files
in a local directory, or from ``--events-format`` for a remote directory. Rows are
returned raw (text for JSONL and CSV, physical types for Parquet and tables): typing
and validation are the engine's next step, from the one declarative rule source.
"""

from __future__ import annotations

import contextlib
import glob
import os
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldisc.canary.ingest import FORMATS, require_readable
from tooldisc.errors import DataError, UsageError

SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}")
SUFFIXES = {fmt: tuple(s.lstrip(".") for s, f in FORMATS.items() if f == fmt)
            for fmt in sorted(set(FORMATS.values()))}
CORRUPT = "_corrupt_record"
LINE = "_line"


@dataclass(frozen=True)
class Location:
    """What to read: ``path`` (with its ``format``) or a catalog ``table``."""

    path: str | None
    format: str | None
    table: str | None = None

    @property
    def label(self) -> str:
        return self.table if self.table is not None else str(self.path)


def is_remote(path: str) -> bool:
    """``s3a://…``, ``hdfs://…``, ``file://…``: Spark resolves these, not Python."""
    return bool(SCHEME.match(path))


def _local_files(path: str) -> list[str]:
    if os.path.isdir(path):
        return sorted(str(p) for p in Path(path).rglob("*")
                      if p.is_file() and not p.name.startswith((".", "_")))
    if glob.has_magic(path):
        return sorted(p for p in glob.glob(path, recursive=True) if os.path.isfile(p))
    return [path] if os.path.isfile(path) else []


def _suffix_format(name: str) -> str | None:
    return FORMATS.get(posixpath.splitext(name.rstrip("/"))[1].lower())


def locate(path: str | None, table: str | None, fmt: str | None = None) -> Location:
    """Check a path or table name before any engine starts, and settle the format."""
    if (path is None) == (table is None):
        raise UsageError("give exactly one of --events or --table")
    if fmt is not None and fmt not in SUFFIXES:
        raise UsageError(f"--events-format must be one of {', '.join(SUFFIXES)}; got {fmt!r}")
    if table is not None:
        if not TABLE_NAME.fullmatch(table):
            raise UsageError(f"--table must be a table name such as db.events; got {table!r}")
        return Location(path=None, format=None, table=table)
    assert path is not None
    if is_remote(path):
        found = fmt or _suffix_format(path)
        if found is None:
            raise UsageError(f"{path}: cannot tell the format from the name; "
                             "add --events-format jsonl|csv|parquet")
        return Location(path=path, format=found)
    files = _local_files(path)
    if not files:
        raise DataError("no file matches (or it cannot be read)", file=path)
    for f in files:
        require_readable(f)
    if fmt is None:
        kinds = {_suffix_format(f) for f in files} - {None}
        if len(kinds) != 1:
            what = "no telemetry file (.parquet, .jsonl, .csv)" if not kinds else \
                f"mixed formats ({', '.join(sorted(k for k in kinds if k))})"
            raise DataError(f"{what}; Spark reads one format per location", file=path)
        fmt = kinds.pop()
    return Location(path=path, format=fmt)


def _error_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    text = re.sub(r"^\[[A-Z_.]+\]\s*", "", text)  # Spark's error class prefix
    return text.split(" SQLSTATE")[0].split(" JVM stacktrace")[0][:160]


def _reader(spark: Any, loc: Location, fmt: str) -> Any:
    reader = spark.read
    assert loc.path is not None
    if (not is_remote(loc.path) and os.path.isdir(loc.path)) or loc.path.endswith("/"):
        # A directory: only this format's files, hive partitions discovered from key=value.
        reader = reader.option("pathGlobFilter", "*.{" + ",".join(SUFFIXES[fmt]) + "}")
    return reader


@contextlib.contextmanager
def reading(label: str) -> Iterator[None]:
    """Spark's own error about a location, while reading or later computing over it,
    as one :class:`DataError` naming the location (Spark Connect reports lazily)."""
    from pyspark.errors import PySparkException

    try:
        yield
    except PySparkException as exc:
        raise DataError(f"Spark cannot read it: {_error_line(exc)}", file=label) from exc


def read_raw(spark: Any, loc: Location) -> Any:
    """The rows of ``loc`` as Spark reads them; a path Spark cannot read is a DataError.

    JSONL comes back as one text column ``_line`` (plus hive columns), so that a line
    that does not parse is still a row to quarantine; CSV as strings with the header's
    names and ``_corrupt_record`` for rows that do not split into them.
    """
    with reading(loc.label):
        frame = _read(spark, loc)
        frame.schema  # noqa: B018 - resolves the location now, also under Spark Connect
    return frame


def _read(spark: Any, loc: Location) -> Any:
    if loc.table is not None:
        return spark.table(loc.table)
    assert loc.path is not None and loc.format is not None
    reader = _reader(spark, loc, loc.format)
    if loc.format == "parquet":
        return reader.parquet(loc.path)
    if loc.format == "jsonl":
        return reader.text(loc.path).withColumnRenamed("value", LINE)
    from pyspark.sql.types import StringType, StructField, StructType

    # RFC 4180, as DuckDB writes and reads it: a quote inside quotes is doubled.
    reader = reader.option("header", True).option("escape", '"').option("multiLine", True)
    header = reader.csv(loc.path).schema
    schema = StructType([StructField(f.name, StringType()) for f in header.fields]
                        + [StructField(CORRUPT, StringType())])
    return (reader.schema(schema).option("mode", "PERMISSIVE")
            .option("columnNameOfCorruptRecord", CORRUPT).csv(loc.path))
