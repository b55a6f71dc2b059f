from __future__ import annotations

import json
from importlib import resources

from tooldisc.agent.tokens import FEATURES, char_features, default_token_model, estimate_tokens


def test_shipped_model_is_calibrated_with_measured_error():
    data = json.loads(resources.files("tooldisc.agent").joinpath("data/token_model.json").read_text("utf-8"))
    assert data["encoding"] == "o200k_base"
    assert set(data["coefficients"]) == set(FEATURES)
    err = data["error"]["o200k_base"]
    assert err["per_schema"]["n"] > 20
    # The documented accuracy: held-out schemas within 10% on average, offers within 5%.
    assert err["per_schema"]["mean_abs_pct"] < 10
    assert err["per_offer_k15"]["mean_abs_pct"] < 5


def test_char_classes():
    f = char_features('{"a": 12} فاکتور x')
    assert f["latin_chars"] == 2 and f["latin_words"] == 2
    assert f["digits"] == 2 and f["arabic_chars"] == 6 and f["arabic_words"] == 1
    assert f["punct"] == 5 and f["space"] == 3 and f["other"] == 0


def test_estimates_are_monotone_and_script_aware():
    assert estimate_tokens("") == 0
    assert estimate_tokens("a") >= 1
    short, long = "list invoices", "list invoices " * 20
    assert estimate_tokens(long) > estimate_tokens(short)
    # Persian packs fewer characters per token than English in o200k.
    fa = "فهرست فاکتورهای فروش را نشان بده"
    en = "show the sales invoice list now!"
    assert len(fa) == len(en)
    assert estimate_tokens(fa) > estimate_tokens(en)


def test_estimate_json_is_deterministic():
    m = default_token_model()
    body = {"name": "x", "parameters": {"type": "object"}}
    assert m.estimate_json(body) == m.estimate_json(dict(body))
