"""The tune report: per-fold train vs held-out scores and the weights chosen on all data.

Built from ``tune_document`` (what ``tooldisc tune --format json`` prints); the
held-out column is the honest figure, so it sits beside the training one in every row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooldisc.reports.blocks import Lines, Report, numeric, table


def _score(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"


def tune_report(doc: Mapping[str, Any]) -> Report:
    """What was searched, each fold's chosen candidate scored on its held-out fold, the chosen weights."""
    sets = "; ".join(f"{d['catalog']} ({d['tools']} tools) + {d['gold']} ({d['queries']} queries)"
                     for d in doc["datasets"])
    lines = Lines((f"objective {doc['objective']} at k={doc['k']}, mean over {len(doc['datasets'])} dataset(s): {sets}",
                   f"{doc['folds']} folds, seed {doc['seed']}, {doc['candidates']} candidates "
                   f"(the base config and {doc['n_iter']} random draws)"))
    folds = [[f["fold"], f["n_train"], f["n_heldout"], f"#{f['chosen']}", _score(f["train"]), _score(f["heldout"])]
             for f in doc["per_fold"]]
    folds.append(["mean", "", "", "", _score(doc["train"]), _score(doc["heldout"])])
    base, chosen = doc["base"], doc["chosen"]
    weights = [[key, f"{base['params'][key]:g}", f"{chosen['params'][key]:g}"] for key in sorted(chosen["params"])]
    weights.append(["all-data score", _score(base["all_data"]), _score(chosen["all_data"])])
    return Report("tooldisc tune", (
        lines,
        table(["fold", "train queries", "held-out queries", "chosen", "train", "held-out"], folds,
              "per fold: best candidate on the training folds, scored on the held-out fold", align=numeric(0, 6)),
        table(["key", "base", "chosen"], weights, f"chosen on all data: candidate #{chosen['index']}",
              align=numeric(1, 2)),
    ))
