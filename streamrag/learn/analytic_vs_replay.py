"""The learned trigger's analytic saving beside its replayed one, question by question.

The anchor scores its trigger analytically (:mod:`streamrag.learn.paper`): a fire at
t ≥ t_suf saves H(t), an earlier one H(t_suf) − C_waste. ``simulate`` replays the same
fires through the pipeline — G and L drawn from the profile, the heuristic reflector
judging each result, the paper rules' full-query refire when none is sufficient — and
measures ``saved_ms``. Where they disagree, each question gets one reason:

==========================  ===============================================================
``premature_accepted``      fired before t_suf, but the reflector accepted that result (the
                            analytic rule charges C_waste; the heuristic does not know gold)
``premature_rejected``      fired before t_suf and refired on the full query: the replay pays
                            G + L after the end of input, not C_waste
``late_fire_rejected``      fired at or after t_suf, the reflector still rejected it (the
                            refire penalty the analytic rule never charges)
``overlap``                 accepted at or after t_suf: the replay hides G + L (not only L) up
                            to the residual input, so the saving differs by the G overlap
``no_fire``                 never fired: analytic 0; the replay is 0 too
==========================  ===============================================================
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from streamrag.base.correlation import spearman
from streamrag.learn.paper import AnalyticParams, analytic_saving, decode_fire


def analytic_fires(
    features: Mapping[str, dict[str, np.ndarray]], probabilities: Mapping[str, np.ndarray], tau: float
) -> dict[str, int | None]:
    """The single-fire position per question: the first t with P(t) ≥ τ."""
    return {qid: decode_fire(f["t"].astype(int).tolist(), probabilities[qid].tolist(), tau) for qid, f in features.items()}


def reason(fire_t: int | None, t_suf: int, misfire: bool, accepted_call: bool) -> str:
    if fire_t is None:
        return "no_fire"
    if fire_t < t_suf:
        return "premature_accepted" if accepted_call else "premature_rejected"
    return "overlap" if not misfire else "late_fire_rejected"


def compare(rows: Sequence[Mapping[str, Any]], fires: Mapping[str, int | None], a: AnalyticParams) -> dict[str, Any]:
    """Analytic vs replayed saving over the replayed retrieved-gold questions of ``rows``
    (``results.csv`` rows: interaction_id, n_words, t_star, saved_ms, misfire, calls_used)."""
    analytic, replayed, reasons, gaps = [], [], [], []
    for r in rows:
        qid = str(r["interaction_id"])
        if r.get("saved_ms") in (None, "") or qid not in fires:
            continue
        t_suf, n = int(r["t_star"]), int(r["n_words"])
        ft = fires[qid]
        an = analytic_saving(ft, t_suf, n, a)
        rep = float(r["saved_ms"])
        misfire = str(r["misfire"]) in ("True", "1", "true")
        accepted = not misfire and ft is not None
        why = reason(ft, t_suf, misfire, accepted)
        analytic.append(an)
        replayed.append(rep)
        reasons.append(why)
        gaps.append(rep - an)
    if not analytic:
        return {"n_questions": 0}
    an_a, rep_a, gap_a = np.array(analytic), np.array(replayed), np.array(gaps)
    by_reason: dict[str, Any] = {}
    for why, count in sorted(Counter(reasons).items()):
        mask = np.array([x == why for x in reasons])
        by_reason[why] = {"n": count, "mean_analytic_ms": float(an_a[mask].mean()), "mean_replayed_ms": float(rep_a[mask].mean())}
    rho = spearman(an_a, rep_a)["rho"]
    return {
        "n_questions": len(analytic),
        "analytic": {
            "mean_ms": float(an_a.mean()),
            "median_ms": float(np.median(an_a)),
            "misfire_rate": sum(1 for x in reasons if x.startswith("premature")) / len(reasons),
            "net_negative_rate": float((an_a <= 0).mean()),
        },
        "replayed": {
            "mean_ms": float(rep_a.mean()),
            "median_ms": float(np.median(rep_a)),
            "misfire_rate": sum(1 for x in reasons if x in ("premature_rejected", "late_fire_rejected")) / len(reasons),
            "net_negative_rate": float((rep_a <= 0).mean()),
        },
        "spearman_analytic_vs_replayed": rho,
        "mean_gap_ms": float(gap_a.mean()),
        "by_reason": by_reason,
    }
