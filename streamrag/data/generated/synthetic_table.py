"""A synthetic stabilization table, from a seeded generative model of one question.

:func:`generate_stabilization_table` produces the design §7 columns for any number of
questions, so that the trace-driven simulator (design §5) can run on a population the
size of CRAG's validation split without the CRAG pages. The model is *calibrated* to
what the anchor study reports for CRAG v4 split 0 under the paper preset with k = 3
(design §4) — it does not contain their rows. At 1,371 questions it gives, up to
sampling noise (checked over seeds in the tests):

==================================  ===============  ================
quantity                            anchor (§4)      this model
==================================  ===============  ================
groundable / retrieved-gold         35.4% / 21.3%    ≈ 35% / ≈ 21%
φ_sc mean / median                  0.666 / 0.727    ≈ 0.67 / ≈ 0.73
φ_suf mean / median (retr.-gold)    0.264 / 0.143    ≈ 0.26 / ≈ 0.14
share t_suf = 1 (retrieved-gold)    49%              ≈ 49%
density ≤ 0.05 among retr.-gold     58 / 292 (20%)   ≈ 20%
V mean / share V > 0                0.516 / 20.9%    ≈ 0.5 / ≈ 21%
==================================  ===============  ================

How one question is drawn (each from its own ``SeedSequence(seed, spawn_key=(i,))``):

1. ``n_words``, ``domain``/``static_or_dynamic`` and ``question_type`` from CRAG's
   counts (:mod:`streamrag.data.generated.crag_shape`); ``n_passages`` (chunks) log-normal with
   median 150, capped at 400 like the paper preset.
2. Groundable with probability ``p_groundable`` unless false-premise (its answer
   "invalid question" is never grounded). Gold density ``d``: log10 d ~ Normal; the
   number of gold chunks is ``round(d · n_passages)`` ≥ 1.
3. Retrieved-gold with probability ``logistic(a + b · log10 d)``: dense gold is easier
   to retrieve, which is why sparse-gold ("specifically grounded") questions are rarer
   among the retrieved-gold ones.
4. ``t_suf = 1`` with probability ``logistic(c + e · log10 d + type shift)`` (dense gold
   is hit by the first word: the anchor's 49% → 14% for density ≤ 0.05); otherwise
   ``t_suf = 2 + ⌊u · (n − 1)⌋``, u ~ Beta. The small per-type shifts mimic the weak
   type effect of RQ4 (ε² ≈ 0.05).
5. ``t_sc = 1`` with probability ``p_sc_first`` (the first word already picks the final
   top-1), ``t_sc = n`` with probability ``p_sc_last`` (the last word moves it), else
   ``1 + ⌊u · (n − 1)⌋``, u ~ Beta.
6. Volatility: possible only when ``t_sc ≥ 3`` (top-1 must leave the final chunk and
   come back: V ∈ {0, 2, 3, …}); with probability ``logistic(v0 + v1 · φ_sc)``,
   ``V = 2 + Poisson(λ)`` capped at ``t_sc − 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from streamrag.base.errors import ConfigError
from streamrag.data.generated import crag_shape as profile
from streamrag.data.stabilization_row import STABILIZATION_COLUMNS

__all__ = ["TABLE_COLUMNS", "TableModel", "generate_stabilization_table"]

TABLE_COLUMNS = STABILIZATION_COLUMNS
"""The generated table has the contract columns (:mod:`streamrag.data.stabilization_row`)."""


@dataclass(frozen=True, slots=True)
class TableModel:
    """Parameters of the generative model (see the module docstring for each step)."""

    passages_median: float = 150.0
    passages_sigma: float = 0.6
    max_passages: int = 400
    p_groundable: float = 0.41  # among non-false-premise questions → ≈ 35.4% overall
    log10_density_mean: float = -0.95
    log10_density_sd: float = 0.55
    retrieve_a: float = 1.12
    retrieve_b: float = 0.75
    t1_c: float = 2.1
    t1_e: float = 2.5
    late_alpha: float = 0.85
    late_beta: float = 1.9
    p_sc_first: float = 0.11
    p_sc_last: float = 0.17
    sc_alpha: float = 3.1
    sc_beta: float = 1.35
    vol_v0: float = -2.6
    vol_v1: float = 1.9
    vol_lambda: float = 0.55
    # logit shifts of P(t_suf = 1) per type: aggregation and comparison questions stabilize
    # later, simple ones earlier (the anchor's closest Dunn pair is simple–aggregation).
    type_shift: tuple[tuple[str, float], ...] = (
        ("simple", 0.25),
        ("simple_w_condition", 0.0),
        ("set", 0.1),
        ("comparison", -0.3),
        ("aggregation", -0.55),
        ("multi-hop", -0.2),
        ("post-processing", -0.1),
        ("false_premise", 0.0),
    )


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + np.exp(-x))


def _row(question_idx: int, seed: int, model: TableModel, shifts: dict[str, float]) -> dict:
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(question_idx,)))
    interaction_id = f"synthetic-{seed}-{question_idx:07d}"
    domain, dynamism = profile.draw_domain_and_dynamism(rng)
    question_type = profile.draw_question_type(rng)
    n = profile.draw_n_words(rng)
    n_passages = int(np.clip(round(rng.lognormal(np.log(model.passages_median), model.passages_sigma)), 1, model.max_passages))

    groundable = question_type != "false_premise" and rng.random() < model.p_groundable
    density = 0.0
    retrieved = False
    t_suf: float = np.nan
    if groundable:
        log_d = rng.normal(model.log10_density_mean, model.log10_density_sd)
        n_gold = int(np.clip(round(10.0**log_d * n_passages), 1, n_passages))
        density = n_gold / n_passages
        log_d = np.log10(density)
        retrieved = rng.random() < _logistic(model.retrieve_a + model.retrieve_b * log_d)
        if retrieved:
            p_first = _logistic(model.t1_c + model.t1_e * log_d + shifts.get(question_type, 0.0))
            if n == 1 or rng.random() < p_first:
                t_suf = 1.0
            else:
                t_suf = float(min(n, 2 + int(rng.beta(model.late_alpha, model.late_beta) * (n - 1))))

    u_sc = rng.random()
    if u_sc < model.p_sc_first:
        t_sc = 1
    elif u_sc < model.p_sc_first + model.p_sc_last:
        t_sc = n
    else:
        t_sc = min(n, 1 + int(rng.beta(model.sc_alpha, model.sc_beta) * (n - 1)))
    volatility = 0
    if t_sc >= 3 and rng.random() < _logistic(model.vol_v0 + model.vol_v1 * t_sc / n):
        volatility = int(min(t_sc - 1, 2 + rng.poisson(model.vol_lambda)))

    return {
        "interaction_id": interaction_id,
        "domain": domain,
        "question_type": question_type,
        "static_or_dynamic": dynamism,
        "n_words": n,
        "n_passages": n_passages,
        "groundable": groundable,
        "retrieved_gold": retrieved,
        "t_sc": t_sc,
        "phi_sc": t_sc / n,
        "t_suf": t_suf,
        "phi_suf": t_suf / n,
        "volatility": volatility,
        "gold_density": density,
    }


def generate_stabilization_table(n_questions: int, *, seed: int, model: TableModel | None = None) -> pd.DataFrame:
    """A stabilization table (design §7 columns) of ``n_questions`` synthetic questions.

    Row ``i`` depends only on ``(seed, i)``. ``t_suf``/``phi_suf`` are NaN where
    undefined (not retrieved-gold); ``gold_density`` is 0 for non-groundable questions.
    Distributions approximate the anchor study (see the module docstring).
    """
    if n_questions < 0:
        raise ConfigError(f"n_questions must be ≥ 0, got {n_questions}")
    model = model or TableModel()
    shifts = dict(model.type_shift)
    rows = [_row(i, seed, model, shifts) for i in range(n_questions)]
    frame = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    return frame.astype(
        {
            "n_words": "int64",
            "n_passages": "int64",
            "groundable": "bool",
            "retrieved_gold": "bool",
            "t_sc": "int64",
            "phi_sc": "float64",
            "t_suf": "float64",
            "phi_suf": "float64",
            "volatility": "int64",
            "gold_density": "float64",
        }
    )
