"""A live run: turns one after another on one real clock, written as a simulation is.

Outputs in the run folder, the same files ``streamrag simulate`` writes:
``trace.jsonl`` (appended and flushed event by event, so Ctrl-C leaves every line
readable), ``results.csv``, ``summary.json`` and ``manifest.json`` (rewritten atomically
after each turn, so they always describe the finished turns; a run stopped by Ctrl-C or
SIGTERM gets ``"interrupted": true`` and the signal in ``summary.json``). ``streamrag
trace`` and its Perfetto export read a live run like any other.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.base.atomic import write_bytes_atomic
from streamrag.engine.clock import Clock
from streamrag.engine.rng import stream
from streamrag.engine.trace import dump_events
from streamrag.engine.trace_file import header_bytes
from streamrag.live.display import LiveDisplay, rendering
from streamrag.live.session import Judge, Turn, TurnOutcome, run_turn
from streamrag.pipeline.tools import QueryGenerator, Tool
from streamrag.simulator.results import ResultRow, derive_result, validated_row
from streamrag.simulator.run_output import manifest_json, results_csv, summary_data
from streamrag.simulator.scenario import ResolvedScenario


class RunWriter:
    """Writes a live run's folder as it goes (see the module docstring)."""

    def __init__(
        self, out_dir: str | Path, rs: ResolvedScenario, reflector_model: str, *, command: list[str], input_mode: str
    ) -> None:
        self.out = Path(out_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        self.rs = rs
        self.reflector_model = reflector_model
        self.command = command
        self.input_mode = input_mode
        self.rows: list[ResultRow] = []
        self._trace = open(self.out / "trace.jsonl", "wb")  # noqa: SIM115 - open for the run, closed by close()
        self._trace.write(header_bytes())

    def event(self, event: dict[str, Any]) -> None:
        self._trace.write(dump_events([event]))
        self._trace.flush()

    def turn(self, outcome: TurnOutcome, turn: Turn) -> ResultRow:
        """The turn's results row (written with the others at once)."""
        row = result_row(outcome, turn, self.rs)
        self.rows.append(row)
        write_bytes_atomic(self.out / "results.csv", results_csv(self.rows))
        self._summary()
        manifest = manifest_json(
            self.rs,
            self.reflector_model,
            input_path=None,
            input_mode=self.input_mode,
            command=self.command,
            jobs=1,
            n_questions=len(self.rows),
        )
        write_bytes_atomic(self.out / "manifest.json", manifest)
        return row

    def _summary(self, **marks: Any) -> None:
        summary = summary_data(self.reflector_model, self.rows, self.rs, **marks)
        write_bytes_atomic(self.out / "summary.json", (json.dumps(summary, indent=2, allow_nan=False) + "\n").encode())

    def interrupted(self, signal: str) -> None:
        """The run was stopped by ``signal``: ``summary.json`` (of the finished turns) says
        ``"interrupted": true`` and the signal, so a stopped run never reads as finished."""
        self._summary(interrupted=True, signal=signal)

    def close(self) -> None:
        self._trace.close()


def result_row(outcome: TurnOutcome, turn: Turn, rs: ResolvedScenario) -> ResultRow:
    """The turn's row, derived from its trace as the simulator's are; a turn whose arm
    could not answer (its full-query call failed) keeps a row with the reason."""
    n = len(outcome.words)
    q = turn.question
    failed = [e["arm"] for e in outcome.events if e["kind"] == "failed"]
    if failed:
        return validated_row(
            interaction_id=turn.qid, n_words=n, skip_reason=f"live: the {' and '.join(failed)} arm failed (tool error)"
        )
    row = derive_result(
        outcome.events,
        n_words=n,
        t_star=q.t_star if q is not None else n,
        L_ms=rs.L_ms,
        G_ms=rs.G_ms,
        delta_wps=rs.delta_wps,
        question_type=q.question_type if q is not None else "",
    )
    if q is None:  # typed input: t* is unknown, and so are the bounds built on it
        row = dataclasses.replace(row, t_star=None, H_ms=None, H_G_ms=None, H_prime_ms=None)
    return row


async def run_live(
    clock: Clock,
    turns: AsyncIterator[Turn],
    tool: Tool,
    judge: Judge,
    rs: ResolvedScenario,
    writer: RunWriter,
    display: LiveDisplay | None = None,
    on_turn: Callable[[TurnOutcome, ResultRow], object] | None = None,
    generator: QueryGenerator | None = None,
    tracer: Any | None = None,
) -> list[ResultRow]:
    """Run every turn, one after another; returns their rows. ``display`` renders from a
    task of its own (:func:`~streamrag.live.display.rendering`), never inside the
    pipeline's callbacks; ``generator``, when given, generates each call's query (G);
    ``tracer``, an OpenTelemetry tracer, gets each turn's spans."""

    def rng(qid: str) -> Callable[[str], np.random.Generator | None]:
        return lambda stage: stream(rs.scenario.seed, qid, f"latency.{stage}")

    async with rendering(display, clock) as view:
        async for turn in turns:
            words: list[str] = []

            def sink(event: dict[str, Any]) -> None:
                writer.event(event)
                if view is not None:
                    view.show(event)

            if view is not None:
                view.begin(turn.qid, words, f"({tool.name})")
            outcome = await run_turn(
                clock, turn, tool, judge, rs, sink, rng=rng(turn.qid), words=words, generator=generator, tracer=tracer
            )
            if outcome.words:
                row = writer.turn(outcome, turn)
                if view is not None:
                    view.saved(row)
                if on_turn is not None:
                    on_turn(outcome, row)
            if view is not None:
                view.flush()
    return writer.rows
