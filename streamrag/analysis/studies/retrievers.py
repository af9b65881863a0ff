"""Retrievers compared on the same chunks, grounding and questions (summary.json ``retrievers``).

Filled when the analysis ran with ``compare_retrievers`` (``streamrag analyze
--compare-retrievers [LIST]``): every analyzed question was ranked by each retriever, so
the arms differ only in the ranking. Each arm is keyed by the retriever's stable name,
its ``label`` (``bm25``, ``dense``, ``rank_bm25``, ``FILE.py:Class``,
``package.module:Class``), in the order compared (the analysis' own retriever first).

Per arm (``arms.NAME``):

- ``retriever``: its settings (kind; a class's target and the SHA-256 of its file);
- the headline, as robustness arms and sweep points name it: retrieved-gold count and
  share (of all analyzed questions), groundable count (the same in every arm: grounding
  does not depend on the retriever), φ_suf (retrieved-gold) and φ_sc (all) mean and
  median, share ``t_suf = 1``, volatility mean, streamable fraction at the configured
  (L, δ, θ);
- ``by_type``: φ_suf by question type, n (retrieved-gold) and median;
- ``rq1``, ``rq2`` and ``rq4``: the sections of the same names of ``summary.json``,
  computed on this arm's rows alone (:mod:`streamrag.analysis.stats.rq`);
- ``reflector``: the heuristic reflector's threshold for this retriever under both rules
  (:mod:`streamrag.base.threshold`) — ``scale`` of the score it reads; ``fixed``: the
  anchor's threshold for that scale and how many final-query top-1 results clear it;
  ``calibrated``: the threshold set from this arm's final-query scores so that it accepts
  as many as the anchor's BM25 threshold accepts of BM25's, and the counts that set it.

Across arms, ``pairs``: each arm against each later one (``a``, ``b``):

- ``type_order``: Spearman ρ between the two arms' per-type median φ_suf, over the types
  with at least one retrieved-gold question in both arms (and, in ``type_order_min_n``,
  at least ``MIN_GROUP_N`` in both) — does the other retriever keep the ordering of
  question types by how early they stabilize? ρ is None with fewer than 3 types or a
  constant side;
- ``agreement``: per question, Spearman ρ of φ_sc (all questions) and of φ_suf (questions
  retrieved-gold in both arms), and the counts retrieved-gold in both / in ``a`` only /
  in ``b`` only.

:func:`comparison_table` gives the per-question rows of every arm (``retrievers.csv``):
one row per question and retriever, the retriever's name first, its stabilization row,
the score its reflector reads of the final-query top-1 chunk, and whether each rule's
threshold accepts it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from streamrag.analysis._values import bool_column, label_column, num_column, share, to_float
from streamrag.analysis.stats.rq import MIN_GROUP_N, headline, rq1, rq2, rq4, streamable_cell
from streamrag.analysis.table import rows_frame
from streamrag.base.correlation import spearman
from streamrag.base.threshold import ANCHOR_COSINE_THRESHOLD, ANCHOR_SCORE_THRESHOLD, ScoreSample, calibrate

if TYPE_CHECKING:
    from streamrag.analysis.stabilize import QuestionAnalysis

__all__ = ["COMPARISON_FIGURE", "COMPARISON_FILE", "comparison_table", "retriever_comparison"]

COMPARISON_FILE = "retrievers.csv"
"""The per-question rows of every compared retriever, beside ``stabilization.csv``."""

COMPARISON_FIGURE = "retrievers"
"""The comparison figure's file stem (``retrievers.png`` by default)."""

FINAL_SCORE = "top1_final_score"
"""``retrievers.csv``: the full query's score of the final prefix's top-1 chunk, the number the reflector reads."""


def _labels(done: Sequence[QuestionAnalysis]) -> list[str] | None:
    """The compared retrievers' names in order, or None when the questions were not all
    ranked by the same ones (or by one alone)."""
    if not done:
        return None
    labels = list(done[0].by_retriever)
    if len(labels) < 2 or any(list(a.by_retriever) != labels for a in done):
        return None
    return labels


def _frame(done: Sequence[QuestionAnalysis], name: str) -> pd.DataFrame:
    return rows_frame([a.by_retriever[name].row for a in done])


def _by_type(df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    rg = bool_column(df, "retrieved_gold")
    types = label_column(df, "question_type")
    phi = num_column(df, "phi_suf")
    out: dict[str, dict[str, Any]] = {}
    for t in sorted({x for x in types[rg] if x is not None}):
        values = phi[rg & (types == t)]
        out[t] = {"n": int(values.size), "median_phi_suf": to_float(np.median(values))}
    return out


def _samples(done: Sequence[QuestionAnalysis], name: str) -> ScoreSample:
    pairs = [(a.by_retriever[name].final_score, a.reference_score) for a in done]
    kept = [(s, b) for s, b in pairs if s is not None and b is not None]
    return ScoreSample.of([s for s, _ in kept], [b for _, b in kept])


def fixed_threshold(scale: str) -> float:
    """The anchor's threshold for scores on ``scale`` (the ``fixed`` rule's)."""
    return ANCHOR_COSINE_THRESHOLD if scale == "cosine" else ANCHOR_SCORE_THRESHOLD


def _reflector(done: Sequence[QuestionAnalysis], name: str) -> dict[str, Any]:
    """The arm's reflector thresholds under both rules (module docstring)."""
    scale = done[0].by_retriever[name].scale
    sample = _samples(done, name)
    fixed = fixed_threshold(scale)
    n_fixed = int(np.count_nonzero(sample.scores >= fixed))
    calibrated = calibrate(sample, ANCHOR_SCORE_THRESHOLD)
    return {
        "scale": scale,
        "fixed": {"rule": "fixed", "threshold": fixed, "n_accepted": n_fixed, "share_accepted": share(n_fixed, sample.n)},
        "calibrated": None
        if calibrated is None
        else {**calibrated.as_dict(), "share_accepted": share(calibrated.n_accepted, sample.n)},
    }


def _arm(done: Sequence[QuestionAnalysis], name: str, df: pd.DataFrame, params: Mapping[str, Any]) -> dict[str, Any]:
    L_ms, delta, theta, G_ms = params["L_ms"], params["delta_wps"], params["theta"], params["G_ms"]
    cell = streamable_cell(df, L_ms=L_ms, delta_wps=delta, theta=theta, G_ms=G_ms)
    first = rq1(df)
    return {
        **headline(first, cell),
        "by_type": _by_type(df),
        "rq1": first,
        "rq2": rq2(df, L_ms=L_ms, delta_wps=delta, theta=theta, G_ms=G_ms),
        "rq4": rq4(df, n_resamples=params["n_resamples"], seed=params["seed"], streams=params["bootstrap_streams"]),
        "reflector": _reflector(done, name),
    }


def _spearman(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    s = spearman(x, y)
    return {"n": s["n"], "rho": s["rho"], "p": s["p"]}


def _type_order(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], min_n: int) -> dict[str, Any]:
    types = [t for t in sorted(set(a) & set(b)) if a[t]["n"] >= min_n and b[t]["n"] >= min_n]
    out = _spearman([a[t]["median_phi_suf"] for t in types], [b[t]["median_phi_suf"] for t in types])
    out["types"] = types
    out["min_n"] = min_n
    return out


def _pair(a: str, b: str, frames: Mapping[str, pd.DataFrame], arms: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    fa, fb = frames[a], frames[b]
    rg_a, rg_b = bool_column(fa, "retrieved_gold"), bool_column(fb, "retrieved_gold")
    both = rg_a & rg_b
    return {
        "a": a,
        "b": b,
        "type_order": _type_order(arms[a]["by_type"], arms[b]["by_type"], 1),
        "type_order_min_n": _type_order(arms[a]["by_type"], arms[b]["by_type"], MIN_GROUP_N),
        "agreement": {
            "n_questions": len(fa),
            "n_retrieved_gold_both": int(both.sum()),
            "n_retrieved_gold_a_only": int((rg_a & ~rg_b).sum()),
            "n_retrieved_gold_b_only": int((rg_b & ~rg_a).sum()),
            "share_retrieved_gold_both": share(int(both.sum()), len(fa)),
            "phi_sc_spearman": _spearman(num_column(fa, "phi_sc").tolist(), num_column(fb, "phi_sc").tolist()),
            "phi_suf_spearman": _spearman(num_column(fa, "phi_suf")[both].tolist(), num_column(fb, "phi_suf")[both].tolist()),
        },
    }


def retriever_comparison(
    analyses: Sequence[QuestionAnalysis], params: Mapping[str, Any], retrievers: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """The ``retrievers`` section, or None when the questions were not ranked by the same
    two or more retrievers. ``retrievers``: each arm's settings by name (its ``retriever``
    key; absent: the name alone)."""
    done = [a for a in analyses if a.rankings is not None]
    labels = _labels(done)
    if labels is None:
        return None
    frames = {name: _frame(done, name) for name in labels}
    arms = {name: _arm(done, name, frames[name], params) for name in labels}
    for name in labels:
        arms[name] = {"retriever": dict((retrievers or {}).get(name) or {"name": name}), **arms[name]}
    return {
        "retrievers": labels,
        "reference": {
            "what": "the full query's BM25 score of BM25's top-1 chunk, per question",
            "threshold": ANCHOR_SCORE_THRESHOLD,
        },
        "arms": arms,
        "pairs": [_pair(a, b, frames, arms) for i, a in enumerate(labels) for b in labels[i + 1 :]],
    }


def comparison_table(analyses: Sequence[QuestionAnalysis], section: Mapping[str, Any]) -> pd.DataFrame:
    """``retrievers.csv``: every question once per compared retriever (in the section's
    order; a question the analysis skipped with its reason), the retriever's name first,
    then its stabilization row, :data:`FINAL_SCORE` and whether the ``fixed`` and the
    ``calibrated`` threshold accept that score (empty: no score)."""
    frames = []
    for name in section["retrievers"]:
        reflector = section["arms"][name]["reflector"]
        fixed = reflector["fixed"]["threshold"]
        calibrated = (reflector["calibrated"] or {}).get("threshold")
        arms = [a.by_retriever.get(name) for a in analyses]
        df = rows_frame([a.row if arm is None else arm.row for a, arm in zip(analyses, arms, strict=True)])
        scores = [None if arm is None else arm.final_score for arm in arms]
        df.insert(0, "retriever", name)
        df[FINAL_SCORE] = pd.array(scores, dtype="Float64")
        df["accepted_fixed"] = pd.array([None if s is None else s >= fixed for s in scores], dtype="boolean")
        df["accepted_calibrated"] = pd.array(
            [None if s is None or calibrated is None else s >= calibrated for s in scores], dtype="boolean"
        )
        frames.append(df)
    return pd.concat(frames, ignore_index=True)
