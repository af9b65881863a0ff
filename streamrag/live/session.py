"""One live turn through both arms, on a real clock, traced as a simulated question is.

The turn is a :class:`~streamrag.speculate.speculator.Speculator` turn in shadow mode —
the same object an agent embeds, so the live rules have one implementation: the
simulator's arms (:class:`~streamrag.pipeline.streaming.StreamingArm`, and the
:class:`~streamrag.pipeline.streaming.BaselineArm` the shadow runs), the scenario's
trigger and caps, the heuristic reflector reading real results (each result's top hit
re-scored by the judge under the full query). What this module adds is only what a
measured run needs:

- words come from a :class:`~streamrag.live.words.WordSource` and are heard as they come;
- G and F are delays on the clock (drawn as in the simulator, or given by a plan); G
  may instead be a real LLM call (a :class:`~streamrag.pipeline.tools.QueryGenerator`)
  whose query is the one searched.

Events go to ``sink`` as they happen (the terminal view, and ``trace.jsonl`` line by
line so an interrupted run leaves a readable partial trace).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streamrag.base.errors import ConfigError, ToolError
from streamrag.engine.clock import Clock
from streamrag.engine.latency import LatencyModel
from streamrag.live.words import WordSource
from streamrag.pipeline.question import SimQuestion
from streamrag.pipeline.reflectors import HeuristicReflectorConfig
from streamrag.pipeline.tools import QueryGenerator, Tool
from streamrag.simulator.scenario import ResolvedScenario
from streamrag.speculate.judging import Judge
from streamrag.speculate.scenario_check import check_scenario
from streamrag.speculate.speculator import Speculator

__all__ = ["Judge", "Turn", "TurnOutcome", "run_turn"]


class _Draws(Sequence[int]):
    """Stage latencies of prefixes 1, 2, … drawn when first read (the length is unknown)."""

    def __init__(self, model: LatencyModel, rng: np.random.Generator | None) -> None:
        self.model = model
        self.rng = rng
        self.values: list[int] = []

    def __getitem__(self, i: Any) -> Any:
        while len(self.values) <= i:
            self.values.append(int(self.model.sample_us(self.rng, 1)[0]))
        return self.values[i]

    def __len__(self) -> int:
        return len(self.values)


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn to run: its id, its words, and (replays) the known question and its draws."""

    qid: str
    source: WordSource
    question: SimQuestion | None = None
    g_us: Sequence[int] | None = None
    f_us: int | None = None


@dataclass(slots=True)
class TurnOutcome:
    """What a turn left: its events and words (``n_words == 0``: nothing was heard)."""

    events: list[dict[str, Any]]
    words: list[str]


def _check_live(rs: ResolvedScenario, known: bool, judge: Any) -> None:
    """ConfigError unless a live run can follow the scenario (heuristic reflector only:
    a run measures the simulator's rule; the judge, a BM25 tool over the corpus, ranks
    each prefix heard for a ``learned`` trigger)."""
    check_scenario(rs, known, judge)
    if not isinstance(rs.scenario.reflector, HeuristicReflectorConfig):
        raise ConfigError(f"reflector.kind: {rs.scenario.reflector.kind!r} is not available live (heuristic only)")


async def run_turn(
    clock: Clock,
    turn: Turn,
    tool: Tool,
    judge: Judge,
    rs: ResolvedScenario,
    sink: Callable[[dict[str, Any]], object],
    *,
    rng: Callable[[str], np.random.Generator | None] | None = None,
    words: list[str] | None = None,
    generator: QueryGenerator | None = None,
    tracer: Any | None = None,
) -> TurnOutcome:
    """Run one turn through both arms on ``clock`` (the turn starts now).

    ``rng(stage)`` gives the random stream of a drawn G or F (typed turns; a replay
    brings its plan's draws); ``sink`` gets every event as it happens; ``words`` (filled
    as they are heard) lets a viewer read them; ``generator``, when given, is G: each
    call's query is generated from its prefix words (else G is a delay and the query is
    the prefix words); ``tracer`` (OpenTelemetry) gets the turn's spans."""
    _check_live(rs, turn.question is not None, judge)
    words = [] if words is None else words

    def draws(stage: str) -> _Draws:
        model = getattr(rs.stages, stage)
        return _Draws(model, rng(stage) if rng is not None and model.needs_rng else None)

    f_us = turn.f_us if turn.f_us is not None else draws("F")[0]
    g_us = turn.g_us if turn.g_us is not None else draws("G")
    known = turn.question is not None
    live = Speculator(
        tool, rs, judge=judge, clock=clock, shadow=True, generator=generator, sink=sink, replay=known, tracer=tracer
    )
    async with live as spec:
        spec.begin(turn.qid, question=turn.question, g_us=g_us, f_us=f_us, words=words)
        origin_us = spec.events_origin_us
        async for heard in turn.source.words(clock, origin_us):
            if heard.text:
                spec.hear(" ".join([*words, heard.text]), final=heard.last)
            elif words:  # the turn ended after the last word heard
                spec.hear(" ".join(words), final=True)
            if heard.last:
                break
        if not words:
            spec.cancel()
            return TurnOutcome(spec.events, words)
        with contextlib.suppress(ToolError):  # the arm's "failed" event says it; the run keeps a row
            await spec.resolve()
        await spec.settle()
    return TurnOutcome(spec.events, words)
