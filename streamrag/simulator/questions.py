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
  skipped (non-empty ``skip_reason``) stay skipped. :func:`table_entries` gives the
  same entries one row at a time (what a streamed replay reads,
  :mod:`~streamrag.simulator.table_run`).

:mod:`~streamrag.simulator.question_select` then applies the scenario's population and
``limit`` (:func:`~streamrag.simulator.question_select.load_selected`: both steps).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamrag.base.errors import InputError
from streamrag.data.selection import Selection
from streamrag.pipeline.question import SimQuestion

if TYPE_CHECKING:
    from streamrag.analysis.evidence.prefixes import PrefixEvidence
    from streamrag.analysis.stabilize import QuestionAnalysis
    from streamrag.base.threshold import ScoreSample
    from streamrag.data.chunk_cache import ChunkCache
    from streamrag.retrieval.kinds import RetrieverEnv
    from streamrag.simulator.sections import DataConfig


ANALYZER_EVIDENCE = "per-prefix evidence"
"""The evidence source of full mode (the analyzer's rankings)."""


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
    evidence_source: str = ""
    """Where the per-prefix evidence came from (``""``: none, the oracle reflector)."""

    @property
    def questions(self) -> list[SimQuestion]:
        """The questions to replay, in input order."""
        return [e for e in self.entries if isinstance(e, SimQuestion)]

    @property
    def n_skipped(self) -> int:
        return sum(1 for e in self.entries if isinstance(e, SkippedQuestion))


def sim_question(
    interaction_id: str,
    n_words: int,
    evidence: PrefixEvidence,
    k: int,
    *,
    question_type: str = "",
    threshold_sample: ScoreSample | None = None,
) -> SimQuestion:
    """A question with its per-prefix evidence, judged at top-k (the one constructor of
    evidence-mode questions: full mode and table replays both go through it);
    ``threshold_sample``: the analysis' final-query scores (full mode)."""
    from streamrag.analysis.features.compute import prefix_features
    from streamrag.base.errors import InputError

    if evidence.n_words != n_words:
        raise InputError(f"question {interaction_id!r}: {evidence.n_words} prefixes of evidence for {n_words} words")
    if k > evidence.k_max:
        raise InputError(f"question {interaction_id!r}: data.k = {k} but the evidence holds the top {evidence.k_max} only")
    return SimQuestion(
        interaction_id=interaction_id,
        n_words=n_words,
        t_sc=evidence.t_sc(),
        t_suf=evidence.t_suf(k),
        topk=evidence.top_ids[:, :k],
        top_score=evidence.top1_score,
        coverage_distinct=evidence.coverage_distinct,
        coverage_occurrences=evidence.coverage_occurrences,
        gold_hit=evidence.gold_hit(k),
        question_type=question_type,
        scale=evidence.scale,
        top_rows=tuple(tuple(row) for row in evidence.top_ids[:, :k].tolist()),
        revised=evidence.revised,
        features=prefix_features(evidence),
        input_us=None if evidence.times_ms is None else tuple(round(t * 1000) for t in evidence.times_ms.tolist()),
        threshold_sample=threshold_sample,
    )


def input_events(row: Mapping[str, Any]) -> Any:
    """A row's input events: its hypotheses when the analysis ran over ASR or typed input
    (``n_hypotheses``), else its words (one event per word)."""
    n = row.get("n_hypotheses")
    return row["n_words"] if n is None or (isinstance(n, float) and n != n) else n


def to_sim_question(analysis: QuestionAnalysis, k: int, threshold_sample: ScoreSample | None = None) -> SimQuestion | None:
    """The simulator's view of an analyzed question (full mode); None if it was skipped.
    ``threshold_sample``: the final-query scores of the analysis' questions."""
    if analysis.evidence is None:
        return None
    row = analysis.row
    qtype = row["question_type"]
    return sim_question(
        row["interaction_id"], input_events(row), analysis.evidence, k, question_type=qtype, threshold_sample=threshold_sample
    )


def questions_from_analyses(analyses: Iterable[QuestionAnalysis], k: int) -> QuestionSet:
    """One entry per analyzed question: a SimQuestion, or the analyzer's skip reason. Every
    question shares the analysis' final-query scores (what a calibrated reflector
    threshold is set from: all ranked questions, before any selection)."""
    from streamrag.analysis.stabilize import threshold_sample

    analyses = list(analyses)
    sample = threshold_sample(analyses)
    entries: list[Entry] = []
    for analysis in analyses:
        question = to_sim_question(analysis, k, sample)
        if question is None:
            row = analysis.row
            entries.append(SkippedQuestion(row["interaction_id"], row["skip_reason"], question_type=row["question_type"]))
        else:
            entries.append(question)
    return QuestionSet(entries, evidence_source=ANALYZER_EVIDENCE)


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


def questions_from_frame(
    frame: Any, evidence: Mapping[str, PrefixEvidence] | None = None, *, k: int = 3, source: str = ANALYZER_EVIDENCE
) -> QuestionSet:
    """:func:`questions_from_records` on a stabilization-table DataFrame (``read_table``'s)."""
    import pandas as pd

    def cell(v: Any) -> Any:  # pandas' missing values (NA, NaN) → None, numpy scalars → Python
        if v is None or (not isinstance(v, str) and pd.isna(v)):
            return None
        return v.item() if hasattr(v, "item") else v

    columns = list(frame.columns)
    records = [dict(zip(columns, map(cell, row), strict=True)) for row in frame.itertuples(index=False, name=None)]
    return questions_from_records(records, evidence, k=k, source=source)


def questions_from_records(
    records: Iterable[Mapping[str, Any]],
    evidence: Mapping[str, PrefixEvidence] | None = None,
    *,
    k: int = 3,
    source: str = ANALYZER_EVIDENCE,
    where: str = "per-prefix evidence",
) -> QuestionSet:
    """Questions from validated stabilization-table rows (``read_table_records``'s; skipped
    rows kept): :func:`record_entry` of each, ``evidence`` by interaction id (from
    ``prefixes.parquet``)."""
    lookup = None if evidence is None else evidence.get
    entries = [record_entry(row, lookup, k=k, where=where) for row in records]
    return QuestionSet(entries, evidence_source=source if evidence is not None else "")


def record_entry(
    row: Mapping[str, Any], evidence: Callable[[str], PrefixEvidence | None] | None, *, k: int = 3, where: str = ""
) -> Entry:
    """The entry of one validated stabilization-table row: with ``evidence`` (a question's
    evidence by interaction id) exactly as full mode builds the question, judged at
    top-``k``; without it, oracle mode (only t* is known; a row flagged ``no_overlap`` — no
    query word in any chunk — gets t* = n, as in the statistics: its early t_sc is a
    tie-break artefact). Rows the analyzer skipped stay skipped.

    With evidence, a row's ``t_sc`` must be the evidence's and its ``t_suf`` the
    evidence's at some top-k, else the table and the evidence do not belong together:
    InputError starting with ``where`` (the evidence file)."""

    def text(column: str) -> str:
        value = row.get(column)
        return "" if value is None else str(value)

    def opt_int(v: Any) -> int | None:
        return None if v is None else int(v)

    reason, qtype = text("skip_reason"), text("question_type")
    n_words, t_sc, t_suf = input_events(row), row["t_sc"], row["t_suf"]
    if reason:
        return SkippedQuestion(text("interaction_id"), reason, opt_int(n_words), None, qtype)
    qid = str(row["interaction_id"])
    if evidence is None:
        n = int(n_words)
        if row.get("no_overlap") is True:  # t_sc = 1 is a tie-break artefact: nothing is known before the end
            return SimQuestion(qid, n, n, None, question_type=qtype)
        return SimQuestion(qid, n, int(t_sc), opt_int(t_suf), question_type=qtype)
    ev = evidence(qid)
    if ev is None:
        raise InputError(
            f"{where}: no prefixes for question {qid!r} of the table: the evidence belongs to another table "
            "(replay without it: --no-evidence)"
        )
    q = sim_question(qid, int(n_words), ev, k, question_type=qtype)
    table_t_suf = opt_int(t_suf)  # at the analysis' k, which the table does not record
    if q.t_sc != int(t_sc) or all(ev.t_suf(kk) != table_t_suf for kk in range(1, ev.k_max + 1)):
        raise InputError(
            f"{where}: question {qid!r} has t_sc {q.t_sc}, t_suf {q.t_suf} in the evidence but "
            f"{int(t_sc)}, {table_t_suf} in the table: they do not come from one analysis"
        )
    return q


def questions_from_table(
    path: str | os.PathLike[str], *, evidence: str | os.PathLike[str] | bool | None = None, k: int = 3
) -> QuestionSet:
    """Read and validate a stabilization table (§7) into questions (:func:`table_entries`, read whole)."""
    entries, source = table_entries(path, evidence=evidence, k=k)
    return QuestionSet(list(entries), evidence_source=source)


def table_entries(
    path: str | os.PathLike[str], *, evidence: str | os.PathLike[str] | bool | None = None, k: int = 3
) -> tuple[Iterator[Entry], str]:
    """A stabilization table's entries, one row at a time, and where their evidence comes
    from (``""``: none, oracle mode): the table is read row by row and its evidence
    question by question (:class:`~streamrag.analysis.evidence.read.EvidenceCursor`), so a
    table and evidence in one order (as analyze and generate write them) are never held
    whole; the header and the evidence's schema are checked now, each row when reached.

    ``evidence``: a ``prefixes.parquet`` path; ``None`` (default) uses the one beside the
    table when it exists; ``False`` ignores it (oracle mode)."""
    from streamrag.analysis.evidence.prefixes import find_evidence
    from streamrag.analysis.evidence.read import EvidenceCursor, EvidenceFile
    from streamrag.analysis.table import iter_table_records

    records, _ = iter_table_records(path)
    found: Path | None = None
    if evidence is None or evidence is True:
        found = find_evidence(path)  # bound to the table by its digest
    elif evidence is not False:
        found = Path(evidence)
        if not found.is_file():
            raise InputError(f"{found}: no such file (the per-prefix evidence given with --evidence)")
    if found is None:
        return (record_entry(row, None) for row in records), ""
    lookup = EvidenceCursor(EvidenceFile(found).questions()).get
    return (record_entry(row, lookup, k=k, where=f"{found}") for row in records), ANALYZER_EVIDENCE
