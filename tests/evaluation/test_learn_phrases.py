"""Expansions keep only what several distinct requests share, with personal-looking text scrubbed."""

from __future__ import annotations

from tooldisc.discovery.indexes.expansion import expansion_texts
from tooldisc.evaluation.learn.phrases import phrases, scrub, shared_phrases


def test_scrub_cuts_emails_urls_quotes_numbers_and_ids() -> None:
    runs = scrub('Send invoice 4521 to ali.rezaei@example.com via https://x.io/a?b=1 saying "pay now" ref rOBhSVKGVKe')
    flat = [t for r in runs for t in r]
    for leaked in ("4521", "ali", "example", "https", "pay", "now", "robhsvkgvke"):
        assert leaked not in flat
    assert ["send", "invoice"] in runs


def test_phrases_never_start_or_end_with_a_stop_word_nor_cross_a_cut() -> None:
    found = phrases("show the unpaid invoices of 2024 for customer")
    assert "unpaid invoices" in found and "show the unpaid" in found
    assert "the unpaid" not in found and "invoices of" not in found
    assert not any("2024" in p for p in found)
    assert "invoices of customer" not in found  # the number is a cut


def _req(text: str, *tools: str) -> tuple[str, set[str], tuple[str, ...]]:
    return text, phrases(text), tools


def test_a_phrase_is_kept_only_when_k_distinct_requests_share_it() -> None:
    reqs = [
        _req("list unpaid invoices", "list_invoices"),
        _req("List unpaid invoices!", "list_invoices"),  # same tokens: counts once
        _req("unpaid invoices this month", "list_invoices"),
        _req("which invoices are unpaid", "list_invoices"),
        _req("my secret phrase zebra", "list_invoices"),
    ]
    kept = dict(shared_phrases(reqs, min_requests=3, max_phrases=10)["list_invoices"])
    assert kept.get("invoices") == 3 and kept.get("unpaid") == 3
    assert "zebra" not in kept and "secret phrase" not in kept
    assert all(c >= 3 for c in kept.values())
    assert shared_phrases(reqs, min_requests=4, max_phrases=10) == {}


def test_cap_and_texts_are_deterministic() -> None:
    reqs = [_req(f"export customer ledger report {w}", "export_ledger") for w in ("alpha", "beta", "gamma", "delta")]
    a = shared_phrases(reqs, 3, 2)
    assert a == shared_phrases(list(reversed(reqs)), 3, 2)
    assert len(a["export_ledger"]) == 2
    text = expansion_texts(a)["export_ledger"]
    phrase, count = a["export_ledger"][0]
    assert text.count(phrase) >= 2 == int(count ** 0.5)


def test_k_anonymity_counts_requests_distinct_after_scrubbing() -> None:
    """One user's request sent six times with only a number or an e-mail address changed is one
    request: what scrubbing cuts is exactly what differs, so none of its phrases is stored."""
    numbers = [_req(f"refund order {n} for the zanzibar flamingo account", "refund") for n in range(1001, 1007)]
    mails = [_req(f"send the quokka ledger to {who}@example.com today", "send") for who in "abcdef"]
    ids = [_req(f"open ticket {tid} about marmalade", "ticket")
           for tid in ("rOBhSVKGVKe", "pQWnXZKLtTr", "aBCdeFGhij", "xYZabcDEF", "mNOpqRSt", "uVWxyZAB")]
    assert shared_phrases([*numbers, *mails, *ids], min_requests=3, max_phrases=10) == {}
    # the same requests with their words changed too are distinct, and the shared words are kept
    varied = [_req(f"refund order {n} for the {w} account", "refund")
              for n, w in zip(range(1001, 1007), ("north", "south", "east", "west", "main", "old"), strict=True)]
    assert dict(shared_phrases(varied, 3, 10)["refund"]).get("refund order") == 6


def test_scrubbed_is_what_distinctness_compares() -> None:
    from tooldisc.evaluation.learn.phrases import scrubbed

    assert scrubbed("Pay invoice 12 now!") == scrubbed("pay invoice 13 now") == (("pay", "invoice"), ("now",))
    assert scrubbed("mail a@b.io the list") == scrubbed("mail c@d.org the list")
    assert scrubbed("pay invoice now") != scrubbed("pay invoice 12 now")  # the cut itself is kept


def test_learn_refuses_an_over_long_example_from_python_too() -> None:
    """Files are checked as they load; examples built in Python meet the same cap in learn()."""
    import pytest

    from tooldisc.discovery.catalog import catalog_from_tools
    from tooldisc.discovery.model import Tool
    from tooldisc.errors import UsageError
    from tooldisc.evaluation.learn import learn
    from tooldisc.evaluation.learn.data import Example
    from tooldisc.limits import MAX_QUERY_CHARS

    catalog = catalog_from_tools([Tool(name="t", description="list invoices", side_effect="none")])
    long = Example("x" * (MAX_QUERY_CHARS + 1), ("t",))
    with pytest.raises(UsageError, match=r"examples\[1\]\.query is 10,001 characters long"):
        learn(catalog, [Example("list invoices", ("t",)), long])
