"""The anchor study's conclusion put to the test: does entity position govern stabilization?

The study concludes that "stabilization is governed by entity position, not reasoning
complexity". On a table with an entity column (``analyze --entity-predictor``, or joined
from a question file, :mod:`streamrag.analysis.join`) this section of ``summary.json``
(``entity_position``) measures it on the retrieved-gold questions that have an entity.
``predictor`` names the column tested and ``what`` says what it is: ``t_entity``, the
first entity heard (online, the default), or ``t_entity_full``, the whole question tagged
(the anchor's rule); a table with both is tested on ``t_entity``. Below, t_entity stands
for that column:

- ``spearman``: ρ(t_entity, t_suf) with its two-sided p and n;
- ``mae_t_entity_words``: mean |t_entity − t_suf|, the error of t_entity used as the
  prediction of t_suf, in words; ``mae_question_type_words``: the same error when t_suf is
  predicted by the mean t_suf of the question's type (over the same questions) —
  "reasoning complexity" as the study names it;
- ``r2_t_entity``: R² of the least-squares line t_suf ≈ a + b·t_entity;
  ``r2_question_type``: R² of the per-type means (η² = between-type sum of squares / total);
- ``by_type``: per question type n, ρ, p and the mean positions;

each over all those questions (``all``) and without the ``t_suf = 1`` questions
(``t_suf_gt_1``): a first-word hit is mostly a grounding artefact (an answer found on
most chunks), and it cannot depend on where the entity is. ``verdict`` is ``supported``
when, over all questions, ρ > 0 with p < 0.05 *and* t_entity predicts t_suf with a
smaller error than question type; otherwise ``not supported``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from streamrag.analysis._values import active, bool_column, label_column, num_column, to_float
from streamrag.base.correlation import spearman

__all__ = ["ALPHA", "entity_position", "entity_position_lines"]

ALPHA = 0.05
"""Significance level of the verdict."""


def _r2_line(x: np.ndarray, y: np.ndarray) -> float | None:
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    slope, intercept = np.polyfit(x, y, 1)
    residual = y - (intercept + slope * x)
    return to_float(1.0 - float(residual @ residual) / float(((y - y.mean()) ** 2).sum()))


def _type_means(types: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty_like(y)
    for t in set(types.tolist()):
        mask = types == t
        out[mask] = y[mask].mean()
    return out


def _block(t_entity: np.ndarray, t_suf: np.ndarray, types: np.ndarray) -> dict[str, Any]:
    n = int(t_suf.size)
    rho = spearman(t_entity, t_suf)
    out: dict[str, Any] = {"n": n, "spearman": {"rho": rho["rho"], "p": rho["p"], "n": rho["n"]}}
    if n == 0:
        return {
            **out,
            "mae_t_entity_words": None,
            "mae_question_type_words": None,
            "r2_t_entity": None,
            "r2_question_type": None,
            "by_type": {},
        }
    fitted = _type_means(types, t_suf)
    total = float(((t_suf - t_suf.mean()) ** 2).sum())
    by_type: dict[str, Any] = {}
    for t in sorted(set(types.tolist())):
        mask = types == t
        r = spearman(t_entity[mask], t_suf[mask])
        by_type[t] = {
            "n": int(mask.sum()),
            "rho": r["rho"],
            "p": r["p"],
            "mean_t_entity": to_float(t_entity[mask].mean()),
            "mean_t_suf": to_float(t_suf[mask].mean()),
        }
    return {
        **out,
        "mae_t_entity_words": to_float(np.abs(t_entity - t_suf).mean()),
        "mae_question_type_words": to_float(np.abs(fitted - t_suf).mean()),
        "r2_t_entity": _r2_line(t_entity, t_suf),
        "r2_question_type": to_float(1.0 - float(((t_suf - fitted) ** 2).sum()) / total) if total > 0 else None,
        "by_type": by_type,
    }


def _verdict(block: dict[str, Any]) -> str:
    rho, p = block["spearman"]["rho"], block["spearman"]["p"]
    mae_e, mae_t = block["mae_t_entity_words"], block["mae_question_type_words"]
    if rho is None or p is None or mae_e is None or mae_t is None:
        return "undefined"
    return "supported" if rho > 0 and p < ALPHA and mae_e < mae_t else "not supported"


def entity_position(df: pd.DataFrame) -> dict[str, Any] | None:
    """The ``entity_position`` section, or None when the table has no entity column."""
    from streamrag.analysis.studies.entity import ENTITY_COLUMNS, PREDICTORS

    column = next((c for c in ENTITY_COLUMNS.values() if c in df.columns), None)
    if column is None:
        return None
    q = active(df)
    rg = bool_column(q, "retrieved_gold")
    t_entity = num_column(q, column)[rg]
    t_suf = num_column(q, "t_suf")[rg]
    types = np.array([t if t is not None else "" for t in label_column(q, "question_type")[rg]], dtype=object)
    has = ~np.isnan(t_entity)
    t_entity, t_suf, types = t_entity[has], t_suf[has], types[has]
    later = t_suf > 1
    everything = _block(t_entity, t_suf, types)
    return {
        "predictor": column,
        "what": PREDICTORS[column],
        "n_retrieved_gold": int(rg.sum()),
        "n_without_entity": int((~has).sum()),
        "all": everything,
        "t_suf_gt_1": _block(t_entity[later], t_suf[later], types[later]),
        "verdict": _verdict(everything),
        "verdict_rule": f"supported iff rho(t_entity, t_suf) > 0 with p < {ALPHA} and t_entity's error < question type's (all questions)",
    }


def _fmt(x: float | None, spec: str) -> str:
    return "n/a" if x is None else format(x, spec)


def entity_position_lines(section: dict[str, Any] | None) -> list[str]:
    """The console lines of the section (none when the table has no ``t_entity``)."""
    if section is None:
        return []
    lines = [
        f"  entity position, {section['predictor']} (retrieved-gold with an entity: {section['all']['n']} of "
        f"{section['n_retrieved_gold']}): verdict {section['verdict']}"
    ]
    for name, label in (("all", "all"), ("t_suf_gt_1", "t_suf > 1")):
        b = section[name]
        s = b["spearman"]
        lines.append(
            f"    {label}: rho({section['predictor']}, t_suf) {_fmt(s['rho'], '+.3f')} (p {_fmt(s['p'], '.3g')}, n {s['n']}); "
            f"error {_fmt(b['mae_t_entity_words'], '.2f')} words vs question type {_fmt(b['mae_question_type_words'], '.2f')}; "
            f"R2 {_fmt(b['r2_t_entity'], '.3f')} vs {_fmt(b['r2_question_type'], '.3f')}"
        )
    return lines
