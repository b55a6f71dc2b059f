"""A topics file's header line is refused, not read as a query; a topic is capped like every request."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooldisc.errors import DataError
from tooldisc.gold.trec import HEADER_IDS, read_topics
from tooldisc.limits import MAX_QUERY_CHARS


@pytest.mark.parametrize("first", ["qid\tquery", "query_id\ttext", "ID\tQuery", "topic\ttitle", "#qid\tquery",
                                   "num\ttitle"])
def test_a_header_line_is_refused(tmp_path: Path, first: str) -> None:
    topics = tmp_path / "topics.tsv"
    topics.write_text(f"\n{first}\nq1\tlist the invoices\n", encoding="utf-8")
    with pytest.raises(DataError, match="looks like a header") as info:
        read_topics(topics)
    assert "line 2" in info.value.one_line() and str(topics) in info.value.one_line()


def test_a_header_word_later_on_is_an_ordinary_id(tmp_path: Path) -> None:
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tlist the invoices\nid\ta query whose id is 'id'\n", encoding="utf-8")
    assert read_topics(topics) == {"q1": "list the invoices", "id": "a query whose id is 'id'"}
    assert {"qid", "query_id", "id", "topic", "num"} <= HEADER_IDS


def test_an_over_long_topic_is_refused(tmp_path: Path) -> None:
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tlist the invoices\nq2\t" + "x" * (MAX_QUERY_CHARS + 1) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="10,001 characters long") as info:
        read_topics(topics)
    assert "line 2" in info.value.one_line()
