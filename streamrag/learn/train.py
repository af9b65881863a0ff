"""Fit the learned trigger on one feature table, pick τ, evaluate once on another.

Models (the anchor's, scikit-learn, the ``learn`` extra): ``StandardScaler`` +
``LogisticRegression(max_iter=1000, class_weight="balanced")`` and
``GradientBoostingClassifier(random_state=0)``, fitted on the target ``suf`` (label
1[t ≥ t_suf], retrieved-gold rows). Inputs: the anchor's five features
(``top1_stable_streak, top1_changed, t, named_entity_detected, words_since_first_ne``)
then the question word one-hot (``who … how, other``); ``feature_set = "all"`` adds our
``top1_margin`` and ``top1_coverage_prefix``.

Two evaluations on the test table (:mod:`streamrag.learn.paper` computes both):

- ``paper`` — the anchor's: τ fixed (0.5), the τ frontier 0.05 … 0.95, the fixed-interval
  and single-fire baselines, the t_sc "safety" point, the ablation (logistic regression
  refitted without each group, ρ(fire, t_suf)), coefficients and GBDT importances. From
  the anchor's published feature files this reproduces its ``trigger.summary.json``;
- ``cv`` — ours: τ chosen by 5-fold cross-validation over the *training* table's
  questions (grouped by question, folds in question order; the τ of the grid with the
  highest pooled mean analytic saving, the larger τ on ties), then one evaluation on the
  test table at that τ; the ablation drops each feature group from both models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streamrag.analysis.features.compute import CONTEXT_FEATURES, QUESTION_WORD_LEVELS
from streamrag.analysis.features.table import FeatureTable
from streamrag.base.columns import TableKind
from streamrag.base.errors import ConfigError, TableError
from streamrag.learn.paper import AnalyticParams, Question, baseline_frontier, evaluate, questions_of, single_fire_frontier
from streamrag.pipeline.learned import GBDTParams, LogRegParams, TreeArrays, TriggerModel

TRIGGER_FRONTIER = TableKind(
    "trigger_frontier",
    {
        "evaluation": "str",
        "model": "str",
        "tau": "float",
        "n_questions": "int",
        "mean_saving_ms": "float",
        "misfire_rate": "float",
        "net_negative_rate": "float",
        "mean_calls": "float",
        "median_saving_correct_fires": "float",
        "spearman_fire_vs_tsuf": "float",
    },
)
"""``train-trigger``'s ``frontier.csv``, declared: one row per (evaluation, model, τ)."""

ANCHOR_FEATURES = ("top1_stable_streak", "top1_changed", "t", "named_entity_detected", "words_since_first_ne")
OUR_FEATURES = ("top1_margin", "top1_coverage_prefix")
TAUS = tuple(round(0.05 * i, 2) for i in range(1, 20))
GROUPS: dict[str, tuple[str, ...]] = {
    "retrieval_stability": ("top1_stable_streak", "top1_changed"),
    "entity": ("named_entity_detected", "words_since_first_ne"),
    "position": ("t",),
    "question_word": ("question_word_type",),
    "retrieval_score": OUR_FEATURES,
}
"""Feature groups for the ablation (the anchor's first two, then ours)."""
PAPER_GROUPS = ("retrieval_stability", "entity")
INSTALL = "pip install 'streamrag[learn]'"


def sklearn_unavailable_reason() -> str | None:
    import importlib.util

    if importlib.util.find_spec("sklearn") is None:
        return f"train-trigger fits scikit-learn models (not installed): {INSTALL}"
    return None


@dataclass(frozen=True, slots=True)
class Design:
    """Which table columns feed the model, and the model's names for them."""

    features: tuple[str, ...]
    onehot: bool
    context: str

    @property
    def names(self) -> list[str]:
        """Anchor-style names (coefficient tables): the features, then the question-word levels."""
        return [*self.features, *(QUESTION_WORD_LEVELS if self.onehot else ())]

    @property
    def columns(self) -> list[str]:
        """The trigger's column keys (the ``_full`` variants for a right-context table)."""
        sfx = "_full" if self.context == "full" else ""
        cols = [f + sfx if f in CONTEXT_FEATURES else f for f in self.features]
        return [*cols, *(f"question_word_type{sfx}={lv}" for lv in (QUESTION_WORD_LEVELS if self.onehot else ()))]

    def matrix(self, table: FeatureTable, rows: np.ndarray | None = None) -> np.ndarray:
        c = table.columns
        idx = slice(None) if rows is None else rows
        parts = [c[f][idx].astype(np.float64) for f in self.features]
        if self.onehot:
            qw = c["question_word_type"][idx]
            parts += [(qw == lv).astype(np.float64) for lv in QUESTION_WORD_LEVELS]
        return np.column_stack(parts)

    def without(self, group: str) -> Design:
        drop = GROUPS[group]
        return Design(
            tuple(f for f in self.features if f not in drop), self.onehot and "question_word_type" not in drop, self.context
        )


FEATURE_SETS = ("anchor", "all")
"""Named feature sets: the anchor's five features and the question word; ``all`` adds ours."""


def parse_feature_set(value: str) -> tuple[str, ...]:
    """The feature groups of a ``--features`` value: ``anchor``, ``all``, or groups of
    :data:`GROUPS` joined by commas (``retrieval_stability,position``); ConfigError otherwise."""
    if value == "anchor":
        return ("retrieval_stability", "entity", "position", "question_word")
    if value == "all":
        return tuple(GROUPS)
    groups = tuple(g.strip() for g in value.split(","))
    unknown = [g for g in groups if g not in GROUPS]
    if unknown or not groups:
        raise ConfigError(
            f"--features: {value!r} is neither anchor, all nor a comma-separated list of feature groups ({', '.join(GROUPS)})"
        )
    return groups


def design_for(table: FeatureTable, feature_set: str) -> Design:
    """The design of ``feature_set`` (:func:`parse_feature_set`) on ``table``; ConfigError
    naming the first column the table does not give on every row."""
    groups = set(parse_feature_set(feature_set))
    chosen = {f for g in groups for f in GROUPS[g]}
    feats = tuple(f for f in (*ANCHOR_FEATURES, *OUR_FEATURES) if f in chosen)
    onehot = "question_word_type" in chosen
    absent = [f for f in (*feats, *(["question_word_type"] if onehot else [])) if not table.has(f)]
    if absent:
        group = next(g for g in GROUPS if absent[0] in GROUPS[g])
        raise ConfigError(
            f"{table.path}: the features {feature_set!r} read column {absent[0]!r} (group {group}), which the table "
            "does not give on every row (an anchor table has only its own features; a generated table's synthetic "
            "evidence has no words and no tagger output: --features retrieval_stability,position)"
        )
    return Design(feats, onehot, table.context)


def training_rows(table: FeatureTable, target: str = "suf") -> np.ndarray:
    """Rows the target trains on: ``suf`` retrieved-gold rows with a label, ``sc`` all."""
    if target == "sc":
        return np.arange(table.n_rows)
    return np.flatnonzero(table.columns["retrieved_gold"] & ~np.isnan(table.columns["label"]))


def training_labels(table: FeatureTable) -> tuple[np.ndarray, np.ndarray]:
    """The rows the target ``suf`` trains on (:func:`training_rows`) and their labels;
    TableError when no classifier can be fitted on them: no row, or one label only."""
    rows = training_rows(table)
    if not rows.size:
        raise TableError(
            f"{table.path}: no row to train on: the learned trigger trains on the rows of retrieved-gold questions "
            "(t_suf set), and the table has none"
        )
    y = table.columns["label"][rows].astype(int)
    if np.unique(y).size < 2:
        which = "t ≥ t_suf" if y[0] else "t < t_suf"
        raise TableError(
            f"{table.path}: every one of the {rows.size} training rows has label {y[0]} ({which}): "
            "a classifier needs rows of both labels"
        )
    return rows, y


def evaluated_questions(table: FeatureTable) -> list[Question]:
    """The test table's questions (:func:`questions_of`); TableError when none is
    retrieved-gold: the evaluation measures the target t_suf, so it would measure nothing."""
    qs = questions_of(table.columns)
    if not any(q.t_suf is not None for q in qs):
        raise TableError(f"{table.path}: no retrieved-gold question (t_suf set) to evaluate on, among {len(qs)} questions")
    return qs


def fit_models(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """The anchor's two models fitted on (x, y)."""
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    logreg = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000, class_weight="balanced")).fit(x, y)
    gbdt = GradientBoostingClassifier(random_state=0).fit(x, y)
    return {"logreg": logreg, "gbdt": gbdt}


def export_model(name: str, fitted: Any, design: Design, provenance: dict[str, Any]) -> TriggerModel:
    """A fitted scikit-learn model as a :class:`TriggerModel` (arrays, no pickle)."""
    if name == "logreg":
        scaler, lr = fitted.named_steps["standardscaler"], fitted.named_steps["logisticregression"]
        params = LogRegParams(
            mean=scaler.mean_.tolist(), scale=scaler.scale_.tolist(), coef=lr.coef_[0].tolist(), intercept=float(lr.intercept_[0])
        )
        return TriggerModel(kind="logreg", columns=design.columns, context=design.context, logreg=params, provenance=provenance)
    prior = float(fitted.init_.class_prior_[1])
    trees = []
    for est in fitted.estimators_[:, 0]:
        tr = est.tree_
        trees.append(
            TreeArrays(
                feature=tr.feature.tolist(),
                threshold=tr.threshold.tolist(),
                left=tr.children_left.tolist(),
                right=tr.children_right.tolist(),
                value=tr.value[:, 0, 0].tolist(),
            )
        )
    params_gb = GBDTParams(init=float(np.log(prior / (1.0 - prior))), learning_rate=float(fitted.learning_rate), trees=trees)
    return TriggerModel(kind="gbdt", columns=design.columns, context=design.context, gbdt=params_gb, provenance=provenance)


def _probs(model: Any, x: np.ndarray) -> np.ndarray:
    return model.predict_proba(x)[:, 1]


def paper_features(feature_set: str) -> str:
    """The features of the ``paper`` evaluation: the anchor's for ``anchor`` and ``all``
    (its published file is reproduced), else the groups given (a table without the
    anchor's columns is evaluated by the anchor's rules on the features it has)."""
    return "anchor" if feature_set in FEATURE_SETS else feature_set


def paper_summary(
    train: FeatureTable,
    test: FeatureTable,
    *,
    tau: float = 0.5,
    a: AnalyticParams = AnalyticParams(),
    feature_set: str = "anchor",
) -> tuple[dict, dict]:
    """The anchor's ``trigger.summary.json`` (its keys, plus ``spearman_undefined`` and the
    single-fire frontier) and the fitted models; ``feature_set`` as :func:`paper_features`."""
    design = design_for(train, paper_features(feature_set))
    design_for(test, paper_features(feature_set))
    rows, y = training_labels(train)
    qs = evaluated_questions(test)
    models = fit_models(design.matrix(train, rows), y)
    x_test, t_test = design.matrix(test), test.columns["t"]
    probs = {name: _probs(m, x_test) for name, m in models.items()}
    frontier = {name: [evaluate(qs, p, t_test, tv, "suf", a) for tv in TAUS] for name, p in probs.items()}
    ablation = {}
    for group in PAPER_GROUPS:
        d = design.without(group)
        if d.features == design.features or not d.features:
            continue  # the group is not in the design, or is all of it
        m = fit_models(d.matrix(train, rows), y)["logreg"]
        point = evaluate(qs, _probs(m, d.matrix(test)), t_test, tau, "suf", a)
        ablation[group] = {"dropped": list(GROUPS[group]), "spearman_fire_vs_tsuf": point["spearman_fire_vs_tsuf"]}
    lr = models["logreg"].named_steps["logisticregression"]
    summary = {
        "params": {
            "train": train.path,
            "test": test.path,
            "features": design.columns,
            "tau": tau,
            "L": a.L_ms,
            "delta": a.delta_wps,
            "c_waste": a.c_waste_ms,
        },
        "operating_point": {name: evaluate(qs, p, t_test, tau, "suf", a) for name, p in probs.items()},
        "frontier": frontier,
        "baseline_frontier": baseline_frontier(qs, "suf", [1, 2, 3, 4], a),
        "single_fire_frontier": single_fire_frontier(qs, "suf", [1, 2, 3, 4, 5, 6, 8], a),
        "sc_safety_point": evaluate(qs, probs["logreg"], t_test, tau, "sc", a),
        "ablation": ablation,
        "importances": {
            "logreg_coef": dict(zip(design.names, lr.coef_[0].tolist(), strict=True)),
            "gbdt_importance": dict(zip(design.names, models["gbdt"].feature_importances_.tolist(), strict=True)),
        },
    }
    return summary, models


def _folds(qs: Sequence[Question], n_folds: int) -> list[np.ndarray]:
    order = np.arange(len(qs))
    return [order[order % n_folds == f] for f in range(n_folds)]


def cv_tau(train: FeatureTable, design: Design, a: AnalyticParams, n_folds: int = 5) -> dict[str, Any]:
    """τ per model by cross-validation over the training table's retrieved-gold questions."""
    qs = [q for q in questions_of(train.columns) if q.t_suf is not None]
    if len(qs) < n_folds:
        raise ConfigError(
            f"{train.path}: {len(qs)} retrieved-gold questions, fewer than the {n_folds} folds of τ's cross-validation"
        )
    t = train.columns["t"]
    held_probs = {"logreg": np.full(train.n_rows, np.nan), "gbdt": np.full(train.n_rows, np.nan)}
    for fold in _folds(qs, n_folds):
        held = set(fold.tolist())
        fit_rows = np.concatenate([q.rows for i, q in enumerate(qs) if i not in held])
        y = train.columns["label"][fit_rows].astype(int)
        if len(set(y.tolist())) < 2:
            raise ConfigError(f"{train.path}: a cross-validation fold has one label only; give a larger training table")
        models = fit_models(design.matrix(train, fit_rows), y)
        rows = np.concatenate([qs[i].rows for i in fold])
        for name, m in models.items():
            held_probs[name][rows] = _probs(m, design.matrix(train, rows))
    out: dict[str, Any] = {}
    for name, p in held_probs.items():
        curve = [evaluate(qs, p, t, tv, "suf", a) for tv in TAUS]
        best = max(curve, key=lambda r: (r["mean_saving_ms"], r["tau"]))
        out[name] = {"tau": best["tau"], "cv_mean_saving_ms": best["mean_saving_ms"], "curve": curve}
    return out


def cv_summary(
    train: FeatureTable,
    test: FeatureTable,
    *,
    feature_set: str = "anchor",
    a: AnalyticParams = AnalyticParams(),
    n_folds: int = 5,
    provenance: dict[str, Any] | None = None,
) -> tuple[dict, dict[str, TriggerModel]]:
    """Ours: τ by cross-validation on ``train``, one evaluation on ``test``; the saved models."""
    import sklearn

    design = design_for(train, feature_set)
    if feature_set == "all":
        design_for(test, feature_set)
    rows, y = training_labels(train)
    qs = evaluated_questions(test)
    models = fit_models(design.matrix(train, rows), y)
    chosen = cv_tau(train, design, a, n_folds)
    x_test, t_test = design.matrix(test), test.columns["t"]
    out: dict[str, Any] = {"feature_set": feature_set, "columns": design.columns, "context": design.context, "models": {}}
    saved: dict[str, TriggerModel] = {}
    for name, m in models.items():
        p = _probs(m, x_test)
        tau = chosen[name]["tau"]
        ablation = {}
        for group in GROUPS:
            d = design.without(group)
            if (d.features == design.features and d.onehot == design.onehot) or not (d.features or d.onehot):
                continue  # the group is not in the design, or is all of it
            mg = fit_models(d.matrix(train, rows), y)[name]
            point = evaluate(qs, _probs(mg, d.matrix(test)), t_test, tau, "suf", a)
            ablation[group] = {k: point[k] for k in ("mean_saving_ms", "misfire_rate", "spearman_fire_vs_tsuf")}
        importance = (m.named_steps["logisticregression"].coef_[0] if name == "logreg" else m.feature_importances_).tolist()
        out["models"][name] = {
            "tau_cv": chosen[name],
            "operating_point": evaluate(qs, p, t_test, tau, "suf", a),
            "frontier": [evaluate(qs, p, t_test, tv, "suf", a) for tv in TAUS],
            "ablation": ablation,
            "importance": dict(zip(design.columns, importance, strict=True)),
        }
        prov = {
            **(provenance or {}),
            "train_table": train.path,
            "train_sha256": train.sha256,
            "n_train_rows": int(rows.size),
            "target": "suf",
            "feature_set": feature_set,
            "sklearn_version": sklearn.__version__,
            "tau_cv": tau,
            "params": m.get_params(deep=False) if name == "gbdt" else m.named_steps["logisticregression"].get_params(),
        }
        prov["params"] = {k: v for k, v in prov["params"].items() if isinstance(v, int | float | str | bool | type(None))}
        saved[name] = export_model(name, m, design, prov)
    return out, saved
