"""Per-question results derived from the trace (design §7): the row, its columns, read back.

The trace is the source of truth: :func:`derive_result` reads nothing but a question's
events (plus the analytic bounds, which need only n, t*, L, G, δ).

**One name per metric.** A per-question metric's name is its ``results.csv`` column;
its aggregate over the run is ``<column>.<statistic>`` — in ``summary.json`` the nested
key ``{"saved_ms": {"mean": …}}``, in ``sweep.csv`` the column ``saved_ms.mean``, in the
notebooks the same string. Numeric columns aggregate to ``mean, median, p10, p90, min,
max``; boolean columns to ``n`` (count true) and ``rate`` (share true); correlations are
``spearman_H_saved`` and ``spearman_H_G_saved`` with ``rho, p, n``. A statistic that is
undefined (no rows, a constant column) is ``null``, never 0.

Columns of ``results.csv`` (:class:`ResultRow`, in order), one row per input question —
a question that was not replayed has only its id, what is known of it, and
``skip_reason``:

==================  ===========================================================
``interaction_id``  the question
``n_words``         n
``t_star``          t_suf where defined, else t_sc
``H_ms``            ``min(L, residual)``, residual = ``(n − t*)/δ·1000``
``H_G_ms``          ``min(G + L, residual)``
``baseline_ms``     baseline answer ready − E (E = last word)
``streaming_ms``    streaming answer ready − E (perceived latency)
``saved_ms``        ``baseline_ms − streaming_ms`` (negative: speculation hurt)
``calls_fired``     tool calls the streaming arm started (speculative + fallback; a
                    call cancelled before it started does not count)
``calls_used``      calls whose result the answer used (one: the reflector's choice)
``misfire``         speculative calls were fired but none was sufficient: the answer
                    came from the full query (trigger ``none`` never mis-fires)
``wasted_calls``    ``calls_fired − calls_used``
``cancelled_calls`` calls killed in flight (replaced, or by the reflector)
``skipped_fires``   trigger opportunities that met a full thread cap (dropped, or
                    deferred to a later word)
``used_prefix_t``   prefix length of the call the answer used
``H_prime_ms``      the anchor's ``H' = min(L, r) + min(G, r)``
``llm_busy_ms``     streaming arm's LLM time: query generation of every call (up to
                    completion or cancel) + response generation
``tool_busy_ms``    streaming arm's tool time (up to completion or cancel)
``negative``        ``saved_ms < 0``
``question_type``   from the input, if known
``skip_reason``     why the question was not replayed (empty when it was)
==================  ===========================================================

Optional columns (present when some row has them, before ``question_type``):
``calls_on_revised`` (ASR hypotheses), ``rankings`` and ``ranking_busy_ms`` (rankings
that cost something), ``unsafe_calls`` (``tool.effects = "mutating"``: the calls whose
tool stage started on text that is not the turn's final text, an *unsafe execution*,
:mod:`streamrag.pipeline.outcomes`).

How every speculative call ended (:data:`~streamrag.pipeline.outcomes.OUTCOMES`) is kept
per question in the row (``call_outcomes``, not a column) and summed in ``summary.json``
as ``call_outcomes``: ``{"used": n, "used_after_wait": n, …}``.

L and G in the bounds are the stages' nominal values (the constant, else the median).

``results.csv`` and ``summary.json`` are written by :mod:`~streamrag.simulator.run_output`
(:func:`~streamrag.simulator.run_output.results_csv`,
:func:`~streamrag.simulator.run_output.summarize`), by the naming rule above.
"""

from __future__ import annotations

import functools
import os
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Annotated, Any, Literal

from pydantic import ConfigDict

from streamrag.analysis import metrics
from streamrag.base.columns import Dtype, arrow_schema, read_csv
from streamrag.base.errors import TableError
from streamrag.pipeline.outcomes import unsafe
from streamrag.simulator.replay.fold import Event, Tally, fold_trace
from streamrag.simulator.turn_parts import ENDPOINT_COLUMNS, ComputeConfig, endpoint_values, heard_us

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


@dataclass(frozen=True, slots=True)
class Aggregate:
    """How ``summary.json`` aggregates a column (``Annotated`` metadata on a field of
    :class:`ResultRow`): ``numeric`` to ``mean, median, p10, p90, min, max``, ``bool`` to
    ``n`` and ``rate``. ``after``: the column it follows in the summary, when not its
    place in the row."""

    kind: Literal["numeric", "bool"]
    after: str | None = None


NUMERIC = Aggregate("numeric")
BOOL = Aggregate("bool")


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One row of ``results.csv`` (the values of a skipped question are ``None``).

    The one declaration of the row: :data:`RESULT_COLUMNS`, :data:`NUMERIC_COLUMNS` and
    :data:`BOOL_COLUMNS` are read off its fields. A frozen dataclass, not a pydantic
    model: the closed form builds one per question unvalidated, and a model's
    ``model_construct`` costs a large share of a question's replay; every other row is
    validated by pydantic on the way in (:func:`validated_row`)."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    interaction_id: str
    n_words: Annotated[int | None, NUMERIC] = None
    t_star: Annotated[int | None, NUMERIC] = None
    H_ms: Annotated[float | None, NUMERIC] = None
    H_G_ms: Annotated[float | None, NUMERIC] = None
    baseline_ms: Annotated[float | None, NUMERIC] = None
    streaming_ms: Annotated[float | None, NUMERIC] = None
    saved_ms: Annotated[float | None, NUMERIC] = None
    calls_fired: Annotated[int | None, NUMERIC] = None
    calls_used: Annotated[int | None, NUMERIC] = None
    misfire: Annotated[bool | None, BOOL] = None
    wasted_calls: Annotated[int | None, NUMERIC] = None
    cancelled_calls: Annotated[int | None, NUMERIC] = None
    skipped_fires: Annotated[int | None, NUMERIC] = None
    used_prefix_t: Annotated[int | None, NUMERIC] = None
    H_prime_ms: Annotated[float | None, Aggregate("numeric", after="H_G_ms")] = None
    """Summarized beside the other bounds."""
    llm_busy_ms: Annotated[float | None, NUMERIC] = None
    tool_busy_ms: Annotated[float | None, NUMERIC] = None
    negative: Annotated[bool | None, BOOL] = None
    question_type: str = ""
    skip_reason: str = ""
    calls_on_revised: int | None = None
    """ASR hypotheses only (a column then, before ``question_type``; see
    :func:`~streamrag.simulator.run_output.result_columns`): calls fired on a hypothesis a
    later one revised."""
    rankings: int | None = None
    """``pipeline.ranking`` tool or local only (a column then): rankings of word prefixes
    started; with ``tool`` each is a search on the tool, a call beside ``calls_fired``."""
    ranking_busy_ms: float | None = None
    """Their time: the tool's (searches) or the agent's (a local index)."""
    unsafe_calls: int | None = None
    """``tool.effects = "mutating"`` only (a column then): unsafe executions, the calls whose
    tool stage started on text other than the turn's final text."""
    endpoint_ms: float | None = None
    """A non-``fixed`` ``[endpoint]`` only (columns then, :mod:`~streamrag.simulator.turn_parts`):
    the endpointer's delays, then each arm's latency in parts, false cut-offs and compute."""
    confirm_ms: float | None = None
    streaming_g_ms: float | None = None
    streaming_l_ms: float | None = None
    streaming_other_ms: float | None = None
    streaming_f_ms: float | None = None
    streaming_confirm_ms: float | None = None
    baseline_g_ms: float | None = None
    baseline_l_ms: float | None = None
    baseline_other_ms: float | None = None
    baseline_f_ms: float | None = None
    baseline_confirm_ms: float | None = None
    false_cutoffs: int | None = None
    answered_partial: int | None = None
    eager_restarts: int | None = None
    llm_calls: int | None = None
    tool_calls: int | None = None
    baseline_llm_calls: int | None = None
    baseline_tool_calls: int | None = None
    llm_tokens_in: float | None = None
    baseline_llm_tokens_in: float | None = None
    call_outcomes: tuple[int, ...] | None = None
    """Speculative calls per terminal outcome, in :data:`~streamrag.pipeline.outcomes.OUTCOMES`
    order: not a column of ``results.csv``, summed in ``summary.json`` (``call_outcomes``)."""

    @property
    def replayed(self) -> bool:
        return not self.skip_reason


OPTIONAL_COLUMNS = ("calls_on_revised", "rankings", "ranking_busy_ms", "unsafe_calls", *ENDPOINT_COLUMNS)
"""Fields that are a column only when some row has them
(:func:`~streamrag.simulator.run_output.result_columns`), before ``question_type`` in this
order."""
_SUMMARY_ONLY = ("call_outcomes",)
"""Fields of the row that are summed into ``summary.json`` and are no column."""


_FIELDS: dict[str, Any] = {
    name: hint for name, hint in typing.get_type_hints(ResultRow, include_extras=True).items() if name not in _SUMMARY_ONLY
}
"""The row's column fields in order, each with its declared type (``Annotated`` with its :class:`Aggregate`)."""


def _aggregated(kind: str) -> tuple[str, ...]:
    out: list[str] = []
    for name, hint in _FIELDS.items():
        agg = next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Aggregate)), None)
        if agg is not None and agg.kind == kind:
            out.insert(out.index(agg.after) + 1 if agg.after else len(out), name)
    return tuple(out)


RESULT_COLUMNS: tuple[str, ...] = tuple(name for name in _FIELDS if name not in OPTIONAL_COLUMNS)
"""The columns of ``results.csv``, in order (a run over ASR hypotheses adds ``calls_on_revised``,
one whose rankings cost something ``rankings`` and ``ranking_busy_ms``)."""

NUMERIC_COLUMNS: tuple[str, ...] = _aggregated("numeric")
"""Columns aggregated to ``mean, median, p10, p90, min, max`` in ``summary.json``."""

BOOL_COLUMNS: tuple[str, ...] = _aggregated("bool")
"""Columns aggregated to ``n`` and ``rate``."""


def _dtype(annotation: Any) -> Dtype:
    """A field's declared type (``Annotated[int | None, …]`` → ``int``)."""
    annotation = getattr(annotation, "__origin__", annotation) if hasattr(annotation, "__metadata__") else annotation
    kinds = [a for a in (typing.get_args(annotation) or (annotation,)) if a is not type(None)]
    names: dict[Any, Dtype] = {bool: "bool", int: "int", float: "float", str: "str"}
    return names[kinds[0]]


RESULT_DTYPES: dict[str, Dtype] = {name: _dtype(hint) for name, hint in _FIELDS.items()}
"""Every column's declared type, read off the row: its Arrow type and the dtype every
reader gives it (:mod:`streamrag.base.columns`)."""


def results_schema(columns: Sequence[str] = RESULT_COLUMNS) -> pa.Schema:
    """The Arrow schema of ``results.csv`` (``columns``: :func:`~streamrag.simulator.run_output.result_columns`)."""
    return arrow_schema({name: RESULT_DTYPES[name] for name in columns}, "results")


def read_results(path: str | os.PathLike[str] | IO[bytes]) -> pd.DataFrame:
    """A ``results.csv`` as a frame, one dtype per column whatever the values
    (``skip_reason`` is text even when no question was skipped); a TableError naming the
    file when ``interaction_id`` or ``saved_ms`` is missing (damaged, or not a results
    table; a reader of other columns checks its own)."""
    frame = read_csv(path, RESULT_DTYPES)
    missing = [c for c in ("interaction_id", "saved_ms") if c not in frame.columns]
    if missing:
        raise TableError(f"{path}:1: missing column {missing[0]!r} (not a results.csv streamrag wrote, or damaged)")
    return frame


@functools.cache
def _row_adapter() -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(ResultRow)


def validated_row(**values: Any) -> ResultRow:
    """A row from ``values`` validated (and coerced) by pydantic, as a model's constructor
    would: a ValidationError for a value of the wrong type or an unknown column."""
    row: ResultRow = _row_adapter().validate_python(values)
    return row


def skipped_result(entry: Any) -> ResultRow:
    """The row of a question that was not replayed (a :class:`SkippedQuestion`)."""
    return validated_row(
        interaction_id=entry.interaction_id,
        n_words=entry.n_words,
        t_star=entry.t_star,
        question_type=entry.question_type,
        skip_reason=entry.reason,
    )


def derive_result(
    events: Sequence[Event],
    *,
    n_words: int,
    t_star: int,
    L_ms: float,
    G_ms: float,
    delta_wps: float,
    question_type: str = "",
    revised: Sequence[bool] | None = None,
    mutating: bool = False,
    ranked_on_tool: bool = False,
    compute: ComputeConfig | None = None,
) -> ResultRow:
    """A question's result row from its trace events (dicts, as in ``trace.jsonl``): a fold
    of one handler per event kind (:func:`~streamrag.simulator.replay.fold.fold_trace`).

    Models read back with :func:`~streamrag.engine.trace.read_trace` work too after
    ``model_dump()``. ``revised`` (ASR hypotheses) adds ``calls_on_revised``: the fired
    calls whose hypothesis a later one revised; ``mutating`` (the tool's side-effect class)
    adds ``unsafe_calls``.
    """
    return tally_result(
        fold_trace(events),
        events[0]["qid"],
        n_words=n_words,
        t_star=t_star,
        L_ms=L_ms,
        G_ms=G_ms,
        delta_wps=delta_wps,
        question_type=question_type,
        revised=revised,
        mutating=mutating,
        ranked_on_tool=ranked_on_tool,
        compute=compute,
    )


def unsafe_executions(t: Tally, n_words: int, revised: Sequence[bool] | None) -> int:
    """A question's unsafe executions (:func:`~streamrag.pipeline.outcomes.unsafe`): its
    streaming calls whose tool stage started on text that is not its final text (a replayed
    question's ``unsafe_calls``, a load run's session's)."""
    return sum(unsafe(p, n_words, revised) for _, p in t.executed)


def tally_result(
    t: Tally,
    interaction_id: str,
    *,
    n_words: int,
    t_star: int,
    L_ms: float,
    G_ms: float,
    delta_wps: float,
    question_type: str = "",
    revised: Sequence[bool] | None = None,
    mutating: bool = False,
    ranked_on_tool: bool = False,
    compute: ComputeConfig | None = None,
    validate: bool = True,
) -> ResultRow:
    """The result row of a complete :class:`Tally` (the trace's fold, or the closed-form
    replay's, :mod:`streamrag.simulator.replay.closed`). ``validate=False`` (the closed
    form: its tallies are checked against the engine's by the tests) builds the row
    without pydantic's validation, every value already of its field's type."""
    input_end, answer_s, answer_b = t.input_end_us, t.streaming_answer_us, t.baseline_answer_us
    if input_end is None or answer_s is None or answer_b is None:
        raise ValueError(f"trace of {interaction_id!r} is incomplete (no input_end or answer_ready)")
    baseline_us = heard_us(t, answer_b) - input_end
    streaming_us = heard_us(t, answer_s) - input_end
    used = 1 if t.used_prefix_t else 0  # the answer is built from one call's result (none: no answer)
    make = validated_row if validate else ResultRow
    parts = (
        {}
        if t.endpoint is None
        else endpoint_values(t, n_words=n_words, ranked_on_tool=ranked_on_tool, compute=compute or ComputeConfig())
    )
    return make(
        interaction_id=interaction_id,
        n_words=n_words,
        t_star=t_star,
        H_ms=float(metrics.H(n_words, t_star, L_ms, delta_wps)),
        H_G_ms=float(metrics.H_G(n_words, t_star, L_ms, delta_wps, G_ms)),
        baseline_ms=baseline_us / 1000,
        streaming_ms=streaming_us / 1000,
        saved_ms=(baseline_us - streaming_us) / 1000,
        calls_fired=t.fired,
        calls_used=used,
        misfire=t.fallback and t.speculative > 0,
        wasted_calls=t.fired - used,
        cancelled_calls=t.cancelled,
        skipped_fires=t.skipped,
        used_prefix_t=t.used_prefix_t,
        H_prime_ms=float(metrics.H_prime(n_words, t_star, L_ms, delta_wps, G_ms)),
        llm_busy_ms=(t.gen_us + t.response_us) / 1000,
        tool_busy_ms=t.tool_us / 1000,
        negative=baseline_us < streaming_us,
        question_type=question_type,
        calls_on_revised=None if revised is None else sum(bool(revised[p - 1]) for p in t.fired_on.values()),
        rankings=t.rankings or None,  # a question has ≥ 1 word: 0 means rankings were free
        ranking_busy_ms=t.ranking_us / 1000 if t.rankings else None,
        unsafe_calls=unsafe_executions(t, n_words, revised) if mutating else None,
        call_outcomes=t.ends.counts(),
        **parts,
    )
