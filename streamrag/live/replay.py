"""The simulator against reality: known questions run live, then simulated with the
latencies the live run measured.

``streamrag live --replay N``:

1. the first N questions of the data (the demo set by default), analyzed in global scope
   against the corpus the tool serves, are replayed live — their words at the scenario's
   cadence, G and F as the plan drew them, every tool call a real call;
2. every completed tool call's duration (``gen_done`` → ``tool_done``) is fitted as the
   L stage (:func:`streamrag.calibration.fit.fit_stage`: log-normal, gamma or the
   empirical quantiles, chosen by KS distance);
3. the same questions are simulated in virtual time with that L (G, F and the cadence
   unchanged, the same seed);
4. per question: ``delta_saved_ms`` = live ``saved_ms`` − simulated ``saved_ms`` and its
   absolute value; the overhead of each arm, ``overhead_streaming_ms`` and
   ``overhead_baseline_ms`` = live − simulated answer latency after the last word (what
   the wall clock, the event loop and the HTTP stack add that the model does not
   know); whether both took the same decision (same prefix answered from, same
   mis-fire flag).

Outputs beside the live run: ``replay.csv`` (one row per question), ``replay.json``
(``abs_delta_saved_ms.mean``/``p90`` and the other columns' statistics by the
simulator's naming rule, the measured L and the fitted model) and ``simulated/`` (the
simulation's own run folder).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.base.atomic import write_bytes_atomic
from streamrag.base.errors import InputError
from streamrag.live.session import Turn
from streamrag.live.words import replayed_question
from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.results import ResultRow, stats
from streamrag.simulator.scenario import ResolvedScenario
from streamrag.simulator.simulate import plan_question

COMPARE_COLUMNS = (
    "interaction_id",
    "live_saved_ms",
    "sim_saved_ms",
    "delta_saved_ms",
    "abs_delta_saved_ms",
    "live_streaming_ms",
    "sim_streaming_ms",
    "overhead_streaming_ms",
    "live_baseline_ms",
    "sim_baseline_ms",
    "overhead_baseline_ms",
    "live_calls_fired",
    "sim_calls_fired",
    "same_decision",
)
NUMERIC = ("delta_saved_ms", "abs_delta_saved_ms", "overhead_streaming_ms", "overhead_baseline_ms")


def replay_turns(questions: Sequence[SimQuestion], queries: dict[str, str], rs: ResolvedScenario) -> list[Turn]:
    """Each question as a live turn: its words at the plan's instants, G and F as drawn."""
    turns = []
    for q in questions:
        plan = plan_question(q, rs)
        query = queries[q.interaction_id]
        if len(query.split()) != q.n_words:
            raise InputError(f"question {q.interaction_id!r}: {len(query.split())} words in the query, {q.n_words} analyzed")
        turns.append(Turn(q.interaction_id, replayed_question(query, plan.word_us), q, plan.g_us, plan.f_us))
    return turns


def measured_L_ms(events: Sequence[dict[str, Any]]) -> list[float]:
    """Durations (ms) of the completed tool calls of one turn's events, both arms."""
    out_at: dict[tuple[str, int], int] = {}
    durations = []
    for e in events:
        if e["kind"] == "gen_done":
            out_at[(e["arm"], e["call"])] = e["t_us"]
        elif e["kind"] == "tool_done" and (e["arm"], e["call"]) in out_at:
            durations.append((e["t_us"] - out_at.pop((e["arm"], e["call"]))) / 1000)
    return durations


def fitted(rs: ResolvedScenario, durations_ms: Sequence[float]) -> tuple[ResolvedScenario, Any]:
    """``rs`` with its L stage fitted to the measured durations; and the fit."""
    from streamrag.calibration.fit import fit_stage

    fit = fit_stage("L", np.asarray(durations_ms, dtype=np.float64), origin="live run", min_n=min(20, max(3, len(durations_ms))))
    return ResolvedScenario(scenario=rs.scenario, stages=rs.stages.model_copy(update={"L": fit.model})), fit


@dataclass(frozen=True, slots=True)
class Comparison:
    rows: list[dict[str, Any]]
    summary: dict[str, Any]


def compare(live: Sequence[ResultRow], simulated: Sequence[ResultRow], measured_ms: Sequence[float], fit: Any) -> Comparison:
    """Per-question live vs simulated (questions both ran, in live order) and the summary."""
    sim_by_id = {r.interaction_id: r for r in simulated if r.replayed}
    rows = []
    for lr in live:
        sr = sim_by_id.get(lr.interaction_id)
        if sr is None or not lr.replayed:
            continue
        delta = lr.saved_ms - sr.saved_ms  # type: ignore[operator]
        rows.append(
            {
                "interaction_id": lr.interaction_id,
                "live_saved_ms": lr.saved_ms,
                "sim_saved_ms": sr.saved_ms,
                "delta_saved_ms": delta,
                "abs_delta_saved_ms": abs(delta),
                "live_streaming_ms": lr.streaming_ms,
                "sim_streaming_ms": sr.streaming_ms,
                "overhead_streaming_ms": lr.streaming_ms - sr.streaming_ms,  # type: ignore[operator]
                "live_baseline_ms": lr.baseline_ms,
                "sim_baseline_ms": sr.baseline_ms,
                "overhead_baseline_ms": lr.baseline_ms - sr.baseline_ms,  # type: ignore[operator]
                "live_calls_fired": lr.calls_fired,
                "sim_calls_fired": sr.calls_fired,
                "same_decision": lr.used_prefix_t == sr.used_prefix_t and lr.misfire == sr.misfire,
            }
        )
    summary: dict[str, Any] = {"n_questions": len(rows)}
    for name in NUMERIC:
        summary[name] = stats(np.array([r[name] for r in rows], dtype=float))
    same = sum(1 for r in rows if r["same_decision"])
    summary["same_decision"] = {"n": same, "rate": same / len(rows) if rows else None}
    summary["measured_L_ms"] = {**stats(np.asarray(measured_ms, dtype=float)), "n": len(measured_ms)}
    summary["fitted_L"] = {"model": fit.model.model_dump(mode="json"), "chosen": fit.chosen, "reason": fit.reason}
    return Comparison(rows, summary)


def write_comparison(out_dir: str | Path, comparison: Comparison) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COMPARE_COLUMNS)
    for row in comparison.rows:
        writer.writerow([repr(v) if isinstance(v, float) else v for v in (row[c] for c in COMPARE_COLUMNS)])
    out = Path(out_dir)
    write_bytes_atomic(out / "replay.csv", buf.getvalue().encode())
    write_bytes_atomic(out / "replay.json", (json.dumps(comparison.summary, indent=2, allow_nan=False) + "\n").encode())
