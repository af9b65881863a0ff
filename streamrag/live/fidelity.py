"""The simulator against reality: known questions run live, then simulated with the
latencies the live run measured.

``streamrag live --replay N``:

1. the first N questions of the data (the demo set by default), analyzed in global scope
   against the corpus the tool serves, are replayed live — their words at the scenario's
   cadence, G and F as the plan drew them, every tool call a real call;
2. the same questions are simulated in virtual time by the *twin*
   (:mod:`streamrag.live.twin`): each call's G, L and F as the live run measured them,
   per arm and per prefix, the words at the plan's instants, the same seed — so what
   differs is what the simulator does not model, not the spread of the latencies;
3. per question: ``delta_saved_ms`` = live ``saved_ms`` − twin ``saved_ms`` and its
   absolute value; the overhead of each arm, ``overhead_streaming_ms`` and
   ``overhead_baseline_ms`` = live − twin answer latency after the last word; whether
   both took the same decision (same prefix answered from, same mis-fire flag);
4. the attribution of Δ: ``words_delta_ms`` = what the words' timer lateness explains
   (the twin with the words at their live instants − the twin), ``loop_delta_ms`` = the
   rest (live − that twin: the event loop's handoffs and the reflector's compute, which
   take no virtual time), measured directly too as ``handoff_streaming_ms`` /
   ``handoff_baseline_ms`` (``residual_ms`` = the loop's part minus their difference,
   ≈ 0 when the attribution is complete), of which ``reflector_ms`` is the reflector's
   look (``reflect`` → ``decision``); ``last_word_late_ms`` (the last word's timer lateness);
   and ``fitted_delta_saved_ms``, Δ against a simulation that draws L from the model
   fitted to every measured call (:func:`fitted`; the twin before it replayed calls),
   to show how much of that error was L's spread.

Outputs beside the live run: ``replay.csv`` (one row per question), ``replay.json``
(``abs_delta_saved_ms.mean``/``p90`` and the other columns' statistics by the
simulator's naming rule, the timers' lateness over all words, G and F delays, the
measured L and the fitted model) and ``simulated/`` (the twin's own run folder).
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
from streamrag.base.columns import TableKind
from streamrag.base.errors import InputError
from streamrag.live.session import Turn
from streamrag.live.words import replayed_question
from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.replay.planning import plan_question
from streamrag.simulator.results import ResultRow
from streamrag.simulator.run_output import stats
from streamrag.simulator.scenario import ResolvedScenario

REPLAY = TableKind(
    "live_replay",
    {
        "interaction_id": "str",
        "live_saved_ms": "float",
        "sim_saved_ms": "float",
        "delta_saved_ms": "float",
        "abs_delta_saved_ms": "float",
        "live_streaming_ms": "float",
        "sim_streaming_ms": "float",
        "overhead_streaming_ms": "float",
        "live_baseline_ms": "float",
        "sim_baseline_ms": "float",
        "overhead_baseline_ms": "float",
        "live_calls_fired": "int",
        "sim_calls_fired": "int",
        "same_decision": "bool",
        "words_delta_ms": "float",
        "loop_delta_ms": "float",
        "handoff_streaming_ms": "float",
        "handoff_baseline_ms": "float",
        "last_word_late_ms": "float",
        "reflector_ms": "float",
        "residual_ms": "float",
        "fitted_delta_saved_ms": "float",
        "abs_fitted_delta_saved_ms": "float",
    },
)
"""``replay.csv``, declared: one row per question, live against its twin."""
COMPARE_COLUMNS: tuple[str, ...] = tuple(REPLAY.columns)
NUMERIC = (
    "delta_saved_ms",
    "abs_delta_saved_ms",
    "overhead_streaming_ms",
    "overhead_baseline_ms",
    "words_delta_ms",
    "loop_delta_ms",
    "handoff_streaming_ms",
    "handoff_baseline_ms",
    "last_word_late_ms",
    "reflector_ms",
    "residual_ms",
    "fitted_delta_saved_ms",
    "abs_fitted_delta_saved_ms",
)


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


@dataclass(frozen=True, slots=True)
class Twins:
    """The simulations a live run is compared with, rows by question id."""

    twin: dict[str, ResultRow]
    """Measured durations replayed, words at the plan's instants."""
    live_words: dict[str, ResultRow]
    """The same with the words at their live instants."""
    fitted: dict[str, ResultRow]
    """L drawn from the model fitted to all measured calls (G and F as planned)."""


def _ms(us: int | None) -> float | None:
    return None if us is None else us / 1000


def compare(
    live: Sequence[ResultRow],
    twins: Twins,
    lateness: dict[str, dict[str, list[int]]],
    measures: dict[str, Any],
    measured_ms: Sequence[float],
    fit: Any,
) -> Comparison:
    """Per-question live vs twin (questions both ran, in live order), the attribution
    columns and the summary; ``lateness`` and ``measures`` by question id
    (:func:`~streamrag.live.twin.timer_lateness_us`, :func:`~streamrag.live.twin.turn_measures`)."""
    rows = []
    for lr in live:
        sr = twins.twin.get(lr.interaction_id)
        if sr is None or not lr.replayed:
            continue
        qid = lr.interaction_id
        delta = lr.saved_ms - sr.saved_ms  # type: ignore[operator]
        words_delta = twins.live_words[qid].saved_ms - sr.saved_ms  # type: ignore[operator]
        fitted_delta = lr.saved_ms - twins.fitted[qid].saved_ms  # type: ignore[operator]
        arms = measures[qid].arms
        late = lateness[qid]["word"]
        handoff_s, handoff_b = _ms(arms["streaming"].handoff_us), _ms(arms["baseline"].handoff_us)
        # what the handoffs do not explain of the loop's part (≈ 0 when the attribution is complete)
        residual = None if handoff_s is None or handoff_b is None else delta - words_delta - (handoff_b - handoff_s)
        rows.append(
            {
                "interaction_id": qid,
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
                "words_delta_ms": words_delta,
                "loop_delta_ms": delta - words_delta,
                "handoff_streaming_ms": handoff_s,
                "handoff_baseline_ms": handoff_b,
                "last_word_late_ms": _ms(late[-1]) if late else None,
                "reflector_ms": _ms(measures[qid].reflector_us),
                "residual_ms": residual,
                "fitted_delta_saved_ms": fitted_delta,
                "abs_fitted_delta_saved_ms": abs(fitted_delta),
            }
        )
    summary: dict[str, Any] = {"n_questions": len(rows)}
    for name in NUMERIC:
        summary[name] = stats(np.array([r[name] for r in rows if r[name] is not None], dtype=float))
    same = sum(1 for r in rows if r["same_decision"])
    summary["same_decision"] = {"n": same, "rate": same / len(rows) if rows else None}
    kept = {r["interaction_id"] for r in rows}
    summary["timer_lateness_ms"] = {
        timer: {**stats(np.array(v, dtype=float) / 1000), "n": len(v)}
        for timer in ("word", "G", "F")
        for v in [[us for qid in kept for us in lateness[qid][timer]]]
    }
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
