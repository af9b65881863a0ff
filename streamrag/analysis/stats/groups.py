"""RQ4: does the sufficiency point depend on the kind of question?

φ_suf of retrieved-gold questions compared across groups (question type, domain,
static/dynamic): Kruskal–Wallis and the bootstrap as scipy.stats computes them
(:mod:`~streamrag.analysis.stats.inference`), :mod:`streamrag.base.correlation` for Spearman,
Dunn's test with Holm's adjustment here (equal to scikit-posthocs', tested). Undefined
results are ``None``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from streamrag.analysis._values import active, bool_column, label_column, num_column, to_float
from streamrag.analysis.stats import inference
from streamrag.base.correlation import spearman

__all__ = ["anchor_spearman", "dunn_holm", "group_rng", "group_stats", "kruskal_wallis", "median_ci95"]


def median_ci95(values: np.ndarray, *, n_resamples: int, rng: np.random.Generator) -> list[float] | None:
    """Bootstrap 95 % CI ``[low, high]`` of the median (percentile method); None when n < 2."""
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return None
    ci = inference.bootstrap_median_ci(x, n_resamples=n_resamples, rng=rng)
    low, high = to_float(ci[0]), to_float(ci[1])
    return None if low is None or high is None else [low, high]


def group_rng(seed: int, by: str, name: str) -> np.random.Generator:
    """One random stream per (grouping, group), keyed by name: adding, removing or
    reordering groups never changes another group's draws."""
    key = zlib.crc32(f"{by}\x00{name}".encode())
    return np.random.default_rng(np.random.SeedSequence([seed, key]))


def dunn_holm(groups: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Dunn's post-hoc test with Holm-adjusted p-values over all pairs of ``groups``.

    Dunn (1964) on ranks of the pooled values (ties share their mean rank), with the tie
    correction of Glantz (2012): for groups i, j,
    z = |R̄_i − R̄_j| / √((N(N+1)/12 − Σ(t³ − t)/(12(N − 1))) · (1/n_i + 1/n_j)),
    two-sided p = erfc(z/√2); Holm's step-down adjustment over the k(k−1)/2 pairs. The
    same test as ``scikit_posthocs.posthoc_dunn(p_adjust="holm")``, which the anchor
    used (agreement tested), without its statsmodels dependency.

    ``{"pairs": [{"a", "b", "p_adj"}, …] sorted by p_adj (then a, b), "min_pair": the
    first pair or None}``; within a pair ``a < b``.
    """
    from streamrag.base.correlation import average_ranks

    names = sorted(groups)
    values = np.concatenate([np.asarray(groups[g], dtype=np.float64) for g in names])
    sizes = np.array([len(groups[g]) for g in names])
    ranks = average_ranks(values)
    n = values.size
    tie_term = inference.tie_sum(values) / (12.0 * (n - 1)) if n > 1 else 0.0
    spread = n * (n + 1) / 12.0 - tie_term
    bounds = np.r_[0, np.cumsum(sizes)]
    mean_rank = {g: float(ranks[bounds[i] : bounds[i + 1]].mean()) for i, g in enumerate(names)}
    size = dict(zip(names, sizes.tolist(), strict=True))
    raw: list[float] = []
    pairs_ab = list(combinations(names, 2))
    for a, b in pairs_ab:
        se = math.sqrt(spread * (1.0 / size[a] + 1.0 / size[b])) if spread > 0 else 0.0
        z = abs(mean_rank[a] - mean_rank[b]) / se if se > 0 else math.nan
        raw.append(math.erfc(z / math.sqrt(2.0)) if math.isfinite(z) else math.nan)
    adjusted = _holm(raw)
    pairs = [{"a": a, "b": b, "p_adj": to_float(p)} for (a, b), p in zip(pairs_ab, adjusted, strict=True)]
    pairs.sort(key=lambda r: (r["p_adj"] is None, r["p_adj"] if r["p_adj"] is not None else 0.0, r["a"], r["b"]))
    min_pair = pairs[0] if pairs and pairs[0]["p_adj"] is not None else None
    return {"pairs": pairs, "min_pair": min_pair}


def _holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment: the i-th smallest of m p-values (1-based) becomes
    max over j ≤ i of min(1, (m − j + 1)·p_(j)). Undefined (nan) values stay nan."""
    defined = [(p, i) for i, p in enumerate(p_values) if math.isfinite(p)]
    defined.sort()
    m = len(defined)
    out = [math.nan] * len(p_values)
    running = 0.0
    for j, (p, i) in enumerate(defined):
        running = max(running, min(1.0, (m - j) * p))
        out[i] = running
    return out


def kruskal_wallis(groups: Mapping[str, np.ndarray]) -> dict[str, Any] | None:
    """Kruskal–Wallis H test over the non-empty ``groups`` (tie-corrected, scipy's numbers).

    ``{"groups", "n_groups", "n", "H", "df" = k − 1, "p", "epsilon2", "epsilon2_adjusted",
    "dunn_holm"}`` with k groups of n values in all. Two effect sizes:

    - ``epsilon2 = H/(n − 1)``, the one the anchor study reports;
    - ``epsilon2_adjusted = (H − k + 1)/(n − k)``, corrected for the number of groups (H's
      expectation under the null is k − 1, so it is about 0 without an effect and may be
      negative); None when n = k (every group has one value).

    None when fewer than two groups are non-empty or every value is the same (H is 0/0 then).
    """
    kept = {g: np.asarray(v, dtype=float) for g, v in groups.items() if len(v) > 0}
    if len(kept) < 2:
        return None
    values = np.concatenate(list(kept.values()))
    if np.ptp(values) == 0:
        return None
    names = sorted(kept)
    H, p = inference.kruskal(*(kept[g] for g in names))
    n, k = int(values.size), len(names)
    return {
        "groups": names,
        "n_groups": k,
        "n": n,
        "H": to_float(H),
        "df": k - 1,
        "p": to_float(p),
        "epsilon2": to_float(H / (n - 1)),
        "epsilon2_adjusted": to_float((H - k + 1) / (n - k)) if n > k else None,
        "dunn_holm": dunn_holm(kept),
    }


def group_stats(
    df: pd.DataFrame, by: str, *, n_resamples: int, seed: int, min_group_n: int, streams: str = "paper"
) -> dict[str, Any]:
    """φ_suf of retrieved-gold questions grouped by column ``by``.

    ``groups``: per group (sorted by name) n, mean, median and the bootstrap 95 % CI of
    the median (``median_ci95``, None for n < 2). Its draws come, with ``streams="paper"``,
    from one generator seeded ``seed`` that the groups use in order of first appearance
    (the anchor's ``stats.py``; its published intervals are reproduced bound for bound),
    or with ``"per-group"`` from a stream per group (:func:`group_rng`). ``kruskal_wallis_all``: the test over
    every group; ``kruskal_wallis_min_n``: over groups with n ≥ ``min_group_n``; each
    with its Dunn–Holm pairs, or None (see :func:`kruskal_wallis`). Questions with an
    empty label are counted in ``n_unlabeled`` and left out.
    """
    q = active(df)
    rg = bool_column(q, "retrieved_gold")
    phi = num_column(q, "phi_suf")[rg]
    labels = label_column(q, by)[rg]
    labeled = np.array([lab is not None for lab in labels], dtype=bool)
    appearance = list(dict.fromkeys(lab for lab in labels if lab is not None))
    names = sorted(appearance)
    values = {g: phi[labels == g] for g in names}
    shared = np.random.default_rng(seed)
    cis = {
        g: median_ci95(values[g], n_resamples=n_resamples, rng=shared if streams == "paper" else group_rng(seed, by, g))
        for g in appearance
    }
    groups: dict[str, Any] = {}
    for g in names:
        x = values[g]
        groups[g] = {"n": int(x.size), "mean": to_float(x.mean()), "median": to_float(np.median(x)), "median_ci95": cis[g]}
    large = {g: x for g, x in values.items() if x.size >= min_group_n}
    kw_large = kruskal_wallis(large)
    if kw_large is not None:
        kw_large = {"min_group_n": int(min_group_n), **kw_large}
    return {
        "n": int(labeled.sum()),
        "n_unlabeled": int((~labeled).sum()),
        "groups": groups,
        "kruskal_wallis_all": kruskal_wallis(values),
        "kruskal_wallis_min_n": kw_large,
    }


def _spearman(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Undefined (None) below 3 pairs or with a constant variable."""
    s = spearman(x, y)
    return {"n": s["n"], "rho": s["rho"], "p": s["p"]}


def anchor_spearman(df: pd.DataFrame) -> dict[str, Any]:
    """Spearman ρ of the first anchor word's position with the sufficiency point.

    Over retrieved-gold questions with ``t_anchor`` present: ``t_anchor`` vs ``t_suf``
    and ``phi_anchor = t_anchor/n_words`` vs ``phi_suf``, each ``{"n", "rho", "p"}``
    (rho and p None when a variable is constant); None when the column is absent or
    fewer than 3 pairs exist.
    """
    keys = ("spearman_t_anchor_t_suf", "spearman_phi_anchor_phi_suf")
    if "t_anchor" not in df.columns:
        return dict.fromkeys(keys)
    q = active(df)
    t_anchor = num_column(q, "t_anchor")
    ok = bool_column(q, "retrieved_gold") & ~np.isnan(t_anchor)
    if ok.sum() < 3:
        return dict.fromkeys(keys)
    t_a = t_anchor[ok]
    n_words = num_column(q, "n_words")[ok]
    return {
        keys[0]: _spearman(t_a, num_column(q, "t_suf")[ok]),
        keys[1]: _spearman(t_a / n_words, num_column(q, "phi_suf")[ok]),
    }


def _r2_line(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return inference.line_r2(x, y)


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
    """Anchor positions versus question type as predictors of t_suf (retrieved-gold rows).

    For ``t_anchor`` and ``t_pivot`` (see :mod:`streamrag.analysis.studies.anchor`), where the
    table has them: Spearman ρ with t_suf, the mean absolute error of predicting t_suf by
    the position itself, next to the error of predicting it by the median t_suf of the
    other questions of the same type (leave-one-out), and the share of the variance of
    φ_suf each explains (R² of a least-squares line on φ_anchor; η² = between-type sum
    of squares / total for the type).
    """
    q = active(df)
    rg = q[bool_column(q, "retrieved_gold")]
    out: dict[str, Any] = {"n": len(rg)}
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
    from streamrag.analysis.studies.entity import PREDICTORS

    for column in ("t_entity", "t_entity_full", "t_anchor", "t_pivot"):
        if column not in rg:
            continue
        pos = pd.to_numeric(rg[column], errors="coerce").to_numpy(dtype=float)
        ok = ~np.isnan(pos)
        entry: dict[str, Any] = {"what": PREDICTORS[column], "n": int(ok.sum()), "coverage": float(ok.mean())}
        if ok.sum() >= 3:
            rho = _spearman(pos[ok], t_suf[ok])
            entry.update(
                spearman_rho=rho["rho"],
                spearman_p=rho["p"],
                mae_t_suf=_mae(pos[ok], t_suf[ok]),
                mae_t_suf_type_baseline=_mae(type_median[ok], t_suf[ok]),
                r2_phi_suf=_r2_line(pos[ok] / n_words[ok], phi_suf[ok]),
            )
        out[column] = entry
    return out
