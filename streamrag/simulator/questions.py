"""The simulator's questions: from data through the analyzer, or from a stabilization table.

Two ways in, one shape out — a :class:`QuestionSet`: every input question in input order,
each either a :class:`~streamrag.pipeline.question.SimQuestion` to replay or a
:class:`SkippedQuestion` with the reason it is not replayed. ``results.csv`` has one row
per entry, as ``stabilization.csv`` has.

- :func:`questions_from_data` — a CRAG file or corpus folder, analyzed in the scenario's
  scope by :func:`~streamrag.analysis.entry.analyze_input` (full mode: real prefix
  rankings, reflectors judge real results);
- :func:`questions_from_table` — a §7 stabilization table (trace-driven: only t* is
  known; a call at prefix t counts as sufficient iff ``t ≥ t*``). Rows the analyzer
  skipped (non-empty ``skip_reason``) stay skipped.

:func:`select` then applies the scenario's population (``all``, ``retrieved_gold``,
``fallback``) and ``limit``; questions it leaves out become skipped entries naming the
rule.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streamrag.data.selection import Population, Selection, check_ids_found
from streamrag.errors import EmptySelectionError
from streamrag.pipeline.question import SimQuestion

if TYPE_CHECKING:
    from streamrag.analysis.runner import QuestionAnalysis
    from streamrag.cache import ChunkCache
    from streamrag.retrieval.kinds import RetrieverEnv
    from streamrag.simulator.scenario import DataConfig, Scenario


@dataclass(frozen=True, slots=True)
class SkippedQuestion:
    """An input question that is not replayed, and why."""

    interaction_id: str
    reason: str
    n_words: int | None = None
    t_star: int | None = None
    question_type: str = ""


Entry = SimQuestion | SkippedQuestion


@dataclass(frozen=True, slots=True)
class QuestionSet:
    """Every input question in input order (replayable or skipped) and the selection counts."""

    entries: list[Entry]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def questions(self) -> list[SimQuestion]:
        """The questions to replay, in input order."""
        return [e for e in self.entries if isinstance(e, SimQuestion)]

    @property
    def n_skipped(self) -> int:
        return sum(1 for e in self.entries if isinstance(e, SkippedQuestion))


def to_sim_question(analysis: QuestionAnalysis, k: int) -> SimQuestion | None:
    """The simulator's view of an analyzed question (full mode); None if it was skipped."""
    from streamrag.analysis import metrics

    rankings = analysis.rankings
    if rankings is None:
        return None
    row = analysis.row
    topk = rankings.topk[:, :k]
    return SimQuestion(
        interaction_id=row["interaction_id"],
        n_words=row["n_words"],
        t_sc=row["t_sc"],
        t_suf=metrics.t_suf(topk, analysis.gold),
        topk=topk,
        gold=analysis.gold,
        final_scores=rankings.final_scores,
        final_coverage=analysis.coverage,
        question_type=row["question_type"],
        scale=analysis.scale,
    )


def questions_from_analyses(analyses: Iterable[QuestionAnalysis], k: int) -> QuestionSet:
    """One entry per analyzed question: a SimQuestion, or the analyzer's skip reason."""
    entries: list[Entry] = []
    for analysis in analyses:
        question = to_sim_question(analysis, k)
        if question is None:
            row = analysis.row
            entries.append(SkippedQuestion(row["interaction_id"], row["skip_reason"], question_type=row["question_type"]))
        else:
            entries.append(question)
    return QuestionSet(entries)


def questions_from_data(
    path: str | os.PathLike[str],
    data: DataConfig,
    selection: Selection,
    *,
    cache: ChunkCache | None = None,
    jobs: int = 1,
    env: RetrieverEnv | None = None,
) -> QuestionSet:
    """Analyze a CRAG file or corpus folder as the scenario's ``[data]`` asks (full mode)."""
    from streamrag.analysis.entry import analyze_input

    analyzed = analyze_input(path, data.analysis_settings(), selection, gold=data.gold, cache=cache, jobs=jobs, env=env)
    return questions_from_analyses(analyzed.analyses, data.k)


def questions_from_frame(frame: Any) -> QuestionSet:
    """Trace-driven questions from a stabilization-table DataFrame (skipped rows kept)."""
    import pandas as pd

    df: pd.DataFrame = frame

    def opt_int(v: Any) -> int | None:  # a table cell: int, float NaN, pd.NA or None
        return None if v is None or pd.isna(v) else int(v)

    def text(column: str, i: int) -> str:
        if column not in df.columns:
            return ""
        value = df[column].iat[i]
        return "" if value is None or (not isinstance(value, str) and pd.isna(value)) else str(value)

    ids, n_words, t_sc, t_suf = (df[c].tolist() for c in ("interaction_id", "n_words", "t_sc", "t_suf"))
    entries: list[Entry] = []
    for i in range(len(df)):
        reason, qtype = text("skip_reason", i), text("question_type", i)
        if reason:
            entries.append(SkippedQuestion(text("interaction_id", i), reason, opt_int(n_words[i]), None, qtype))
            continue
        entries.append(
            SimQuestion(
                interaction_id=str(ids[i]),
                n_words=int(n_words[i]),
                t_sc=int(t_sc[i]),
                t_suf=opt_int(t_suf[i]),
                topk=None,
                gold=None,
                final_scores=None,
                final_coverage=None,
                question_type=qtype,
            )
        )
    return QuestionSet(entries)


def questions_from_table(path: str | os.PathLike[str]) -> QuestionSet:
    """Read and validate a stabilization table (§7) into trace-driven questions."""
    from streamrag.analysis.table import read_table

    return questions_from_frame(read_table(path))


def _in_population(q: SimQuestion, population: Population) -> bool:
    if population == "retrieved_gold":
        return q.retrieved_gold
    if population == "fallback":
        return not q.retrieved_gold
    return True


POPULATION_REASONS = {
    "retrieved_gold": "not retrieved-gold (select.population = retrieved_gold)",
    "fallback": "retrieved-gold (select.population = fallback)",
}


def select(
    qs: QuestionSet, *, population: Population = "all", limit: int | None = None, ids: Sequence[str] | None = None
) -> QuestionSet:
    """Apply ``ids`` (an id not in the input is an error), the population and ``limit``
    (the first ``limit`` questions of the population, input order).

    Questions left out stay as skipped entries naming the rule; ``counts`` says how many
    each rule took. Raises EmptySelectionError when no question is left to replay.
    """
    entries = list(qs.entries)
    counts = {"input_rows": len(entries), "skipped_in_input": qs.n_skipped}
    if ids is not None:
        check_ids_found(ids, {e.interaction_id for e in entries}, "the input")
        wanted = set(ids)
        counts["not_in_ids"] = sum(1 for e in entries if e.interaction_id not in wanted)
        entries = [e for e in entries if e.interaction_id in wanted]
    out: list[Entry] = []
    kept = 0
    n_population = n_limit = 0
    for e in entries:
        if isinstance(e, SkippedQuestion):
            out.append(e)
        elif not _in_population(e, population):
            out.append(SkippedQuestion(e.interaction_id, POPULATION_REASONS[population], e.n_words, e.t_star, e.question_type))
            n_population += 1
        elif limit is not None and kept >= limit:
            out.append(SkippedQuestion(e.interaction_id, "over select.limit", e.n_words, e.t_star, e.question_type))
            n_limit += 1
        else:
            out.append(e)
            kept += 1
    if population != "all":
        counts[f"not_{population}"] = n_population
    if n_limit:
        counts["over_limit"] = n_limit
    counts["selected"] = kept
    if not kept:
        raise EmptySelectionError(f"no question to simulate ({', '.join(f'{k} {v}' for k, v in counts.items())})")
    return QuestionSet(out, counts)


def select_for(qs: QuestionSet, selection: Selection) -> QuestionSet:
    """:func:`select` with a :class:`~streamrag.data.selection.Selection`."""
    return select(qs, population=selection.population, limit=selection.limit, ids=selection.ids)


def load_selected(
    scenario: Scenario,
    *,
    data: str | os.PathLike[str] | None = None,
    table: str | os.PathLike[str] | None = None,
    ids: Sequence[str] | None = None,
    cache: ChunkCache | None = None,
    jobs: int = 1,
    env: RetrieverEnv | None = None,
) -> QuestionSet:
    """The questions a run replays, from ``data`` (full mode) or ``table`` (trace-driven),
    selected by the scenario (``[data]`` split and scope, ``[select]``) and ``ids``."""
    selection = scenario.selection(ids)
    if table is not None:
        return select(questions_from_table(table), population=selection.population, limit=selection.limit, ids=ids)
    if data is None:
        raise ValueError("load_selected: give data or table")
    # The analyzer reads only the requested ids; population and limit apply after it.
    analyzed = questions_from_data(data, scenario.data, selection.model_copy(update={"population": "all", "limit": None}),
                                   cache=cache, jobs=jobs, env=env)  # fmt: skip
    return select(analyzed, population=selection.population, limit=selection.limit)
