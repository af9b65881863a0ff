"""The anchor's analytic evaluation of a learned trigger (the ``paper`` evaluation).

Its rules, from its ``experiments/train_trigger.py`` (our code, its rules):

- a question counts when its target is defined (``suf``: t_suf, the retrieved-gold
  questions; ``sc``: t_sc, all); its words in ``t`` order;
- the trigger fires at the first t with P(t) ≥ τ (none: no fire);
- analytic saving: no fire → 0; a fire at t ≥ target saves H(t) = min(L, (n − t)/δ·1000);
  an earlier one saves H(target) − C_waste;
- ``misfire_rate``: share of questions fired before the target; ``net_negative_rate``:
  share with saving ≤ 0 (a question with no fire counts, its saving is 0);
  ``mean_calls``: 2 for a premature fire, else 1 (no fire: 1, the full query);
- ``median_saving_correct_fires``: the upper median (element ⌊m/2⌋ of the sorted savings)
  of the fires at or after the target, 0 when none;
- ``spearman_fire_vs_tsuf``: Spearman ρ (average ranks) of the fire position (n when it
  never fires) against the target, rounded to 10 digits — and, as its code computes it,
  ``round(max(−1, min(1, r)))`` with r undefined (a constant side) giving **1.0** (Python's
  ``min(1.0, nan)`` is 1.0): reproduced, and flagged ``spearman_undefined`` in our output;
- the fixed-interval baseline fires at m, 2m, … until one lands at or after the target;
  calls = fires made (at least 1); the single-fire baseline fires once at min(k, n).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from streamrag.analysis.metrics import H
from streamrag.base.correlation import average_ranks

__all__ = [
    "AnalyticParams",
    "Question",
    "analytic_saving",
    "baseline_frontier",
    "decode_fire",
    "evaluate",
    "paper_spearman",
    "questions_of",
    "single_fire_frontier",
]


@dataclass(frozen=True, slots=True)
class AnalyticParams:
    """The anchor's defaults: L = 600 ms, δ = 3 words/s, C_waste = 600 ms."""

    L_ms: float = 600.0
    delta_wps: float = 3.0
    c_waste_ms: float = 600.0


@dataclass(frozen=True, slots=True)
class Question:
    """One question of a feature table: its row indices in ``t`` order and its targets."""

    interaction_id: str
    rows: np.ndarray
    n_words: int
    t_suf: int | None
    t_sc: int

    def target(self, target: str) -> int | None:
        return self.t_suf if target == "suf" else self.t_sc


def questions_of(columns: dict[str, np.ndarray]) -> list[Question]:
    """The table's questions in order of first appearance."""
    ids = columns["interaction_id"]
    order: dict[str, list[int]] = {}
    for i, qid in enumerate(ids.tolist()):
        order.setdefault(qid, []).append(i)
    out = []
    t = columns["t"]
    for qid, idx in order.items():
        rows = np.array(sorted(idx, key=lambda i: t[i]), dtype=np.int64)
        first = rows[0]
        t_suf = columns["t_suf"][first]
        out.append(
            Question(
                qid, rows, int(columns["n_words"][first]), None if math.isnan(t_suf) else int(t_suf), int(columns["t_sc"][first])
            )
        )
    return out


def decode_fire(ts: Sequence[int], probs: Sequence[float], tau: float) -> int | None:
    """The first t with P ≥ τ (None: never)."""
    for t, p in zip(ts, probs, strict=True):
        if p >= tau:
            return int(t)
    return None


def analytic_saving(fire_t: int | None, target_t: int, n: int, a: AnalyticParams) -> float:
    if fire_t is None:
        return 0.0
    if fire_t >= target_t:
        return H(n, fire_t, a.L_ms, a.delta_wps)
    return H(n, target_t, a.L_ms, a.delta_wps) - a.c_waste_ms


def paper_spearman(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, bool]:
    """(ρ as the anchor reports it, undefined?): see the module docstring for the 1.0 quirk
    (fewer than two questions: None, where the anchor's code gives NaN)."""
    if len(x) < 2:
        return None, True
    rx, ry = average_ranks(x), average_ranks(y)
    cx, cy = rx - rx.mean(), ry - ry.mean()
    vx, vy = math.sqrt(float((cx**2).sum())), math.sqrt(float((cy**2).sum()))
    if not vx or not vy:
        return 1.0, True
    return round(max(-1.0, min(1.0, float((cx * cy).sum()) / (vx * vy))), 10), False


def evaluate(questions: Sequence[Question], probs: np.ndarray, t: np.ndarray, tau: float, target: str, a: AnalyticParams) -> dict:
    """The anchor's ``evaluate``: ``probs``/``t`` per table row (the model's P and the word)."""
    fire_ts, true_ts, savings, premature, calls, correct = [], [], [], [], [], []
    for q in questions:
        target_t = q.target(target)
        if target_t is None:
            continue
        ft = decode_fire(t[q.rows].astype(int).tolist(), probs[q.rows].tolist(), tau)
        s = analytic_saving(ft, target_t, q.n_words, a)
        fire_ts.append(float(ft if ft is not None else q.n_words))
        true_ts.append(float(target_t))
        savings.append(s)
        is_prem = ft is not None and ft < target_t
        premature.append(int(is_prem))
        calls.append(1 + int(is_prem))
        if ft is not None and ft >= target_t:
            correct.append(s)
    k = len(savings)
    correct.sort()
    rho, undefined = paper_spearman(fire_ts, true_ts)
    return {
        "tau": tau,
        "n_questions": k,
        "mean_saving_ms": sum(savings) / k if k else 0.0,
        "misfire_rate": sum(premature) / k if k else 0.0,
        "net_negative_rate": sum(1 for s in savings if s <= 0) / k if k else 0.0,
        "mean_calls": sum(calls) / k if k else 0.0,
        "median_saving_correct_fires": correct[len(correct) // 2] if correct else 0.0,
        "spearman_fire_vs_tsuf": rho,
        "spearman_undefined": undefined,
    }


def _frontier(
    questions: Sequence[Question],
    target: str,
    knobs: Sequence[int],
    a: AnalyticParams,
    fires: Callable[[int, int, int], tuple[int | None, int]],
    knob: str,
    *,
    calls_floor: bool,
) -> list[dict]:
    out = []
    for m in knobs:
        savings, premature, calls = [], [], []
        for q in questions:
            target_t = q.target(target)
            if target_t is None:
                continue
            ft, c = fires(target_t, q.n_words, m)
            savings.append(analytic_saving(ft, target_t, q.n_words, a))
            premature.append(int(ft is not None and ft < target_t))
            calls.append(max(c, 1) if calls_floor else c)
        k = len(savings)
        out.append(
            {
                knob: m,
                "mean_saving_ms": sum(savings) / k if k else 0.0,
                "misfire_rate": sum(premature) / k if k else 0.0,
                "mean_calls": sum(calls) / k if k else 0.0,
            }
        )
    return out


def _interval(target_t: int, n: int, m: int) -> tuple[int | None, int]:
    fire, calls = m, 0
    while fire <= n:
        calls += 1
        if fire >= target_t:
            return fire, calls
        fire += m
    return None, calls


def _single(target_t: int, n: int, k: int) -> tuple[int | None, int]:
    fire = min(k, n)
    return fire, 1 + int(fire < target_t)


def baseline_frontier(questions: Sequence[Question], target: str, intervals: Sequence[int], a: AnalyticParams) -> list[dict]:
    """The anchor's fixed-interval baseline (fires m, 2m, … until one reaches the target)."""
    return _frontier(questions, target, intervals, a, _interval, "interval", calls_floor=True)


def single_fire_frontier(questions: Sequence[Question], target: str, ks: Sequence[int], a: AnalyticParams) -> list[dict]:
    """The anchor's single fixed fire at min(k, n) (calls 2 when premature)."""
    return _frontier(questions, target, ks, a, _single, "k", calls_floor=False)
