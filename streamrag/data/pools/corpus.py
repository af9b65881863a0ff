"""Global corpora: one pool of chunks shared by every question, with where each chunk came from.

A :class:`ChunkPool` is a list of chunks (chunk id = position) grouped into documents,
each document's chunks contiguous. A :class:`PoolSource` pairs a pool with its questions
(:class:`PoolQuestion`: a CRAG-style record plus the documents that are the question's
own pages and those a dataset labels as its evidence) and, in input order, the records
that could not be read.

Sources: a CRAG file (:func:`pool_from_crag`, one document per record: its pages,
chunked as in per-question scope), the real CRAG pages of ``shared/data/crag``
(:mod:`streamrag.data.pools.crag_pages`) and BEIR folders (:mod:`streamrag.data.pools.beir`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.data.chunking import PAPER_CHUNKS, ChunkSettings, window_words
from streamrag.data.crag import CragRecord, SkippedRecord
from streamrag.data.ingest import Question

__all__ = ["ChunkPool", "PoolBuilder", "PoolQuestion", "PoolSource", "pool_from_crag"]


@dataclass(frozen=True, slots=True, eq=False)
class ChunkPool:
    """Chunks of a global corpus and their documents.

    Attributes:
        chunks: chunk texts; chunk id = position.
        doc_ids: document names in corpus order (unique).
        doc_start: int64 (D + 1,): document d owns chunks ``[doc_start[d], doc_start[d+1])``.
    """

    chunks: list[str]
    doc_ids: list[str]
    doc_start: np.ndarray
    _doc_pos: dict[str, int] = field(default_factory=dict, repr=False)
    _content_key: list[str] = field(default_factory=list, repr=False)  # computed once (or loaded with the pool)

    def __post_init__(self) -> None:
        self._doc_pos.update((d, i) for i, d in enumerate(self.doc_ids))

    @property
    def n_chunks(self) -> int:
        return len(self.chunks)

    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._doc_pos

    def chunk_ids(self, doc_ids: Iterable[str]) -> np.ndarray:
        """Sorted chunk ids of the listed documents (documents absent from the pool are ignored)."""
        parts = []
        for doc in doc_ids:
            pos = self._doc_pos.get(doc)
            if pos is not None:
                parts.append(np.arange(self.doc_start[pos], self.doc_start[pos + 1], dtype=np.int64))
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)

    def doc_of(self, chunk_idx: int) -> str:
        """Name of the document chunk ``chunk_idx`` belongs to."""
        return self.doc_ids[int(np.searchsorted(self.doc_start, chunk_idx, side="right")) - 1]

    def content_key(self) -> str:
        """sha256 of every chunk and document boundary: identifies the pool's content."""
        if self._content_key:
            return self._content_key[0]
        digest = hashlib.sha256(f"pool-v1|{self.n_docs}|{self.n_chunks}".encode())
        digest.update(np.ascontiguousarray(self.doc_start, dtype=np.int64).tobytes())
        for text in self.chunks:
            data = text.encode("utf-8", "surrogatepass")
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
        self._content_key.append(digest.hexdigest())
        return self._content_key[0]

    def remember_content_key(self, key: str) -> None:
        """Set :meth:`content_key` without hashing (a pool loaded with its key from a cache)."""
        self._content_key[:] = [key]


class PoolBuilder:
    """Accumulates documents into a :class:`ChunkPool` (document names must be unique)."""

    def __init__(self) -> None:
        self._chunks: list[str] = []
        self._doc_ids: list[str] = []
        self._starts: list[int] = [0]
        self._seen: set[str] = set()

    def add_chunks(self, doc_id: str, chunks: Sequence[str]) -> None:
        """Add a document already cut into chunks."""
        if doc_id in self._seen:
            raise ValueError(f"document id {doc_id!r} appears twice in the pool")
        self._seen.add(doc_id)
        self._doc_ids.append(doc_id)
        self._chunks.extend(chunks)
        self._starts.append(len(self._chunks))

    def add_text(self, doc_id: str, text: str, settings: ChunkSettings = PAPER_CHUNKS) -> None:
        """Add a plain-text document, cut into word windows (at most ``settings.max_chunks``)."""
        self.add_chunks(doc_id, window_words(text.split(), settings, settings.max_chunks))

    def build(self) -> ChunkPool:
        return ChunkPool(self._chunks, self._doc_ids, np.array(self._starts, dtype=np.int64))


@dataclass(frozen=True, slots=True)
class PoolQuestion:
    """A question asked against a pool.

    ``record`` carries the query, answers and metadata (no pages). ``own_docs``: the
    documents that are the question's own retrieved pages (per-question scope's corpus);
    ``labeled_docs``: documents a dataset marks as its evidence (BEIR qrels, curated
    supporting pages). Either may be empty or name documents absent from the pool.
    """

    record: CragRecord
    own_docs: tuple[str, ...] = ()
    labeled_docs: tuple[str, ...] = ()
    n_pages_unread: int | None = None
    """What the 400-chunk cap dropped from the question's own pages (None: not chunked
    from its own pages here, e.g. BEIR)."""
    n_chunks_cut: int | None = None

    @property
    def interaction_id(self) -> str:
        return self.record.interaction_id


@dataclass(frozen=True, slots=True, eq=False)
class PoolSource:
    """A pool, its questions (and unreadable records) in input order, and a description."""

    pool: ChunkPool
    items: list[PoolQuestion | SkippedRecord]
    name: str
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def questions(self) -> list[PoolQuestion]:
        return [q for q in self.items if isinstance(q, PoolQuestion)]


def pool_from_crag(items: Iterable[Question | SkippedRecord], *, name: str | Path = "crag") -> PoolSource:
    """Pool the chunks of every ingested CRAG record (one document per record, its id the
    interaction id, chunked exactly as in per-question scope); each record's own document
    is its pages. Ids are unique: :func:`~streamrag.data.crag.read_records` refuses a
    repeated one."""
    builder = PoolBuilder()
    out: list[PoolQuestion | SkippedRecord] = []
    for item in items:
        if isinstance(item, SkippedRecord):
            out.append(item)
            continue
        builder.add_chunks(item.interaction_id, item.chunks)
        out.append(
            PoolQuestion(
                item.record, own_docs=(item.interaction_id,), n_pages_unread=item.n_pages_unread, n_chunks_cut=item.n_chunks_cut
            )
        )
    return PoolSource(builder.build(), out, str(name))
