"""Robustness arms, from one analysis pass.

Arms (design §4): top-k ∈ {1, 3, 5} × grounding exact / relaxed. Each arm reports the
groundable and retrieved-gold shares, φ_suf mean and median over its retrieved-gold
questions, and the streamable fraction at the configured (L, δ, θ) — the quantities the
anchor study compares across arms.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from streamrag.analysis._values import to_float
from streamrag.analysis.stabilize import GROUNDING_MODES, ROBUSTNESS_K, QuestionAnalysis
from streamrag.analysis.stats.rq import streamable_cell
from streamrag.data.grounding import GroundingMode


def _arm_table(analyses: Sequence[QuestionAnalysis], k: int, mode: GroundingMode) -> pd.DataFrame:
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
                "no_overlap": bool(a.row.get("no_overlap")),
            }
        )
    return pd.DataFrame(rows, columns=["n_words", "t_sc", "t_suf", "phi_suf", "groundable", "retrieved_gold", "no_overlap"])


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
                    "share_groundable": n_groundable / n if n else None,
                    "n_retrieved_gold": n_rg,
                    "share_retrieved_gold": n_rg / n if n else None,
                    "phi_suf": {
                        "mean": to_float(phi.mean()) if phi.size else None,
                        "median": to_float(np.median(phi)) if phi.size else None,
                    },
                    "streamable_fraction": None if cell is None else cell["streamable_fraction"],
                }
            )
    return out
