"""Per-prefix evidence for a synthetic stabilization table, consistent with its rows.

A generated table (:func:`~streamrag.data.generated.synthetic_table.generate_stabilization_table`)
gives t_sc, t_suf and V per question but no rankings. So that a replay of it runs the
real heuristic reflector instead of the oracle rule, this module draws evidence that
*reproduces each row exactly* (the evidence's t_sc, V and t_suf at k = 3 are the row's)
and whose reflector-relevant values follow a model calibrated to the real CRAG sample
(``dev_data.jsonl.bz2``, 10 questions, 118 prefixes, paper preset, measured with
``streamrag analyze``):

=====================================  ==============================  ====================
quantity                               measured on the real sample     model
=====================================  ==============================  ====================
full-query score of the final top-1    log-mean 2.35, log-sd 0.35      log-normal(2.35, 0.35)
distinct coverage of the final top-1   mean 0.65, sd 0.15              normal(0.65, 0.15) in [0, 1]
score of another top-1 / final score   median 0.81, P90 0.98           Beta(2.30, 0.757)
distinct coverage of another top-1     median 0.60                     normal(0.58, 0.15) in [0, 1]
=====================================  ==============================  ====================

How a question's evidence is drawn (from ``SeedSequence(seed, spawn_key=(i, 1))``, so
the table's own draws are untouched):

1. top-1 sequence: the final top chunk f from t_sc on; before it, when V > 0, f is
   first reached at t_sc − V and then alternates with V − 1 other chunks (V changes
   after f is first reached); every other prefix before t_sc has another chunk, drawn
   with a 0.5 chance of repeating the previous prefix's;
2. ranks 2–5: other chunk ids; the gold chunk g (groundable questions) is f itself when
   that keeps t_suf (half the time), else another chunk, in the top-3 (rank 2 or 3, or
   1 when g = f) from t_suf on with probability 0.85 per prefix and otherwise at rank 4
   or 5 — absent from the top-3 before t_suf; never in the top-3 of a question that is
   not retrieved-gold;
3. per top chunk: the full query's score and distinct coverage from the table above
   (a chunk keeps its values across prefixes); token-occurrence coverage equals the
   distinct one (the model has no repeated query words).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from streamrag.analysis.evidence.prefixes import PrefixEvidence

__all__ = ["MODEL_NAME", "synthetic_evidence"]

MODEL_NAME = "synthetic evidence (streamrag.analysis.evidence.synthetic, calibrated to the real CRAG sample)"

FINAL_LOG_SCORE = (2.35, 0.35)
FINAL_COVERAGE = (0.65, 0.15)
OTHER_RELATIVE_SCORE = (2.2976, 0.7570)
OTHER_COVERAGE = (0.58, 0.15)
P_GOLD_IS_FINAL = 0.5
P_GOLD_STAYS = 0.85
P_REPEAT_EARLY = 0.5


def _top1_sequence(n: int, t_sc: int, volatility: int, rng: np.random.Generator, final: int, ids: list[int]) -> list[int]:
    seq = [final] * n
    fresh = iter(ids)
    first_reach = t_sc - volatility if volatility > 0 else t_sc
    prev: int | None = None
    for t in range(1, first_reach):
        chunk = prev if prev is not None and rng.random() < P_REPEAT_EARLY else next(fresh)
        seq[t - 1] = prev = chunk
    if volatility > 0:  # f at first_reach, then V − 1 other chunks, then f at t_sc
        for t in range(first_reach + 1, t_sc):
            seq[t - 1] = next(fresh)
    return seq


def _question(row: pd.Series, i: int, seed: int) -> PrefixEvidence:
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i, 1)))
    n, t_sc, volatility = int(row["n_words"]), int(row["t_sc"]), int(row["volatility"])
    t_suf = None if pd.isna(row["t_suf"]) else int(row["t_suf"])
    n_chunks = max(int(row["n_passages"]), 6 + 2 * n)  # enough distinct ids for every rank
    ids = rng.permutation(n_chunks).tolist()
    final, pool = ids[0], ids[1:]
    top1 = _top1_sequence(n, t_sc, volatility, rng, final, pool[: 2 * n])
    others = pool[2 * n :]
    first_reach = t_sc - volatility if volatility > 0 else t_sc
    gold: int | None = None
    if bool(row["groundable"]):
        keeps = t_suf is not None and first_reach >= t_suf
        gold = final if keeps and rng.random() < P_GOLD_IS_FINAL else others[0]
    fillers = [c for c in others if c != gold]
    top_ids = np.empty((n, 5), dtype=np.int32)
    gold_rank = np.zeros(n, dtype=np.int8)
    for t in range(1, n + 1):
        head = top1[t - 1]
        picks = rng.choice(len(fillers), size=4, replace=False)
        row_ids = [head, *(fillers[p] for p in picks)]
        if gold is not None and gold != head:
            in_top3 = t_suf is not None and (t == t_suf or (t > t_suf and rng.random() < P_GOLD_STAYS))
            rank = int(rng.integers(2, 4)) if in_top3 else int(rng.integers(4, 6))
            row_ids[rank - 1] = gold
        top_ids[t - 1] = row_ids
        if gold is not None:
            gold_rank[t - 1] = row_ids.index(gold) + 1 if gold in row_ids else 0
    mu, sigma = FINAL_LOG_SCORE
    final_score = math.exp(rng.normal(mu, sigma))
    values: dict[int, tuple[float, float]] = {final: (final_score, float(np.clip(rng.normal(*FINAL_COVERAGE), 0.0, 1.0)))}
    for c in dict.fromkeys(top1):
        if c not in values:
            rel = float(rng.beta(*OTHER_RELATIVE_SCORE))
            values[c] = (final_score * rel, float(np.clip(rng.normal(*OTHER_COVERAGE), 0.0, 1.0)))
    score = np.array([values[c][0] for c in top1])
    coverage = np.array([values[c][1] for c in top1])
    return PrefixEvidence(top_ids, score, coverage, coverage.copy(), gold_rank, "bm25")


def synthetic_evidence(table: pd.DataFrame, *, seed: int) -> dict[str, PrefixEvidence]:
    """Evidence for every row of a generated table, by interaction id (see the module docstring)."""
    return {str(row["interaction_id"]): _question(row, i, seed) for i, row in table.iterrows()}
