"""One row per policy and G/F end: its best operating point within the budget, read off the frontier.

- **The point**: among the policy's points with mean extra calls ≤ the budget, the one
  saving most (mean ``saved_ms``), first on ties: the frontier's operating point at that
  budget (``operating_points.csv`` at a budget it lists gives the same point; a test
  compares them). Its ``extra_calls``, ``saved_ms``, ``misfire`` and ``negative`` (the
  share of turns slower than the baseline) with their bootstrap CIs are the frontier's.
- **The p50 and p90 user** (design §11): ``baseline_ms`` and ``streaming_ms`` at
  ``median`` and ``p90`` are quantiles of each arm's answer latency over the questions
  (simulate's ``summary.json`` of the point); ``answer_ms_difference`` = baseline −
  streaming at the same quantile, the *user's gain*, not a quantile of per-question
  savings. Its CI: the frontier's bootstrap resamples (same seed), each arm's quantile
  re-read in each.
- **Under load** (:mod:`~streamrag.advice.load`): ``predict``'s break-even and a load
  simulation at the stated rate.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from streamrag.sweep.frontier.operating import LEVEL, bootstrap_weights
from streamrag.sweep.table import read_point_results

from .load import at_load, llm_offered_load, load_break_even, loaded
from .needs import allowed, run_time_needs
from .situation import Situation
from .sweep_end import N_BOOT, EndRun

NULL, BOUND = "none", "oracle"
_COPIED = (
    "knob",
    "knob_value",
    "label",
    "trigger",
    "n_questions",
    "extra_calls.mean",
    "extra_calls.ci_low",
    "extra_calls.ci_high",
    "saved_ms.mean",
    "saved_ms.ci_low",
    "saved_ms.ci_high",
    "misfire.rate",
    "misfire.ci_low",
    "misfire.ci_high",
    "negative.rate",
    "negative.ci_low",
    "negative.ci_high",
    "pct_of_optimal",
)
"""Frontier columns a row carries as they are (``frontier.csv``'s names)."""


def _quantiles(values: np.ndarray, weights: np.ndarray, q: float) -> np.ndarray:
    """Per row of ``weights`` (resample counts): the smallest value whose weighted CDF ≥ q."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[:, order], axis=1)
    idx = (cum < q * cum[:, -1:]).sum(axis=1)
    return values[order][np.minimum(idx, values.size - 1)]


def user_gain_ci(run: EndRun, key: str, seed: int) -> dict[str, float | None]:
    """The bootstrap CI of the p50 and p90 user's gain (module docstring)."""
    df = read_point_results(run.result.out, key)
    df = df[df["skip_reason"].isna() | (df["skip_reason"] == "")]
    base, stream = df["baseline_ms"].to_numpy(dtype=float), df["streaming_ms"].to_numpy(dtype=float)
    w = bootstrap_weights(base.size, N_BOOT, seed)
    tail = (1 - LEVEL) / 2 * 100
    out: dict[str, float | None] = {}
    for name, q in (("median", 0.5), ("p90", 0.9)):
        diff = _quantiles(base, w, q) - _quantiles(stream, w, q)
        low, high = np.percentile(diff, [tail, 100 - tail])
        out[f"answer_ms_difference.{name}.ci_low"], out[f"answer_ms_difference.{name}.ci_high"] = float(low), float(high)
    return out


def _keys(run: EndRun) -> dict[str, str]:
    """Point label → sweep key."""
    return {str(p.values["policy"]): p.key for p in run.result.plan.runnable}


def policy_rows(run: EndRun, situation: Situation, *, on_row: Any = None) -> list[dict[str, Any]]:
    """The rows of one end (module docstring), in the frontier grid's policy order."""
    points = run.frontier.points
    keys = _keys(run)
    budget = situation.max_extra_calls
    rows = []
    for policy in dict.fromkeys(points["policy"]):
        mine = points[points["policy"] == policy]
        if policy == NULL or bool(mine["bound"].any()):
            continue
        first = run.settings(keys[str(mine.iloc[0]["label"])])
        needs = run_time_needs(first)
        row: dict[str, Any] = {
            "end": run.end.name,
            "questions": run.question_set,
            "policy": policy,
            "needs": needs.needs,
            "runs_on": needs.runs_on,
            "not_deployable": allowed(needs, situation.ranker),
        }
        within = mine[mine["extra_calls.mean"] <= budget + 1e-12]
        if within.empty:
            cheapest = mine.sort_values(["extra_calls.mean", "saved_ms.mean"], ascending=[True, False]).iloc[0]
            row["no_point"] = (
                f"no point within ≤ {budget:g} extra calls per turn (its cheapest, {cheapest['label']}, makes "
                f"{cheapest['extra_calls.mean']:.2f})"
            )
            rows.append(row)
            if on_row is not None:
                on_row()
            continue
        point = within.iloc[int(np.argmax(within["saved_ms.mean"].to_numpy()))]
        key = keys[str(point["label"])]
        row.update({name: _plain(point[name]) for name in _COPIED})
        row["no_point"] = ""
        row.update(_users(run, key, situation.seed))
        rs = run.settings(key)
        rs_load = loaded(rs, situation)
        questions = run.questions(key)
        row.update(load_break_even(questions, loaded(rs, situation, llm=False), situation))
        offered = situation.turns_per_s / row["turns_per_s_per_offered_load"]
        row["at_load.turns_per_s"] = situation.turns_per_s
        row["at_load.offered_load"] = offered
        llm = row["at_load.llm_offered_load"] = llm_offered_load(rs_load, situation)
        row.update(at_load(questions, rs_load, offered, situation.load_sessions, llm))
        row["key"] = key
        rows.append(row)
        if on_row is not None:
            on_row()
    return rows


def _users(run: EndRun, key: str, seed: int) -> dict[str, Any]:
    summary = run.summary(key)
    out: dict[str, Any] = {"calls_fired.mean": summary["calls_fired"]["mean"]}
    for stat in ("median", "p90"):
        base, stream = summary["baseline_ms"][stat], summary["streaming_ms"][stat]
        out[f"baseline_ms.{stat}"], out[f"streaming_ms.{stat}"] = base, stream
        out[f"answer_ms_difference.{stat}"] = base - stream
    out.update(user_gain_ci(run, key, seed))
    if summary.get("unsafe_per_1000_turns") is not None:  # a mutating tool (tool.effects)
        out["unsafe_per_1000_turns"] = summary["unsafe_per_1000_turns"]
    for name, value in (summary.get("endpoint") or {}).items():  # an endpointer ([endpoint], --reference)
        out[f"endpoint.{name}"] = value
    return out


def _plain(value: Any) -> Any:
    """A pandas cell as a JSON-able value (NaN → None)."""
    if value is None:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value
