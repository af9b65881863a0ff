"""The JSON files of a simulate run folder, declared: ``summary.json`` and ``manifest.json``.

A load or live run writes the same ``manifest.json``; a load run's ``summary.json`` is
:class:`LoadSummary`. Each writer builds its file's data,
validates it against the model here and writes the data (key order, floats) as it has
always been, so the model cannot drift from what is written, and its JSON Schema
(``streamrag schema summary|manifest``) describes every file.

``summary.json``'s metric sections are read off :class:`~streamrag.simulator.results.ResultRow`
(its numeric columns aggregate to :class:`Stats`, its boolean ones to :class:`Rate`), so a
new result column is a new summary field without touching this module.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from streamrag.base.formats import FORMAT_VERSION
from streamrag.pipeline.outcomes import OUTCOMES
from streamrag.simulator.results import BOOL_COLUMNS, NUMERIC_COLUMNS
from streamrag.simulator.turn_parts import ENDPOINT_COLUMNS


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Stats(_Frozen):
    """A numeric column over the replayed questions (``null``: no rows)."""

    mean: float | None
    median: float | None
    p10: float | None
    p90: float | None
    min: float | None
    max: float | None


class Rate(_Frozen):
    """A boolean column: how many rows are true and their share (``null``: no rows)."""

    n: int
    rate: float | None


class Correlation(_Frozen):
    """Spearman ρ and its two-sided p (``null``: fewer than 3 rows or a constant column)."""

    rho: float | None
    p: float | None
    n: int


class Rules(_Frozen):
    """Which pipeline rules ran (:meth:`~streamrag.simulator.scenario.ResolvedScenario.rules`)."""

    preset: str
    settings: dict[str, Any]
    differs_from_paper: list[str]


_OUTCOME_FIELDS: dict[str, Any] = {name: (int, Field(ge=0)) for name in OUTCOMES}
CallOutcomes: type[BaseModel] = create_model(
    "CallOutcomes",
    __config__=ConfigDict(frozen=True, extra="forbid"),
    __doc__="Speculative calls of the run per terminal outcome (streamrag.pipeline.outcomes): each ends in exactly one.",
    **_OUTCOME_FIELDS,
)


class EndpointSummary(_Frozen):
    """False cut-offs and compute beside the saving (:func:`streamrag.simulator.turn_parts.compute_summary`)."""

    false_cutoffs_per_100_turns: float | None
    answered_partial_per_100_turns: float | None
    eager_restarts_per_100_turns: float | None
    extra_llm_calls_per_turn: float | None = Field(description="Streaming arm's LLM calls less the baseline's, per turn")
    extra_tool_calls_per_turn: float | None = Field(description="Streaming arm's tool calls less the baseline's, per turn")
    extra_llm_share: float | None = Field(description="Extra LLM calls as a share of the baseline's")
    extra_tool_share: float | None = Field(description="Extra tool calls as a share of the baseline's")
    extra_llm_tokens_in_per_turn: float | None = Field(
        description="Streaming arm's LLM tokens in less the baseline's, per turn ([compute])"
    )
    extra_llm_tokens_in_share: float | None = Field(description="Extra LLM tokens in as a share of the baseline's")


Replay = Literal["closed_form", "engine"]
_REPLAY = (
    "What replayed the questions: the closed form (a question alone on unlimited capacity, "
    "streamrag.simulator.replay.closed_form) or the event engine; absent in a live run"
)


def _version() -> Any:
    return Field(description="The file's format version (streamrag.base.formats)", ge=1, le=FORMAT_VERSION)


_SUMMARY_FIELDS: dict[str, Any] = {
    "format_version": (int, _version()),
    "reflector_model": (str, ...),
    "rules": (Rules, ...),
    "replay": (Replay | None, Field(None, description=_REPLAY)),
    "n_questions": (int, Field(description="Replayed questions")),
    "selection": (dict[str, int] | None, Field(None, description="How the selection counted the input's rows")),
    **dict.fromkeys(NUMERIC_COLUMNS, (Stats, ...)),
    **dict.fromkeys(BOOL_COLUMNS, (Rate, ...)),
    "calls_on_revised": (Stats | None, Field(None, description="ASR hypotheses only")),
    "calls_on_revised_share": (float | None, Field(None, description="ASR hypotheses only")),
    "rankings": (Stats | None, Field(None, description="pipeline.ranking tool or local only: rankings per question")),
    "ranking_busy_ms": (Stats | None, Field(None, description="pipeline.ranking tool or local only: their time")),
    "call_outcomes": (CallOutcomes | None, Field(None, description="How every speculative call ended, counted")),
    "unsafe_calls": (Stats | None, Field(None, description="tool.effects mutating only: unsafe executions per question")),
    "unsafe_per_1000_turns": (
        float | None,
        Field(None, description="tool.effects mutating only: unsafe executions per 1,000 questions (turns)"),
    ),
    **dict.fromkeys(
        ENDPOINT_COLUMNS,
        (Stats | None, Field(None, description="endpoint kind silence or detector only (streamrag.simulator.turn_parts)")),
    ),
    "endpoint": (
        EndpointSummary | None,
        Field(None, description="endpoint kind silence or detector only: false cut-offs and extra compute per turn"),
    ),
    "spearman_H_saved": (Correlation, ...),
    "spearman_H_G_saved": (Correlation, ...),
    "parameters": (dict[str, Any], Field(description="The resolved scenario and latency stages, as JSON data")),
    "interrupted": (bool | None, Field(None, description="live: the run was stopped by a signal (the turns so far)")),
    "signal": (str | None, Field(None, description="live: the signal that stopped the run")),
}

SimulateSummary: type[BaseModel] = create_model(
    "SimulateSummary",
    __config__=ConfigDict(frozen=True, extra="forbid", title="streamrag summary.json (simulate, live)"),
    **_SUMMARY_FIELDS,
)
"""``summary.json`` of a simulate (or live) run: the module docstring of
:mod:`streamrag.simulator.results` names its keys."""


class LoadStats(_Frozen):
    """A latency over the counted sessions (``null``: none)."""

    mean: float | None
    median: float | None
    p90: float | None
    p99: float | None
    min: float | None
    max: float | None


class Sessions(_Frozen):
    n: int
    counted: int = Field(description="Sessions arriving after load.warmup_s")


class MeanOnly(_Frozen):
    mean: float | None


class LittlesLaw(_Frozen):
    L: float | None
    lambda_per_s: float | None
    W_s: float | None


class ResourceReport(_Frozen):
    """A finite resource over the run (:meth:`streamrag.engine.resources.usage.Usage.report`)."""

    servers: int | None
    jobs: int
    completed: int
    cancelled: int
    rejected: int
    span_s: float
    utilization: float | None
    queue_length: MeanOnly
    in_system: MeanOnly
    wait_ms: MeanOnly
    share_waited: float | None
    busy_s: float
    detached_busy_s: float
    littles_law: LittlesLaw


class SystemSummary(_Frozen):
    """One system (the streaming arm's or the baseline's) over the counted sessions."""

    answer_ms: LoadStats
    failed: Rate
    calls_fired: MeanOnly
    calls_rejected: MeanOnly
    wait_ms: dict[str, LoadStats] = Field(description="By resource: the sessions' waits in its queue")
    resources: dict[str, ResourceReport | None] = Field(description="By resource (null: unlimited)")
    wasted_share: dict[str, float] = Field(description="By finite resource: server time on results nobody used")
    busy_s: float


class Difference(_Frozen):
    mean: float | None
    median: float | None
    p90: float | None
    p99: float | None


class Reference(_Frozen):
    n: int
    note: str
    unlimited_saved_ms: LoadStats
    loaded_saved_ms: LoadStats


class LoadTrace(_Frozen):
    """Which sessions a load run's ``trace.jsonl`` holds (``load.trace_sessions``)."""

    sessions: int = Field(description="Sessions whose every event is in trace.jsonl")
    every: int = Field(description="Sessions 0, every, 2·every, … are kept; 0: none")
    note: str


class LoadSummary(_Frozen):
    """``summary.json`` of a load run (:mod:`streamrag.simulator.load.run`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", title="streamrag summary.json (load)")

    format_version: int = _version()
    reflector_model: str
    rules: Rules
    mode: Literal["load"]
    sessions: Sessions
    streaming: SystemSummary
    baseline: SystemSummary
    saved_ms: LoadStats = Field(description="Per counted session, baseline − streaming answer latency (paired)")
    answer_ms_difference: Difference = Field(description="Baseline's statistic − streaming's (tails are not paired)")
    reference: Reference
    trace: LoadTrace
    call_outcomes: CallOutcomes | None = Field(
        None, description="How the counted sessions' speculative calls ended (streamrag.pipeline.outcomes)"
    )
    unsafe_per_1000_turns: float | None = Field(
        None, description="tool.effects mutating only: unsafe executions per 1,000 counted sessions (turns)"
    )
    parameters: dict[str, Any] = Field(description="The resolved scenario, latency stages and population, as JSON data")


class RunInput(_Frozen):
    mode: str
    path: str | None
    sha256: str | None


class RunManifest(_Frozen):
    """``manifest.json`` of a simulate, load or live run: what ran, on what, how."""

    model_config = ConfigDict(frozen=True, extra="forbid", title="streamrag manifest.json (simulate, load, live)")

    format_version: int = _version()
    streamrag_version: str
    seed: int
    reflector_model: str
    rules: Rules
    replay: Replay | None = Field(None, description=_REPLAY)
    scenario: dict[str, Any]
    """The resolved scenario and its latency stages, as JSON data."""
    input: RunInput
    n_questions: int
    jobs: int
    command: list[str]
    python: str
    numpy: str
    pydantic: str
    created: str
    """The only field that differs between two identical runs (ISO 8601)."""
