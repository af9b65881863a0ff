"""BM25 versus dense retrieval on the same chunks, grounding and questions (summary.json ``retrievers``).

Filled when the analysis ran with ``compare_retrievers`` (``streamrag analyze
--compare-retrievers``): every analyzed question was ranked by both retrievers, so the
arms differ only in the ranking. Per arm (``arms.bm25``, ``arms.dense``):

- retrieved-gold count and share (of all analyzed questions), groundable count (the
  same in both: grounding does not depend on the retriever);
- φ_suf (retrieved-gold questions) and φ_sc (all) mean and median, share ``t_suf = 1``,
  volatility mean;
- streamable fraction at the configured (L, δ, θ) — ``H ≥ θ·L`` over all questions;
- φ_suf by question type: n (retrieved-gold) and median.

Across arms:

- ``type_order``: Spearman ρ between the two arms' per-type median φ_suf, over the types
  with at least one retrieved-gold question in both arms (and, in ``type_order_min_n``,
  at least ``MIN_GROUP_N`` in both) — does dense retrieval keep the ordering of question
  types by how early they stabilize? ρ is None with fewer than 3 types or a constant side;
- ``agreement``: per question, Spearman ρ of φ_sc (all questions) and of φ_suf (questions
  retrieved-gold in both arms), and the counts retrieved-gold in both / only one arm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from streamrag.analysis._values import bool_column, label_column, num_column, share, to_float
from streamrag.analysis.stats.rq import MIN_GROUP_N, headline, rq1, streamable_cell
from streamrag.base.correlation import spearman

if TYPE_CHECKING:
    from streamrag.analysis.stabilize import QuestionAnalysis

__all__ = ["retriever_comparison"]

RETRIEVERS = ("bm25", "dense")


def _frame(analyses: Sequence[QuestionAnalysis], name: str) -> pd.DataFrame:
    rows = [a.by_retriever[name] for a in analyses]
    return pd.DataFrame(
        rows,
        columns=[
            "interaction_id",
            "question_type",
            "n_words",
            "groundable",
            "retrieved_gold",
            "t_sc",
            "phi_sc",
            "t_suf",
            "phi_suf",
            "volatility",
        ],
    )


def _by_type(df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    rg = bool_column(df, "retrieved_gold")
    types = label_column(df, "question_type")
    phi = num_column(df, "phi_suf")
    out: dict[str, dict[str, Any]] = {}
    for t in sorted({x for x in types[rg] if x is not None}):
        values = phi[rg & (types == t)]
        out[t] = {"n": int(values.size), "median_phi_suf": to_float(np.median(values))}
    return out


def _arm(df: pd.DataFrame, params: Mapping[str, Any]) -> dict[str, Any]:
    cell = streamable_cell(df, L_ms=params["L_ms"], delta_wps=params["delta_wps"], theta=params["theta"], G_ms=params["G_ms"])
    return {**headline(rq1(df), cell), "by_type": _by_type(df)}


def _spearman(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    s = spearman(x, y)
    return {"n": s["n"], "rho": s["rho"], "p": s["p"]}


def _type_order(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], min_n: int) -> dict[str, Any]:
    types = [t for t in sorted(set(a) & set(b)) if a[t]["n"] >= min_n and b[t]["n"] >= min_n]
    out = _spearman([a[t]["median_phi_suf"] for t in types], [b[t]["median_phi_suf"] for t in types])
    out["types"] = types
    out["min_n"] = min_n
    return out


def retriever_comparison(analyses: Sequence[QuestionAnalysis], params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``retrievers`` section, or None when the questions were not ranked by both retrievers."""
    done = [a for a in analyses if a.rankings is not None]
    if not done or any(set(a.by_retriever) != set(RETRIEVERS) for a in done):
        return None
    frames = {name: _frame(done, name) for name in RETRIEVERS}
    arms = {name: _arm(df, params) for name, df in frames.items()}
    bm25, dense = frames["bm25"], frames["dense"]
    rg_b, rg_d = bool_column(bm25, "retrieved_gold"), bool_column(dense, "retrieved_gold")
    both = rg_b & rg_d
    return {
        "retrievers": list(RETRIEVERS),
        "arms": arms,
        "type_order": _type_order(arms["bm25"]["by_type"], arms["dense"]["by_type"], 1),
        "type_order_min_n": _type_order(arms["bm25"]["by_type"], arms["dense"]["by_type"], MIN_GROUP_N),
        "agreement": {
            "n_questions": len(done),
            "n_retrieved_gold_both": int(both.sum()),
            "n_retrieved_gold_bm25_only": int((rg_b & ~rg_d).sum()),
            "n_retrieved_gold_dense_only": int((rg_d & ~rg_b).sum()),
            "share_retrieved_gold_both": share(int(both.sum()), len(done)),
            "phi_sc_spearman": _spearman(num_column(bm25, "phi_sc").tolist(), num_column(dense, "phi_sc").tolist()),
            "phi_suf_spearman": _spearman(
                num_column(bm25, "phi_suf")[both].tolist(), num_column(dense, "phi_suf")[both].tolist()
            ),
        },
    }
