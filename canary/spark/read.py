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
import os
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tooldisc.canary.duckdb.ingest import (
    FORMATS,
    check_unique_columns,
    csv_header,
    display_name,
    file_format,
    hive_values,
    locate_files,
    parquet_columns,
    parquet_schema_key,
)
from tooldisc.errors import DataError, UsageError
from tooldisc.params import Options, checked

SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}")
SUFFIXES = {fmt: tuple(s.lstrip(".") for s, f in FORMATS.items() if f == fmt)
            for fmt in sorted(set(FORMATS.values()))}
CORRUPT = "_corrupt_record"
LINE = "_line"


@dataclass(frozen=True)
class Location:
    """What to read: ``path`` (with its ``format``) or a catalog ``table``.

    For a local path, ``files`` are every file it names (read whole: see
    :func:`tooldisc.canary.duckdb.ingest.locate_files`) and ``root`` the folder they are named
    relative to; Spark is handed exactly these files, so it reads what DuckDB reads
    (Hadoop's own listing would skip names starting with ``.`` or ``_``)."""

    path: str | None
    format: str | None
    table: str | None = None
    root: str | None = None
    files: tuple[str, ...] = ()
    # local files in the groups Spark reads one at a time: by the hive keys on their
    # paths (Spark's own discovery refuses folders of mixed depth, and stops at the first
    # folder that is not key=value, where DuckDB reads every key=value folder); Parquet by
    # schema (a file whose column is Arrow ``null`` typed, beside one where it is a
    # string, fails as one read); CSV by header (Spark reads every file of one read by the
    # first file's header, by position: columns in another order would be misread)
    parts: tuple[tuple[str, ...], ...] = ()

    @property
    def label(self) -> str:
        return self.table if self.table is not None else str(self.path)


def is_remote(path: str) -> bool:
    """``s3a://…``, ``hdfs://…``, ``file://…``: Spark resolves these, not Python."""
    return bool(SCHEME.match(path))


def _suffix_format(name: str) -> str | None:
    return FORMATS.get(posixpath.splitext(name.rstrip("/"))[1].lower())


def locate(path: str | None, table: str | None, fmt: str | None = None) -> Location:
    """Check a path or table name before any engine starts, and settle the format."""
    if (path is None) == (table is None):
        raise UsageError("give exactly one of --events or --table")
    if fmt is not None:
        checked(Options(tuple(SUFFIXES)), fmt, "--events-format", UsageError)
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
    try:
        root, files = locate_files(path)
    except DataError as exc:
        if "no telemetry file matches" in str(exc):
            raise DataError("no file matches (or it cannot be read)", file=path) from exc
        raise
    kinds = {file_format(f) for f in files}
    if len(kinds) != 1:
        raise DataError(f"mixed formats ({', '.join(sorted(kinds))}); Spark reads one format "
                        "per location", file=path)
    found = kinds.pop()
    if fmt is not None and fmt != found:
        raise UsageError(f"--events-format {fmt} does not match the files ({found})")
    parts = _inspect(files, found)
    return Location(path=path, format=found, root=root, files=tuple(files), parts=parts)


def _inspect(files: list[str], fmt: str) -> tuple[tuple[str, ...], ...]:
    """A local Parquet or CSV file naming a column twice is refused before Spark starts,
    as DuckDB refuses it (Spark binds names ignoring case, and would fail or pick one).
    The files come back grouped as Spark reads them (:attr:`Location.parts`)."""
    import duckdb

    from tooldisc.canary.duckdb.ingest import connect

    parts: dict[tuple[object, ...], list[str]] = {}
    con = connect() if fmt != "jsonl" else None
    try:
        for f in files:
            key: tuple[object, ...] = tuple(sorted(hive_values(f)))
            if fmt == "parquet":
                try:
                    names = parquet_columns(con, f)
                    key += parquet_schema_key(con, f)
                except duckdb.Error as exc:
                    raise DataError(f"cannot be read as parquet: {' '.join(str(exc).split())[:200]}",
                                    file=f) from exc
                check_unique_columns(names, f, "its schema")
            elif fmt == "csv":
                header = csv_header(con, f)
                check_unique_columns(header, f, "the header", where="line 1")
                # Spark reads every file of one read by the first file's header, by position
                key += tuple(header)
            parts.setdefault(key, []).append(f)
    finally:
        if con is not None:
            con.close()
    return tuple(tuple(p) for p in parts.values())


def hive_keys(loc: Location, names: tuple[str, ...]) -> list[str]:
    """The schema columns that ``key=value`` folders give the files of ``loc`` (a part:
    every file has the same keys); remote locations: none (Spark discovers them)."""
    return sorted({k for f in loc.files for k in hive_values(f)} & set(names))


def hive_sql(key: str, file_column: str) -> str:
    """Spark SQL for the value of hive key ``key`` on a row's file (its innermost
    ``key=value`` folder, as :func:`tooldisc.canary.duckdb.ingest.hive_values` reads it); the file
    is a URI whose path is percent-encoded."""
    pattern = "^.*/" + key + "=([^/]*)/"  # a schema column name: nothing to escape
    return (f"url_decode(replace(regexp_extract({file_column}, '{pattern}', 1), '+', '%2B'))")


def display_names(loc: Location) -> dict[str, str]:
    """Each file of a local location (absolute path) → its name in reports."""
    if loc.root is None:
        return {}
    return {os.path.abspath(f): display_name(loc.root, f) for f in loc.files}


def _error_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    text = re.sub(r"^\[[A-Z_.]+\]\s*", "", text)  # Spark's error class prefix
    return text.split(" SQLSTATE")[0].split(" JVM stacktrace")[0][:160]


def _reader(spark: Any, loc: Location, fmt: str) -> Any:
    reader = spark.read
    assert loc.path is not None
    if loc.files:
        pass  # the listed files; key=value folders are read as DuckDB reads them (hive_sql)
    elif loc.path.endswith("/"):
        # A remote directory: only this format's files, hive partitions from key=value.
        reader = reader.option("pathGlobFilter", "*.{" + ",".join(SUFFIXES[fmt]) + "}")
    return reader


def _paths(loc: Location) -> list[str]:
    """What Spark is asked to read: the listed local files (absolute), or the remote path."""
    assert loc.path is not None
    return [os.path.abspath(f) for f in loc.files] if loc.files else [loc.path]


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
    paths = _paths(loc)
    if loc.format == "parquet":
        return reader.parquet(*paths)
    if loc.format == "jsonl":
        return reader.text(paths).withColumnRenamed("value", LINE)
    from pyspark.sql.types import StringType, StructField, StructType

    # RFC 4180, as DuckDB writes and reads it: a quote inside quotes is doubled. Every file's
    # header is checked against the schema (a remote file whose columns come in another
    # order fails the read instead of being read by position).
    reader = (reader.option("header", True).option("escape", '"').option("multiLine", True)
              .option("enforceSchema", False))
    header = reader.csv(paths).schema
    schema = StructType([StructField(f.name, StringType()) for f in header.fields]
                        + [StructField(CORRUPT, StringType())])
    return (reader.schema(schema).option("mode", "PERMISSIVE")
            .option("columnNameOfCorruptRecord", CORRUPT).csv(paths))
