"""Getting telemetry files into DuckDB: find, read, type, validate, keep or quarantine.

Two uses share one reader. ``open_rows`` attaches files as views for a one-off
verdict (``--events GLOB``); ``ingest`` copies them into a DuckDB database, good rows
into ``<table>`` and bad rows with their reason into ``<table>_quarantine``, and
records each file's SHA-256 so that ingesting the same content again adds nothing.
Each ingest also flags the rows whose de-duplication key may repeat
(:func:`mark_duplicates`), so that a verdict over the database need not hash every key.

A file that cannot be read, or lacks a required column, is bad input
(:class:`~tooldisc.errors.DataError` naming the file). A row that does not parse or
validate is never dropped: it is kept with its reason and counted. Only schema
columns are read, so ids or query text in extra columns never enter the database —
not even for a quarantined row, whose ``_raw`` holds the raw text of the schema's
columns only (NULL when the line itself could not be split into columns).
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tooldisc.canary.events import RowSchema
from tooldisc.canary.sql import DUCKDB, sql_literal
from tooldisc.canary.validation import JSON_TAG_PREFIX, JSON_VALUE, SQL_TYPES, ident, typed_select
from tooldisc.errors import DataError

DUP_FLAG = "_dup"  # see mark_duplicates


def candidate_keys(schema: RowSchema) -> tuple[tuple[str, str], ...]:
    """(condition, key) of each de-duplication key: a hash of the id (v2), and a hash
    of every other schema column (v1 rows). Equal keys have equal hashes, so no
    repeated hash means no duplicate; a repeated hash is only a candidate."""
    names = schema.names
    has_id = "event_id" in names
    v1_cond = "event_id IS NULL AND schema_version = 1" if has_id else "schema_version IS NOT NULL"
    v1_hash = f"hash({', '.join(DUCKDB.ident(c) for c in names if c != 'event_id')})"
    keys = [(v1_cond, v1_hash)]
    if has_id:
        keys.insert(0, ("event_id IS NOT NULL", "hash(event_id)"))
    return tuple(keys)


FORMATS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
}


@dataclass(frozen=True)
class SourceFile:
    """One telemetry file attached as a view of typed rows with ``_reason``."""

    path: str
    format: str
    view: str


@dataclass(frozen=True)
class IngestResult:
    """What one ``ingest`` call did; counts only, no row content."""

    files: int
    ingested: int
    skipped_duplicates: int
    rows: int
    quarantined: int
    reasons: dict[str, int] = field(default_factory=dict)


DEFAULT_MEMORY_LIMIT = "2GB"


@dataclass(frozen=True)
class DuckDBLimits:
    """How much memory DuckDB may use before it spills to ``temp_directory``.

    The default bounds a verdict over any number of events to about 2 GB of RAM (DuckDB's
    own default is 80% of the machine): aggregation spills to disk beyond it.
    ``temp_directory`` None: the system temp folder (not the working directory).
    """

    memory_limit: str = DEFAULT_MEMORY_LIMIT
    temp_directory: str | None = None


def connect(path: str | os.PathLike[str] | None = None, limits: DuckDBLimits | None = None) -> Any:
    """A DuckDB connection set up for reproducible, quiet work (UTC, no progress bar),
    bounded in memory (:class:`DuckDBLimits`), with no insertion order to keep (only
    aggregates are read, so DuckDB may stream and spill more freely)."""
    import tempfile

    import duckdb

    from tooldisc.errors import UsageError

    limits = limits or DuckDBLimits()
    con = duckdb.connect(str(path) if path is not None else ":memory:")
    con.execute("SET enable_progress_bar = false")
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET preserve_insertion_order = false")
    try:
        con.execute("SET memory_limit = ?", [limits.memory_limit])
    except duckdb.Error as exc:
        con.close()
        raise UsageError(f"--duckdb-memory-limit must be a size such as 2GB or 512MB; "
                         f"got {limits.memory_limit!r}") from exc
    temp = limits.temp_directory or os.path.join(tempfile.gettempdir(), "tooldisc-duckdb")
    con.execute("SET temp_directory = ?", [temp])
    return con


COMPRESSIONS = (".gz", ".zst")  # compressed JSONL or CSV: both engines decompress these


def hidden(name: str) -> bool:
    """A file or folder name that Spark's (Hadoop's) listing skips: starting with ``.``, or
    with ``_`` unless it is a ``key=value`` folder, or an unfinished ``._COPYING_`` file.
    Such names are refused, never skipped, by both engines (a hidden file may hold the
    one row that matters)."""
    return (name.startswith(".") or (name.startswith("_") and "=" not in name)
            or name.endswith("._COPYING_"))


def _glob_root(pattern: str) -> str:
    """The folder of a glob before its first wildcard (``a/b/*/c.jsonl`` → ``a/b``)."""
    parts = Path(pattern).parts
    fixed = next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))
    return str(Path(*parts[:fixed])) if fixed else "."


def _walk(root: str) -> list[str]:
    """Every entry under ``root``; a folder that cannot be listed is bad input naming it."""
    out: list[str] = []

    def fail(exc: OSError) -> None:
        raise DataError(f"cannot be listed: {exc.strerror or exc}", file=str(exc.filename or root))

    for folder, dirs, names in os.walk(root, onerror=fail, followlinks=False):
        dirs.sort()
        out.extend(os.path.join(folder, n) for n in names)
        # a link to a folder is not walked into (no loops); it is refused like any non-file
        out.extend(os.path.join(folder, d) for d in dirs if os.path.islink(os.path.join(folder, d)))
    return out


def locate_files(pattern: str) -> tuple[str, list[str]]:
    """(root, files) of a file, a directory or a glob (``**`` allowed): read whole or refused.

    Every entry of a directory (recursively) and every match of a glob, hidden names
    included, must be a readable regular file in a known format (compressed with gzip or
    zstd allowed); the first that is not is bad input naming it — nothing is skipped.
    A hidden name (:func:`hidden`) below the root is refused too, since Spark would not
    list it. ``root``: the directory, the glob's fixed prefix, or the file itself.
    Files are sorted, so every engine and every run sees them in one order.
    """
    if os.path.isdir(pattern):
        root, found = pattern, _walk(pattern)
    elif glob.has_magic(pattern):
        root = _glob_root(pattern)
        found = [p for p in glob.glob(pattern, recursive=True, include_hidden=True)
                 if not os.path.isdir(p)]  # a folder a glob names is not one of its files
    else:
        root, found = pattern, ([pattern] if os.path.lexists(pattern) else [])
    if not found:
        raise DataError("no telemetry file matches", file=pattern)
    found.sort()
    for path in found:
        names = Path(os.path.relpath(path, root)).parts if path != root else (Path(path).name,)
        bad = next((n for n in names if hidden(n)), None)
        if bad is not None:
            raise DataError(f"hidden name {bad!r} (starting with '.' or '_'): telemetry is never "
                            "skipped; rename or remove it, or give a glob that does not match it",
                            file=path)
        if not os.path.isfile(path):
            raise DataError("not a regular file (telemetry is never skipped)", file=path)
        file_format(path)
        require_readable(path)
    return root, found


def display_name(root: str, path: str) -> str:
    """A judged file as reports name it: relative to the directory or glob root the user
    gave (one file: its own name), with ``/`` — the same on every machine and run, and
    nothing of the folders above what the user named."""
    if path == root:
        return Path(path).name
    return Path(os.path.relpath(path, root)).as_posix()


def expand(pattern: str) -> list[str]:
    """The files of a file, directory or glob, sorted (:func:`locate_files`)."""
    return locate_files(pattern)[1]


def compression(path: str) -> str | None:
    """``.gz`` or ``.zst`` when the file is compressed (by its last suffix), else None."""
    suffix = Path(path).suffix.lower()
    return suffix if suffix in COMPRESSIONS else None


def file_format(path: str) -> str:
    """The format from the name: ``.jsonl``, ``.csv``, ``.parquet`` (and aliases), JSONL and
    CSV optionally compressed (``events.jsonl.gz``, ``events.csv.zst``)."""
    name = Path(path)
    comp = compression(path)
    suffix = Path(name.stem).suffix.lower() if comp else name.suffix.lower()
    fmt = FORMATS.get(suffix)
    if fmt is None or (comp and fmt == "parquet"):
        given = "".join(name.suffixes[-2:]) if comp else name.suffix
        raise DataError(
            f"unknown telemetry format {given!r}; expected .parquet, .jsonl or .csv "
            f"(JSONL and CSV may end in {' or '.join(COMPRESSIONS)})",
            file=path,
        )
    return fmt


def hive_values(path: str) -> dict[str, str]:
    """``key=value`` directory names on the path (hive partitions), innermost last."""
    out: dict[str, str] = {}
    for part in Path(path).parent.parts:
        if "=" in part:
            key, _, value = part.partition("=")
            if key:
                out[key] = value
    return out


def content_hash(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _check_columns(schema: RowSchema, path: str, present: Sequence[str], hive: dict[str, str]) -> None:
    missing = [c for c in schema.required if c not in present and c not in hive]
    if missing:
        raise DataError(f"lacks required columns: {', '.join(missing)}", file=path)


def attach(con: Any, path: str, schema: RowSchema, idx: int, with_raw: bool = False,
           parquet_types: dict[str, str] | None = None) -> SourceFile:
    """Attach one file as view ``src_<idx>``: typed schema columns, ``_reason``, ``_file``.

    ``parquet_types``: the schema columns' types of a Parquet file that
    :func:`_describe_parquet` has already read and checked (its metadata is not read twice)."""
    import duckdb

    fmt = file_format(path)
    hive = hive_values(path)
    lit = sql_literal(path)
    view = f"src_{idx}"
    try:
        require_readable(path)
        if fmt == "parquet":
            source = f"read_parquet({lit}, hive_types_autocast = false)"
            types = parquet_types
            if types is None:
                check_unique_columns(parquet_columns(con, path), path, "its schema")
                types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM {source})").fetchall())
                _check_columns(schema, path, list(types), hive)
            body = typed_select(schema, source, _only(types, schema), hive, path, with_raw=with_raw,
                                typed=set(types) - set(hive))
        elif fmt == "csv":
            check_unique_columns(csv_header(con, path), path, "the header", where="line 1")
            table = f"csv_{idx}"
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT * FROM read_csv({lit}, "
                f"all_varchar = true, header = true, store_rejects = true, "
                f"rejects_table = 'rej_{idx}', rejects_scan = 'scan_{idx}')"
            )
            types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE {table})").fetchall())
            _check_columns(schema, path, list(types), hive)
            good = typed_select(schema, table, _only(types, schema), hive, path, with_raw=with_raw)
            bad = _null_rows(schema, f"rej_{idx}", "'csv: ' || lower(error_type::VARCHAR)", path,
                             with_raw)
            body = f"{good}\nUNION ALL\n{bad}"
        else:
            def lines(rejects: str) -> str:
                return (f"(SELECT line FROM {_lines(lit, rejects)} "
                        f"WHERE line IS NOT NULL AND trim(line) <> '')")

            # The file is read twice and held once: the keys it names, then each line split
            # into its values, so that every later read (a verdict reads the rows more than
            # once) takes plain columns, not JSON to parse again.
            keys = {
                r[0]
                for r in con.execute(
                    f"SELECT DISTINCT unnest(json_keys(line)) FROM {lines(f'k{idx}')} "
                    f"WHERE json_valid(line) AND json_type(line) = 'OBJECT'"
                ).fetchall()
            }
            _check_columns(schema, path, sorted(keys), hive)
            present = [c for c in schema.names if c in keys]
            con.execute(f"CREATE OR REPLACE TEMP TABLE json_{idx} AS SELECT * FROM "
                        f"{json_rows(lines(str(idx)), present, schema)}")
            body = typed_select(schema, f"json_{idx}", dict.fromkeys(present, JSON_VALUE), hive,
                                path, extra_reason="__bad", with_raw=with_raw)
            bad = _null_rows(schema, f"rej_{idx}", "'json: unparseable line'", path, with_raw)
            body = f"{body}\nUNION ALL\n{bad}"
        con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS {body}")
    except duckdb.Error as exc:
        raise _unreadable(exc, fmt, path) from exc
    return SourceFile(path=path, format=fmt, view=view)


def _lines(lit: str, rejects: str | None = None) -> str:
    """The lines of a (possibly compressed) text file as column ``line``, nothing split."""
    store = (f", store_rejects = true, rejects_table = 'rej_{rejects}', rejects_scan = 'scan_{rejects}'"
             if rejects is not None else "")
    return (f"read_csv({lit}, columns = {{'line': 'VARCHAR'}}, header = false, delim = '\x1e', "
            f"quote = '', escape = '', auto_detect = false{store})")


def json_rows(table: str, present: Sequence[str], schema: RowSchema) -> str:
    """JSONL lines (column ``line`` of the relation ``table``) as one text column and one JSON-type
    column (``__jt_<name>``) per schema key, and ``__bad`` for a line that is not one
    JSON object with distinct keys.

    A line holding a key twice (after unescaping: ``"tenant\\u005fleak"`` is
    ``tenant_leak``) is quarantined as ``json: duplicate key`` and read as exactly one
    thing, whatever the order of the copies: a security flag is true if any copy reads
    true (:meth:`~tooldisc.canary.sql.Dialect.reads_true`), false if every copy is a
    valid false, else unknown (NULL); any other key given twice is unknown — an
    ``experiment`` given twice belongs to no one experiment, so the row counts against
    every one (fail closed). DuckDB alone would read the first copy.
    """
    d = DUCKDB
    paths = ", ".join(sql_literal(f'$."{c}"') for c in present)
    ok = "json_valid(line) AND json_type(line) = 'OBJECT'"
    dup = "len(__k) <> len(list_distinct(__k))"
    security = [c for c in present if c in schema.security]
    # per security key of a line with a repeated key: every copy as (key, text, JSON type)
    copies = [f"CASE WHEN {dup} THEN list_filter(list_zip(__k, json_extract_string(line, '$.*'), "
              f"json_type(line, '$.*')), lambda x: x[1] = {sql_literal(c)}) END AS {ident('__c_' + c)}"
              for c in security]
    split = (f"SELECT CASE WHEN __k IS NOT NULL THEN json_extract_string(line, [{paths}]) END AS __v, "
             f"CASE WHEN __k IS NOT NULL THEN json_type(line, [{paths}]) END AS __t, "
             # the keys given more than once (NULL: none)
             f"CASE WHEN {dup} THEN list_distinct(list_filter(__k, lambda k, i: "
             f"list_position(__k, k) <> i)) END AS __dups, "
             + "".join(f"{c}, " for c in copies) +
             f"CASE WHEN __k IS NULL THEN CASE WHEN NOT json_valid(line) THEN 'json: unparseable line' "
             f"ELSE 'json: line is not an object' END WHEN {dup} THEN 'json: duplicate key' END AS __bad "
             f"FROM (SELECT line, CASE WHEN {ok} THEN json_keys(line) END AS __k FROM {table})")
    cols = []
    for i, name in enumerate(present, start=1):
        if name in schema.security:
            c = ident("__c_" + name)
            strict = d.parse_json(schema.column(name), "x[2]", "x[3]")[0]
            text = (f"CASE WHEN len({c}) = 0 THEN NULL WHEN list_bool_or(list_transform({c}, lambda x: "
                    f"coalesce({d.reads_true('x[2]')}, FALSE))) THEN 'true' "
                    f"WHEN list_bool_and(list_transform({c}, lambda x: coalesce(NOT {strict}, FALSE))) "
                    f"THEN 'false' END")
            cols.append(f"CASE WHEN {c} IS NULL THEN __v[{i}] ELSE {text} END AS {ident(name)}")
            cols.append(f"CASE WHEN {c} IS NULL THEN __t[{i}] ELSE 'BOOLEAN' END AS "
                        f"{ident(JSON_TAG_PREFIX + name)}")
            continue
        single = f"(__dups IS NULL OR NOT list_contains(__dups, {sql_literal(name)}))"
        cols.append(f"CASE WHEN {single} THEN __v[{i}] END AS {ident(name)}")
        cols.append(f"CASE WHEN {single} THEN __t[{i}] END AS {ident(JSON_TAG_PREFIX + name)}")
    return f"(SELECT {', '.join([*cols, '__bad'])} FROM ({split}))"


def parquet_columns(con: Any, path: str) -> list[str]:
    """The top-level column names a Parquet file's own schema gives, in order, repeats
    kept (DuckDB would rename a repeat ``tenant_leak_1``)."""
    rows = con.execute("SELECT name, num_children FROM parquet_schema(?)", [path]).fetchall()
    names: list[str] = []
    pending = [int(rows[0][1] or 0)] if rows else []  # children still to see, per open level
    for name, children in rows[1:]:
        if len(pending) == 1:
            names.append(str(name))
        pending[-1] -= 1
        if children:
            pending.append(int(children))
        while pending and pending[-1] == 0 and len(pending) > 1:
            pending.pop()
    return names


def parquet_schema_key(con: Any, path: str) -> tuple[Any, ...]:
    """A Parquet file's schema (names, physical and logical types, nesting) as one value:
    files with equal keys can be read as one (Spark reads one schema per read)."""
    return tuple(con.execute(
        "SELECT name, type, converted_type, logical_type, repetition_type, num_children, scale, "
        "precision FROM parquet_schema(?)", [path]).fetchall()[1:])


def csv_header(con: Any, path: str) -> list[str]:
    """The names a (possibly compressed) CSV file's first line gives, repeats kept."""
    import csv

    import duckdb

    try:
        row = con.execute(f"SELECT line FROM {_lines(sql_literal(path))} LIMIT 1").fetchone()
    except duckdb.Error:
        return []  # the full read reports what is wrong with the file
    return next(csv.reader([row[0] or ""]), []) if row else []


def check_unique_columns(names: Sequence[str], path: str, what: str,
                         where: str | None = None) -> None:
    """A file naming a column twice is bad input. Letter case is ignored, as both engines
    ignore it when they bind a column name: DuckDB keeps the first ``tenant_leak`` and
    renames the second (``tenant_leak=true``) away."""
    seen: dict[str, str] = {}
    for name in names:
        key = name.strip().casefold()
        if key in seen:
            also = "" if seen[key] == name.strip() else f" (as {seen[key]!r} and {name.strip()!r})"
            raise DataError(f"{what} names column {seen[key]!r} twice{also}", file=path, where=where)
        seen[key] = name.strip()


def require_readable(path: str) -> None:
    """A file this process may not read is bad input naming it (before any engine tries and fails obscurely)."""
    if not os.access(path, os.R_OK):
        raise DataError("cannot be read (permission denied)", file=path)


def _unreadable(exc: Exception, what: str, path: str) -> DataError:
    """A DuckDB read error as one line naming the file (its first 300 characters, whitespace folded)."""
    first = " ".join(str(exc).split())[:300]
    return DataError(f"cannot be read as {what}: {first}", file=path)


def _only(types: dict[str, str], schema: RowSchema) -> dict[str, str]:
    return {k: v for k, v in types.items() if k in schema.names}


def _null_rows(schema: RowSchema, table: str, reason: str, path: str, with_raw: bool) -> str:
    """Lines the reader rejected: every column NULL, and no raw text (it would carry
    whatever columns the line held, ids included)."""
    cols = ", ".join(f"{DUCKDB.null(c.kind)} AS {ident(c.name)}" for c in schema.columns)
    raw = ", NULL::VARCHAR AS _raw" if with_raw else ""
    return f"SELECT {cols}, {reason} AS _reason, {sql_literal(path)} AS _file{raw} FROM {table}"


def open_rows(con: Any, pattern: str, schema: RowSchema,
              on_file: Callable[[str], None] | None = None,
              files: Sequence[str] | None = None) -> list[SourceFile]:
    """Attach every file matching ``pattern``; view ``rows_all`` unions them.

    Each file is checked on its own (readable, required columns, named in any error),
    but Parquet files whose schema columns have the same types are then read through
    ONE ``read_parquet([...])`` scan: DuckDB holds buffers per scan, so a union of 100
    per-file scans ran out of a 2 GB limit at 100M rows where one scan needs ~300 MB.
    ``files``: the files of ``pattern`` when the caller has listed them already.
    """
    files = list(files) if files is not None else expand(pattern)
    sources: list[SourceFile] = []
    groups: dict[tuple[Any, ...], list[tuple[str, dict[str, str]]]] = {}
    for i, path in enumerate(files):
        if file_format(path) != "parquet":
            sources.append(attach(con, path, schema, i))
        else:
            types, values = _describe_parquet(con, path, schema)
            if values is None:  # read on its own, with the types just described
                sources.append(attach(con, path, schema, i, parquet_types=types))
            else:
                groups.setdefault((tuple(types.items()), tuple(values)), []).append((path, values))
        if on_file:
            on_file(path)
    for g, ((types_key, _), members) in enumerate(groups.items()):
        if len(members) == 1:
            sources.append(attach(con, members[0][0], schema, len(files) + g,
                                  parquet_types=dict(types_key)))
        else:
            sources.append(_attach_parquet_group(con, schema, dict(types_key), members, f"pq_{g}"))
    union = "\nUNION ALL BY NAME\n".join(f"SELECT * FROM {s.view}" for s in sources)
    con.execute(f"CREATE OR REPLACE TEMP VIEW rows_all AS {union}")
    return sources


_FILE_COLUMN = "__tooldisc_file"


def _describe_parquet(con: Any, path: str,
                      schema: RowSchema) -> tuple[dict[str, str], dict[str, str] | None]:
    """A Parquet file checked as :func:`attach` checks it (metadata only): its schema
    columns' types as that file alone is read, and the raw value of each schema column
    that only its hive folders supply — None instead: read it on its own (a hive key that
    is also a column in the file, or a column hive supplies that DuckDB does not)."""
    import duckdb

    hive = hive_values(path)
    lit = sql_literal(path)
    try:
        require_readable(path)
        check_unique_columns(parquet_columns(con, path), path, "its schema")
        types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "
                                 f"read_parquet({lit}, hive_types_autocast = false))").fetchall())
        own = {r[0] for r in con.execute(f"SELECT column_name FROM (DESCRIBE SELECT * FROM "
                                          f"read_parquet({lit}, hive_partitioning = false))").fetchall()}
    except duckdb.Error as exc:
        raise _unreadable(exc, "parquet", path) from exc
    _check_columns(schema, path, list(types), hive)
    types = _only(types, schema)
    from_hive = {c: hive[c] for c in types if c not in own and c in hive}
    if own & set(hive) or any(c not in own and c not in hive for c in types) \
            or any(c in hive and c not in types for c in schema.names):
        return types, None
    return types, from_hive


def _attach_parquet_group(con: Any, schema: RowSchema, types: dict[str, str],
                          members: list[tuple[str, dict[str, str]]], view: str) -> SourceFile:
    """Parquet files with the same schema-column types as one scan and one view.

    Each row's file comes from the reader's file-name column. A schema column that hive
    folders supply is that file's folder value as text (as DuckDB reads it alone, with
    ``hive_types_autocast`` off), so the rows are typed and judged exactly as one view per
    file would judge them.
    """
    import duckdb

    paths = [p for p, _ in members]
    cols = []
    for c, t in types.items():
        if c not in members[0][1]:
            cols.append(ident(c))
            continue
        values = {h[c] for _, h in members}
        if len(values) == 1:
            cols.append(f"CAST({sql_literal(values.pop())} AS {t}) AS {ident(c)}")
        else:
            whens = " ".join(f"WHEN {sql_literal(p)} THEN {sql_literal(h[c])}" for p, h in members)
            cols.append(f"CAST(CASE {ident(_FILE_COLUMN)} {whens} END AS {t}) AS {ident(c)}")
    cols.append(ident(_FILE_COLUMN))
    source = (f"(SELECT {', '.join(cols)} FROM read_parquet([{', '.join(map(sql_literal, paths))}], "
              f"filename = {sql_literal(_FILE_COLUMN)}, hive_partitioning = false))")
    body = typed_select(schema, source, types, file_column=_FILE_COLUMN,
                        typed=set(types) - set(members[0][1]))
    try:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS {body}")
    except duckdb.Error as exc:
        raise _unreadable(exc, f"parquet ({len(paths)} files of one schema)", paths[0]) from exc
    return SourceFile(path=paths[0], format="parquet", view=view)


def _ensure_tables(con: Any, schema: RowSchema) -> None:
    cols = ", ".join(f"{ident(c.name)} {SQL_TYPES[c.kind]}" for c in schema.columns)
    con.execute(f"CREATE TABLE IF NOT EXISTS {schema.table} ({cols}, _file VARCHAR, {DUP_FLAG} BOOLEAN)")
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {schema.table}_quarantine "
        f"({cols}, _reason VARCHAR, _file VARCHAR, _raw VARCHAR, {DUP_FLAG} BOOLEAN)"
    )
    # a database made before a column was added (event_id in v2, the duplicate flag)
    added = [(ident(c.name), SQL_TYPES[c.kind]) for c in schema.columns if c.optional]
    for table in (schema.table, f"{schema.table}_quarantine"):
        for name, kind in (*added, (DUP_FLAG, "BOOLEAN")):
            con.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {name} {kind}")
    con.execute(
        "CREATE TABLE IF NOT EXISTS ingested_files (content_sha256 VARCHAR, row_schema VARCHAR, "
        "path VARCHAR, format VARCHAR, rows BIGINT, quarantined BIGINT, "
        "PRIMARY KEY (content_sha256, row_schema))"
    )
    # the name a verdict lists (display_name); NULL in a database ingested before it
    con.execute("ALTER TABLE ingested_files ADD COLUMN IF NOT EXISTS name VARCHAR")


def mark_duplicates(con: Any, schema: RowSchema) -> None:
    """Set the ``_dup`` flag of every row whose flag is not set, and of older rows that
    newer ones repeat, so that a verdict over the database need not hash every key.

    ``_dup`` TRUE: the row's de-duplication key (engine contract §2: its ``event_id``,
    or for a v1 row all its columns) has the same 64-bit hash as another row's, in
    either table — a candidate, which the verdict compares exactly. FALSE: no other row
    in the database shares it (or the row has no key). NULL: not known (rows written
    by an older version, or by hand); a verdict over a window holding such a row
    checks every key itself, because an unflagged row may repeat a row flagged FALSE.
    Only this package's ingest sets flags, inside the transaction that adds the rows.
    The flags are facts about the rows, not hashes, so they survive a DuckDB upgrade.
    """
    key = "CASE " + " ".join(f"WHEN {c} THEN {k}" for c, k in candidate_keys(schema)) + " END"
    tables = (schema.table, f"{schema.table}_quarantine")
    keys = " UNION ALL ".join(f"SELECT {key} AS __k, {DUP_FLAG} IS NULL AS __new FROM {t}"
                              for t in tables)
    counts = con.execute("SELECT sum(n), sum(t) FROM (" + " UNION ALL ".join(
        f"SELECT count(*) FILTER (WHERE {DUP_FLAG} IS NULL) AS n, count(*) AS t FROM {t}"
        for t in tables) + ")").fetchone()
    new, total = int(counts[0] or 0), int(counts[1] or 0)
    if not new:
        return
    # the keys of unflagged rows that occur more than once among all rows
    if 2 * new >= total:  # mostly new rows (a first ingest): one aggregation of every key
        con.execute(f"CREATE OR REPLACE TEMP TABLE __repeated AS SELECT __k FROM ({keys}) "
                    f"WHERE __k IS NOT NULL GROUP BY __k HAVING count(*) > 1 AND bool_or(__new)")
    else:  # a few new rows: every row is hashed, but only the new keys are held in memory
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE __repeated AS SELECT __k FROM ({keys}) "
            f"WHERE __k IN (SELECT __k FROM ({keys}) WHERE __new) GROUP BY __k HAVING count(*) > 1")
    repeated = con.execute("SELECT count(*) FROM __repeated").fetchone()[0]
    for t in tables:
        if not repeated:
            con.execute(f"UPDATE {t} SET {DUP_FLAG} = FALSE WHERE {DUP_FLAG} IS NULL")
            continue
        hit = f"({key}) IN (SELECT __k FROM __repeated)"
        con.execute(f"UPDATE {t} SET {DUP_FLAG} = coalesce({hit}, FALSE) WHERE {DUP_FLAG} IS NULL")
        con.execute(f"UPDATE {t} SET {DUP_FLAG} = TRUE WHERE NOT {DUP_FLAG} AND {hit}")
    con.execute("DROP TABLE __repeated")


DEFAULT_LOCK_TIMEOUT = 30.0


def connect_waiting(db: str | os.PathLike[str], lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> Any:
    """A read-write connection to ``db``, waiting up to ``lock_timeout`` seconds while
    another process holds it (DuckDB lets one process write a database file at a time).

    Still locked after that, or not a DuckDB database: bad input naming the file, in one
    line. Nothing has been written then, by construction: the ingest writes only inside
    one transaction of a connection it holds.
    """
    import time

    import duckdb

    deadline = time.monotonic() + lock_timeout
    pause = 0.05
    while True:
        try:
            return connect(db)
        except duckdb.Error as exc:
            text = " ".join(str(exc).split())
            if "lock" not in text.lower():
                raise DataError(f"cannot be opened as DuckDB: {text[:200]}", file=str(db)) from exc
            left = deadline - time.monotonic()
            if left <= 0:
                raise DataError(f"in use by another process; still locked after waiting "
                                f"{lock_timeout:g} s (--lock-timeout)", file=str(db)) from exc
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.5)


def ingest(db: str | os.PathLike[str], pattern: str, schema: RowSchema,
           on_file: Callable[[str], None] | None = None,
           lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> IngestResult:
    """Copy matching files into ``db``; a file whose content was ingested before is skipped.

    All files are read and checked before anything is written, so one bad file leaves
    the database untouched. Another process writing ``db`` is waited for up to
    ``lock_timeout`` seconds (:func:`connect_waiting`).
    """
    root, files = locate_files(pattern)
    con = connect_waiting(db, lock_timeout)
    try:
        _ensure_tables(con, schema)
        seen = {r[0] for r in con.execute(
            "SELECT content_sha256 FROM ingested_files WHERE row_schema = ?", [schema.name]).fetchall()}
        todo: list[tuple[str, str, SourceFile]] = []
        skipped = 0
        for i, path in enumerate(files):
            digest = content_hash(path)
            if digest in seen:
                skipped += 1
                continue
            seen.add(digest)
            todo.append((path, digest, attach(con, path, schema, i, with_raw=True)))
        names = ", ".join(ident(c) for c in schema.names)
        rows = quarantined = 0
        reasons: dict[str, int] = {}
        con.execute("BEGIN TRANSACTION")
        try:
            for path, digest, src in todo:
                # One validating read puts the good rows in the table; only when the file
                # has more rows than that (counting them validates nothing) does a second
                # read set the bad ones aside, with raw text built for them alone.
                good = con.execute(
                    f"INSERT INTO {schema.table} ({names}, _file) SELECT {names}, _file "
                    f"FROM {src.view} WHERE _reason IS NULL").fetchone()[0]
                bad = 0
                if con.execute(f"SELECT count(*) FROM {src.view}").fetchone()[0] > good:
                    con.execute(
                        f"CREATE OR REPLACE TEMP TABLE __bad AS SELECT {names}, _reason, _file, _raw "
                        f"FROM {src.view} WHERE _reason IS NOT NULL")
                    for reason, n in con.execute(
                            "SELECT _reason, count(*) FROM __bad GROUP BY _reason").fetchall():
                        reasons[reason] = reasons.get(reason, 0) + n
                    bad = con.execute(
                        f"INSERT INTO {schema.table}_quarantine ({names}, _reason, _file, _raw) "
                        f"SELECT {names}, _reason, _file, _raw FROM __bad").fetchone()[0]
                    con.execute("DROP TABLE __bad")
                con.execute("INSERT INTO ingested_files (content_sha256, row_schema, path, format, "
                            "rows, quarantined, name) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [digest, schema.name, path, src.format, good, bad,
                             display_name(root, path)])
                rows += good
                quarantined += bad
                if on_file:
                    on_file(path)
            mark_duplicates(con, schema)
            con.execute("COMMIT")
        except BaseException as exc:
            import duckdb

            with contextlib.suppress(duckdb.Error):  # a COMMIT that failed has ended the transaction itself
                con.execute("ROLLBACK")
            if isinstance(exc, duckdb.Error):  # a full disk, a file-size limit: one line, not DuckDB's traceback
                text = " ".join(str(exc).split())
                raise DataError(f"nothing was ingested (rolled back): {text[:200]}", file=str(db)) from exc
            raise
    finally:
        con.close()
    return IngestResult(files=len(files), ingested=len(todo), skipped_duplicates=skipped,
                        rows=rows, quarantined=quarantined, reasons=dict(sorted(reasons.items())))
