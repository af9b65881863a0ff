"""Runner: plan each question, replay it in virtual time, derive results.

Questions are independent (no shared capacity), so a run is a map over questions:
chunks of consecutive questions go to worker processes, each chunk replays its
questions one after another on one :class:`~streamrag.engine.loop.VirtualEventLoop`,
and outputs are re-assembled in input order. A question's events are stamped relative
to its own arrival and its random draws come from its own streams
(:mod:`streamrag.engine.rng`), so 1 and N workers give byte-identical outputs. The run's
files are written by :mod:`~streamrag.simulator.run_output`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from streamrag.base.errors import ConfigError
from streamrag.engine.trace import dump_events
from streamrag.pipeline import reflectors
from streamrag.pipeline.plan import QuestionPlan
from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.questions import ANALYZER_EVIDENCE, QuestionSet, SkippedQuestion
from streamrag.simulator.replay.closed import replay
from streamrag.simulator.replay.closed_form import CLOSED_FORM, ENGINE, engine_reason, replay_events
from streamrag.simulator.replay.planning import PlanCache, plan_question, planner
from streamrag.simulator.results import ResultRow, derive_result, skipped_result, tally_result
from streamrag.simulator.scenario import ResolvedScenario

if TYPE_CHECKING:
    from streamrag.engine.clock import Clock
    from streamrag.simulator.replay.fold import Tally


async def replay_question(
    clock: Clock, q: SimQuestion, rs: ResolvedScenario, *, validate: bool = False, plan: QuestionPlan | None = None
) -> list[dict[str, Any]]:
    """Replay one question on ``clock`` (arriving now); return its trace events. ``plan``:
    its plan under ``rs`` when drawn already (:mod:`~streamrag.simulator.replay.planning`)."""
    from streamrag.engine.trace import Recorder
    from streamrag.pipeline.streaming import simulate_question

    sc = rs.scenario
    plan = plan_question(q, rs) if plan is None else plan
    rec = Recorder(q.interaction_id, clock, clock.now_us(), validate=validate)
    await simulate_question(clock, plan, sc.trigger.build(q), sc.reflector.build(q), rs.arm_rules, rec)
    return rec.events


class QuestionOutput(NamedTuple):
    """What one replayed question contributes to a run."""

    row: ResultRow
    trace: bytes
    n_events: int
    """Trace events (0 in a closed-form run: its trace is recorded when written)."""
    span_us: int
    """Replayed duration: first word → streaming answer ready."""


def _row_context(q: SimQuestion, rs: ResolvedScenario) -> dict[str, Any]:
    """What a result row needs besides the trace: the question and the analytic bounds' inputs."""
    return {
        "n_words": q.n_words,
        "t_star": q.t_star,
        "L_ms": rs.L_ms,
        "G_ms": rs.G_ms,
        "delta_wps": rs.delta_wps,
        "question_type": q.question_type,
        "revised": None if q.revised is None else q.revised.tolist(),
        "mutating": rs.scenario.tool.effects == "mutating",
        "ranked_on_tool": rs.scenario.pipeline.ranking == "tool",
        "compute": rs.scenario.compute,
    }


def question_output(q: SimQuestion, events: list[dict[str, Any]], rs: ResolvedScenario) -> QuestionOutput:
    """A replayed question's row (derived from ``events``) and its trace lines."""
    row = derive_result(events, **_row_context(q, rs))
    first_word = next(e["t_us"] for e in events if e["kind"] == "word")
    answer = next(e["t_us"] for e in events if e["kind"] == "answer_ready" and e["arm"] == "streaming")
    return QuestionOutput(row, dump_events(events), len(events), answer - first_word)


def closed_form_outputs(
    questions: Sequence[SimQuestion], rs: ResolvedScenario, plans: PlanCache | None = None
) -> list[QuestionOutput]:
    """The questions' rows by the closed form (:mod:`~streamrag.simulator.replay.closed`),
    their trace left to :func:`closed_form_trace`; their plans kept in ``plans`` when given."""
    sc, rules, plan_of = rs.scenario, rs.arm_rules, planner(rs, plans)
    outputs = []
    for q in questions:
        plan = plan_of(q)
        outputs.append(_closed_output(q, plan, replay(plan, sc.trigger.build(q), sc.reflector.build(q), rules), rs))
    return outputs


def closed_form_trace(questions: Sequence[SimQuestion], rs: ResolvedScenario, plans: PlanCache | None = None) -> bytes:
    """The trace lines of ``questions``, replayed by the closed form on the arm objects
    (:func:`~streamrag.simulator.replay.closed_form.replay_events`): the engine's, byte for byte."""
    plan_of = planner(rs, plans)
    return b"".join(dump_events(replay_events(plan_of(q), rs)) for q in questions)


def closed_form_traced(questions: Sequence[SimQuestion], rs: ResolvedScenario) -> tuple[list[QuestionOutput], bytes]:
    """:func:`closed_form_outputs` and :func:`closed_form_trace` of ``questions`` from one
    replay of each (the traced replay's tally is the untraced one's), for a run that
    writes its trace as it goes."""
    sc, rules = rs.scenario, rs.arm_rules
    outputs, parts = [], []
    for q in questions:
        plan = plan_question(q, rs)
        events: list[dict[str, Any]] = []
        tally = replay(plan, sc.trigger.build(q), sc.reflector.build(q), rules, events)
        outputs.append(_closed_output(q, plan, tally, rs))
        parts.append(dump_events(events))
    return outputs, b"".join(parts)


def _closed_output(q: SimQuestion, plan: QuestionPlan, tally: Tally, rs: ResolvedScenario) -> QuestionOutput:
    """A closed-form replay's output: its row from the tally, the trace not kept."""
    row = tally_result(tally, q.interaction_id, validate=False, **_row_context(q, rs))
    return QuestionOutput(row, b"", 0, tally.streaming_answer_us - plan.word_us[0])  # type: ignore[operator]


def run_chunk(questions: Sequence[SimQuestion], rs: ResolvedScenario, plans: PlanCache | None = None) -> list[QuestionOutput]:
    """Replay questions one after another on one virtual loop (a worker's unit of work)."""
    from streamrag.engine.loop import run_virtual

    plan_of = planner(rs, plans)

    async def main(clock: Clock) -> list[QuestionOutput]:
        return [question_output(q, await replay_question(clock, q, rs, plan=plan_of(q)), rs) for q in questions]

    return run_virtual(main)


def check_compatible(questions: Sequence[SimQuestion], rs: ResolvedScenario) -> None:
    """Fail early (ConfigError) when a policy needs per-prefix evidence the input lacks."""
    check_needs(rs, trace_driven=any(q.trace_driven for q in questions))


def check_needs(rs: ResolvedScenario, *, trace_driven: bool) -> None:
    """:func:`check_compatible` for questions that are all ``trace_driven`` or none."""
    if not trace_driven:
        return
    sc = rs.scenario
    for section, config in (("trigger", sc.trigger), ("reflector", sc.reflector)):
        if "rankings" in config.needs:
            raise ConfigError(
                f"{section}.kind: {config.kind!r} needs per-prefix evidence, but the input is a stabilization table without "
                "it (only t* is known); simulate from DATA, give the table's prefixes.parquet, or pick another kind"
            )


@dataclass(frozen=True, slots=True)
class SimulationRun:
    """A run's outputs: the replayed questions' outputs and one result row per input
    question (skipped ones with their reason), both in input order."""

    outputs: list[QuestionOutput]
    all_rows: list[ResultRow]
    reflector_model: str = ""
    """What judged the results (``heuristic on per-prefix evidence``, or the oracle
    reflector of a bare table): printed on the console and kept in every output."""
    replay: str = ENGINE
    """What replayed them: ``closed_form`` or ``engine`` (:mod:`~streamrag.simulator.replay.closed_form`)."""
    deferred_trace: Callable[[], Iterator[bytes]] | None = None
    """A closed-form run's trace, recorded when asked for (:meth:`trace_parts`)."""

    @property
    def rows(self) -> list[ResultRow]:
        """The replayed questions' rows."""
        return [o.row for o in self.outputs]

    @property
    def n_events(self) -> int:
        return sum(o.n_events for o in self.outputs)

    @property
    def virtual_us(self) -> int:
        return sum(o.span_us for o in self.outputs)

    def trace_parts(self) -> Iterator[bytes]:
        """``trace.jsonl`` in parts (whole questions), in input order: a closed-form run
        records them as they are asked for, so writing them keeps memory flat."""
        if self.deferred_trace is not None:
            return self.deferred_trace()
        return (o.trace for o in self.outputs)

    def trace_bytes(self) -> bytes:
        """``trace.jsonl``: every replayed question's events, in input order."""
        return b"".join(self.trace_parts())


def _chunks(n: int, jobs: int) -> list[range]:
    size = max(1, min(256, math.ceil(n / (jobs * 8))))
    return [range(i, min(n, i + size)) for i in range(0, n, size)]


def reflector_model_of(entries: Sequence[SimQuestion | SkippedQuestion], rs: ResolvedScenario, source: str) -> str:
    """What judges the results of these questions (the oracle rule if any lacks evidence)."""
    if any(isinstance(e, SimQuestion) and e.trace_driven for e in entries):
        source = ""
    sample = next((e.threshold_sample for e in entries if isinstance(e, SimQuestion)), None)
    return reflectors.reflector_model(rs.scenario.reflector, evidence_source=source, sample=sample)


def _assemble(
    entries: Sequence[SimQuestion | SkippedQuestion],
    outputs: list[QuestionOutput],
    rs: ResolvedScenario,
    source: str,
    deferred_trace: Callable[[], Iterator[bytes]] | None = None,
) -> SimulationRun:
    replayed = iter(outputs)
    rows = [next(replayed).row if isinstance(e, SimQuestion) else skipped_result(e) for e in entries]
    replay = ENGINE if deferred_trace is None else CLOSED_FORM
    return SimulationRun(outputs, rows, reflector_model_of(entries, rs, source), replay, deferred_trace)


def replay_of(rs: ResolvedScenario, *, engine: bool = False) -> str:
    """What replays ``rs``: ``closed_form`` unless it has no closed form or ``engine`` forces it."""
    return ENGINE if engine or engine_reason(rs) is not None else CLOSED_FORM


def _closed_form(
    entries: Sequence[SimQuestion | SkippedQuestion],
    questions: list[SimQuestion],
    rs: ResolvedScenario,
    source: str,
    jobs: int,
    on_progress: Callable[[int], None] | None,
    plans: PlanCache | None,
) -> SimulationRun:
    outputs = []
    for chunk in _chunks(len(questions), 1):
        outputs += closed_form_outputs(questions[chunk.start : chunk.stop], rs, plans)
        if on_progress:
            on_progress(len(chunk))

    def trace() -> Iterator[bytes]:
        chunks = [questions[c.start : c.stop] for c in _chunks(len(questions), max(1, jobs))]
        if jobs <= 1 or len(questions) < 2:
            yield from (closed_form_trace(chunk, rs, plans) for chunk in chunks)
            return
        from streamrag.base.system.processes import worker_pool

        with worker_pool(jobs) as pool:
            yield from pool.map(closed_form_trace, chunks, repeat(rs))

    return _assemble(entries, outputs, rs, source, trace)


def simulate(
    questions: QuestionSet | Sequence[SimQuestion],
    rs: ResolvedScenario,
    *,
    jobs: int = 1,
    on_progress: Callable[[int], None] | None = None,
    engine: bool = False,
    plans: PlanCache | None = None,
) -> SimulationRun:
    """Replay every question of the set (skipped entries get their row).

    By the closed form when ``rs`` has one (:func:`replay_of`; ``engine=True`` forces
    the event engine): rows in this process, the trace recorded when asked for, on
    ``jobs`` worker processes. On the engine ``jobs > 1`` replays on that many worker
    processes. ``on_progress(k)`` is called as k more questions finish. ``plans``: the
    questions' plans are taken from it, and the new ones kept there (in this process:
    not by worker processes), for the next run with the same plan settings
    (:class:`~streamrag.simulator.replay.planning.PlanCache`).
    """
    entries = questions.entries if isinstance(questions, QuestionSet) else list(questions)
    source = questions.evidence_source if isinstance(questions, QuestionSet) else ANALYZER_EVIDENCE
    questions = [e for e in entries if isinstance(e, SimQuestion)]
    check_compatible(questions, rs)
    if replay_of(rs, engine=engine) == CLOSED_FORM:
        return _closed_form(entries, questions, rs, source, jobs, on_progress, plans)
    if jobs <= 1 or len(questions) < 2:
        outputs: list[QuestionOutput] = []
        for chunk in _chunks(len(questions), 1):
            outputs += run_chunk(questions[chunk.start : chunk.stop], rs, plans)
            if on_progress:
                on_progress(len(chunk))
        return _assemble(entries, outputs, rs, source)
    from concurrent.futures import as_completed

    from streamrag.base.system.processes import worker_pool

    chunks = _chunks(len(questions), jobs)
    parts: list[list[QuestionOutput] | None] = [None] * len(chunks)
    with worker_pool(jobs) as pool:
        futures = {pool.submit(run_chunk, questions[c.start : c.stop], rs): i for i, c in enumerate(chunks)}
        for fut in as_completed(futures):
            i = futures[fut]
            parts[i] = fut.result()  # a worker's DeadlockError is re-raised here
            if on_progress:
                on_progress(len(chunks[i]))
    return _assemble(entries, [o for part in parts for o in part], rs, source)  # type: ignore[union-attr]


# --- outputs -------------------------------------------------------------------------


def recorded_for_table(rs: ResolvedScenario, table: str | os.PathLike[str]) -> ResolvedScenario:
    """The scenario a replay of ``table`` records: ``data.split`` is the table's — its
    analysis' ``summary.json`` beside it says which (``"all"`` when it read every split),
    ``None`` when nothing says (a generated table) — not the scenario's, which a table
    replay never reads."""
    split: int | str | None = None
    try:
        summary = json.loads((Path(table).parent / "summary.json").read_text(encoding="utf-8"))
        analysis = summary["parameters"]["analysis"]
        if analysis.get("data") is not None:  # an analyze summary (a simulate one has none)
            split = "all" if analysis.get("split") is None else analysis["split"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        split = None
    data = rs.scenario.data.model_copy(update={"split": split})
    return rs.model_copy(update={"scenario": rs.scenario.model_copy(update={"data": data})})
