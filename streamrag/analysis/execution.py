"""How ``analyze`` runs the stabilization rule (:mod:`streamrag.analysis.stabilize`) over a
file: in this process or on worker processes, with or without the chunk and index caches.

Every strategy gives the same rows in input order; they differ only in what is read and
where the work happens:

- one process, no cache: ingest (read, chunk) and analyze each question;
- one process, BM25 with a cache: a question whose index is cached is analyzed from its
  index entry alone, its chunks never read (:func:`_analyze_in_cache`);
- ``jobs > 1``, BM25: workers read cached chunks and indexes themselves, in growing batches
  (:func:`_analyze_parallel`); dense retrievers stay in this process (each worker would
  load its own model).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from streamrag.analysis.stabilize import AnalysisSettings, QuestionAnalysis, analyze_question
from streamrag.base.errors import CacheError
from streamrag.data.chunk_cache import ChunkCache
from streamrag.data.crag import OnError, SkippedRecord
from streamrag.data.ingest import CachedQuestion, Question, ingest, ingest_deferred, reread
from streamrag.data.stabilization_row import skipped_row
from streamrag.retrieval.index_cache import IndexedChunks, index_chunks, read_indexed, write_indexed
from streamrag.retrieval.kinds import RetrieverEnv


def analyze_file(
    path: str | Path,
    settings: AnalysisSettings = AnalysisSettings(),
    *,
    split: int | None = 0,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    cache: ChunkCache | None = None,
    jobs: int = 1,
    on_error: OnError = "raise",
    parallel_decompression: bool = False,
    progress: Callable[[int], None] | None = None,
    env: RetrieverEnv | None = None,
    preload: Sequence[str] = (),
) -> Iterator[QuestionAnalysis]:
    """Analyze every selected record of a CRAG file, in file order, one result per record.

    ``env`` defaults to retrievers caching their embeddings next to the chunks
    (``CACHE/embeddings``). ``preload``: modules the caller will need next, imported
    while worker processes analyze (with ``jobs > 1``; see
    :func:`~streamrag.base.system.processes.import_in_background`).
    """
    env = env or RetrieverEnv(None if cache is None else cache.root)
    options: dict[str, Any] = {
        "settings": settings.chunks,
        "cache": cache,
        "jobs": jobs,
        "split": split,
        "limit": limit,
        "ids": ids,
        "on_error": on_error,
        "parallel_decompression": parallel_decompression,
        "progress": progress,
    }
    lexical = settings.retriever.kind == "bm25" and not settings.compare_retrievers

    def recover(ref: CachedQuestion) -> Question:
        return reread(path, ref, settings.chunks, cache)

    if jobs > 1 and lexical:
        # The workers read cached chunks themselves: the parent need not read them too.
        yield from _analyze_parallel(ingest_deferred(path, **options), settings, jobs, cache, preload, recover)
        return
    if lexical and cache is not None:
        # One process, BM25: questions whose index is cached need not have their chunks read either.
        for item in ingest_deferred(path, **options):
            yield _analyze_in_cache(item, settings, cache, recover)
        return
    for item in ingest(path, **options):
        yield _analyze_item(item, settings, env)


def _analyze_in_cache(
    item: Question | CachedQuestion | SkippedRecord,
    settings: AnalysisSettings,
    cache: ChunkCache,
    recover: Callable[[CachedQuestion], Question],
) -> QuestionAnalysis:
    """One question in this process with the index cache, as a worker would analyze it
    (:func:`_analyze_cached`); chunks already in memory are indexed here and stored."""
    if isinstance(item, CachedQuestion):
        analysis = _analyze_cached(item.record, item.chunk_key, str(cache.root), settings)
        return analysis if analysis is not None else _analyze_item(recover(item), settings)
    if isinstance(item, SkippedRecord) or not item.chunk_key:
        return _analyze_item(item, settings)
    indexed = read_indexed(cache.root, item.chunk_key, settings.bm25) or _index_and_store(
        cache.root, item.chunk_key, item.chunks, item.n_pages_unread, item.n_chunks_cut, settings
    )
    return analyze_question(item, settings, indexed=indexed)


def _index_and_store(
    root: Path, key: str, chunks: list[str], n_pages_unread: int | None, n_chunks_cut: int | None, settings: AnalysisSettings
) -> IndexedChunks:
    """Index the chunks of ``key`` and store the result in the index cache for the next run."""
    index, normalized = index_chunks(chunks, settings.bm25)
    indexed = IndexedChunks(index, normalized, n_pages_unread, n_chunks_cut)
    write_indexed(root, key, indexed)
    return indexed


def _analyze_item(
    item: Question | SkippedRecord, settings: AnalysisSettings, env: RetrieverEnv | None = None
) -> QuestionAnalysis:
    if isinstance(item, SkippedRecord):
        return QuestionAnalysis(skipped_row(item.interaction_id, item.reason))
    return analyze_question(item, settings, env=env)


MAX_BATCH = 8
"""Cached questions per worker task (see :func:`_analyze_parallel`)."""


def _analyze_cached_batch(refs: list[tuple[Any, str]], root: str, settings: AnalysisSettings) -> list[QuestionAnalysis | None]:
    """:func:`_analyze_cached` over ``(record, chunk_key)`` pairs, in a worker."""
    return [_analyze_cached(record, key, root, settings) for record, key in refs]


def _analyze_items(items: list[Question | SkippedRecord], settings: AnalysisSettings) -> list[QuestionAnalysis]:
    return [_analyze_item(item, settings) for item in items]


def _analyze_cached(record: Any, key: str, root: str, settings: AnalysisSettings) -> QuestionAnalysis | None:
    """A worker's analysis of a question whose chunks it reads from the cache itself;
    None when the entry is unusable (the parent then rebuilds it).

    The chunks' index comes from the index cache when it holds them; else the worker
    indexes the chunks and stores the result there for the next run."""
    cached = read_indexed(Path(root), key, settings.bm25)
    if cached is not None:
        return analyze_question(Question(record, [], chunk_key=key), settings, indexed=cached)
    chunked = ChunkCache(root).get(key)
    if chunked is None:
        return None
    indexed = _index_and_store(Path(root), key, chunked.chunks, chunked.n_pages_unread, chunked.n_chunks_cut, settings)
    return analyze_question(Question.of(record, chunked, key), settings, indexed=indexed)


def _analyze_parallel(
    items: Iterator[Question | CachedQuestion | SkippedRecord],
    settings: AnalysisSettings,
    jobs: int,
    cache: ChunkCache | None,
    preload: Sequence[str] = (),
    recover: Callable[[CachedQuestion], Question] | None = None,
) -> Iterator[QuestionAnalysis]:
    """BM25 analyses on ``jobs`` processes, in input order, at most ``4·jobs`` tasks in
    flight (memory stays bounded on any file). A question whose chunks are in the cache
    travels as its record and key (workers read the chunks; shipping them would cost
    more than the analysis), in batches of 1, 2, 4, then :data:`MAX_BATCH` consecutive
    such questions per task (a cached question takes a worker ~2 ms, so one task each
    would spend a good share of this process on passing tasks); if a worker finds the
    entry unusable, this process analyzes the question from its chunks, or from
    ``recover(ref)`` for a :class:`CachedQuestion`. Dense retrievers stay in this
    process: each worker would load its own model."""
    from collections import deque

    from streamrag.base.system.processes import all_workers_started, import_in_background, worker_pool

    def results(batch: list[Question | CachedQuestion | SkippedRecord], future: Any) -> Iterator[QuestionAnalysis]:
        for item, analysis in zip(batch, future.result(), strict=True):
            if analysis is not None:
                yield cast(QuestionAnalysis, analysis)
                continue
            if not isinstance(item, CachedQuestion):
                yield _analyze_item(cast(Question, item), settings)
            elif recover is None:
                raise CacheError(f"chunk cache entry {item.chunk_key} is unusable and nothing can rebuild it")
            else:
                yield _analyze_item(recover(item), settings)

    window = 4 * jobs
    root = None if cache is None else str(cache.root)
    # Workers exit with this process, even on kill -9; an interrupt ends them at once.
    with worker_pool(jobs) as pool:
        pending: deque[tuple[list[Any], Any]] = deque()
        batch: list[Question | CachedQuestion] = []
        size = 1  # of the next batch of cached questions: 1, 2, 4, … MAX_BATCH

        def submit_batch() -> None:
            nonlocal size
            refs = [(q.record, q.chunk_key) for q in batch]
            pending.append((batch.copy(), pool.submit(_analyze_cached_batch, refs, str(root), settings)))
            batch.clear()
            size = min(2 * size, MAX_BATCH)

        for item in items:
            if isinstance(item, CachedQuestion) or (root is not None and isinstance(item, Question) and item.chunk_key):
                # (a CachedQuestion only comes from a cache's manifest)
                batch.append(item)
                if len(batch) >= size:
                    submit_batch()
            else:
                if batch:
                    submit_batch()
                pending.append(([item], pool.submit(_analyze_items, [item], settings)))
            if preload and all_workers_started(pool, jobs):  # no fork after this: a thread is safe
                import_in_background(preload)
                preload = ()
            while len(pending) > window:
                yield from results(*pending.popleft())
        if batch:
            submit_batch()
        if preload:  # fewer tasks than workers: nothing is submitted, so nothing forked, any more
            import_in_background(preload)
        while pending:
            yield from results(*pending.popleft())
