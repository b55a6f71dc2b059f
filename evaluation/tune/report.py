"""Documents of a tuning run: the JSON for ``--format json`` and the weights YAML.

Kept apart from the estimator so ``tuner.py`` holds the search and this module the
rendering; both outputs are deterministic (no time, no paths) so reruns compare.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tooldisc.evaluation.tune.tuner import Dataset, WeightTuner, nest


def dataset_summary(datasets: Sequence[Dataset]) -> list[dict[str, Any]]:
    """File names (not paths, so output is the same on every machine) and sizes.

    Where two datasets' files share a name, each is shown with its folder
    (``devops/gold.json``) so the rows can be told apart.
    """
    cats = _names([Path(c.source or "<catalog>") for c, _ in datasets])
    golds = _names([Path(g.source or "<gold>") for _, g in datasets])
    return [{"catalog": cn, "tools": len(c.tools), "gold": gn, "queries": len(g.queries)}
            for (c, g), cn, gn in zip(datasets, cats, golds, strict=True)]


def _names(paths: list[Path]) -> list[str]:
    plain = [p.name for p in paths]
    return [f"{p.parent.name}/{p.name}" if plain.count(p.name) > 1 and p.parent.name else p.name for p in paths]


def tune_document(tuner: WeightTuner, datasets: Sequence[Dataset]) -> dict[str, Any]:
    """Everything a report shows, as plain data (JSON output; the weights file header)."""
    base = tuner.candidates_[0]
    return {
        "objective": str(tuner.objective_),
        "k": tuner.k,
        "folds": tuner.n_splits_,
        "seed": tuner.random_state,
        "n_iter": tuner.n_iter,
        "candidates": len(tuner.candidates_),
        "datasets": dataset_summary(datasets),
        "per_fold": [{"fold": f.fold + 1, "train": _r(f.train), "heldout": _r(f.heldout), "n_train": f.n_train,
                      "n_heldout": f.n_heldout, "chosen": f.chosen, "params": dict(f.params)} for f in tuner.folds_],
        "train": _r(tuner.train_score_),
        "heldout": _r(tuner.heldout_score_),
        "base": {"params": dict(base), "all_data": _r(float(tuner.cv_results_["all_data_score"][0]))},
        "chosen": {"index": tuner.best_index_, "params": dict(tuner.best_params_), "all_data": _r(tuner.best_score_)},
    }


def _r(x: float) -> float | None:
    return None if x != x else round(float(x), 6)


def weights_yaml(tuner: WeightTuner, datasets: Sequence[Dataset]) -> str:
    """The tuned keys only (they overlay the shipped default), under a header that says how.

    Byte-identical for the same inputs: no time, no paths, sorted keys, rounded scores.
    """
    import yaml

    doc = tune_document(tuner, datasets)
    lines = [f"# tooldisc tune: {doc['folds']}-fold cross-validation, seed {doc['seed']}, "
             f"{doc['candidates']} candidates (the base config and {doc['n_iter']} random draws)",
             f"# objective: {doc['objective']} at k={doc['k']}, mean over datasets",
             "# datasets:"]
    lines += [f"#   {d['catalog']} ({d['tools']} tools) + {d['gold']} ({d['queries']} queries)"
              for d in doc["datasets"]]
    lines += [f"# fold {f['fold']}: train {_fmt(f['train'])}, held-out {_fmt(f['heldout'])}" for f in doc["per_fold"]]
    lines += [f"# mean: train {_fmt(doc['train'])}, held-out {_fmt(doc['heldout'])}",
              f"# chosen on all data: {_fmt(doc['chosen']['all_data'])} (base config: {_fmt(doc['base']['all_data'])})",
              "# Load with: tooldisc eval --config THIS_FILE (overlays the shipped default)."]
    body = yaml.safe_dump(nest(tuner.best_params_), sort_keys=True, allow_unicode=True, default_flow_style=False)
    return "\n".join(lines) + "\n" + body


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4f}"
