"""The query's mutation class (DESIGN §4): what it wants done decides which side effects it may see."""

from __future__ import annotations

import pytest

from tooldisc.discovery.mutation import classifier_from_mapping, load_classifier
from tooldisc.errors import ConfigError

CASES = [
    # reads, in both languages
    ("show unpaid invoices", "READ"),
    ("فاکتورهای این ماه را نشان بده", "READ"),
    ("show page 2 of the invoices", "READ"),  # "page" pages someone only at a clause start
    # a negated verb does not count
    ("don't delete anything, just list the invoices", "READ"),
    # compound Persian verbs with a light verb, with and without an object suffix
    ("فاکتور جدید ثبت کن", "WRITE"),
    ("ثبتش کن", "WRITE"),
    ("این فاکتور را حذف کن", "DESTRUCTIVE"),
    ("اتوماسیون را اجرا کن", "EXECUTE"),
    ("خروجی اکسل مشتری‌ها", "EXPORT"),
    # English verbs of data operations
    ("delete invoice 42", "DESTRUCTIVE"),
    ("export the customers to excel", "EXPORT"),
    ("dump the audit log to a file", "EXPORT"),
    ("run the payroll automation", "EXECUTE"),
    ("acknowledge alert 5", "WRITE"),
    ("mute billing alerts for an hour", "WRITE"),
    # operations verbs
    ("deploy checkout-api to production", "EXECUTE"),
    ("restart the search service", "EXECUTE"),
    ("roll back the last release", "EXECUTE"),
    ("page the on-call engineer", "EXECUTE"),
    # priority DESTRUCTIVE > EXECUTE > EXPORT > WRITE > READ
    ("update the customer phone and then delete the old address", "DESTRUCTIVE"),
    ("send me that as a csv", "EXECUTE"),
    # nothing recognised
    ("hello", "UNKNOWN"),
    ("", "UNKNOWN"),
]

# Narrowing (issue 10, item 18): negated clauses, quoted text and how-to / what-is questions
# never widen the class; the rest of the request keeps its own.
NARROWING = [
    ("I don't want to delete, list invoices", "READ"),
    ("I never want to delete. list invoices", "READ"),
    ("show the 'delete' button help", "READ"),
    ('what does "delete_invoice" do?', "READ"),
    ("how do I export customers?", "READ"),
    ("tell me how to delete an invoice", "READ"),
    ("what is export?", "READ"),
    ("نمی‌خوام حذف کنم، فاکتورها رو نشون بده", "READ"),
    ("چطور خروجی اکسل بگیرم؟", "READ"),
    ("چگونه مشتری را حذف کنم؟", "READ"),
    ("«حذف» یعنی چی؟", "READ"),
    ("خروجی اکسل چیست؟", "READ"),
    ("فایل معاملات رو نمی‌خوام، فقط جمع مالیات رو بگو", "READ"),
    # what is left still asks for its own change
    ("delete invoice 5 and don't export it", "DESTRUCTIVE"),
    ("export to excel, do not delete anything", "EXPORT"),
    ("how do I export customers? export them now", "EXPORT"),
    ("remove the 'paid' tag from invoice 3", "DESTRUCTIVE"),
    ("delete all invoices that are not paid", "DESTRUCTIVE"),
    ("can you delete invoice 4?", "DESTRUCTIVE"),
    ("فاکتورهای پرداخت نشده رو حذف کن", "DESTRUCTIVE"),
    ("مشتری «آزمایش ۱» رو حذف کن", "DESTRUCTIVE"),
    ("فاکتور ۷۰۰ رو باطل کن ولی پاکش نکن", "WRITE"),
    ('"delete invoice 5"', "DESTRUCTIVE"),  # a request quoted whole is still the request
    # setting text aside never yields another class: a different verb left over gives READ
    ("export the 'delete' log", "READ"),
    ("I don't want to delete this one, record the payment", "READ"),
]


@pytest.mark.parametrize(("query", "expected"), CASES)
def test_shipped_word_lists(query: str, expected: str) -> None:
    assert load_classifier().classify(query) == expected


@pytest.mark.parametrize(("query", "expected"), NARROWING)
def test_narrowing_never_widens(query: str, expected: str) -> None:
    assert load_classifier().classify(query) == expected


def test_narrowing_only_narrows_and_can_be_turned_off() -> None:
    """Without a narrowing block (an older user word list) the word rules decide alone."""
    from importlib import resources

    import yaml

    data = yaml.safe_load(resources.files("tooldisc.discovery").joinpath("data/mutation.yaml").read_text("utf-8"))
    data.pop("narrowing")
    plain = classifier_from_mapping(data)
    shipped = load_classifier()
    for query, _ in [*CASES, *NARROWING]:
        wide, narrow = plain.classify(query), shipped.classify(query)
        assert narrow in (wide, "READ"), query


def test_discover_offers_no_delete_tool_for_a_negated_delete() -> None:
    import json

    from tests.conftest import invoke_cli

    r = invoke_cli("discover", "I don't want to delete, list invoices", "--format", "json")
    assert r.returncode == 0, r.stderr
    offer = json.loads(r.stdout)
    assert offer["mutation"] == "READ"
    from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog

    tools = load_catalog(default_catalog_path()).by_name
    assert offer["candidates"] and all(tools[c["name"]].side_effect == "none" for c in offer["candidates"])


def test_a_bad_word_list_names_the_file_and_key() -> None:
    with pytest.raises(ConfigError) as err:
        classifier_from_mapping({"classes": {"WRITE": {"phrases": "add"}}}, "mine.yaml")
    assert err.value.file == "mine.yaml" and "classes.WRITE.phrases" in str(err.value.where)


def test_a_bad_narrowing_block_names_its_key() -> None:
    with pytest.raises(ConfigError) as err:
        classifier_from_mapping({"classes": {}, "narrowing": {"breaks": "and"}}, "mine.yaml")
    assert err.value.where == "narrowing.breaks"
