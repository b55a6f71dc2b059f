"""Telemetry windows holding planted security incidents, re-encoded; an oracle; checkers.

The verdict fuzz (issue 25, item 7, second suite). A *window* is a folder of telemetry
files in one format (JSONL, CSV or Parquet) holding many experiments: most have one
*incident* row — a row with a security flag true — written in a random re-encoding
(the key given twice in either order, an escaped key name, a value of another type,
the row moved into another file, compressed, …); a few have none (the control).

The **oracle** reads the files' raw bytes with plain Python (``json`` with every key
pair kept, ``csv``, ``gzip``, ``pyarrow``) and knows nothing of tooldisc's readers: a
row *may carry an incident* unless every security flag is present exactly once with a
clean false (JSON ``false`` or ``0``, CSV ``false``/``0``, a Parquet boolean false or
integer 0); it *belongs* to the experiment it names when ``experiment`` is given once as
a non-empty string, else to every experiment of the window. The property: for every
experiment whose window holds a row that may carry an incident, the engine shows a
security flag true or unknown for it (so the security gate fails or is not judged:
never PROMOTE); for every other experiment, none.

Re-encodings that make a file bad input (a hidden file name, a column named twice) are
checked apart: the reader must refuse the window, naming that file.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import random
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SECURITY = ("unauthorized_candidate", "tenant_leak", "permission_violation")
COLUMNS = (
    "schema_version", "ts", "experiment", "percent", "arm", "bucket", "channel", "mode", "mutation",
    "candidate_count", "final_tool_count", "k", "index_hit", "fallback", "fallback_reason",
    "discovery_miss", "schema_miss", "retrieval_miss", "authorization_failure",
    "unauthorized_candidate", "tenant_leak", "permission_violation", "tool_execution_success",
    "task_success", "latency_ms", "schema_tokens", "kill_switch", "event_id",
)
FORMATS = ("jsonl", "csv", "parquet")
# content re-encodings of the incident row, per format
CONTENT = {
    "jsonl": ("plain", "dup", "escaped", "flag_value", "flag_absent", "experiment_value",
              "experiment_absent", "dup_experiment", "field_value"),
    "csv": ("plain", "quoted", "flag_text", "experiment_empty", "field_text"),
    "parquet": ("plain", "flag_type", "experiment_type", "field_type", "null_column"),
}
PLACEMENT = {
    "jsonl": ("main", "moved", "gz", "zst"),
    "csv": ("main", "moved", "gz", "zst"),
    "parquet": ("main", "moved"),
}
REFUSAL = {"jsonl": ("hidden",), "csv": ("hidden", "dup_header"), "parquet": ("hidden", "dup_column")}
# re-encodings that make the experiment unreadable: the row then counts for every
# experiment of its window, so they are drawn less often (each still checks them all)
TAINT = {"experiment_value", "experiment_absent", "dup_experiment", "experiment_empty",
         "experiment_type"}
ALL = "*"  # a row that belongs to every experiment of its window


@dataclass(frozen=True)
class Case:
    """One experiment of a window: its incident's re-encoding (``content`` None: no incident)."""

    experiment: str
    content: str | None
    placement: str
    flag: str
    seed: int


@dataclass
class Window:
    root: Path
    fmt: str
    cases: list[Case]
    # bytes the oracle reads for files it cannot decompress itself (zstd: no stdlib codec)
    plain: dict[Path, bytes] = field(default_factory=dict)


def cases_for(fmt: str, seeds: Iterable[int], clean_every: int = 8,
              cover_all: bool = False) -> list[Case]:
    """One case per seed; every ``clean_every``-th has no incident. ``cover_all``: the
    first incident cases take every (content, placement) of the format in turn."""
    out = []
    combos = [(c, p) for c in CONTENT[fmt] for p in PLACEMENT[fmt]] if cover_all else []
    weights = [0.2 if c in TAINT else 1.0 for c in CONTENT[fmt]]
    for i, seed in enumerate(seeds):
        rng = random.Random(seed)
        name = f"x{i:05d}"
        if i % clean_every == clean_every - 1:
            out.append(Case(name, None, "main", rng.choice(SECURITY), seed))
            continue
        if combos:
            content, placement = combos.pop(0)
        else:
            content, placement = rng.choices(CONTENT[fmt], weights)[0], rng.choice(PLACEMENT[fmt])
        if content in ("flag_absent", "experiment_absent"):
            placement = "main"  # a file must name every column; other rows of main do
        out.append(Case(name, content, placement, rng.choice(SECURITY), seed))
    return out


# -- rows -----------------------------------------------------------------------------

def clean_row(rng: random.Random, experiment: str, arm: str, minute: int) -> dict[str, Any]:
    """A valid schema-2 row without an incident (both arms alike, so a window of them
    PROMOTEs under lenient gates)."""
    return {
        "schema_version": 2, "ts": f"2025-01-01T{minute // 60 % 24:02d}:{minute % 60:02d}:00Z",
        "experiment": experiment, "percent": 50, "arm": arm, "bucket": rng.randrange(10_000),
        "channel": "api", "mode": "supervised", "mutation": "read", "candidate_count": 20,
        "final_tool_count": 5, "k": 5, "index_hit": True, "fallback": False, "fallback_reason": None,
        "discovery_miss": False, "schema_miss": False, "retrieval_miss": False,
        "authorization_failure": False, "unauthorized_candidate": False, "tenant_leak": False,
        "permission_violation": False, "tool_execution_success": True, "task_success": True,
        "latency_ms": 10.5, "schema_tokens": 100, "kill_switch": False,
        "event_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
    }


def _escape(key: str, rng: random.Random) -> str:
    """``key`` as a JSON string literal with some characters written ``\\uXXXX``."""
    out = []
    for ch in key:
        if rng.random() < 0.35:
            out.append(f"\\u{ord(ch):04{'x' if rng.random() < 0.5 else 'X'}}")
        else:
            out.append(ch)
    if out == list(key):
        out[0] = f"\\u{ord(key[0]):04x}"
    return '"' + "".join(out) + '"'


OTHER_TYPES: tuple[Any, ...] = ("x", 7, 1.5, True, None, [1], {"v": 1})
FLAG_VALUES: tuple[Any, ...] = (True, 1, 1.0, "true", "TRUE", " 1 ", "1", "yes", [True], {"v": True},
                                None, 2, 0.5, "", "false ", [])


def jsonl_line(case: Case, row: dict[str, Any]) -> str:
    """The incident row re-encoded as one JSONL line (pairs written by hand, so keys can
    repeat and be escaped)."""
    rng = random.Random(case.seed * 7 + 1)
    pairs: list[tuple[str, Any]] = [(k, v) for k, v in row.items()]
    flag = case.flag
    kind = case.content

    def put(key: str, value: Any) -> None:
        i = next(i for i, (k, _) in enumerate(pairs) if k == key)
        pairs[i] = (key, value)

    put(flag, True)
    if kind == "dup":
        copies = [True] + [rng.choice([False, False, 0, True]) for _ in range(rng.randint(1, 2))]
        rng.shuffle(copies)
        i = next(i for i, (k, _) in enumerate(pairs) if k == flag)
        pairs[i] = (flag, copies[0])
        for v in copies[1:]:
            pairs.insert(rng.randint(0, len(pairs)), (flag, v))
    elif kind == "flag_value":
        put(flag, rng.choice(FLAG_VALUES))
    elif kind == "flag_absent":
        pairs = [(k, v) for k, v in pairs if k != flag]
    elif kind == "experiment_value":
        put("experiment", rng.choice([[row["experiment"]], {"name": row["experiment"]}, 5, True,
                                      None, ""]))
    elif kind == "experiment_absent":
        pairs = [(k, v) for k, v in pairs if k != "experiment"]
    elif kind == "dup_experiment":
        pairs.insert(rng.randint(0, len(pairs)),
                     ("experiment", rng.choice([row["experiment"], "another"])))
    elif kind == "field_value":
        target = rng.choice([c for c in COLUMNS if c not in SECURITY and c != "experiment"])
        current = row[target]
        put(target, rng.choice([v for v in OTHER_TYPES if type(v) is not type(current)]))
        if rng.random() < 0.3:  # and a harmless key given twice
            other = rng.choice([c for c in COLUMNS if c not in SECURITY])
            pairs.insert(rng.randint(0, len(pairs)), (other, row[other]))
    if rng.random() < 0.5:
        rng.shuffle(pairs)

    def key(k: str) -> str:
        if k == flag and kind == "escaped":
            return _escape(k, rng)
        if k == flag and kind == "dup":
            return _escape(k, rng) if rng.random() < 0.5 else json.dumps(k)
        return _escape(k, rng) if rng.random() < 0.03 else json.dumps(k)

    return "{" + ", ".join(f"{key(k)}: {json.dumps(v)}" for k, v in pairs) + "}"


CSV_FLAG_TEXT = ("1", "TRUE", "True", " true ", "yes", "[true]", "", "1.0", "t", "on")
CSV_BAD_TEXT = ("x", "[1]", "", "1.5.2", "-")


def csv_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def csv_incident(case: Case, row: dict[str, Any]) -> tuple[dict[str, str], bool]:
    """The incident row's CSV cells, and whether to quote every field."""
    rng = random.Random(case.seed * 7 + 2)
    cells = {k: csv_text(v) for k, v in row.items()}
    cells[case.flag] = rng.choice(["true", "1", "TRUE", "True"])
    if case.content == "flag_text":
        cells[case.flag] = rng.choice(CSV_FLAG_TEXT)
    elif case.content == "experiment_empty":
        cells["experiment"] = ""
    elif case.content == "field_text":
        target = rng.choice([c for c in COLUMNS if c not in SECURITY and c != "experiment"])
        cells[target] = rng.choice(CSV_BAD_TEXT)
    return cells, case.content == "quoted" or rng.random() < 0.2


# -- writing a window -----------------------------------------------------------------

def write_window(root: Path, fmt: str, cases: list[Case], rows_per_arm: int = 1,
                 seed: int = 0) -> Window:
    """Write ``cases`` as one window under ``root`` (a fresh folder)."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    window = Window(root, fmt, cases)
    clean: list[dict[str, Any]] = []
    for case in cases:
        for i in range(rows_per_arm * 2):
            clean.append(clean_row(rng, case.experiment, ("control", "experiment")[i % 2], i))
    incidents = [(c, {**clean_row(rng, c.experiment, rng.choice(("control", "experiment")), 7)})
                 for c in cases if c.content is not None]
    if fmt == "jsonl":
        _write_jsonl(window, clean, incidents, rng)
    elif fmt == "csv":
        _write_csv(window, clean, incidents, rng)
    else:
        _write_parquet(window, clean, incidents, rng)
    return window


def _placed(case: Case, fmt: str, rng: random.Random) -> str:
    ext = {"jsonl": "jsonl", "csv": "csv", "parquet": "parquet"}[fmt]
    return {"main": f"main.{ext}", "moved": f"sub/day={case.seed % 2}/part.{ext}",
            "gz": f"part.{ext}.gz", "zst": f"deep/part.{ext}.zst"}[case.placement]


def _store(window: Window, rel: str, data: bytes) -> None:
    path = window.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if rel.endswith(".gz"):
        path.write_bytes(gzip.compress(data, mtime=0))
    elif rel.endswith(".zst"):
        import duckdb

        window.plain[path] = data
        con = duckdb.connect()
        try:
            lines = data.decode("utf-8").split("\n")
            lines = lines[:-1] if lines and lines[-1] == "" else lines
            con.execute("CREATE TABLE t (i BIGINT, line VARCHAR)")
            con.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(lines)))
            con.execute(f"COPY (SELECT line FROM t ORDER BY i) TO '{path}' (FORMAT csv, HEADER false, "
                        "QUOTE '', ESCAPE '', DELIMITER '\x1e', COMPRESSION zstd)")
        finally:
            con.close()
    else:
        path.write_bytes(data)


def _write_jsonl(window: Window, clean: list[dict], incidents: list[tuple[Case, dict]],
                 rng: random.Random) -> None:
    files: dict[str, list[str]] = {"main.jsonl": [json.dumps(r) for r in clean]}
    for case, row in incidents:
        files.setdefault(_placed(case, "jsonl", rng), []).append(jsonl_line(case, row))
    for rel, lines in files.items():
        if rel == "main.jsonl":
            rng.shuffle(lines)
        _store(window, rel, ("\n".join(lines) + "\n").encode())


def _write_csv(window: Window, clean: list[dict], incidents: list[tuple[Case, dict]],
               rng: random.Random) -> None:
    files: dict[str, list[tuple[dict[str, str], bool]]] = {
        "main.csv": [({k: csv_text(v) for k, v in r.items()}, False) for r in clean]}
    for case, row in incidents:
        files.setdefault(_placed(case, "csv", rng), []).append(csv_incident(case, row))
    for rel, rows in files.items():
        header = list(COLUMNS)
        rng.shuffle(header)
        out = io.StringIO()
        end = "\r\n" if rng.random() < 0.3 else "\n"
        csv.writer(out, lineterminator=end).writerow(header)
        for cells, quote_all in rows:
            csv.writer(out, lineterminator=end,
                       quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL).writerow(
                [cells[h] for h in header])
        _store(window, rel, out.getvalue().encode())


PARQUET_TYPES = {"schema_version": "int64", "ts": "string", "experiment": "string", "percent": "float64",
                 "arm": "string", "bucket": "int64", "channel": "string", "mode": "string",
                 "mutation": "string", "candidate_count": "int64", "final_tool_count": "int64",
                 "k": "int64", "fallback_reason": "string", "latency_ms": "float64",
                 "schema_tokens": "int64", "event_id": "string"}


def _arrow_type(name: str) -> Any:
    import pyarrow as pa

    return {"int64": pa.int64(), "float64": pa.float64(), "string": pa.string(),
            "bool": pa.bool_()}[PARQUET_TYPES.get(name, "bool")]


def _table(rows: list[dict[str, Any]], override: Mapping[str, tuple[Any, list[Any]]] | None = None) -> Any:
    """Rows as an Arrow table of the schema's types; ``override``: column → (type, values)."""
    import pyarrow as pa

    override = override or {}
    arrays, names = [], []
    for c in COLUMNS:
        typ, values = override.get(c, (_arrow_type(c), [r[c] for r in rows]))
        arrays.append(pa.array(values, type=typ))
        names.append(c)
    return pa.Table.from_arrays(arrays, names=names)


def parquet_incident(case: Case, row: dict[str, Any]) -> tuple[dict[str, tuple[Any, list[Any]]], bool]:
    """The column overrides of an incident row's own file (empty: the shared file's types),
    and whether it needs a file of its own."""
    import pyarrow as pa

    rng = random.Random(case.seed * 7 + 3)
    kind = case.content
    if kind == "flag_type":
        typ, value = rng.choice([(pa.int64(), 1), (pa.float64(), 1.0), (pa.string(), "true"),
                                 (pa.string(), "yes"), (pa.list_(pa.bool_()), [True]),
                                 (pa.null(), None), (pa.int32(), 1), (pa.string(), "1")])
        return {case.flag: (typ, [value])}, True
    if kind == "experiment_type":
        typ, value = rng.choice([(pa.int64(), 5), (pa.list_(pa.string()), [row["experiment"]]),
                                 (pa.null(), None), (pa.binary(), b"x")])
        return {"experiment": (typ, [value])}, True
    if kind == "field_type":
        target = rng.choice([c for c in COLUMNS if c not in SECURITY and c != "experiment"])
        current = PARQUET_TYPES.get(target, "bool")
        # one other type per column (a file per column and type: few files)
        other = {"string": (pa.int64(), 3), "int64": (pa.string(), "3"),
                 "float64": (pa.list_(pa.int64()), [1]), "bool": (pa.float64(), 2.5)}[current]
        return {target: (other[0], [other[1]])}, True
    if kind == "null_column":
        return {"fallback_reason": (pa.null(), [None])}, True
    return {}, False


def _write_parquet(window: Window, clean: list[dict], incidents: list[tuple[Case, dict]],
                   rng: random.Random) -> None:
    import pyarrow.parquet as pq

    shared: dict[str, list[dict]] = {"main.parquet": list(clean)}
    # rows whose columns take other types: one file per (place, column types)
    typed: dict[tuple[str, tuple[tuple[str, str], ...]], list[tuple[dict, dict]]] = {}
    for case, row in incidents:
        row = {**row, case.flag: True}
        override, alone = parquet_incident(case, row)
        rel = _placed(case, "parquet", rng)
        if alone:  # the column types are per file: one file per column and type
            rel = f"typed/{'moved/' if case.placement == 'moved' else ''}t.parquet"
            key = (rel, tuple(sorted((c, str(t)) for c, (t, _) in override.items())))
            typed.setdefault(key, []).append((row, override))
        else:
            shared.setdefault(rel, []).append(row)
    for rel, rows in shared.items():
        (window.root / rel).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(_table(rows), window.root / rel)
    for n, ((rel, _), members) in enumerate(sorted(typed.items(), key=lambda kv: repr(kv[0]))):
        first = members[0][1]
        override = {c: (t, [o[c][1][0] for _, o in members]) for c, (t, _) in first.items()}
        path = window.root / rel.replace(".parquet", f"-{n}.parquet")
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(_table([r for r, _ in members], override), path)


def add_refusal(window: Window, kind: str, case: Case, n: int) -> Path:
    """Write one more file, holding ``case``'s incident row, that makes the window bad
    input (``hidden``: a hidden name; ``dup_header``/``dup_column``: a column named twice,
    letter case varying). Returns it."""
    rng = random.Random(case.seed * 11 + n)
    row = {**clean_row(rng, case.experiment, "experiment", 3), case.flag: True}
    ext = window.fmt
    if kind == "hidden":
        rel = rng.choice([f".part-{n}.{ext}", f"_part-{n}.{ext}", f"sub/.hide-{n}/part.{ext}",
                          f"_tmp-{n}/part.{ext}"])
    else:
        rel = f"dup-{n}.{ext}"
    path = window.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "hidden" and ext == "jsonl":
        path.write_text(json.dumps(row) + "\n")
    elif ext == "csv":
        header = list(COLUMNS)
        cells = [csv_text(row[h]) for h in header]
        if kind == "dup_header":
            at = rng.randrange(len(header) + 1)
            header.insert(at, rng.choice([case.flag, case.flag.upper(), case.flag.title()]))
            cells.insert(at, "false")
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows([header, cells])
        path.write_text(out.getvalue())
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = _table([row])
        if kind == "dup_column":
            name = rng.choice([case.flag, case.flag.upper(), case.flag.title()])
            table = table.append_column(pa.field(name, pa.bool_()), pa.array([False]))
        pq.write_table(table, path)
    return path


# -- the oracle -------------------------------------------------------------------------

@dataclass(frozen=True)
class OracleRow:
    experiments: str | tuple[str, ...]  # ALL, or the one experiment the row names
    may_carry: bool


def _clean_false_json(value: Any) -> bool:
    return value is False or (type(value) is int and value == 0)


def _json_rows(text: str) -> list[OracleRow]:
    out = []
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            pairs = json.loads(line, object_pairs_hook=lambda p: ("obj", p))
        except ValueError:
            out.append(OracleRow(ALL, True))
            continue
        if not (isinstance(pairs, tuple) and pairs[0] == "obj"):
            out.append(OracleRow(ALL, True))
            continue
        items = pairs[1]
        names = [v for k, v in items if k == "experiment"]
        belongs = (names[0],) if len(names) == 1 and isinstance(names[0], str) and names[0] else ALL
        clean = all(
            [v for k, v in items if k == f] and all(_clean_false_json(v) for k, v in items if k == f)
            for f in SECURITY)
        out.append(OracleRow(belongs, not clean))
    return out


def _csv_rows(text: str) -> list[OracleRow]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader)
    out = []
    for cells in reader:
        if not cells:
            continue
        if len(cells) != len(header):
            out.append(OracleRow(ALL, True))
            continue
        row = dict(zip(header, cells, strict=True))
        name = row.get("experiment", "")
        clean = all(row.get(f, "").strip().lower() in ("false", "0") for f in SECURITY)
        out.append(OracleRow((name,) if name else ALL, not clean))
    return out


def _parquet_rows(path: Path) -> list[OracleRow]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    cols = {name: table.column(i) for i, name in enumerate(table.column_names)}
    out = []
    for i in range(table.num_rows):
        exp = cols["experiment"]
        name = exp[i].as_py() if pa.types.is_string(exp.type) else None
        clean = True
        for f in SECURITY:
            col = cols[f]
            value = col[i].as_py()
            ok = (pa.types.is_boolean(col.type) and value is False) or (
                pa.types.is_integer(col.type) and value == 0)
            clean &= bool(ok)
        out.append(OracleRow((name,) if name else ALL, not clean))
    return out


def oracle(window: Window) -> dict[str, int]:
    """For each experiment of the window: how many of its rows may carry a security
    incident (its own, and every row that names no one experiment). Read from the
    files' bytes, in plain Python."""
    rows: list[OracleRow] = []
    for path in sorted(p for p in window.root.rglob("*") if p.is_file()):
        name = path.name
        if name.endswith(".zst"):
            data = window.plain[path]
        elif name.endswith(".gz"):
            data = gzip.decompress(path.read_bytes())
        else:
            data = path.read_bytes()
        if ".jsonl" in name:
            rows += _json_rows(data.decode("utf-8"))
        elif ".csv" in name:
            rows += _csv_rows(data.decode("utf-8"))
        else:
            rows += _parquet_rows(path)
    experiments = {c.experiment for c in window.cases}
    out = dict.fromkeys(sorted(experiments), 0)
    for r in rows:
        if not r.may_carry:
            continue
        for e in (experiments if r.experiments == ALL else set(r.experiments) & experiments):
            out[e] += 1
    return out


# -- checking an engine ---------------------------------------------------------------------

def security_sql(view: str, planted: str, dialect: Any, attribution: str) -> str:
    """Per planted experiment (column ``name`` of ``planted``): rows of ``view`` that count
    for it (the engine's own attribution predicate) whose security flags read true, and
    those — quarantined — whose flags are unknown: the two numbers the security gate reads
    (the aggregate's own measure conditions, rendered by the engine's dialect)."""
    from tooldisc.canary.aggregate import QUARANTINE_MEASURES

    cond = {m.name: dialect.render(m.where) for m in QUARANTINE_MEASURES}
    return (f"SELECT p.name, count_if({cond['q_security']}) AS t, "
            f"count_if(_reason IS NOT NULL AND {cond['q_security_unknown']}) AS u "
            f"FROM {planted} p LEFT JOIN {view} r ON {attribution} GROUP BY p.name")


def duckdb_security(window: Window) -> dict[str, tuple[int, int]]:
    """(rows whose security flags read true, quarantined rows whose flags are unknown) per
    experiment, from the DuckDB reader every command uses (``open_rows``)."""
    from tooldisc.canary.duckdb.engine import attribution
    from tooldisc.canary.duckdb.ingest import connect, open_rows
    from tooldisc.canary.events import EVENT_SCHEMA
    from tooldisc.canary.sql import DUCKDB

    con = connect()
    try:
        open_rows(con, str(window.root), EVENT_SCHEMA)
        con.execute("CREATE TEMP TABLE planted (name VARCHAR)")
        con.executemany("INSERT INTO planted VALUES (?)", [[c.experiment] for c in window.cases])
        rows = con.execute(security_sql("rows_all", "planted", DUCKDB, attribution("p.name"))).fetchall()
    finally:
        con.close()
    return {name: (int(t), int(u)) for name, t, u in rows}


def violations(window: Window, seen: Mapping[str, tuple[int, int]]) -> list[str]:
    """Where an engine's reading breaks the property, against the oracle: each experiment
    must see exactly the rows that may carry an incident for it, as true or unknown — one
    fewer is an incident read as none (a possible PROMOTE), one more a clean row misread."""
    bad = []
    for experiment, holds in oracle(window).items():
        t, u = seen.get(experiment, (0, 0))
        if t + u != holds:
            case = next(c for c in window.cases if c.experiment == experiment)
            bad.append(f"{experiment} (incident: {case.content}, {case.placement}, {case.flag}): "
                       f"{holds} row(s) may carry an incident, the engine reads {t} true and {u} unknown")
    return bad


def lenient_gates(path: Path) -> Path:
    """Gates under which an experiment of 120 clean rows per arm PROMOTEs, and the
    quarantine threshold tolerates 90% (so only the security gate can stop an incident)."""
    path.write_text(
        "min_requests_per_arm: 5\nmax_quarantine_share: 0.9\nsample_ratio_alpha: 0.000001\n"
        "latency_quantile: 0.5\nsegments: []\nmargins:\n"
        "  task_success: {absolute: 0.9}\n  tool_execution_success: {absolute: 0.9}\n"
        "  discovery_miss: {absolute: 0.9}\n  fallback: {absolute: 0.9}\n"
        "  latency: {absolute: 50000}\n")
    return path


class ForkedCli:
    """``tooldisc ARGV`` in forked processes (tests/cli/corpus_server.py: the CLI imported
    once, each command a process of its own, as the shell would run it)."""

    def __init__(self) -> None:
        import subprocess
        import sys

        from tests.conftest import ROOT

        self._proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "cli" / "corpus_server.py")],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)

    def run(self, argv: list[str], tmp: Path) -> tuple[int | None, str, str]:
        out, err = tmp / "stdout.txt", tmp / "stderr.txt"
        request = {"argv": argv, "stdout": str(out), "stderr": str(err), "cwd": str(tmp),
                   "timeout": 120.0, "address_space": 4 << 30, "umask": None}
        assert self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        reply = json.loads(self._proc.stdout.readline())
        assert not reply["timed_out"] and reply["signal"] is None, reply
        return reply["exit"], out.read_text(), err.read_text()

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)


def environ_ci() -> bool:
    return os.environ.get("CI") == "true"
