"""TREC interchange: qrels (primary = 2, acceptable = 1), topics, and runs with real scores.

Exporting to TREC lets trec_eval, pytrec_eval or ir_measures re-check tooldisc's
numbers, and reading qrels + topics back lets a TREC collection be evaluated as a gold
set. A run carries discovery's own scores, written with ``SCORE_DECIMALS`` decimals
and made strictly decreasing within a query: a score that is not below the one before
(a tie, or a difference lost to rounding) is nudged down to one ``TIE_STEP`` under it.
trec_eval sorts by score and breaks ties its own way (by document name, descending),
so without the nudge it could reorder a run tooldisc ordered by score desc, then name.

Which qrels grade each measure counts as relevant is part of the measure
(``Measure.IR_MEASURES``): hit, recall and MRR take grade 2 (primary) only, P takes
grade 1 and up, nDCG uses the grades as gains.

**TREC-safe names.** A TREC line is whitespace-separated fields, so a tool or query id
holding a space (Seal-Tools has ``requestFirst Aid Assistance``) cannot be written as
is. Every TREC file tooldisc writes or reads (run, qrels, topics) uses one reversible
rule: whitespace, control characters and ``%`` are percent-encoded as the ``%XX`` of
their UTF-8 bytes (``requestFirst%20Aid%20Assistance``, ``50%25``); every other
character, any script, is written as it is. Reading decodes every ``%XX`` run, so the
rule round-trips exactly, and trec_eval or ir_measures, which compare the fields as
opaque strings, score encoded qrels against an encoded run exactly as tooldisc scores
the names themselves.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tooldisc.errors import DataError
from tooldisc.gold.model import GoldQuery, GoldSet

if TYPE_CHECKING:
    from tooldisc.metrics.judgment import Judgment

PRIMARY, ACCEPTABLE = 2, 1
SCORE_DECIMALS = 6
TIE_STEP = 10.0 ** -SCORE_DECIMALS  # one unit in the last written decimal
TREC_NOTE = ("TREC qrels + topics: grade >= 2 is primary, 1 acceptable; they carry no intent, history or "
             "forbidden tools, so every query counts as intent read and forbidden@K counts any offered tool "
             "that is not read-only")
BINARY_NOTE = "the qrels are binary (no grade above 1): grade 1 counts as primary"


_ENCODED = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _unsafe(ch: str) -> bool:
    """Whitespace (what splits a TREC line), control characters and the escape character itself."""
    return ch == "%" or ch.isspace() or unicodedata.category(ch) == "Cc"


def encode_name(name: str) -> str:
    """A name as a TREC field: whitespace, control characters and ``%`` become ``%XX`` (UTF-8 bytes).

    ``decode_name(encode_name(s)) == s`` for every string; a name without those
    characters is written unchanged.
    """
    if not any(_unsafe(ch) for ch in name):
        return name
    return "".join("".join(f"%{b:02X}" for b in ch.encode("utf-8")) if _unsafe(ch) else ch for ch in name)


def decode_name(field: str) -> str:
    """A TREC field back to the name: each run of ``%XX`` is decoded as UTF-8.

    A ``%`` not followed by two hex digits is kept as it is (a name written by another
    tool); ``%XX`` bytes that are not UTF-8 are a :class:`DataError`.
    """
    if "%" not in field:
        return field

    def bytes_of(m: re.Match[str]) -> str:
        raw = bytes.fromhex(m.group().replace("%", ""))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise DataError(f"{field!r}: the percent-encoded bytes {m.group()} are not UTF-8") from None

    return _ENCODED.sub(bytes_of, field)


def _token(value: str, what: str, source: str | None) -> str:
    """``value`` as one TREC field (percent-encoded); an empty one cannot be written."""
    if not value:
        raise DataError(f"{what} {value!r} cannot be written to a TREC file (empty)", file=source)
    return encode_name(value)


def qrels_dict(gold: GoldSet) -> dict[str, dict[str, int]]:
    """``{qid: {tool: grade}}`` as pytrec_eval takes it; primary wins over acceptable."""
    return {q.id: {**dict.fromkeys(q.acceptable_tools, ACCEPTABLE), **dict.fromkeys(q.primary_expected_tools, PRIMARY)}
            for q in gold.queries}


def qrels_text(gold: GoldSet) -> str:
    """``qid 0 tool grade`` lines, queries in file order, primary tools first, each sorted."""
    lines = []
    for q in gold.queries:
        qid = _token(q.id, "query id", gold.source)
        primary = sorted(set(q.primary_expected_tools))
        acceptable = sorted(set(q.acceptable_tools) - set(primary))
        for tool, grade in [*((t, PRIMARY) for t in primary), *((t, ACCEPTABLE) for t in acceptable)]:
            lines.append(f"{qid} 0 {_token(tool, 'tool name', gold.source)} {grade}\n")
    return "".join(lines)


def write_qrels(gold: GoldSet, path: str | Path) -> None:
    Path(path).write_text(qrels_text(gold), encoding="utf-8")


def read_qrels(path: str | Path) -> dict[str, Judgment]:
    """Qrels → judgments: grade >= 2 primary, 1 acceptable, <= 0 judged not relevant.

    A query with no primary tool is a no-match query; intent is read (qrels carry none).
    """
    from tooldisc.metrics.judgment import Judgment

    out: dict[str, Judgment] = {}
    for qid, tools in read_grades(path).items():
        primary = frozenset(t for t, g in tools.items() if g >= PRIMARY)
        acceptable = frozenset(t for t, g in tools.items() if g == ACCEPTABLE)
        out[qid] = Judgment(qid, primary, acceptable, no_match=not primary)
    return out


def read_grades(path: str | Path) -> dict[str, dict[str, int]]:
    """``{qid: {tool: grade}}`` from a qrels file, queries and tools in file order."""
    source = str(path)
    grades: dict[str, dict[str, int]] = {}
    for lineno, line in enumerate(_read(path).splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise DataError(f"a qrels line needs 4 fields (qid iter tool grade); got {len(parts)}",
                            file=source, where=f"line {lineno}")
        qid, _, tool, grade = parts
        try:
            g = int(grade)
        except ValueError:
            raise DataError(f"grade must be an integer; got {grade!r}", file=source, where=f"line {lineno}") from None
        qid, tool = _decoded(qid, source, lineno), _decoded(tool, source, lineno)
        grades.setdefault(qid, {})[tool] = g
    return grades


def _one_line(text: str) -> str:
    """A topic is one line: tabs and line breaks become spaces (tokenising treats them alike)."""
    return " ".join(text.replace("\t", " ").splitlines())


def topics_text(gold: GoldSet) -> str:
    """``qid<TAB>query`` lines, no header, in file order: the query text a qrels file judges."""
    return "".join(f"{_token(q.id, 'query id', gold.source)}\t{_one_line(q.query)}\n" for q in gold.queries)


# The first column of a header line, as spreadsheets and other tools write one (compared in lower case).
HEADER_IDS = frozenset({"qid", "query_id", "queryid", "id", "topic", "topic_id", "topicid", "num", "number"})


def read_topics(path: str | Path) -> dict[str, str]:
    """A topics file (``qid<TAB>text`` per line, no header) → ``{qid: text}`` in file order.

    A first line whose id is a column name (``qid``, ``query_id``, ``id``, ``topic``,
    ``num``…; :data:`HEADER_IDS`) is a header, and refused: read as a query it would be
    scored as one (a no-match query named ``qid``).
    """
    from tooldisc.limits import check_query

    source = str(path)
    topics: dict[str, str] = {}
    for lineno, line in enumerate(_read(path).splitlines(), 1):
        if not line.strip():
            continue
        qid, tab, text = line.partition("\t")
        where = f"line {lineno}"
        if not tab:
            raise DataError("a topics line needs a query id, a tab, then the query text", file=source, where=where)
        qid, text = qid.strip(), text.strip()
        if not topics and qid.lower().lstrip("#") in HEADER_IDS:
            raise DataError(f"this looks like a header ({qid!r}): a topics file has no header line, "
                            "only 'qid<TAB>text' lines; remove it", file=source, where=where)
        check_query(text, f"query {qid!r}", error=DataError, file=source, where=where)
        if not qid or any(ch.isspace() for ch in qid):
            raise DataError(f"query id {qid!r} is empty or holds whitespace", file=source, where=where)
        qid = _decoded(qid, source, lineno)
        if not text:
            raise DataError(f"query {qid!r} has an empty text", file=source, where=where)
        if qid in topics:
            raise DataError(f"query id {qid!r} appears twice", file=source, where=where)
        topics[qid] = text
    if not topics:
        raise DataError("no topics: expected one 'qid<TAB>text' line per query", file=source)
    return topics


def load_trec_gold(qrels: str | Path, topics: str | Path) -> GoldSet:
    """A gold set from TREC qrels and a topics file; queries in topics order.

    Grade >= 2 is primary and 1 acceptable; in binary qrels (no grade above 1) grade 1 is
    primary. A topic with no relevant tool is a no-match query. Qrels carry no intent,
    history or forbidden tools: every matched query is intent read (the notes say so).
    A judged query the topics lack, or a topic with acceptable tools but no primary
    one, is an error: neither can be scored as the file meant.
    """
    grades = read_grades(qrels)
    texts = read_topics(topics)
    missing = [q for q in grades if q not in texts]
    if missing:
        raise DataError(f"qrels judge query {missing[0]!r}, which the topics file {str(topics)!r} lacks",
                        file=str(qrels))
    binary = max((g for tools in grades.values() for g in tools.values()), default=0) <= ACCEPTABLE
    top = ACCEPTABLE if binary else PRIMARY
    queries = []
    for qid, text in texts.items():
        tools = grades.get(qid, {})
        primary = tuple(t for t, g in tools.items() if g >= top)
        acceptable = tuple(t for t, g in tools.items() if g == ACCEPTABLE and not binary)
        if acceptable and not primary:
            raise DataError(f"query {qid!r} has acceptable (grade 1) tools but no primary (grade 2) one",
                            file=str(qrels))
        queries.append(GoldQuery(qid, text, primary, acceptable, intent="read" if primary else "none",
                                 no_match=not primary, source="trec"))
    notes = (TREC_NOTE, BINARY_NOTE) if binary else (TREC_NOTE,)
    return GoldSet(tuple(queries), source=str(qrels), notes=notes)


def trec_scores(scores: Sequence[float]) -> list[int]:
    """Scores as written, in units of ``TIE_STEP``: rounded, then strictly decreasing.

    Integer units keep the nudge exact: a score not below its predecessor becomes the
    predecessor minus one unit, so the written order is the given order.
    """
    out: list[int] = []
    for s in scores:
        value = float(s)
        if not math.isfinite(value):
            raise DataError(f"a run score must be a finite number; got {value!r}")
        units = round(value * 10 ** SCORE_DECIMALS)
        if out and units >= out[-1]:
            units = out[-1] - 1
        out.append(units)
    return out


def _scores(run: Mapping[str, Sequence[str]], scores: Mapping[str, Sequence[float]] | None,
            qid: str) -> list[int]:
    ranking = run[qid]
    if scores is None:  # no scores: the rank itself, n down to 1
        return [(len(ranking) - i) * 10 ** SCORE_DECIMALS for i in range(len(ranking))]
    given = scores.get(qid, ())
    if len(given) != len(ranking):
        raise DataError(f"query {qid!r} has {len(ranking)} tools but {len(given)} scores")
    return trec_scores(given)


def run_dict(run: Mapping[str, Sequence[str]],
             scores: Mapping[str, Sequence[float]] | None = None) -> dict[str, dict[str, float]]:
    """``{qid: {tool: score}}`` for pytrec_eval and ir_measures: the scores :func:`run_text` writes."""
    unit = 10 ** SCORE_DECIMALS
    return {qid: {t: u / unit for t, u in zip(r, _scores(run, scores, qid), strict=True)} for qid, r in run.items()}


def run_text(run: Mapping[str, Sequence[str]], tag: str = "tooldisc", *,
             scores: Mapping[str, Sequence[float]] | None = None) -> str:
    """``qid Q0 tool rank score tag`` lines, scores strictly decreasing within each query.

    ``scores`` (query id → one score per ranked tool) are discovery's; without them the
    score is the rank counted down (n, n−1, … 1). A query with an empty offer has no line.
    Query ids and tool names are percent-encoded (:func:`encode_name`); the tag is
    tooldisc's own word and must hold no whitespace.
    """
    if not tag or any(_unsafe(ch) for ch in tag):
        raise DataError(f"run tag {tag!r} cannot be written to a TREC file (empty, or holds whitespace, "
                        "a control character or '%')")
    unit = 10 ** SCORE_DECIMALS
    lines = []
    for qid, ranking in run.items():
        field = _token(qid, "query id", None)
        for i, (tool, units) in enumerate(zip(ranking, _scores(run, scores, qid), strict=True)):
            lines.append(f"{field} Q0 {_token(tool, 'tool name', None)} {i + 1} {units / unit:.{SCORE_DECIMALS}f} {tag}\n")
    return "".join(lines)


def write_run(run: Mapping[str, Sequence[str]], path: str | Path, tag: str = "tooldisc", *,
              scores: Mapping[str, Sequence[float]] | None = None) -> None:
    Path(path).write_text(run_text(run, tag, scores=scores), encoding="utf-8")


def read_run(path: str | Path) -> dict[str, tuple[str, ...]]:
    """A TREC run → ``{qid: ranked tools}``, ordered by score desc, then tool name."""
    return {qid: tuple(t for t, _ in ranked) for qid, ranked in read_scored_run(path).items()}


def read_scored_run(path: str | Path) -> dict[str, tuple[tuple[str, float], ...]]:
    """A TREC run → ``{qid: ((tool, score), …)}``, best first: score desc, then tool name.

    The rank column is ignored, as trec_eval ignores it: the score orders a run. Names
    are decoded (:func:`decode_name`); a score that is not a finite number, a line
    without 6 fields or a tool listed twice for one query is a :class:`DataError`.
    """
    source = str(path)
    scored: dict[str, dict[str, float]] = {}
    for lineno, line in enumerate(_read(path).splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise DataError(f"a run line needs 6 fields (qid Q0 tool rank score tag); got {len(parts)}",
                            file=source, where=f"line {lineno}")
        qid, _, tool, _, score, _ = parts
        try:
            value = float(score)
        except ValueError:
            raise DataError(f"score must be a number; got {score!r}", file=source, where=f"line {lineno}") from None
        if not math.isfinite(value):
            raise DataError(f"score must be a finite number; got {score!r}", file=source, where=f"line {lineno}")
        qid, tool = _decoded(qid, source, lineno), _decoded(tool, source, lineno)
        if tool in scored.setdefault(qid, {}):
            raise DataError(f"tool {tool!r} appears twice for query {qid!r}", file=source, where=f"line {lineno}")
        scored[qid][tool] = value
    return {qid: tuple(sorted(s.items(), key=lambda ts: (-ts[1], ts[0]))) for qid, s in scored.items()}


def _decoded(field: str, source: str, lineno: int) -> str:
    try:
        return decode_name(field)
    except DataError as exc:
        raise DataError(exc.message, file=source, where=f"line {lineno}") from None


MAX_BYTES = 1 << 28
"""A qrels, topics or run file is read up to this size, as a catalog is (256 MiB: a run of 100 tools for each
of 50,000 queries is a tenth of it); the bound keeps a pipe or a device that never ends from filling the
memory."""


def _read(path: str | Path) -> str:
    from tooldisc.documents import read_at_most

    try:
        raw = read_at_most(path, MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise DataError(f"over the limit of {MAX_BYTES} bytes", file=str(path))
        return raw.decode("utf-8")
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text (byte {exc.start})", file=str(path)) from None
