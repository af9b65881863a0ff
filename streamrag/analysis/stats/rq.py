"""Statistics of the study's research questions from a stabilization table.

Pure functions: a table (as :func:`streamrag.analysis.table.read_table` returns it) in,
JSON-ready dicts out — plain ``int``/``float``/``str``/``None``, never numpy scalars,
never NaN. A statistic that is undefined (no data, a constant sample, too few groups) is
``None``, never 0. Rows with a non-empty ``skip_reason`` are excluded everywhere and
only counted.

Sections (keys of :func:`summarize`):

- ``rq1``: where stabilization happens — φ_sc over all questions, φ_suf over
  retrieved-gold questions, share ``t_suf = 1``, volatility V, groundable and
  retrieved-gold counts.
- ``rq2``: how much latency it can hide — streamable fraction (``H ≥ θ·L``) at the
  configured point and over the L × δ × θ grid, split into retrieved-gold (t* = t_suf)
  and fallback (t* = t_sc) questions, mean H, H_G and H'.
- ``rq4``: does it depend on the question — φ_suf by question type, domain and
  static/dynamic (see :mod:`streamrag.analysis.stats.groups`), Spearman of the lexical anchor.
- ``gold_density``: robustness to answers that occur everywhere ("specifically
  grounded" questions, gold density ≤ cap).
- ``anchor``: the lexical-anchor positions against question type as predictors of t_suf.
- ``entity_position``: the study's "entity position governs stabilization" tested, when
  the table has ``t_entity`` (:mod:`streamrag.analysis.studies.entity_position`; else None).
- ``grounding_precision``: φ_suf under gold-density and gold-size caps, when the table has
  ``gold_density`` or ``n_gold`` (:mod:`streamrag.analysis.studies.grounding_precision`; else None).
- ``additions``: the results above that the anchor study did not report
  (:data:`ADDITIONS`), so a replication is not read as comparing numbers that do not
  exist there.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from streamrag.analysis._values import active, bool_column, num_column, share, skipped_mask, to_float
from streamrag.analysis.stats import inference
from streamrag.analysis.stats.groups import anchor_comparison, anchor_spearman, group_stats
from streamrag.analysis.stats.params import DEFAULT_PARAMS, resolve_params
from streamrag.analysis.stats.streamable import GRID_DELTA_WPS, GRID_L_MS, GRID_THETA, rq2, rq2_grid, streamable_cell
from streamrag.analysis.studies.entity_position import entity_position
from streamrag.analysis.studies.grounding_precision import grounding_precision

__all__ = [
    "ADDITIONS",
    "DEFAULT_PARAMS",
    "GRID_DELTA_WPS",
    "GRID_L_MS",
    "GRID_THETA",
    "GROUPINGS",
    "METHODS",
    "MIN_GROUP_N",
    "N_BINS",
    "active",
    "chunk_cap",
    "describe",
    "gold_density",
    "no_overlap",
    "resolve_params",
    "rq1",
    "rq2",
    "rq2_grid",
    "rq4",
    "streamable_cell",
    "summarize",
]

N_BINS = 20
"""Histogram bins over [0, 1]: ``[k/20, (k+1)/20)``, the last one closed."""
MIN_GROUP_N = 10
"""Groups smaller than this are left out of the second Kruskal–Wallis test."""
GROUPINGS: tuple[str, ...] = ("question_type", "domain", "static_or_dynamic")

# How the numbers are computed, recorded in summary.json next to the parameters.
METHODS: dict[str, str] = {
    "quartiles": "numpy.percentile, linear interpolation (numpy default)",
    "skewness": "scipy.stats.skew(bias=True): the moment coefficient g1 = m3 / m2**1.5",
    "histogram": f"{N_BINS} bins over [0, 1], [k/{N_BINS}, (k+1)/{N_BINS}), last bin closed",
    "median_ci95": "scipy.stats.bootstrap's percentile method, 95%; draws per parameters.bootstrap_streams",
    "kruskal_wallis": (
        "scipy.stats.kruskal (tie-corrected); epsilon2 = H / (n - 1) (the anchor's); "
        "epsilon2_adjusted = (H - k + 1) / (n - k), k groups"
    ),
    "dunn_holm": "Dunn (1964) z on mean ranks with Glantz's tie correction, Holm-adjusted, over the groups of the same test (scikit_posthocs.posthoc_dunn(p_adjust='holm'), tested equal)",
    "spearman": "streamrag.base.correlation.spearman: Pearson r of average ranks, two-sided t-test p (scipy.stats.spearmanr's defaults, agreeing to 1e-12)",
}


ADDITIONS: tuple[tuple[str, str, str], ...] = (
    (
        "rq4.question_type.kruskal_wallis_min_n.dunn_holm",
        "Dunn-Holm for n>=10",
        "Dunn-Holm over the types with n >= 10; the anchor ran Dunn-Holm over all 8 types only",
    ),
    (
        "rq4.question_type.kruskal_wallis_all.epsilon2_adjusted",
        "eps2_adj",
        "epsilon2 adjusted for the number of groups; the anchor reports epsilon2 = H/(n - 1)",
    ),
    (
        "rq4.question_type.kruskal_wallis_min_n.epsilon2_adjusted",
        "eps2_adj",
        "epsilon2 adjusted for the number of groups; the anchor reports epsilon2 = H/(n - 1)",
    ),
    ("rq4.domain", "by domain", "phi_suf by domain; the anchor compares question types only"),
    ("rq4.static_or_dynamic", "by static/dynamic", "phi_suf by static/dynamic; the anchor compares question types only"),
    ("rq4.spearman_t_anchor_t_suf", "anchor-word Spearman", "lexical anchor position vs t_suf; not in the anchor study"),
    ("rq4.spearman_phi_anchor_phi_suf", "anchor-word Spearman", "lexical anchor share vs phi_suf; not in the anchor study"),
    (
        "anchor",
        "anchor-word predictors",
        "lexical anchor positions vs question type as predictors of t_suf; not in the anchor study",
    ),
    ("rq2.point.H_G_ms", "H_G", "H_G = min(G + L, residual), streamrag's tighter bound; the anchor states H and H'"),
    ("rq2.grid.H_G_ms", "H_G", "H_G in every grid cell; the anchor states H and H'"),
    (
        "entity_position",
        "entity-position test",
        "rho(t_entity, t_suf) and its error against question type; the anchor concludes it without measuring it",
    ),
)
"""Results of :func:`summarize` the anchor study did not report (design §4), as
``(canonical name, short label for the console, note)``; ``summary["additions"]`` lists
them as ``{"name", "note"}`` (a name inside ``rq2.grid`` applies to every cell)."""


# --------------------------------------------------------------------------- helpers


def describe(values: Iterable[float]) -> dict[str, Any]:
    """n, mean, median, q1, q3, skewness and a 20-bin histogram over [0, 1] of φ values.

    Quartiles use numpy's default (linear) method. Skewness is the biased moment
    coefficient ``g1 = m3 / m2^1.5`` (``scipy.stats.skew(bias=True)``, scipy's default
    and the usual choice for describing a sample this size; the bias correction changes
    it by a factor ``sqrt(n(n−1))/(n−2)``, under 0.6 % at n = 292); None when n < 2 or
    all values are equal. An empty sample has every statistic None and zero counts.
    """
    x = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float)
    edges = [k / N_BINS for k in range(N_BINS + 1)]  # exact k/20, so φ = k/20 falls in bin k
    counts, _ = np.histogram(x, bins=np.array(edges))
    out: dict[str, Any] = {
        "n": int(x.size),
        "mean": None,
        "median": None,
        "q1": None,
        "q3": None,
        "skewness": None,
        "histogram": {"edges": edges, "counts": [int(c) for c in counts]},
    }
    if x.size:
        q1, median, q3 = np.percentile(x, [25, 50, 75])
        out.update(mean=to_float(x.mean()), median=to_float(median), q1=to_float(q1), q3=to_float(q3))
        if x.size >= 2 and np.ptp(x) > 0:
            out["skewness"] = to_float(inference.skewness(x))
    return out


# --------------------------------------------------------------------------- RQ1


def rq1(df: pd.DataFrame) -> dict[str, Any]:
    """RQ1, where stabilization happens.

    ``phi_sc`` over all questions; ``phi_suf`` over retrieved-gold questions; the number
    and share of retrieved-gold questions with ``t_suf = 1`` (gold in the top-k from the
    first word); volatility V (mean, share V > 0, over questions where V is given);
    groundable and retrieved-gold counts with shares of all questions.
    """
    q = active(df)
    n = len(q)
    rg = bool_column(q, "retrieved_gold")
    n_rg = int(rg.sum())
    n_groundable = int(bool_column(q, "groundable").sum())
    t_suf = num_column(q, "t_suf")[rg]
    n_t1 = int((t_suf == 1).sum())
    vol = num_column(q, "volatility")
    vol = vol[~np.isnan(vol)]
    n_vpos = int((vol > 0).sum())
    return {
        "n_questions": n,
        "n_groundable": n_groundable,
        "share_groundable": share(n_groundable, n),
        "n_retrieved_gold": n_rg,
        "share_retrieved_gold": share(n_rg, n),
        "phi_sc": describe(num_column(q, "phi_sc")),
        "phi_suf": describe(num_column(q, "phi_suf")[rg]),
        "n_t_suf_1": n_t1,
        "share_t_suf_1": share(n_t1, n_rg),
        "volatility": {
            "n": int(vol.size),
            "mean": to_float(vol.mean()) if vol.size else None,
            "n_positive": n_vpos,
            "share_positive": share(n_vpos, int(vol.size)),
        },
    }


# --------------------------------------------------------------------------- RQ4


def rq4(
    df: pd.DataFrame,
    *,
    n_resamples: int = DEFAULT_PARAMS["n_resamples"],
    seed: int = DEFAULT_PARAMS["seed"],
    min_group_n: int = MIN_GROUP_N,
    streams: str = DEFAULT_PARAMS["bootstrap_streams"],
) -> dict[str, Any]:
    """RQ4: φ_suf of retrieved-gold questions by question type, domain and static/dynamic
    (:func:`streamrag.analysis.stats.groups.group_stats`), and the Spearman correlations of the
    first anchor word's position with t_suf and φ_suf
    (:func:`streamrag.analysis.stats.groups.anchor_spearman`)."""
    q = active(df)
    out: dict[str, Any] = {
        by: group_stats(q, by, n_resamples=n_resamples, seed=seed, min_group_n=min_group_n, streams=streams) for by in GROUPINGS
    }
    out.update(anchor_spearman(q))
    return out


# --------------------------------------------------------------------------- robustness


def _slice_phi_suf(phi: np.ndarray, t_suf: np.ndarray) -> dict[str, Any]:
    n = int(phi.size)
    n_t1 = int((t_suf == 1).sum())
    return {
        "n": n,
        "mean_phi_suf": to_float(phi.mean()) if n else None,
        "median_phi_suf": to_float(np.median(phi)) if n else None,
        "n_t_suf_1": n_t1,
        "share_t_suf_1": share(n_t1, n),
    }


NO_DENSITY_REASON = "the table has no gold_density column (as the anchor study's published tables)"
"""``gold_density.undefined_reason`` when the input has no ``gold_density`` column."""


def gold_density(df: pd.DataFrame, *, density_cap: float = DEFAULT_PARAMS["density_cap"]) -> dict[str, Any]:
    """Robustness to dense gold: retrieved-gold questions with ``gold_density ≤ cap``
    ("specifically grounded") versus all retrieved-gold questions — n, mean and median
    φ_suf, share ``t_suf = 1``. Questions without a density are counted in
    ``n_density_undefined`` and are not specifically grounded.

    A table without the ``gold_density`` column leaves the specifically grounded slice
    undefined: ``specifically_grounded`` and ``n_density_undefined`` are None and
    ``undefined_reason`` (:data:`NO_DENSITY_REASON`) says why."""
    q = active(df)
    rg = bool_column(q, "retrieved_gold")
    phi = num_column(q, "phi_suf")[rg]
    t_suf = num_column(q, "t_suf")[rg]
    if "gold_density" not in q.columns:
        return {
            "density_cap": float(density_cap),
            "retrieved_gold": _slice_phi_suf(phi, t_suf),
            "specifically_grounded": None,
            "n_density_undefined": None,
            "undefined_reason": NO_DENSITY_REASON,
        }
    dens = num_column(q, "gold_density")[rg]
    specific = dens <= density_cap  # NaN compares False
    return {
        "density_cap": float(density_cap),
        "retrieved_gold": _slice_phi_suf(phi, t_suf),
        "specifically_grounded": _slice_phi_suf(phi[specific], t_suf[specific]),
        "n_density_undefined": int(np.isnan(dens).sum()),
    }


# --------------------------------------------------------------------------- summary


def pick(data: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """``{name: value}`` for canonical names (dotted paths) into nested ``data``; a
    missing key gives None."""
    out: dict[str, Any] = {}
    for name in names:
        node: Any = data
        for part in name.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
        out[name] = node
    return out


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested metrics as ``{canonical name: value}``: ``{"phi_sc": {"mean": x}}`` →
    ``{"phi_sc.mean": x}`` (the sweep table's columns, the notebooks' names)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def headline(rq1_summary: Mapping[str, Any], point: Mapping[str, Any]) -> dict[str, Any]:
    """The headline numbers of an analysis from its RQ1 section and an RQ2 cell, under
    the names they have there (``phi_sc.mean`` is ``rq1["phi_sc"]["mean"]``).

    Used wherever analyses are compared side by side (retrievers, robustness arms, sweep
    points); :func:`flatten` gives the canonical column names.
    """
    r = rq1_summary
    return {
        "n_questions": r["n_questions"],
        "n_groundable": r["n_groundable"],
        "share_groundable": r["share_groundable"],
        "n_retrieved_gold": r["n_retrieved_gold"],
        "share_retrieved_gold": r["share_retrieved_gold"],
        "phi_sc": {"mean": r["phi_sc"]["mean"], "median": r["phi_sc"]["median"]},
        "phi_suf": {"mean": r["phi_suf"]["mean"], "median": r["phi_suf"]["median"]},
        "share_t_suf_1": r["share_t_suf_1"],
        "volatility": {"mean": r["volatility"]["mean"]},
        "streamable_fraction": point["streamable_fraction"],
    }


def no_overlap(q: pd.DataFrame) -> dict[str, Any]:
    """Questions sharing no word with their pages: how many, and how they are counted."""
    n = int(bool_column(q, "no_overlap").sum()) if "no_overlap" in q.columns else None
    return {
        "n": n,
        "note": "no query word occurs in any chunk: t_sc = 1 is a tie-break; t* = n_words in rq2 "
        "and robustness, so these questions are never streamable"
        if n is not None
        else "the table has no no_overlap column (not flagged)",
    }


def chunk_cap(q: pd.DataFrame) -> dict[str, Any]:
    """What the chunk cap dropped over the questions: ``None`` counts when the table does
    not say (published tables, global scope); ``max_chunks`` is set by the analysis."""
    if "n_pages_unread" not in q.columns or "n_chunks_cut" not in q.columns:
        return {"max_chunks": None, "n_questions_capped": None, "n_pages_unread": None, "n_chunks_cut": None}
    unread, cut = num_column(q, "n_pages_unread"), num_column(q, "n_chunks_cut")
    known = ~(np.isnan(unread) | np.isnan(cut))
    return {
        "max_chunks": None,
        "n_questions_capped": int(((unread[known] > 0) | (cut[known] > 0)).sum()) if known.any() else None,
        "n_pages_unread": int(unread[known].sum()) if known.any() else None,
        "n_chunks_cut": int(cut[known].sum()) if known.any() else None,
    }


def summarize(df: pd.DataFrame, *, params: Mapping[str, Any]) -> dict[str, Any]:
    """The whole ``summary.json``: parameters, counts, RQ1, RQ2, RQ4, gold density, the
    anchor comparison and the list of additions to the anchor study (:data:`ADDITIONS`).

    ``params`` overrides :data:`DEFAULT_PARAMS` (keys ``L_ms, delta_wps, theta, G_ms,
    density_cap, n_resamples, seed, bootstrap_streams`` and optionally ``table``); invalid values raise
    :class:`~streamrag.base.errors.ConfigError`. ``n_questions`` counts the questions in the
    statistics, ``n_skipped`` the rows with a ``skip_reason`` (``skip_reasons`` by reason).
    """
    p = resolve_params(params)
    mask = skipped_mask(df)
    q = df[~mask]
    reasons: dict[str, int] = {}
    for reason in sorted(str(r).strip() for r in df.loc[mask, "skip_reason"]) if mask.any() else []:
        reasons[reason] = reasons.get(reason, 0) + 1
    with warnings.catch_warnings():
        # Degenerate inputs are detected and reported as None; library warnings about
        # them would only be noise on the console.
        warnings.simplefilter("ignore", RuntimeWarning)
        return {
            "parameters": {
                **p,
                "grid": {"L_ms": list(GRID_L_MS), "delta_wps": list(GRID_DELTA_WPS), "theta": list(GRID_THETA)},
                "histogram_bins": N_BINS,
                "min_group_n": MIN_GROUP_N,
                "methods": dict(METHODS),
            },
            "n_questions": len(q),
            "n_skipped": int(mask.sum()),
            "skip_reasons": reasons,
            "no_overlap": no_overlap(q),
            "chunk_cap": chunk_cap(q),
            "rq1": rq1(q),
            "rq2": rq2(q, L_ms=p["L_ms"], delta_wps=p["delta_wps"], theta=p["theta"], G_ms=p["G_ms"]),
            "rq4": rq4(q, n_resamples=p["n_resamples"], seed=p["seed"], streams=p["bootstrap_streams"]),
            "gold_density": gold_density(q, density_cap=p["density_cap"]),
            "anchor": anchor_comparison(q),
            "entity_position": entity_position(q),
            "grounding_precision": grounding_precision(q),
            "additions": [{"name": name, "note": note} for name, _, note in ADDITIONS],
        }
