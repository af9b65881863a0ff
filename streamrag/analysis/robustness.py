"""Robustness arms and the anchor-versus-type comparison, from one analysis pass.

Arms (design §4): top-k ∈ {1, 3, 5} × grounding exact / relaxed. Each arm reports the
groundable and retrieved-gold shares, φ_suf mean and median over its retrieved-gold
questions, and the streamable fraction at the configured (L, δ, θ) — the quantities the
anchor study compares across arms.

Anchor comparison: how well a query-side position predicts ``t_suf`` (retrieved-gold
questions), next to what question type alone explains. For each predictor, the mean
absolute error of predicting t_suf by (a) the anchor position itself and (b) the median
t_suf of the other questions of the same type (leave-one-out), and the share of variance of φ_suf explained (R² of a
least-squares line on φ_anchor; η² = between-type sum of squares / total for type).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats

from streamrag.analysis._values import bool_column, to_float
from streamrag.analysis.runner import GROUNDING_MODES, ROBUSTNESS_K, QuestionAnalysis
from streamrag.analysis.stats import streamable_cell


def _arm_table(analyses: Sequence[QuestionAnalysis], k: int, mode: str) -> pd.DataFrame:
    rows = []
    for a in analyses:
        n = a.row["n_words"]
        t_suf = a.arm_t_suf[(k, mode)]
        rows.append(
            {
                "n_words": n,
                "t_sc": a.row["t_sc"],
                "t_suf": t_suf,
                "phi_suf": None if t_suf is None else t_suf / n,
                "groundable": a.arm_groundable[mode],
                "retrieved_gold": t_suf is not None,
            }
        )
    return pd.DataFrame(rows, columns=["n_words", "t_sc", "t_suf", "phi_suf", "groundable", "retrieved_gold"])


def robustness_arms(analyses: Sequence[QuestionAnalysis], params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per (k, grounding) arm over the analyzed (not skipped) questions."""
    done = [a for a in analyses if a.rankings is not None]
    n = len(done)
    out = []
    for k in ROBUSTNESS_K:
        for mode in GROUNDING_MODES:
            table = _arm_table(done, k, mode)
            phi = table["phi_suf"].dropna().to_numpy(dtype=float)
            n_groundable = int(table["groundable"].sum()) if n else 0
            n_rg = int(table["retrieved_gold"].sum()) if n else 0
            cell = (
                streamable_cell(
                    table, L_ms=params["L_ms"], delta_wps=params["delta_wps"], theta=params["theta"], G_ms=params["G_ms"]
                )
                if n
                else None
            )
            out.append(
                {
                    "k": k,
                    "grounding": mode,
                    "n_questions": n,
                    "n_groundable": n_groundable,
                    "groundable_share": n_groundable / n if n else None,
                    "n_retrieved_gold": n_rg,
                    "retrieved_gold_share": n_rg / n if n else None,
                    "phi_suf_mean": to_float(phi.mean()) if phi.size else None,
                    "phi_suf_median": to_float(np.median(phi)) if phi.size else None,
                    "streamable_fraction": None if cell is None else cell["streamable_fraction"],
                }
            )
    return out


def _r2_line(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(scipy.stats.linregress(x, y).rvalue ** 2)


def _eta2(groups: pd.Series, y: np.ndarray) -> float | None:
    if y.size < 3 or np.ptp(y) == 0:
        return None
    frame = pd.DataFrame({"g": groups.to_numpy(), "y": y})
    means = frame.groupby("g")["y"].transform("mean").to_numpy()
    return float(((means - y.mean()) ** 2).sum() / ((y - y.mean()) ** 2).sum())


def _mae(predicted: np.ndarray, actual: np.ndarray) -> float | None:
    """Mean absolute error over the pairs where a prediction exists; None if none does."""
    ok = ~np.isnan(predicted)
    return float(np.abs(predicted[ok] - actual[ok]).mean()) if ok.any() else None


def _loo_type_median(types: np.ndarray, t_suf: np.ndarray) -> np.ndarray:
    """Leave-one-out prediction: the median t_suf of the *other* questions of each type.

    Leaving the question out keeps the type baseline honest (an in-sample median would be
    fitted to the very value it predicts); a type with one question falls back to the
    median of all other questions.
    """
    out = np.empty_like(t_suf)
    for i in range(t_suf.size):
        others = np.arange(t_suf.size) != i
        same = others & (types == types[i])
        pool = t_suf[same] if same.any() else t_suf[others]
        out[i] = np.median(pool) if pool.size else np.nan
    return out


def anchor_comparison(df: pd.DataFrame) -> dict[str, Any]:
    """Anchor positions versus question type as predictors of t_suf (retrieved-gold rows)."""
    rg = df[bool_column(df, "retrieved_gold")]
    out: dict[str, Any] = {"n": int(len(rg))}
    if len(rg) == 0:
        return out
    t_suf = pd.to_numeric(rg["t_suf"], errors="coerce").to_numpy(dtype=float)
    n_words = pd.to_numeric(rg["n_words"], errors="coerce").to_numpy(dtype=float)
    phi_suf = t_suf / n_words
    type_median = _loo_type_median(rg["question_type"].to_numpy(), t_suf)
    out["question_type"] = {
        "mae_t_suf": _mae(type_median, t_suf),
        "eta2_phi_suf": _eta2(rg["question_type"], phi_suf),
    }
    for column in ("t_anchor", "t_pivot"):
        if column not in rg:
            continue
        pos = pd.to_numeric(rg[column], errors="coerce").to_numpy(dtype=float)
        ok = ~np.isnan(pos)
        entry: dict[str, Any] = {"n": int(ok.sum()), "coverage": float(ok.mean())}
        if ok.sum() >= 3:
            rho = scipy.stats.spearmanr(pos[ok], t_suf[ok])
            entry.update(
                spearman_rho=to_float(rho.statistic),
                spearman_p=to_float(rho.pvalue),
                mae_t_suf=_mae(pos[ok], t_suf[ok]),
                mae_t_suf_type_baseline=_mae(type_median[ok], t_suf[ok]),
                r2_phi_suf=_r2_line(pos[ok] / n_words[ok], phi_suf[ok]),
            )
        out[column] = entry
    return out
