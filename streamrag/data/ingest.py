"""Records → chunks, through the cache, optionally on several processes.

The calling process decompresses the file and splits it into lines. Each line's own
work — parsing and validating it, its chunk key, the cache lookup, HTML → text → chunks
on a miss and the cache write — runs in a process pool when ``jobs > 1`` (batches of
lines, a bounded window of them in flight), in this process otherwise
(:class:`_LineWork`, one copy for both). The calling process takes the results back in
file order and decides what is yielded (:class:`~streamrag.data.crag.Selection`: the
split and ids kept, a repeated id, the limit, bad lines), so the output is the same for
any ``jobs``. With a ``limit``, no more lines are in flight than could still be yielded:
no line past the limit is chunked. Each question's pages are dropped once chunked.

With a cache, a pass read to the end also stores a **manifest** of what it yielded —
each record without its pages and its chunk key, each skipped line — keyed by the file's
SHA-256, the chunk settings and the selection (split, ids, limit, error mode). A rerun
with the same key and every chunk entry present replays the manifest without
decompressing or parsing the file (hashing it is the only pass over its bytes); if an
entry turns out unusable midway, the rest is read from the file as before.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Collection, Generator, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

from streamrag.base.errors import CacheError
from streamrag.base.lines import iter_lines
from streamrag.data.chunk_cache import ChunkCache, Lookup
from streamrag.data.chunking import PAPER_CHUNKS, ChunkSettings, PageChunks, chunk_key, chunk_pages_counted
from streamrag.data.crag import BadLine, CragRecord, OnError, Selection, SkippedRecord, Wanted, read_line, read_records

MANIFEST_VERSION = 1


@dataclass(frozen=True, slots=True)
class Question:
    """A record without its pages, the chunks the pages gave and what the chunk cap dropped."""

    record: CragRecord
    chunks: list[str]
    line_no: int = 0
    n_pages_unread: int | None = None
    """Pages the chunk cap left unread (:class:`~streamrag.data.chunking.PageChunks`); None
    when the chunks did not come from the record's own pages."""
    n_chunks_cut: int | None = None
    chunk_key: str = ""
    """The chunks' content key in the cache (:func:`~streamrag.data.chunking.chunk_key`)."""

    @classmethod
    def of(cls, record: CragRecord, chunked: PageChunks, key: str = "", line_no: int = 0) -> Question:
        return cls(
            record,
            chunked.chunks,
            line_no,
            n_pages_unread=chunked.n_pages_unread,
            n_chunks_cut=chunked.n_chunks_cut,
            chunk_key=key,
        )

    @property
    def interaction_id(self) -> str:
        return self.record.interaction_id


@dataclass(frozen=True, slots=True)
class CachedQuestion:
    """A question whose chunks are in the cache but were not read (:func:`ingest_deferred`):
    whoever analyzes it reads them — a worker process, so the parent does not decompress
    every entry too. :func:`reread` recovers one whose entry turns out unusable."""

    record: CragRecord
    chunk_key: str
    line_no: int = 0

    @property
    def interaction_id(self) -> str:
        return self.record.interaction_id


def reread(path: str | Path, ref: CachedQuestion, settings: ChunkSettings, cache: ChunkCache | None) -> Question:
    """``ref``'s question chunked again from its record in ``path`` (its cache entry was
    unusable; the new chunks replace it)."""
    for record in read_records(path, ids={ref.interaction_id}, on_error="skip"):
        if isinstance(record, CragRecord):
            key = chunk_key(record.search_results, settings)
            return Question.of(
                _without_pages(record), cached_chunks(record.search_results, settings, cache, key), key, ref.line_no
            )
    raise CacheError(f"{path}: question {ref.interaction_id!r} of the cache's manifest is no longer in the file")


def cached_chunks(
    pages: tuple[Any, ...], settings: ChunkSettings, cache: ChunkCache | None, key: str | None = None
) -> PageChunks:
    """A record's chunks from the cache, or chunked now (and stored); ``key`` if the
    caller already has :func:`~streamrag.data.chunking.chunk_key` of the pages."""
    key = key if key is not None else chunk_key(pages, settings)
    chunked, found = _looked_up(pages, settings, cache, key)
    if cache is not None:
        cache.count(key, found)
    return chunked


def _looked_up(pages: tuple[Any, ...], settings: ChunkSettings, cache: ChunkCache | None, key: str) -> tuple[PageChunks, Lookup]:
    """The chunks from the cache or chunked now (and stored), and what the lookup found;
    counted by the caller (who may be another process)."""
    chunked, found = cache.lookup(key) if cache is not None else (None, "miss")
    if chunked is None:
        chunked = chunk_pages_counted(pages, settings)
        if cache is not None:
            cache.put(key, chunked)
    return chunked, found


@dataclass(frozen=True, slots=True)
class _Reading:
    """How :func:`ingest` reads a file (its options, passed down as one)."""

    settings: ChunkSettings = PAPER_CHUNKS
    jobs: int = 1
    split: int | None = None
    limit: int | None = None
    ids: Collection[str] | None = None
    on_error: OnError = "raise"
    parallel_decompression: bool = False
    progress: Callable[[int], None] | None = None


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
    how = _Reading(settings, jobs, split, limit, ids, on_error, parallel_decompression, progress)
    return cast(Iterator[Question | SkippedRecord], _ingest(path, how, cache, read_cached=True))


def ingest_deferred(
    path: str | Path, *, cache: ChunkCache | None = None, **options: Any
) -> Iterator[Question | CachedQuestion | SkippedRecord]:
    """:func:`ingest` (the same ``options``), except that a rerun replaying the file's
    manifest yields :class:`CachedQuestion` references instead of reading every chunk
    entry: for callers whose worker processes read the chunks themselves."""
    return _ingest(path, _Reading(**options), cache, read_cached=False)


def _ingest(
    path: str | Path, how: _Reading, cache: ChunkCache | None, *, read_cached: bool
) -> Iterator[Question | CachedQuestion | SkippedRecord]:
    if cache is None:
        yield from _read(path, how, None)
        return
    try:
        key = _manifest_key(path, how.settings, how.split, how.limit, how.ids, how.on_error)
    except OSError:  # unreadable: the reader says so, in its words
        yield from _read(path, how, cache)
        return
    items = cache.get_manifest(key)
    done = 0
    if items is not None and all(cache.has(item[2]) for item in items if item[0] == "q"):
        for item in items:
            entry = _from_manifest(item, cache, read_cached)
            if entry is None:  # an entry went bad since the check: read the rest from the file
                break
            done += 1
            yield entry
        else:
            if how.progress is not None:
                how.progress(Path(path).stat().st_size)
            return
    recorded: list[Any] = []
    for i, entry in enumerate(_read(path, how, cache)):
        recorded.append(_to_manifest(entry))
        if i >= done:
            yield entry
    cache.put_manifest(key, recorded)


def _manifest_key(
    path: str | Path, settings: ChunkSettings, split: int | None, limit: int | None, ids: Collection[str] | None, on_error: str
) -> str:
    import hashlib

    from streamrag.base.digest import file_sha256

    selection = json.dumps([split, limit, sorted(ids) if ids is not None else None, on_error])
    text = f"manifest-v{MANIFEST_VERSION}|{file_sha256(path)}|{chunk_key((), settings)}|{selection}"
    return hashlib.sha256(text.encode()).hexdigest()


def _to_manifest(entry: Question | SkippedRecord) -> list[Any]:
    if isinstance(entry, SkippedRecord):
        return ["s", entry.line_no, entry.interaction_id, entry.reason]
    return ["q", entry.record.model_dump(mode="json"), entry.chunk_key, entry.line_no]


def _from_manifest(item: list[Any], cache: ChunkCache, read: bool = True) -> Question | CachedQuestion | SkippedRecord | None:
    """The manifest item as what reading the file yielded; None when it cannot be used
    (its chunk entry went bad, or its record no longer validates): the caller then reads
    the rest from the file. The item's shape was checked by :meth:`ChunkCache.get_manifest`."""
    from pydantic import ValidationError

    if item[0] == "s":
        return SkippedRecord(line_no=item[1], interaction_id=item[2], reason=item[3])
    try:
        record = CragRecord.model_validate(item[1])
    except ValidationError:
        import logging

        logging.getLogger("streamrag.data.chunk_cache").warning(
            "chunk cache manifest item for line %s holds an invalid record: the file is read again", item[3]
        )
        return None
    if not read:
        return CachedQuestion(record, item[2], item[3])
    chunked = cache.get(item[2])
    if chunked is None:
        return None
    return Question.of(record, chunked, item[2], item[3])


def _read(path: str | Path, how: _Reading, cache: ChunkCache | None) -> Iterator[Question | SkippedRecord]:
    path = Path(path)
    wanted = Wanted(how.split, frozenset(how.ids) if how.ids is not None else None)
    selection = Selection(path, wanted, how.limit, how.on_error)
    work = _LineWork(path, wanted, how.settings, cache)
    lines = selection.lines(iter_lines(path, parallel=how.parallel_decompression, progress=how.progress))
    done: Generator[_Line, None, None]
    done = (work(*line) for line in lines) if how.jobs <= 1 else _in_pool(lines, work, selection, how.jobs)
    # Closed as this generator ends, however it ends (an error, an early stop): the pool's
    # workers end now, not whenever the garbage collector (or the interpreter's exit,
    # whose half-closed pipes made that a traceback) reaches the suspended generator.
    with closing(done):
        for line in done:
            item = selection.admit(line.line_no, line.item)
            if item is None or isinstance(item, SkippedRecord):
                if item is not None:
                    yield item
                continue
            assert line.chunked is not None
            if cache is not None:
                cache.count(line.key, line.found)
            yield Question.of(item, line.chunked, line.key)


def _without_pages(record: CragRecord) -> CragRecord:
    return record.model_copy(update={"search_results": ()})


class _Line(NamedTuple):
    """A line's own work: its record without pages (or what is wrong with it) and, if the
    selection keeps it, its chunk key, chunks and what the cache lookup found."""

    line_no: int
    item: CragRecord | BadLine
    key: str = ""
    chunked: PageChunks | None = None
    found: Lookup = "miss"


@dataclass(frozen=True, slots=True)
class _LineWork:
    """What any process needs to do a line's own work (sent with each batch)."""

    path: Path
    wanted: Wanted
    settings: ChunkSettings
    cache: ChunkCache | None

    def __call__(self, line_no: int, raw: bytes) -> _Line:
        item = read_line(raw, path=self.path, line_no=line_no, split=self.wanted.split)
        if isinstance(item, BadLine) or not self.wanted.keeps(item):
            return _Line(line_no, item if isinstance(item, BadLine) else _without_pages(item))
        key = chunk_key(item.search_results, self.settings)
        chunked, found = _looked_up(item.search_results, self.settings, self.cache, key)
        return _Line(line_no, _without_pages(item), key, chunked, found)


def _work_batch(work: _LineWork, batch: list[tuple[int, bytes]]) -> list[_Line]:
    return [work(line_no, raw) for line_no, raw in batch]


_BATCH_BYTES = 1 << 20
_BATCH_LINES = 16
"""A batch of lines goes to a worker once it holds this many bytes or lines."""


def _in_pool(
    lines: Iterator[tuple[int, bytes]], work: _LineWork, selection: Selection, jobs: int
) -> Generator[_Line, None, None]:
    """``work`` of each of ``lines`` (the selection's) on ``jobs`` worker processes, results
    in file order: at most ``2 * jobs`` batches wait, and no more lines are in flight than
    the selection's limit could still take (the caller admits each line before asking for
    the next)."""
    from streamrag.base.system.processes import worker_pool

    pending: deque[tuple[Any, int]] = deque()  # (the pool's Future, lines in it)
    batch: list[tuple[int, bytes]] = []
    size = in_flight = 0

    def room() -> int | None:
        remaining = selection.remaining
        return None if remaining is None else remaining - in_flight - len(batch)

    with worker_pool(
        jobs
    ) as pool:  # on an error the queued lines are dropped; on an interrupt or early stop, the work in flight too

        def submit() -> None:
            nonlocal batch, size, in_flight
            pending.append((pool.submit(_work_batch, work, batch), len(batch)))
            in_flight += len(batch)
            batch, size = [], 0

        def oldest() -> list[_Line]:
            nonlocal in_flight
            future, n = pending.popleft()
            in_flight -= n
            return cast(list[_Line], future.result())

        for line_no, raw in lines:
            while (free := room()) is not None and free <= 0:
                if batch:
                    submit()
                elif pending:
                    yield from oldest()
                else:
                    return  # the limit is reached
            batch.append((line_no, raw))
            size += len(raw)
            if size >= _BATCH_BYTES or len(batch) >= _BATCH_LINES or room() == 0:
                submit()
            while len(pending) > 2 * jobs:
                yield from oldest()
        if batch:
            submit()
        while pending:
            yield from oldest()
