"""Reading ``prefixes.parquet`` (:mod:`streamrag.analysis.evidence.prefixes`): whole, or one
question at a time in file order.

:func:`iter_evidence` reads the file in record batches of :data:`BATCH_ROWS` prefix rows
and yields each question's :class:`~streamrag.analysis.evidence.prefixes.PrefixEvidence` as soon
as its last prefix is read (a question split between two batches is carried over), so
a reader holds one batch, not the file. The writer
(:func:`~streamrag.analysis.evidence.prefixes.write_evidence`) writes row groups of
:data:`~streamrag.analysis.evidence.prefixes.ROW_GROUP_ROWS` rows; a file written before (one row group
of up to 2²⁰ rows) still reads, but Parquet decodes a whole row group at a time, so
memory then follows its row groups (measured in ``benchmarks/bench_simulate.py``). :func:`read_evidence` is the same reader, gathered
by interaction id.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from streamrag.analysis.evidence.prefixes import (
    EVIDENCE_COLUMNS,
    OPTIONAL_COLUMNS,
    ROW_GROUP_ROWS,
    PrefixEvidence,
    frozen_evidence,
)
from streamrag.base.errors import TableError

__all__ = ["BATCH_ROWS", "EvidenceCursor", "EvidenceFile", "iter_evidence", "read_evidence"]

BATCH_ROWS = ROW_GROUP_ROWS
"""Prefix rows decoded at a time: a row group of the files the writer writes."""

_OPTIONAL_DTYPES: dict[str, Any] = {"words": None, "margin": np.float64, "coverage_prefix": np.float64,
                                     "ne_first": np.int16, "ne_first_full": np.int16}  # fmt: skip


class EvidenceFile:
    """An opened ``prefixes.parquet``: its schema checked now (readable, format version,
    every required column), its questions read by :meth:`questions`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        import pyarrow.lib
        import pyarrow.parquet as pq

        from streamrag.base.columns import file_version

        self.path = path
        try:
            self._file = pq.ParquetFile(path)
            schema = self._file.schema_arrow
        except (OSError, pyarrow.lib.ArrowException) as exc:
            raise TableError(f"{path}: cannot read the per-prefix evidence: {exc}") from None
        file_version(schema, path)
        self.columns: tuple[str, ...] = tuple(schema.names)
        missing = [c for c in EVIDENCE_COLUMNS if c not in self.columns]
        if missing:
            raise TableError(
                f"{path}: column {missing[0]!r} missing (a prefixes.parquet written by streamrag analyze has {', '.join(EVIDENCE_COLUMNS)})"
            )

    def questions(self, batch_rows: int = BATCH_ROWS) -> Iterator[tuple[str, PrefixEvidence]]:
        """``(interaction_id, evidence)`` of every question, in file order; a question
        whose prefixes are not contiguous is a TableError when its second run is reached."""
        import pyarrow as pa
        import pyarrow.lib

        path = self.path
        seen: set[str] = set()
        tail: list[Any] = []  # the batch rows of the question the last batch ended in
        try:
            batches = self._file.iter_batches(batch_size=batch_rows)
            for batch in itertools.chain(batches, [None]):
                if batch is None:
                    if not tail:
                        return
                    part = pa.Table.from_batches(tail)
                else:
                    part = pa.Table.from_batches([*tail, batch]) if tail else pa.Table.from_batches([batch])
                if part.num_rows == 0:
                    continue
                done = batch is None
                for qid, ev, start in _questions(part, path, last=done):
                    if ev is None:  # the last question may go on in the next batch
                        tail = part.slice(start).to_batches()
                        break
                    if qid in seen:
                        raise TableError(f"{path}: the prefixes of question {qid!r} are not contiguous")
                    seen.add(qid)
                    yield qid, ev
                else:
                    tail = []
        except (OSError, pyarrow.lib.ArrowException) as exc:
            raise TableError(f"{path}: cannot read the per-prefix evidence: {exc}") from None


class EvidenceCursor:
    """The evidence of questions asked for in (about) file order, read as they are
    asked: a question read past on the way to another waits in memory until asked for,
    so a table in its evidence's order holds one question at a time."""

    def __init__(self, questions: Iterator[tuple[str, PrefixEvidence]]) -> None:
        self._questions = questions
        self._pending: dict[str, PrefixEvidence] = {}

    def get(self, qid: str) -> PrefixEvidence | None:
        """The evidence of ``qid`` (None: the file has none; asked once per question)."""
        ev = self._pending.pop(qid, None)
        if ev is not None:
            return ev
        for other, ev in self._questions:
            if other == qid:
                return ev
            self._pending[other] = ev
        return None


def iter_evidence(path: str | os.PathLike[str], batch_rows: int = BATCH_ROWS) -> Iterator[tuple[str, PrefixEvidence]]:
    """``(interaction_id, evidence)`` of every question of a ``prefixes.parquet`` file, in
    file order, one batch of prefix rows in memory at a time (:class:`EvidenceFile`)."""
    return EvidenceFile(path).questions(batch_rows)


def read_evidence(path: str | os.PathLike[str]) -> dict[str, PrefixEvidence]:
    """The evidence of every question in a ``prefixes.parquet`` file, by interaction id.

    Raises TableError naming the file and the problem (missing column, a question whose
    prefixes are not 1 … n in order, a bad scale).
    """
    return dict(iter_evidence(path))


def _questions(table: Any, path: str | os.PathLike[str], *, last: bool) -> Iterator[tuple[str, PrefixEvidence | None, int]]:
    """The questions of an Arrow table of whole questions (``last``), or of whole
    questions but the last one, which yields ``(qid, None, its first row)``."""
    import pyarrow.lib

    n_rows = table.num_rows

    def column(name: str, dtype: Any = None) -> np.ndarray:
        # Through Python lists: pyarrow's to_numpy imports pandas, which costs more than a
        # replay of the questions (ParquetFile.read, unlike read_table, does not).
        return np.array(table.column(name).to_pylist(), dtype=dtype)

    def lists(name: str) -> tuple[np.ndarray, np.ndarray]:
        # A list column's offsets (from 0) and values, chunk by chunk: combine_chunks and a
        # sliced list's flatten import pyarrow.compute, whose import alone (≈ 40 ms) costs
        # as much as reading the evidence of 1,371 questions.
        offsets, values, base = [np.zeros(1, dtype=np.int64)], [], 0
        for chunk in table.column(name).chunks:
            o = np.array(chunk.offsets.to_pylist(), dtype=np.int64)
            values.append(np.array(chunk.values.slice(o[0], o[-1] - o[0]).to_pylist(), dtype=np.int32))
            offsets.append(o[1:] - o[0] + base)
            base += int(o[-1] - o[0])
        return np.concatenate(offsets), np.concatenate(values) if values else np.zeros(0, dtype=np.int32)

    try:
        # Whole columns once, then slices per question.
        ids = column("interaction_id", object)
        t_all = column("t", np.int64)
        scales = table.column("score_scale").to_pylist()
        score_all = column("top1_score", np.float64)
        distinct_all = column("top1_coverage_distinct", np.float64)
        occ_all = column("top1_coverage_occurrences", np.float64)
        gold_all = np.array([r or 0 for r in table.column("gold_rank").to_pylist()], dtype=np.int8)
        revised_all = column("revised", bool) if "revised" in table.column_names else None
        times_all = column("t_ms", np.float64) if "t_ms" in table.column_names else None
        extra = {name: table.column(name).to_pylist() for name, _ in OPTIONAL_COLUMNS[2:] if name in table.column_names}
        top_offsets, top_values = lists("top_ids")
    except (pyarrow.lib.ArrowException, AttributeError, TypeError, ValueError) as exc:
        raise TableError(f"{path}: the per-prefix evidence has a column of the wrong type: {exc}") from None
    top_lens = np.diff(top_offsets)
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if n_rows else np.zeros(0, dtype=np.int64)
    bounds = [*starts.tolist(), n_rows]
    for a, b in itertools.pairwise(bounds):
        qid = str(ids[a])
        if b == n_rows and not last:
            yield qid, None, a
            return
        if not np.array_equal(t_all[a:b], np.arange(1, b - a + 1)):
            raise TableError(f"{path}: question {qid!r}: prefixes are not t = 1 … n in order")
        scale = str(scales[a])
        if scale not in ("bm25", "cosine"):
            raise TableError(f"{path}: question {qid!r}: score_scale {scale!r} is neither bm25 nor cosine")
        lens = top_lens[a:b]
        width = int(lens.min())
        if (lens == width).all():  # the usual case: every prefix has the same k
            top_ids = top_values[top_offsets[a] : top_offsets[b]].reshape(b - a, width)
        else:
            top_ids = np.array([top_values[o : o + width] for o in top_offsets[a:b].tolist()], dtype=np.int32)
        yield (
            qid,
            frozen_evidence(
                PrefixEvidence(
                    top_ids,
                    score_all[a:b],
                    distinct_all[a:b],
                    occ_all[a:b],
                    gold_all[a:b],
                    scale,  # type: ignore[arg-type]
                    None if revised_all is None else revised_all[a:b],
                    None if times_all is None else times_all[a:b],
                    **_optional_fields(extra, a, b),
                )
            ),
            a,
        )


def _optional_fields(extra: dict[str, list[Any]], a: int, b: int) -> dict[str, Any]:
    """The optional fields of one question's rows a … b − 1 (a field is None where a row lacks it)."""
    out: dict[str, Any] = {}
    for name, field in OPTIONAL_COLUMNS[2:]:
        values = extra.get(name)
        if values is None:
            continue
        part = values[a:b]
        if any(v is None or (isinstance(v, float) and v != v) for v in part):
            continue
        dtype = _OPTIONAL_DTYPES[field]
        out[field] = tuple(str(v) for v in part) if dtype is None else np.array(part, dtype=dtype)
    return out
