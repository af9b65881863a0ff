"""Trace events: the source of truth of a simulation, one frozen model per kind.

Every question leaves a list of frozen pydantic events, one JSON object per line in
``trace.jsonl``: ``{"qid": …, "t_us": …, "kind": …, …}``. ``t_us`` is the integer
number of microseconds since the question's arrival. Per-question results
(:func:`streamrag.simulator.results.derive_result`) are computed from these events alone;
:mod:`~streamrag.engine.trace` records them and reads them back.

Kinds, in the order they typically occur (``arm`` is ``streaming`` or ``baseline``):

================  =====================================================================
``word``          word ``word`` (1-based) arrived
``input_end``     the last word arrived: E, the origin of perceived latency
``fire``          a call on prefix ``prefix_t`` was fired (``by`` trigger, reflector or
                  baseline); ``call`` numbers the arm's calls from 1
``skip``          a trigger opportunity could not fire: threads full (``reason`` ``cap``:
                  dropped; ``deferred``: it waits for a later word with a free slot), or
                  the speculation policy refused it (``admission``, ``stretch``;
                  ``budget``: the controller's level; ``spend``: its extra-call cap), or
                  the tool is mutating and not speculated (``mutating``)
``thread_start``  the call's thread starts query generation (G)
``gen_query``     (live, G by an LLM) the query generated (``query``) and how long the
                  call took (``elapsed_us``)
``gen_error``     (live, G by an LLM) query generation failed (``error``); the call
                  searches the prefix words (``query``) instead
``rank``          (``pipeline.ranking`` tool or local) the ranking of prefix ``word``
                  starts (a search on the tool, or the local index)
``rank_done``     that ranking's ``outcome``: ``in`` (the trigger looks at the words whose
                  rankings are in, in order), ``lost`` (a full queue), ``cancelled``
                  (still out at end of turn)
``gen_done``      query generation ended; the tool call (L) starts
``tool_done``     the tool result is in (``top``: its top-k in full mode)
``tool_error``    (live) the tool call failed (``error``: timeout, unreachable, bad
                  reply; ``timed_out``: no answer in time); the call is lost, as a
                  rejected one is
``defer``         (a mutating tool, ``deferral``) the call's query is generated; its tool
                  call waits for the turn to be confirmed
``execute``       that deferred tool call starts: the turn ended on the call's text
``cancel``        the call was killed (``replaced`` by ``replace``, or by the reflector
                  once it chose another result); ``unstarted``: a call fired on the last
                  word that the reflector's first look made unnecessary before it
                  started (not counted as fired); ``superseded`` (``coalesce``): a newer
                  call of the session took its place in the tool queue; ``revised``
                  (live): a revised transcript dropped the words its prefix ended with;
                  ``unconfirmed``: a mutating tool's call whose text the turn did not end
                  on; ``abandoned``: the turn was abandoned (barge-in, a new turn).
                  How every speculative call ends: :mod:`streamrag.pipeline.outcomes`
``revise``        (live) a partial transcript rewrote the words after word ``kept``
                  (``dropped`` words were withdrawn); calls on longer prefixes are stale
``reflect``       end of turn: the reflector starts (calls ``finished``, ``in_flight``)
``check``         the reflector judged a result (``sufficient``, ``score``, ``coverage``)
``decision``      ``speculative`` (a speculative result is used) or ``fallback`` (none
                  was sufficient: the full query's result is used — a mis-fire)
``respond``       response generation (F) starts from call ``call``'s result
``answer_ready``  the answer's first token is ready
``failed``        the arm cannot answer: a full queue rejected confirmed work
``reaim``         (``coalesce`` policy) a waiting speculative call now serves prefix
                  ``prefix_t`` instead of ``was``
================  =====================================================================

Under shared capacity (load runs) a session's trace starts with ``session`` (its
question and absolute arrival) and holds its jobs' resource events — ``enqueue`` (had to
wait; ``queued`` jobs waiting), ``serve`` (on server ``server``), ``finish``,
``withdraw`` (cancelled), ``reject`` (a full queue) — each naming the ``resource``, the
``stage`` (G, L, F; R: a ranking search on the tool) and the ``call`` (a ranking's:
−t, for word t).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Arm = Literal["streaming", "baseline"]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    qid: str
    t_us: int


class WordEvent(_Event):
    kind: Literal["word"] = "word"
    word: int


class InputEndEvent(_Event):
    kind: Literal["input_end"] = "input_end"
    n_words: int


class EndpointEvent(_Event):
    """The endpointer's decision, after ``input_end`` (a non-``fixed`` ``[endpoint]`` only,
    :mod:`streamrag.engine.endpoint`), µs after the last word: when both arms start (an
    eager signal, or the confirmation) and the confirmed end of turn; each false cut-off and
    eager restart as ``[prefix_t, at_us, resume_us]`` (µs from the question's arrival), and
    what the replies to them cost (both arms pay them)."""

    kind: Literal["endpoint"] = "endpoint"
    start_us: int
    confirm_us: int
    hold_tools: bool
    cutoffs: list[list[int]]
    restarts: list[list[int]]
    llm_calls: int
    tool_calls: int
    answered_partial: int
    words_in: int
    """Words the replies' LLM calls read (G and F each read the partial question)."""


class RankEvent(_Event):
    kind: Literal["rank"] = "rank"
    word: int


class RankDoneEvent(_Event):
    kind: Literal["rank_done"] = "rank_done"
    word: int
    outcome: Literal["in", "lost", "cancelled"]


class FireEvent(_Event):
    kind: Literal["fire"] = "fire"
    arm: Arm
    call: int
    prefix_t: int
    by: Literal["trigger", "reflector", "baseline"]


class SkipEvent(_Event):
    kind: Literal["skip"] = "skip"
    prefix_t: int
    reason: Literal["cap", "deferred", "admission", "stretch", "budget", "spend", "mutating"]


class ThreadStartEvent(_Event):
    kind: Literal["thread_start"] = "thread_start"
    arm: Arm
    call: int


class GenQueryEvent(_Event):
    kind: Literal["gen_query"] = "gen_query"
    arm: Arm
    call: int
    prefix_t: int
    query: str
    elapsed_us: int


class GenErrorEvent(_Event):
    kind: Literal["gen_error"] = "gen_error"
    arm: Arm
    call: int
    prefix_t: int
    error: str
    query: str


class GenDoneEvent(_Event):
    kind: Literal["gen_done"] = "gen_done"
    arm: Arm
    call: int


class ToolDoneEvent(_Event):
    kind: Literal["tool_done"] = "tool_done"
    arm: Arm
    call: int
    prefix_t: int
    top: tuple[int, ...] | None = None


class ToolErrorEvent(_Event):
    kind: Literal["tool_error"] = "tool_error"
    arm: Arm
    call: int
    prefix_t: int
    error: str
    timed_out: bool = False
    """The tool did not answer in time (outcome ``timed_out``, else ``failed``)."""


class CancelEvent(_Event):
    kind: Literal["cancel"] = "cancel"
    arm: Arm
    call: int
    reason: Literal["replaced", "reflector", "unstarted", "superseded", "revised", "unconfirmed", "abandoned"]


class DeferEvent(_Event):
    kind: Literal["defer"] = "defer"
    arm: Arm
    call: int
    prefix_t: int


class ExecuteEvent(_Event):
    kind: Literal["execute"] = "execute"
    arm: Arm
    call: int
    prefix_t: int


class ReviseEvent(_Event):
    kind: Literal["revise"] = "revise"
    kept: int
    dropped: int


class ReflectEvent(_Event):
    kind: Literal["reflect"] = "reflect"
    finished: tuple[int, ...]
    in_flight: tuple[int, ...]


class CheckEvent(_Event):
    kind: Literal["check"] = "check"
    call: int
    prefix_t: int
    sufficient: bool
    score: float | None = None
    coverage: float | None = None


class DecisionEvent(_Event):
    kind: Literal["decision"] = "decision"
    outcome: Literal["speculative", "fallback"]
    call: int | None
    """The call whose result will be used; ``None`` for a fallback that must fire first."""
    prefix_t: int


class RespondEvent(_Event):
    kind: Literal["respond"] = "respond"
    arm: Arm
    call: int
    prefix_t: int


class AnswerReadyEvent(_Event):
    kind: Literal["answer_ready"] = "answer_ready"
    arm: Arm


class ReaimEvent(_Event):
    kind: Literal["reaim"] = "reaim"
    call: int
    prefix_t: int
    was: int


class FailedEvent(_Event):
    kind: Literal["failed"] = "failed"
    arm: Arm


Stage = Literal["G", "L", "F", "R"]
"""Query generation, the tool call, response generation, a ranking search on the tool."""


class EnqueueEvent(_Event):
    kind: Literal["enqueue"] = "enqueue"
    arm: Arm
    resource: str
    stage: Stage
    call: int
    queued: int


class ServeEvent(_Event):
    kind: Literal["serve"] = "serve"
    arm: Arm
    resource: str
    stage: Stage
    call: int
    server: int


class FinishEvent(_Event):
    kind: Literal["finish"] = "finish"
    arm: Arm
    resource: str
    stage: Stage
    call: int
    server: int


class WithdrawEvent(_Event):
    kind: Literal["withdraw"] = "withdraw"
    arm: Arm
    resource: str
    stage: Stage
    call: int
    server: int
    """-1 when the job was still waiting."""


class RejectEvent(_Event):
    kind: Literal["reject"] = "reject"
    arm: Arm
    resource: str
    stage: Stage
    call: int


class SessionEvent(_Event):
    kind: Literal["session"] = "session"
    question: str
    arrival_us: int
    """Absolute arrival on the run's clock (the session's events count from it)."""


TraceEvent = Annotated[
    WordEvent
    | InputEndEvent
    | EndpointEvent
    | RankEvent
    | RankDoneEvent
    | FireEvent
    | SkipEvent
    | ThreadStartEvent
    | GenQueryEvent
    | GenErrorEvent
    | GenDoneEvent
    | ToolDoneEvent
    | ToolErrorEvent
    | CancelEvent
    | DeferEvent
    | ExecuteEvent
    | ReviseEvent
    | ReflectEvent
    | CheckEvent
    | DecisionEvent
    | RespondEvent
    | AnswerReadyEvent
    | ReaimEvent
    | FailedEvent
    | EnqueueEvent
    | ServeEvent
    | FinishEvent
    | WithdrawEvent
    | RejectEvent
    | SessionEvent,
    Field(discriminator="kind"),
]
"""One trace event, discriminated by ``kind``."""

# An Annotated union is not a type form to mypy, hence the cast; the adapter is typed by its annotation.
TRACE_EVENT: TypeAdapter[TraceEvent] = TypeAdapter(cast(Any, TraceEvent))
