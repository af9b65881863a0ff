"""The parts of one Speculator turn: its recorder, what the arms read of it, its plan,
and what it hands back (:class:`Resolution`, :class:`TurnReport` and :func:`turn_report`, the
metrics read off its trace)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict

from streamrag.base.errors import StreamragError
from streamrag.engine.clock import Clock
from streamrag.engine.trace import Recorder
from streamrag.pipeline.baseline import BaselineArm
from streamrag.pipeline.outcomes import Effects, outcome_counts
from streamrag.pipeline.streaming import StreamingArm
from streamrag.pipeline.tools import Called, ToolResource
from streamrag.simulator.replay.fold import fold_trace
from streamrag.speculate.judging import hits_of


class TurnRecorder(Recorder):
    """A :class:`Recorder` that passes each event to ``sink`` as it is emitted."""

    __slots__ = ("sink",)

    def __init__(self, qid: str, clock: Clock, origin_us: int, sink: Callable[[dict[str, Any]], object] | None) -> None:
        super().__init__(qid, clock, origin_us, validate=True)
        self.sink = sink

    def emit(self, kind: str, **fields: Any) -> None:
        super().emit(kind, **fields)
        if self.sink is not None:
            self.sink(self.events[-1])


class TurnQuestion:
    """What the arms read of the turn: its id, its length once input ended (0 before),
    and the top hits of the call on each prefix (``None``: not hits, or no call)."""

    def __init__(self, interaction_id: str, results: Mapping[int, Called]) -> None:
        self.interaction_id = interaction_id
        self.n_words = 0
        self.results = results

    def top(self, t: int) -> tuple[int, ...] | None:
        called = self.results.get(t)
        hits = None if called is None else hits_of(called.value)
        return None if hits is None else tuple(h.chunk_id for h in hits)


class Zeros(Sequence[int]):
    """A stage that takes no time, for every prefix."""

    def __getitem__(self, i: Any) -> Any:
        return 0

    def __len__(self) -> int:
        return 0


class TurnPlan:
    """A :class:`~streamrag.pipeline.streaming.QuestionPlan` filled in as the turn goes."""

    end_of_turn_us = 0
    endpoint = None
    """The framework ends the turn (its endpointer is not simulated here)."""
    holds_tools = False

    def __init__(self, question: TurnQuestion, g_us: Sequence[int], f_us: int) -> None:
        self.question = question
        self.g_us = g_us
        self.l_us: Sequence[int] = Zeros()
        self.f_us = f_us
        self.word_us: list[int] = []

    @property
    def turn_end_us(self) -> int:
        return self.word_us[-1] if self.word_us else 0


class Resolution(BaseModel):
    """What ``resolve()`` returns: the value to answer from and where it came from."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    value: Any
    """The tool's return value."""
    query: str
    arguments: dict[str, Any]
    prefix_t: int
    """The words the call was fired on (``n_words``: the full query)."""
    n_words: int
    speculative: bool
    """True: a speculative call's result; False: none was sufficient and the full query was called."""
    waited_ms: float
    """From ``resolve()`` to the result (0 when a finished call was sufficient at once)."""


class TurnReport(BaseModel):
    """A turn's metrics, read from its trace."""

    model_config = ConfigDict(frozen=True)

    qid: str
    n_words: int
    fired: int
    """Speculative calls fired (by the trigger)."""
    cancelled: int
    """Calls cancelled: no longer wanted once a result was chosen, replaced, or stale."""
    revisions: int
    """Times the transcript rewrote words already heard."""
    stale: int
    """Calls made stale by a revision (cancelled in flight or dropped finished)."""
    outcome: str | None
    """``speculative`` | ``fallback`` (None: not resolved)."""
    waited_ms: float | None
    saved_ms: float | None
    """Shadow mode: the baseline's result time minus the streaming arm's (None without shadow)."""
    outcomes: dict[str, int] = {}
    """Speculative calls per terminal outcome (:data:`~streamrag.pipeline.outcomes.OUTCOMES`):
    the calls that ended so far; once the turn is over, every call fired."""
    pending: int = 0
    """Speculative calls that have not ended yet (0 once the turn is resolved or cancelled)."""
    unsafe: int | None = None
    """A mutating tool only: calls whose tool ran on words the turn did not end on (0 by
    construction: the Speculator defers them until the turn is confirmed)."""


class TurnState:
    """The objects of one turn."""

    def __init__(self, qid: str, rec: TurnRecorder, words: list[str]) -> None:
        self.qid = qid
        self.rec = rec
        self.words = words
        self.final = False
        self.turn_end = anyio.Event()
        self.done = anyio.Event()
        self.scope = anyio.CancelScope()
        self.tick_scope = anyio.CancelScope()
        """The time-based trigger's ticks (a scope enters one 'with' block only)."""
        self.error: StreamragError | None = None
        self.stale = 0
        self.waited_us: int | None = None
        self.spans_written = False
        """Its OpenTelemetry spans were written (a Speculator with a tracer writes them once)."""
        self.arm: StreamingArm
        self.baseline: BaselineArm | None = None
        self.resource: ToolResource
        self.question: TurnQuestion
        self.plan: TurnPlan


def turn_report(turn: TurnState | None, effects: Effects) -> TurnReport:
    """A turn's metrics (None: no turn yet), read off its trace; ``effects``: the tool's side-effect class."""
    events = [] if turn is None else turn.rec.events
    decision = next((e for e in events if e["kind"] == "decision"), None)
    ready = {e["arm"]: e["t_us"] for e in events if e["kind"] == "answer_ready"}
    over = turn is not None and (turn.done.is_set() or turn.scope.cancel_called)
    tally = fold_trace(events, over=over)
    n_words = 0 if turn is None else len(turn.words)
    unsafe = None
    if effects == "mutating":  # a tool stage started on words the turn did not end on
        revoked = {c for c, outcome in tally.ends.outcome.items() if outcome == "revoked"}
        unsafe = sum(1 for call, t in tally.executed if t < n_words or call in revoked)
    saved = (ready["baseline"] - ready["streaming"]) / 1000 if {"baseline", "streaming"} <= ready.keys() else None
    return TurnReport(
        qid="" if turn is None else turn.qid,
        n_words=0 if turn is None else len(turn.words),
        fired=sum(1 for e in events if e["kind"] == "fire" and e["by"] == "trigger"),
        cancelled=sum(1 for e in events if e["kind"] == "cancel"),
        revisions=sum(1 for e in events if e["kind"] == "revise"),
        stale=0 if turn is None else turn.stale,
        outcome=None if decision is None else decision["outcome"],
        waited_ms=None if turn is None or turn.waited_us is None else turn.waited_us / 1000,
        saved_ms=saved,
        outcomes=outcome_counts(tally.ends.counts()),
        pending=len(tally.ends.pending),
        unsafe=unsafe,
    )
