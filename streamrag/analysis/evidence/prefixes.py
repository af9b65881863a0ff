"""Per-prefix evidence: what any trigger or reflector needs to judge a call on a prefix.

``analyze`` writes it beside ``stabilization.csv`` as ``prefixes.parquet`` (``generate
T.csv --table`` as ``T.prefixes.parquet``), one row per question × prefix t (t = 1 … n,
in question then prefix order):

=============================  ====================================================
``interaction_id``, ``t``      the question and the prefix ``q[1:t]``
``top_ids``                    the top chunk ids of the prefix, best first: as many
                               as the analyzer ranked, max(k, 5) (fewer when the corpus
                               is smaller)
``top1_score``                 the *full* query's retrieval score of ``top1(t)``'s
                               chunk (BM25, or cosine for a dense retriever)
``top1_coverage_distinct``     share of the full query's distinct tokens found in
                               ``top1(t)``'s chunk (the anchor's coverage)
``top1_coverage_occurrences``  share of the full query's token occurrences found
``gold_rank``                  1-based rank of the best gold chunk in ``top_ids``
                               (empty: none)
``score_scale``                ``bm25`` or ``cosine``
=============================  ====================================================

Optional columns, what a learned trigger reads (:mod:`streamrag.analysis.features.compute`),
each computed from the words heard so far unless its name ends in ``_full``; ``word`` is
always written (word prefixes), the others when the analysis runs the entity tagger
(``analyze --features`` or ``--entity-predictor``, ``data.entity_predictor``):

=============================  ====================================================
``word``                       word t itself (word prefixes only)
``top1_margin``                the *prefix's* BM25 score of ``top1(t)`` minus that of
                               ``top2(t)`` (0 when one chunk; BM25 retrieval only)
``top1_coverage_prefix``       share of the prefix's distinct tokens in ``top1(t)``
``ne_first_t``                 the entity tagger run on the prefix ``q[1:t]``: the word
                               where its first entity begins, 0 if none (``ner`` extra,
                               written when the analysis ran the entity predictor)
``ne_first_t_full``            the same tagger on the *full* query (right context: the
                               anchor's rule), the same on every prefix
=============================  ====================================================

With it, a table replay knows exactly what full mode knows: the heuristic reflector
reads ``top1_score`` and a coverage, ``gold`` reads ``gold_rank ≤ k``, ``topk_match``
and the ``replace`` trigger compare ``top_ids[:k]`` sets, ``stable`` reads ``top_ids[0]``.
The simulator builds its questions from this evidence in both modes, so a replay of
``stabilization.csv`` with its ``prefixes.parquet`` equals ``simulate DATA`` question by
question.

Evidence is bound to its table: the file records the SHA-256 of the table written with it
(Parquet key-value metadata ``streamrag.table_sha256``), and the evidence found beside a
table (:func:`find_evidence`: ``T.prefixes.parquet``, else the ``prefixes.parquet`` of
analyze's layout) must record that table's digest — two tables in one folder never share
evidence, and an edited table is not replayed silently against the evidence of its
earlier content. Evidence given explicitly (``--evidence``) and evidence without a digest
(written before it was recorded) are checked question by question instead
(:func:`~streamrag.simulator.questions.questions_from_records`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from streamrag.base.errors import TableError
from streamrag.retrieval.base import Postings, chunk_coverage

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from streamrag.data.human.asr import Hypotheses
    from streamrag.retrieval.base import Rankings

__all__ = [
    "EVIDENCE_COLUMNS",
    "EVIDENCE_FILE",
    "K_EVIDENCE",
    "PrefixEvidence",
    "evidence_frame",
    "evidence_path_for",
    "evidence_schema",
    "find_evidence",
    "frozen_evidence",
    "prefix_evidence",
    "write_evidence",
]

EVIDENCE_FILE = "prefixes.parquet"
"""The evidence's file name beside analyze's ``stabilization.csv`` (and the layout before
evidence was named after its table)."""

EVIDENCE_SUFFIX = ".prefixes.parquet"
"""The evidence of table ``T.csv`` is ``T.prefixes.parquet`` (:func:`evidence_path_for`)."""

TABLE_DIGEST_KEY = b"streamrag.table_sha256"
"""Parquet metadata key: the SHA-256 of the table the evidence was written with."""

ROW_GROUP_ROWS = 16_384
"""Prefix rows per Parquet row group of the evidence file: a reader decodes a row group at
a time (:mod:`~streamrag.analysis.evidence.read`), so this bounds its memory."""

K_EVIDENCE = 5
"""Chunk ids kept per prefix at least: the analyzer ranks max(k, 5) (robustness arm k = 5)."""

OPTIONAL_COLUMNS: tuple[tuple[str, str], ...] = (
    ("revised", "revised"), ("t_ms", "times_ms"), ("word", "words"), ("top1_margin", "margin"),
    ("top1_coverage_prefix", "coverage_prefix"), ("ne_first_t", "ne_first"), ("ne_first_t_full", "ne_first_full"),
)  # fmt: skip
"""(column, field) of the optional per-prefix columns, written when every question has them."""

EVIDENCE_COLUMNS: tuple[str, ...] = (
    "interaction_id",
    "t",
    "top_ids",
    "top1_score",
    "top1_coverage_distinct",
    "top1_coverage_occurrences",
    "gold_rank",
    "score_scale",
)

Scale = Literal["bm25", "cosine"]


def evidence_schema(columns: Iterable[str] = EVIDENCE_COLUMNS) -> pa.Schema:
    """The Arrow schema of ``prefixes.parquet`` with ``columns`` (the required ones and
    the optional ones written), each of its one declared type."""
    import pyarrow as pa

    from streamrag.base.columns import arrow_schema

    types = {
        "interaction_id": pa.string(), "t": pa.int32(), "top_ids": pa.list_(pa.int64()), "top1_score": pa.float64(),
        "top1_coverage_distinct": pa.float64(), "top1_coverage_occurrences": pa.float64(), "gold_rank": pa.int8(),
        "score_scale": pa.string(), "revised": pa.bool_(), "t_ms": pa.float64(), "word": pa.string(),
        "top1_margin": pa.float64(), "top1_coverage_prefix": pa.float64(), "ne_first_t": pa.int16(),
        "ne_first_t_full": pa.int16(),
    }  # fmt: skip
    return arrow_schema({name: types[name] for name in columns}, "prefixes")


@dataclass(frozen=True, slots=True, eq=False)
class PrefixEvidence:
    """One question's evidence, prefix t at row t − 1 (arrays read-only).

    ``top_ids`` int32 (n, K); ``top1_score``, ``coverage_distinct``,
    ``coverage_occurrences`` float64 (n,); ``gold_rank`` int8 (n,), 0 when no gold chunk
    is among ``top_ids``.
    """

    top_ids: np.ndarray
    top1_score: np.ndarray
    coverage_distinct: np.ndarray
    coverage_occurrences: np.ndarray
    gold_rank: np.ndarray
    scale: Scale = "bm25"
    revised: np.ndarray | None = None
    """bool (n,): ASR hypotheses only — hypothesis t is not a word prefix of the final one
    (column ``revised``, written only by an analysis with ``asr``)."""
    times_ms: np.ndarray | None = None
    """float64 (n,): recorded hypotheses only — each one's time from the start of speech
    (column ``t_ms``); the simulator delivers hypothesis t then."""
    words: tuple[str, ...] | None = None
    """Word t of the query (column ``word``; word prefixes only)."""
    margin: np.ndarray | None = None
    """float64 (n,): the prefix's own score of top1(t) − top2(t) (column ``top1_margin``)."""
    coverage_prefix: np.ndarray | None = None
    """float64 (n,): share of the prefix's distinct tokens in top1(t)'s chunk."""
    ne_first: np.ndarray | None = None
    """int16 (n,): first entity word of the tagger on prefix t, 0 none (``ne_first_t``)."""
    ne_first_full: np.ndarray | None = None
    """int16 (n,): first entity word of the tagger on the full query, 0 none (right context)."""

    @property
    def n_words(self) -> int:
        return int(self.top_ids.shape[0])

    @property
    def k_max(self) -> int:
        return int(self.top_ids.shape[1])

    def t_sc(self) -> int:
        """Self-consistency point of the evidence's top-1 sequence."""
        from streamrag.analysis.metrics import t_sc

        return t_sc(self.top_ids[:, 0].tolist())

    def gold_hit(self, k: int) -> np.ndarray:
        """bool (n,): a gold chunk is in ``topk(t)``."""
        return (self.gold_rank >= 1) & (self.gold_rank <= k)

    def t_suf(self, k: int) -> int | None:
        """First prefix with a gold chunk in its top-k (None if never)."""
        hits = np.flatnonzero(self.gold_hit(k))
        return int(hits[0]) + 1 if hits.size else None


def frozen_evidence(ev: PrefixEvidence) -> PrefixEvidence:
    """``ev`` with its required arrays made read-only."""
    for a in (ev.top_ids, ev.top1_score, ev.coverage_distinct, ev.coverage_occurrences, ev.gold_rank):
        a.flags.writeable = False
    return ev


def prefix_evidence(
    rankings: Rankings, index: Postings, gold: Iterable[int], scale: Scale, hypotheses: Hypotheses | None = None
) -> PrefixEvidence:
    """The evidence of one ranked question: ``rankings`` (every ranked column is kept),
    ``index`` its lexical index (coverage), ``gold`` its gold chunk ids, ``hypotheses``
    the ASR hypotheses ranked (None: word prefixes)."""
    top_ids = np.ascontiguousarray(rankings.topk, dtype=np.int32)
    top1 = top_ids[:, 0].astype(np.int64)
    support, inverse = np.unique(top1, return_inverse=True)
    scores = np.array([float(rankings.final_scores[int(c)]) for c in support], dtype=np.float64)
    tokens = rankings.final_tokens
    distinct = chunk_coverage(index, tuple(dict.fromkeys(tokens)), support)
    occurrences = chunk_coverage(index, tokens, support)
    gold_set = np.array(sorted(set(gold)), dtype=np.int64)
    in_gold = np.isin(top_ids, gold_set)
    first = np.where(in_gold.any(axis=1), in_gold.argmax(axis=1) + 1, 0).astype(np.int8)
    flags = times = None
    if hypotheses is not None:
        flags = np.array(hypotheses.revised, dtype=bool)
        times = None if hypotheses.times_ms is None else np.array(hypotheses.times_ms, dtype=np.float64)
    return frozen_evidence(
        PrefixEvidence(top_ids, scores[inverse], distinct[inverse], occurrences[inverse], first, scale, flags, times)
    )


def evidence_frame(items: Iterable[tuple[str, PrefixEvidence]]) -> pd.DataFrame:
    """The evidence table of ``(interaction_id, evidence)`` pairs, one row per prefix.

    Built column by column over all questions at once (a frame per question cost more
    than the analysis of it).
    """
    import pandas as pd

    pairs = list(items)
    if not pairs:
        return pd.DataFrame({c: [] for c in EVIDENCE_COLUMNS})
    evs = [ev for _, ev in pairs]
    columns: dict[str, Any] = {
        "interaction_id": [qid for qid, ev in pairs for _ in range(ev.n_words)],
        "t": np.concatenate([np.arange(1, ev.n_words + 1, dtype=np.int32) for ev in evs]),
        "top_ids": [row for ev in evs for row in ev.top_ids.tolist()],
        "top1_score": np.concatenate([ev.top1_score for ev in evs]),
        "top1_coverage_distinct": np.concatenate([ev.coverage_distinct for ev in evs]),
        "top1_coverage_occurrences": np.concatenate([ev.coverage_occurrences for ev in evs]),
        "gold_rank": _gold_rank_column(np.concatenate([ev.gold_rank for ev in evs])),
        "score_scale": [ev.scale for ev in evs for _ in range(ev.n_words)],
    }
    for name, field in OPTIONAL_COLUMNS:
        present = [getattr(ev, field) is not None for ev in evs]
        if all(present):
            columns[name] = np.concatenate([getattr(ev, field) for ev in evs])
        elif any(present):  # some questions have it, some not: missing values, as a concat of frames gives
            columns[name] = pd.concat(
                [pd.Series(getattr(ev, field) if p else [np.nan] * ev.n_words) for ev, p in zip(evs, present, strict=True)],
                ignore_index=True,
            )
    return pd.DataFrame(columns)


def _gold_rank_column(ranks: np.ndarray) -> Any:
    """Nullable Int8: the rank of the first gold chunk in the top-k, missing (not 0) when none."""
    import pandas as pd

    return pd.arrays.IntegerArray(ranks.astype(np.int8), ranks == 0)


def write_evidence(df: pd.DataFrame, path: str | os.PathLike[str], *, table: str | os.PathLike[str] | None = None) -> Path:
    """Write the evidence table as Parquet (Arrow schema :func:`evidence_schema`), atomically;
    ``table``: the table file it belongs to (already written), whose SHA-256 the evidence
    then records."""
    from streamrag.base.atomic import staged
    from streamrag.base.columns import write_parquet
    from streamrag.base.digest import file_sha256

    metadata = None if table is None else {TABLE_DIGEST_KEY.decode(): file_sha256(staged(table)).encode()}
    return write_parquet(df, path, evidence_schema(df.columns), metadata=metadata, row_group_size=ROW_GROUP_ROWS)


def recorded_table_sha256(path: str | os.PathLike[str]) -> str | None:
    """The table digest the evidence file records (None: written before digests were)."""
    import pyarrow.lib
    import pyarrow.parquet as pq

    try:
        metadata = pq.ParquetFile(path).schema_arrow.metadata or {}
    except (OSError, pyarrow.lib.ArrowException) as exc:
        raise TableError(f"{path}: cannot read the per-prefix evidence: {exc}") from None
    value = metadata.get(TABLE_DIGEST_KEY)
    return None if value is None else value.decode("ascii", "replace")


def check_bound(evidence: str | os.PathLike[str], table: str | os.PathLike[str]) -> None:
    """Refuse evidence that records another table's digest than ``table``'s (see the
    module docstring); evidence without a digest passes (checked question by question)."""
    from streamrag.base.digest import file_sha256

    recorded = recorded_table_sha256(evidence)
    if recorded is None:
        return
    actual = file_sha256(table)
    if recorded != actual:
        raise TableError(
            f"{evidence}: the per-prefix evidence of another table than {table} (it records table SHA-256 "
            f"{recorded[:12]}…, the table's is {actual[:12]}…): write the table and its evidence together "
            "(generate --table, analyze), give the evidence with --evidence to check it question by question, "
            "or replay without it (--no-evidence)"
        )


def evidence_path_for(table: str | os.PathLike[str]) -> Path:
    """Where the evidence of table ``T.csv`` is written: ``T.prefixes.parquet`` beside it."""
    path = Path(table)
    return path.with_name(path.name.removesuffix(path.suffix) + EVIDENCE_SUFFIX)


def find_evidence(table: str | os.PathLike[str]) -> Path | None:
    """The evidence beside ``table`` that belongs to it, or None when there is none:
    ``T.prefixes.parquet``, else analyze's ``prefixes.parquet``; either must record the
    table's digest when it records one (:func:`check_bound`, a TableError otherwise)."""
    for candidate in (evidence_path_for(table), Path(table).with_name(EVIDENCE_FILE)):
        if candidate.is_file():
            check_bound(candidate, table)
            return candidate
    return None
