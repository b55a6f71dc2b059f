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


@pytest.mark.parametrize(("query", "expected"), CASES)
def test_shipped_word_lists(query: str, expected: str) -> None:
    assert load_classifier().classify(query) == expected


def test_a_bad_word_list_names_the_file_and_key() -> None:
    with pytest.raises(ConfigError) as err:
        classifier_from_mapping({"classes": {"WRITE": {"phrases": "add"}}}, "mine.yaml")
    assert err.value.file == "mine.yaml" and "classes.WRITE.phrases" in str(err.value.where)
