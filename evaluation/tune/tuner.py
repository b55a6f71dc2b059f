"""Choosing ranker weights by k-fold cross-validation over several gold sets.

Weights are data judged by evaluation (DESIGN §2), and a weight fitted to one gold
set mostly learns that set. :class:`WeightTuner` therefore scores every candidate
config on several (catalog, gold) datasets at once, splits each dataset's queries
into seeded folds, and reports the score of the config chosen on the training folds
*on the fold it never saw* next to its training score: the gap between the two is
how much a tuned number can be trusted.

Every offer comes from the one chokepoint, :meth:`Discoverer.discover` (through
:func:`~tooldisc.evaluation.run.run_discovery`), which sees only query text, history
and context; labels meet offers only in the metrics. Discovery runs once per
(candidate, dataset) over all queries: the measures are per-query means, so a fold's
score is a mean over a subset of the same per-query values.
"""

from __future__ import annotations

import dataclasses
import os
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, ClassVar

from tooldisc.closed_schema import unknown_field
from tooldisc.errors import ConfigError, UsageError
from tooldisc.limits import COUNTS
from tooldisc.params import Constraint, validate

if TYPE_CHECKING:
    import numpy as np

    from tooldisc.discovery.catalog import Catalog
    from tooldisc.discovery.config import RankerConfig
    from tooldisc.gold.model import GoldSet
    from tooldisc.metrics.measures import Measure

Dataset = tuple["Catalog", "GoldSet"]
Space = Mapping[str, Any]  # key path → list of choices, or a (low, high) tuple for a uniform range
_DECIMALS = 3  # sampled values are rounded so a weights file stays readable and reproducible


# --- objective ---------------------------------------------------------------------

_OBJECTIVE_RE = re.compile(
    r"\s*(?P<m>[A-Za-z_][A-Za-z0-9_]*(?:@[0-9]+)?)\s*"
    r"(?:-\s*(?:(?P<w>[0-9]*\.?[0-9]+)\s*\*?\s*)?(?P<p>[A-Za-z_][A-Za-z0-9_]*(?:@[0-9]+)?)\s*)?\Z")


@dataclass(frozen=True)
class Objective:
    """A measure to maximise, minus ``weight`` × an optional penalty measure."""

    measure: Measure
    penalty: Measure | None = None
    weight: float = 1.0

    def __str__(self) -> str:
        if self.penalty is None:
            return str(self.measure)
        w = "" if self.weight == 1.0 else f"{self.weight:g}*"
        return f"{self.measure} - {w}{self.penalty}"

    @property
    def measures(self) -> tuple[Measure, ...]:
        return (self.measure,) if self.penalty is None else (self.measure, self.penalty)


def parse_objective(text: str | Objective) -> Objective:
    """``"nDCG@10"``, ``"nDCG@10 - forbidden@10"`` or ``"nDCG@10 - 0.5*forbidden@10"``."""
    from tooldisc.metrics.measures import parse_measure

    if isinstance(text, Objective):
        return text
    m = _OBJECTIVE_RE.match(text) if isinstance(text, str) else None
    if m is None:
        raise UsageError("The 'objective' parameter must be a measure name, optionally minus a weighted "
                         f"penalty measure, as in 'nDCG@10 - 0.5*forbidden@10'. Got {text!r} instead.")
    penalty = parse_measure(m.group("p")) if m.group("p") else None
    return Objective(parse_measure(m.group("m")), penalty, float(m.group("w")) if m.group("w") else 1.0)


# --- search space ------------------------------------------------------------------


def nest(params: Mapping[str, Any]) -> dict[str, Any]:
    """``{"weights.ngram": 0.5}`` → ``{"weights": {"ngram": 0.5}}`` (the config file shape)."""
    out: dict[str, Any] = {}
    for path in sorted(params):
        section, _, key = path.partition(".")
        out.setdefault(section, {})[key] = params[path]
    return out


def validate_space(space: Space, *, file: str | None = None,
                   base: RankerConfig | None = None) -> dict[str, list[float] | tuple[float, float]]:
    """Check a space against the config's constraint table; errors name ``file`` and the key.

    The keys are the config schema's numeric keys
    (:func:`~tooldisc.discovery.config.tunable_keys`). Each choice and both ends of
    each range are run through :func:`~tooldisc.discovery.config.config_from_mapping`,
    so a space can never propose a config that would be refused when loaded.
    """
    from tooldisc.discovery.config import config_from_mapping

    if not isinstance(space, Mapping) or not space:
        raise ConfigError("a search space must be a non-empty mapping of config key → choices or {low, high}",
                          file=file)
    from tooldisc.discovery.config import tunable_keys

    allowed = tunable_keys()
    out: dict[str, list[float] | tuple[float, float]] = {}
    for key in sorted(space, key=str):
        spec = space[key]
        if key not in allowed:
            raise ConfigError(unknown_field(key, allowed, extensions=False), file=file, where=str(key))
        if isinstance(spec, Mapping):
            if set(spec) != {"low", "high"}:
                raise ConfigError("a range must be a mapping with exactly 'low' and 'high'", file=file, where=key)
            spec = (spec["low"], spec["high"])
        if isinstance(spec, tuple):
            if len(spec) != 2 or not all(_is_number(v) for v in spec) or spec[0] > spec[1]:
                raise ConfigError(f"a range must be two numbers with low <= high; got {spec!r}", file=file, where=key)
            values: list[Any] = list(spec)
            out[key] = (float(spec[0]), float(spec[1]))
        elif isinstance(spec, list) and spec and all(_is_number(v) for v in spec):
            values = list(spec)
            out[key] = [float(v) for v in spec]
        else:
            raise ConfigError(f"must be a non-empty list of numbers or {{low, high}}; got {spec!r}",
                              file=file, where=key)
        for v in values:
            config_from_mapping(nest({key: allowed[key](v)}), file=file, base=base)
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v == v


def load_space(path: str | os.PathLike[str] | None = None) -> tuple[dict[str, Any], str]:
    """``(space, file name)`` from a YAML/JSON file, or the shipped default space."""
    from tooldisc.discovery.catalog.io import parse_document, read_text

    if path is None:
        file = "tune_space.yaml"
        text = resources.files("tooldisc.evaluation").joinpath("data/tune_space.yaml").read_text("utf-8")
    else:
        file = str(path)
        text = read_text(path, max_bytes=256 * 1024, what="search space")
    try:
        data = parse_document(text, file)
    except Exception as exc:  # a DataError from the parser: a space is configuration
        raise ConfigError(getattr(exc, "message", str(exc)), file=file, where=getattr(exc, "where", None)) from None
    validate_space(data, file=file)
    return data, file


def sample_candidates(space: Space, n_iter: int, random_state: int,
                      base: RankerConfig) -> list[dict[str, float]]:
    """The base config's own values first (it always competes), then ``n_iter`` seeded draws.

    Lists are choices; ``(low, high)`` is uniform (randint for integer keys). Draws
    are rounded and duplicates dropped, keeping the first.
    """
    from scipy import stats
    from sklearn.model_selection import ParameterSampler

    from tooldisc.discovery.config import tunable_keys, value_at

    kinds = tunable_keys()
    dims = validate_space(space, base=base)
    dists: dict[str, Any] = {}
    for key, spec in dims.items():
        if isinstance(spec, list):
            dists[key] = spec
        elif kinds[key] is int:
            dists[key] = stats.randint(int(spec[0]), int(spec[1]) + 1)
        else:
            dists[key] = stats.uniform(spec[0], spec[1] - spec[0])
    out = [{key: value_at(base, key) for key in dims}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a grid smaller than n_iter is simply exhausted
        draws = list(ParameterSampler(dists, n_iter=n_iter, random_state=random_state)) if n_iter else []
    for draw in draws:
        cand = {k: (int(v) if kinds[k] is int else round(float(v), _DECIMALS)) for k, v in sorted(draw.items())}
        if cand not in out:
            out.append(cand)
    return out


# --- folds -------------------------------------------------------------------------


def fold_masks(gold: GoldSet, n_splits: int, random_state: int) -> tuple[list[str], list[np.ndarray]]:
    """``(query ids sorted, test mask per fold)``: seeded StratifiedKFold on (intent, no-match).

    Ids are sorted first so the folds do not depend on file order. A stratum too small
    to appear in every fold joins the largest stratum.
    """
    import numpy as np
    from sklearn.model_selection import StratifiedKFold

    queries = sorted(gold.queries, key=lambda q: q.id)
    if len(queries) < n_splits:
        raise UsageError(f"{gold.source or 'gold set'}: {len(queries)} queries cannot fill {n_splits} folds")
    labels = [f"{q.intent}/{q.no_match}" for q in queries]
    counts: dict[str, int] = {}
    for lab in labels:
        counts[lab] = counts.get(lab, 0) + 1
    largest = max(sorted(counts), key=lambda lab: counts[lab])
    labels = [lab if counts[lab] >= n_splits else largest for lab in labels]
    skf = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=random_state)
    masks = []
    for _, test in skf.split(np.zeros(len(queries)), labels):
        mask = np.zeros(len(queries), dtype=bool)
        mask[test] = True
        masks.append(mask)
    return [q.id for q in queries], masks


@dataclass(frozen=True)
class FoldResult:
    """One fold: the candidate chosen on the other folds, its score there and on this fold."""

    fold: int
    chosen: int
    params: Mapping[str, float]
    train: float
    heldout: float
    n_train: int
    n_heldout: int


# --- the estimator -----------------------------------------------------------------


class _Params:
    """The scikit-learn parameter protocol (``get_params``/``set_params``), without importing sklearn.

    ``sklearn.base`` costs seconds to import cold, and this module is reachable from
    ``import tooldisc.evaluation``; :func:`sklearn.base.clone` needs only these two
    methods, so the contract holds without the base class.
    """

    @classmethod
    def _param_names(cls) -> list[str]:
        import inspect

        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values() if p.name != "self")

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> _Params:
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                                 f"Valid parameters are: {valid!r}.")
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


class WeightTuner(_Params):
    """Random search over ranker config keys, judged by k-fold CV over several datasets.

    Parameters
    ----------
    space : mapping of config key path → list of choices or ``(low, high)``; None
        means the shipped default space (``evaluation/data/tune_space.yaml``).
    objective : a measure name, optionally minus a weighted penalty measure
        (``"nDCG@10 - 0.5*forbidden@10"``).
    n_iter : how many random draws compete with the base config.
    cv : number of folds each dataset's queries are split into.
    k : the K every offer is cut at.
    random_state : seeds both the draws and the folds.
    base_config : the config the candidates overlay; None means the shipped default.

    Attributes after :meth:`fit`: ``candidates_`` (params of each candidate, the base
    config first), ``cv_results_`` (per candidate: train and held-out score on each
    split, their means, the all-data score and its rank), ``folds_`` (per fold the
    candidate chosen on the training folds, with train and held-out score),
    ``train_score_`` / ``heldout_score_`` (means over folds of the chosen
    candidates), ``best_index_`` / ``best_params_`` / ``best_config_`` (the candidate
    best on all data, what a user should ship), ``best_score_`` (its all-data score),
    ``objective_`` and ``n_splits_``. Each score is the mean over datasets.
    """

    def __init__(self, space: Space | None = None, objective: str = "nDCG@10", n_iter: int = 40, cv: int = 5,
                 k: int = 10, random_state: int = 0, base_config: RankerConfig | None = None,
                 learned: Any = None):
        self.space = space
        self.objective = objective
        self.n_iter = n_iter
        self.cv = cv
        self.k = k
        self.random_state = random_state
        self.base_config = base_config
        self.learned = learned  # a Learned file: its expansions, abstention and mutation apply to every candidate

    # The rulebook's data (tooldisc.params) for the counted parameters; ``objective`` and ``space``
    # are checked by their own parsers when fit reads them.
    parameter_constraints: ClassVar[dict[str, Constraint]] = {
        "n_iter": COUNTS["n_iter"], "cv": COUNTS["folds"], "k": COUNTS["k"], "random_state": COUNTS["seed"]}

    def _validate_params(self) -> None:
        """Checked in :meth:`fit`, never in ``__init__`` (the scikit-learn contract: ``set_params`` then ``fit``)."""
        validate(self.parameter_constraints, self, error=UsageError)

    def fit(self, datasets: Sequence[Dataset], y: None = None, *,
            progress: Callable[[int, int], None] | None = None) -> WeightTuner:
        """Score every candidate on every dataset, then select per fold and on all data.

        ``progress(done, total)`` is called after each (candidate, dataset) run.
        """
        import numpy as np

        from tooldisc.discovery.config import config_from_mapping, load_config
        from tooldisc.discovery.context import default_context
        from tooldisc.discovery.pipeline import Discoverer
        from tooldisc.evaluation.run import run_discovery, score_run

        self._validate_params()
        data = list(datasets)
        if not data or not all(isinstance(d, tuple) and len(d) == 2 for d in data):
            raise UsageError("The 'datasets' argument must be a non-empty list of (catalog, gold set) pairs.")
        objective = parse_objective(self.objective)
        base = self.base_config if self.base_config is not None else load_config()
        space = self.space if self.space is not None else load_space()[0]
        candidates = sample_candidates(space, self.n_iter, self.random_state, base)
        # The weights are what is searched, so a learned ranker (which replaces them) is set aside.
        learned = dataclasses.replace(self.learned, ranker=None) if self.learned is not None else None
        configs = [config_from_mapping(nest(c), file="<tune>", base=base) for c in candidates]
        splits = [fold_masks(gold, self.cv, self.random_state) for _, gold in data]

        # values[d][m]: candidates × queries (sorted ids), NaN where a query is outside m's domain
        values = [{m: np.full((len(configs), len(ids)), np.nan) for m in objective.measures} for ids, _ in splits]
        total, done = len(configs) * len(data), 0
        for ci, cfg in enumerate(configs):
            for di, (catalog, gold) in enumerate(data):
                engine = Discoverer(catalog, cfg, learned=learned)
                scores = score_run(run_discovery(engine, gold, default_context(catalog), self.k), objective.measures)
                col = {qid: j for j, qid in enumerate(splits[di][0])}
                for m in objective.measures:
                    for qid, v in scores.values[m].items():
                        values[di][m][ci, col[qid]] = v
                done += 1
                if progress is not None:
                    progress(done, total)

        def score(mask_of: Callable[[int], np.ndarray]) -> np.ndarray:
            """Objective per candidate, mean over datasets, each on its own query mask."""
            per = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an empty domain is NaN, not an error
                for di in range(len(data)):
                    mask = mask_of(di)
                    s = np.nanmean(values[di][objective.measure][:, mask], axis=1)
                    if objective.penalty is not None:
                        s = s - objective.weight * np.nan_to_num(
                            np.nanmean(values[di][objective.penalty][:, mask], axis=1))
                    per.append(s)
                return np.nanmean(np.vstack(per), axis=0)

        train = np.column_stack([score(lambda di, f=f: ~splits[di][1][f]) for f in range(self.cv)])
        test = np.column_stack([score(lambda di, f=f: splits[di][1][f]) for f in range(self.cv)])
        whole = score(lambda di: np.ones(len(splits[di][0]), dtype=bool))

        folds = []
        for f in range(self.cv):
            chosen = _argmax(train[:, f])
            folds.append(FoldResult(
                f, chosen, dict(candidates[chosen]), float(train[chosen, f]), float(test[chosen, f]),
                int(sum((~s[1][f]).sum() for s in splits)), int(sum(s[1][f].sum() for s in splits))))

        order = sorted(range(len(configs)), key=lambda i: (-_finite(whole[i]), i))
        rank = np.empty(len(configs), dtype=int)
        rank[order] = np.arange(1, len(configs) + 1)
        results: dict[str, Any] = {"params": [dict(c) for c in candidates]}
        for f in range(self.cv):
            results[f"split{f}_train_score"] = train[:, f]
            results[f"split{f}_test_score"] = test[:, f]
        results["mean_train_score"] = train.mean(axis=1)
        results["mean_test_score"] = test.mean(axis=1)
        results["all_data_score"] = whole
        results["rank_all_data_score"] = rank

        self.objective_ = objective
        self.n_splits_ = self.cv
        self.candidates_ = tuple(dict(c) for c in candidates)
        self.cv_results_ = results
        self.folds_ = tuple(folds)
        self.train_score_ = float(np.mean([f.train for f in folds]))
        self.heldout_score_ = float(np.mean([f.heldout for f in folds]))
        self.best_index_ = order[0]
        self.best_params_ = dict(candidates[order[0]])
        self.best_config_ = configs[order[0]]
        self.best_score_ = float(whole[order[0]])
        return self


def _finite(x: float) -> float:
    return float("-inf") if x != x else float(x)


def _argmax(scores: np.ndarray) -> int:
    """Best candidate; NaN loses, ties go to the earlier one (the base config first)."""
    return min(range(len(scores)), key=lambda i: (-_finite(scores[i]), i))


# --- documents -----------------------------------------------------------------------
