"""External corpora in BEIR layout, as a global pool with gold from relevance judgments.

A BEIR folder holds::

    corpus.jsonl      {"_id": "...", "title": "...", "text": "..."} per line
    queries.jsonl     {"_id": "...", "text": "..."} per line
    qrels/<split>.tsv header ``query-id  corpus-id  score``, then one judgment per line

Each document becomes ``title + " " + text`` (BEIR's usual indexing), cut into the
paper's word windows (120 words, stride 100, ≤ ``max_chunks`` per document); a chunk is
gold for a query when its document is judged relevant (score > 0). There is no answer
string, so no grounding: both grounding modes give the same gold. The questions are the
queries judged in ``<split>``, in ``queries.jsonl`` order.

"Gold + N distractors" corpora (to study stabilization against corpus size) keep every
document relevant to a selected query plus N others drawn uniformly without replacement
(``numpy`` generator seeded by ``seed``), in corpus order. Reading is two passes over
``corpus.jsonl`` then (ids first, texts of the kept documents second), so a corpus of
millions of documents is never held in full.

Every malformed line raises :class:`~streamrag.base.errors.RecordError` naming file, line and
field (``corpus.jsonl:17: field '_id': missing``).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.base.errors import DataFileError, RecordError
from streamrag.base.lines import iter_json_objects
from streamrag.data.chunking import PAPER_CHUNKS, ChunkSettings
from streamrag.data.crag import CragRecord, SkippedRecord
from streamrag.data.pools.cache import load_pool, pool_key, store_pool
from streamrag.data.pools.corpus import ChunkPool, PoolBuilder, PoolQuestion, PoolSource

__all__ = ["read_beir", "read_qrels"]


def _string(obj: dict[str, Any], name: str, path: Path, line_no: int, *, required: bool = True) -> str:
    value = obj.get(name)
    if value is None and not required:
        return ""
    if value is None:
        raise RecordError(str(path), line_no, name, "missing")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and name == "_id":
        return str(value)  # some BEIR sets store numeric ids
    if not isinstance(value, str):
        raise RecordError(str(path), line_no, name, f"expected a string, got {type(value).__name__}")
    return value


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """query id → {document id: score} from a BEIR qrels TSV (header line optional)."""
    path = Path(path)
    if not path.is_file():
        raise DataFileError(f"{path}: no such file (qrels splits are files qrels/<split>.tsv)")
    out: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for line_no, row in enumerate(csv.reader(fh, delimiter="\t"), start=1):
            if not row or not "".join(row).strip():
                continue
            if line_no == 1 and row[0].strip().lower() in ("query-id", "query_id", "qid"):
                continue
            if len(row) < 3:
                raise RecordError(
                    str(path), line_no, "score" if len(row) == 2 else "corpus-id", "missing (expected query-id, corpus-id, score)"
                )
            qid, doc, raw = row[0].strip(), row[1].strip(), row[2].strip()
            if not qid:
                raise RecordError(str(path), line_no, "query-id", "empty")
            if not doc:
                raise RecordError(str(path), line_no, "corpus-id", "empty")
            try:
                score = int(float(raw))
            except ValueError:
                raise RecordError(str(path), line_no, "score", f"{raw!r} is not a number") from None
            out.setdefault(qid, {})[doc] = score
    return out


def _documents(path: Path) -> Iterator[tuple[int, str, Any]]:
    """``(line number, _id, object)`` of each corpus line; a repeated ``_id`` is an error naming its line."""
    seen: set[str] = set()
    for line_no, obj in iter_json_objects(path):
        doc_id = _string(obj, "_id", path, line_no)
        if doc_id in seen:
            raise RecordError(str(path), line_no, "_id", f"duplicate document id {doc_id!r}")
        seen.add(doc_id)
        yield line_no, doc_id, obj


def _corpus_ids(path: Path) -> list[str]:
    return [doc_id for _, doc_id, _ in _documents(path)]


def _read_corpus(corpus: Path, keep: set[str] | None, settings: ChunkSettings) -> tuple[ChunkPool, set[str]]:
    """The pool of the documents of ``corpus`` in ``keep`` (None: all), and every document id read."""
    builder = PoolBuilder()
    seen: set[str] = set()
    for line_no, doc_id, obj in _documents(corpus):
        seen.add(doc_id)
        if keep is not None and doc_id not in keep:
            continue
        title = _string(obj, "title", corpus, line_no, required=False)
        text = _string(obj, "text", corpus, line_no)
        builder.add_text(doc_id, f"{title} {text}", settings)
    return builder.build(), seen


def _documents_of(pool: ChunkPool, keep: set[str]) -> ChunkPool:
    """The documents of ``pool`` in ``keep``, in pool order, with their chunks: the pool that
    reading only those documents builds (each document is chunked on its own)."""
    builder = PoolBuilder()
    start = pool.doc_start.tolist()
    for i, doc_id in enumerate(pool.doc_ids):
        if doc_id in keep:
            builder.add_chunks(doc_id, pool.chunks[start[i] : start[i + 1]])
    return builder.build()


def read_beir(
    folder: str | Path,
    *,
    split: str = "test",
    distractors: int | None = None,
    seed: int = 0,
    limit: int | None = None,
    settings: ChunkSettings = PAPER_CHUNKS,
    cache_root: Path | None = None,
) -> PoolSource:
    """A BEIR folder as a :class:`PoolSource` (see the module docstring).

    Args:
        split: qrels file ``qrels/<split>.tsv``.
        distractors: None = the whole corpus; N = relevant documents + N sampled others.
        seed: seeds the distractor sample.
        limit: keep the first ``limit`` judged queries.
        cache_root: a cache folder: the whole corpus's pool is loaded from it when this
            corpus file was chunked with these settings before, else stored there
            (:mod:`~streamrag.data.pools.cache`); with ``distractors``, the sample is cut
            from a cached whole pool when there is one (and not stored).
    """
    root = Path(folder)
    corpus, queries_path = root / "corpus.jsonl", root / "queries.jsonl"
    qrels_path = root / "qrels" / f"{split}.tsv"
    qrels = read_qrels(qrels_path)
    items: list[PoolQuestion | SkippedRecord] = []
    found: set[str] = set()
    first_line: dict[str, int] = {}
    for line_no, obj in iter_json_objects(queries_path):
        qid = _string(obj, "_id", queries_path, line_no)
        if qid in first_line:  # one query per id, as every other input: never dropped silently
            raise RecordError(
                str(queries_path), line_no, "_id", f"query id {qid!r} repeats line {first_line[qid]} (one query per id)"
            )
        first_line[qid] = line_no
        if qid not in qrels:
            continue
        if limit is not None and len(found) >= limit:
            break
        found.add(qid)
        text = _string(obj, "text", queries_path, line_no)
        relevant = tuple(d for d, score in qrels[qid].items() if score > 0)
        if not text.split():
            items.append(SkippedRecord(line_no, qid, f"line {line_no}: field 'text': empty query"))
            continue
        record = CragRecord(interaction_id=qid, query=text)
        items.append(PoolQuestion(record, own_docs=(), labeled_docs=relevant))
    missing = [q for q in qrels if q not in found]
    if missing and limit is None:
        raise DataFileError(f"{qrels_path}: query-id {missing[0]!r} (and {len(missing) - 1} more) not in {queries_path.name}")
    gold_docs = {d for q in items if isinstance(q, PoolQuestion) for d in q.labeled_docs}

    # The cache holds whole corpora; a distractor sample is cut from a cached one, never
    # stored itself (a missing file is left to the reader's error).
    cache = cache_root if corpus.is_file() else None
    key = pool_key(corpus, settings, "beir") if cache is not None else ""
    whole = load_pool(cache, key) if cache is not None else None
    keep: set[str] | None = None
    n_corpus = None
    if distractors is not None:
        if distractors < 0:
            raise ValueError(f"distractors must be ≥ 0, got {distractors}")
        ids = whole.doc_ids if whole is not None else _corpus_ids(corpus)
        n_corpus = len(ids)
        others = [d for d in ids if d not in gold_docs]
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        picked = rng.choice(len(others), size=min(distractors, len(others)), replace=False)
        keep = gold_docs | {others[i] for i in picked.tolist()}

    if whole is not None:
        pool = whole if keep is None else _documents_of(whole, keep)
        seen = set(whole.doc_ids)
    else:
        pool, seen = _read_corpus(corpus, keep, settings)
        if cache is not None and keep is None:
            store_pool(cache, key, pool)
    parameters = {
        "beir": str(root),
        "split": split,
        "distractors": distractors,
        "seed": seed,
        "limit": limit,
        "n_corpus_docs": n_corpus if n_corpus is not None else len(seen),
        "n_pool_docs": pool.n_docs,
        "n_relevant_docs_missing": sum(1 for d in gold_docs if d not in seen),
        "chunks": settings.model_dump(),
    }
    return PoolSource(pool, items, f"beir:{root.name}", parameters)
