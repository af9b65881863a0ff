"""Records → chunks, through the cache, optionally on several processes.

The calling process decompresses, parses and validates lines (the reader) and looks up
the cache; HTML → text → chunks for cache misses runs in a process pool when
``jobs > 1``. Results come back in input order. Each question's pages are dropped
once chunked, so memory stays bounded by the in-flight window.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from streamrag.cache import ChunkCache
from streamrag.chunking import PAPER_CHUNKS, ChunkSettings, PageChunks, chunk_key, chunk_pages_counted
from streamrag.data.crag import CragRecord, OnError, SkippedRecord, read_records


@dataclass(frozen=True, slots=True)
class Question:
    """A record without its pages, the chunks the pages gave and what the chunk cap dropped."""

    record: CragRecord
    chunks: list[str]
    line_no: int = 0
    n_pages_unread: int | None = None
    """Pages the chunk cap left unread (:class:`~streamrag.chunking.PageChunks`); None
    when the chunks did not come from the record's own pages."""
    n_chunks_cut: int | None = None

    @classmethod
    def of(cls, record: CragRecord, chunked: PageChunks) -> Question:
        return cls(record, chunked.chunks, n_pages_unread=chunked.n_pages_unread, n_chunks_cut=chunked.n_chunks_cut)

    @property
    def interaction_id(self) -> str:
        return self.record.interaction_id


def _chunk_job(pages: tuple[Any, ...], settings: ChunkSettings) -> PageChunks:
    return chunk_pages_counted(pages, settings)


def cached_chunks(pages: tuple[Any, ...], settings: ChunkSettings, cache: ChunkCache | None) -> PageChunks:
    """A record's chunks from the cache, or chunked now (and stored)."""
    key = chunk_key(pages, settings)
    chunked = cache.get(key) if cache is not None else None
    if chunked is None:
        chunked = chunk_pages_counted(pages, settings)
        if cache is not None:
            cache.put(key, chunked)
    return chunked


def ingest(
    path: str | Path,
    *,
    settings: ChunkSettings = PAPER_CHUNKS,
    cache: ChunkCache | None = None,
    jobs: int = 1,
    split: int | None = None,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    on_error: OnError = "raise",
    parallel_decompression: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Question | SkippedRecord]:
    """Stream chunked questions (and skipped lines, with ``on_error="skip"``) in file order."""
    records = read_records(
        path,
        split=split,
        limit=limit,
        ids=ids,
        on_error=on_error,
        parallel_decompression=parallel_decompression,
        progress=progress,
    )
    if jobs <= 1:
        for item in records:
            if isinstance(item, SkippedRecord):
                yield item
                continue
            yield Question.of(_without_pages(item), cached_chunks(item.search_results, settings, cache))
        return
    yield from _ingest_parallel(records, settings, cache, jobs)


def _without_pages(record: CragRecord) -> CragRecord:
    return record.model_copy(update={"search_results": ()})


class _InFlight(NamedTuple):
    """A record whose chunks are cached or being computed by the pool."""

    record: CragRecord
    key: str
    cached: PageChunks | None
    future: Any  # the pool's Future; None when the chunks were cached


def _ingest_parallel(
    records: Iterator[CragRecord | SkippedRecord],
    settings: ChunkSettings,
    cache: ChunkCache | None,
    jobs: int,
) -> Iterator[Question | SkippedRecord]:
    from streamrag.processes import worker_pool

    window = 4 * jobs  # bounded look-ahead: at most this many questions' pages in memory
    pending: deque[SkippedRecord | _InFlight] = deque()
    pool = worker_pool(jobs)

    def drain(keep: int) -> Iterator[Question | SkippedRecord]:
        while len(pending) > keep:
            entry = pending.popleft()
            if isinstance(entry, SkippedRecord):
                yield entry
                continue
            chunked = entry.cached
            if chunked is None:
                chunked = entry.future.result()
                if cache is not None:
                    cache.put(entry.key, chunked)
            yield Question.of(entry.record, chunked)

    try:
        for item in records:
            if isinstance(item, SkippedRecord):
                pending.append(item)
            else:
                key = chunk_key(item.search_results, settings)
                cached = cache.get(key) if cache is not None else None
                future = None if cached is not None else pool.submit(_chunk_job, item.search_results, settings)
                pending.append(_InFlight(_without_pages(item), key, cached, future))
            yield from drain(window)
        yield from drain(0)
    finally:  # on an error or an early stop, do not wait for the queued pages
        pool.shutdown(wait=True, cancel_futures=True)
