"""On-disk cache of each question's BM25 index, beside its cached chunks.

Per question, the analysis tokenizes its chunks, indexes the tokens and joins them back
into normalized texts for grounding: about two thirds of its work once the chunks are
cached. This cache keeps the result, keyed by the chunks' content key
(:func:`~streamrag.data.chunking.chunk_key`: the pages' text and the chunk settings) and the
tokenizer, so a rerun reads arrays instead of redoing that work.

One file per entry, ``ROOT/index/ab/abcdef….bin``: a format line, a JSON header line
(the chunk key, the tokenizer, the parts' sizes and types, a CRC-32 of the payload,
what the chunk cap dropped), then the payload: chunk lengths, the term-frequency matrix
in CSR form (the arrays :class:`~streamrag.retrieval.bm25.BM25Index` is built from, each
in the narrowest integer type that holds it), the term id of each vocabulary term in
sorted order, the sorted terms and the normalized chunk texts, each newline-separated
(neither tokens nor texts hold a newline). It is not compressed: zlib at level 1 made
entries about 3× smaller, but inflating one took 1.4 ms, half of what a question cost
with its entry. BM25 parameters are not part of it: the index applies the run's own
when it is built from the entry.

The vocabulary is read as :class:`SortedTerms`, a binary search over the sorted terms:
a question looks up a few dozen tokens, and turning its ~3,500 terms into a dict cost
0.5–0.8 ms, more than reading the rest of the entry.

An entry that is unreadable, truncated, fails its checksum, names another key or
tokenizer, or whose sizes disagree is a miss (rebuilt and rewritten). Writes are atomic.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from streamrag.base.atomic import write_bytes_atomic
from streamrag.retrieval.bm25 import BM25Index, BM25Params
from streamrag.retrieval.tokenize import RegexTokenizer, Tokenizer

INDEX_FORMAT = b"streamrag-index 2\n"


@dataclass(frozen=True, slots=True)
class IndexedChunks:
    """A question's chunks as the analysis needs them: their BM25 index and normalized texts."""

    index: BM25Index
    normalized: list[str]
    """Each chunk's tokens joined by single spaces (what grounding searches)."""
    n_pages_unread: int | None
    n_chunks_cut: int | None


class SortedTerms(Mapping[str, int]):
    """A vocabulary (token → term id) kept as its terms in sorted order, looked up by
    binary search: no dict is built, no term is hashed.

    ``text``: the terms in ascending UTF-8 byte order (code point order), joined by
    newlines; ``ids``: the term id of each, in that order. Iterating yields the terms in
    term-id order, as the dict of :meth:`~streamrag.retrieval.bm25.BM25Index.from_tokens`.
    """

    __slots__ = ("_ends", "_ids", "_starts", "_text")

    def __init__(self, text: bytes, ids: np.ndarray) -> None:
        newlines = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == 10)
        if (newlines.shape[0] + 1 if text else 0) != ids.shape[0]:
            raise ValueError(f"{ids.shape[0]} term ids for {newlines.shape[0] + 1 if text else 0} terms")
        self._text = text
        self._starts: list[int] = [0, *(newlines + 1).tolist()] if ids.shape[0] else []
        self._ends: list[int] = [*newlines.tolist(), len(text)] if ids.shape[0] else []
        self._ids: list[int] = ids.tolist()

    def _find(self, token: object) -> int:
        """Position of ``token`` in sorted order, or −1."""
        if type(token) is not str:
            return -1
        key = token.encode("utf-8")
        text, starts, ends = self._text, self._starts, self._ends
        lo, hi = 0, len(starts)
        while lo < hi:
            mid = (lo + hi) >> 1
            if text[starts[mid] : ends[mid]] < key:
                lo = mid + 1
            else:
                hi = mid
        return lo if lo < len(starts) and text[starts[lo] : ends[lo]] == key else -1

    def get(self, token: object, default: object = None) -> object:  # type: ignore[override]
        at = self._find(token)
        return self._ids[at] if at >= 0 else default

    def __getitem__(self, token: str) -> int:
        at = self._find(token)
        if at < 0:
            raise KeyError(token)
        return self._ids[at]

    def __contains__(self, token: object) -> bool:
        return self._find(token) >= 0

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[str]:
        text, starts, ends = self._text, self._starts, self._ends
        for at in np.argsort(np.array(self._ids, dtype=np.int64), kind="stable").tolist():
            yield text[starts[at] : ends[at]].decode("utf-8")

    def __repr__(self) -> str:
        return f"SortedTerms({len(self)} terms)"

    @staticmethod
    def encode(vocabulary: Mapping[str, int]) -> tuple[bytes, np.ndarray]:
        """``(text, ids)`` of ``vocabulary`` for :class:`SortedTerms`."""
        terms = sorted(vocabulary)  # code point order, which is UTF-8 byte order
        return "\n".join(terms).encode("utf-8"), np.array([vocabulary[t] for t in terms], dtype=np.int64)


def index_chunks(chunks: list[str], params: BM25Params) -> tuple[BM25Index, list[str]]:
    """Tokenize ``chunks`` with the paper tokenizer, index them, and join each one's
    tokens back (``grounding.normalize(chunk)`` for this tokenizer)."""
    tokenizer = RegexTokenizer()
    tokens = [tokenizer(chunk) for chunk in chunks]
    index = BM25Index.from_tokens(tokens, tokenizer=tokenizer, params=params)
    return index, [" ".join(t) for t in tokens]


def _tokenizer_id(tokenizer: Tokenizer) -> list[object]:
    """What the entry records of the tokenizer (a regex tokenizer's pattern and case rule)."""
    if not isinstance(tokenizer, RegexTokenizer):
        raise ValueError(f"index cache: only regex tokenizers are recorded, not {tokenizer!r}")
    return [tokenizer.pattern, tokenizer.lowercase]


def index_path(root: Path, chunk_key: str) -> Path:
    return root / "index" / chunk_key[:2] / f"{chunk_key}.bin"


_DTYPES = {"<u2", "<i4", "<i8"}
"""The integer types an entry's arrays may be stored in."""


def _compact(a: np.ndarray) -> np.ndarray:
    """``a`` (non-negative ints) in the narrowest of uint16 / int32 / int64 that holds it."""
    top = int(a.max()) if a.shape[0] else 0
    dtype = np.uint16 if top < 1 << 16 else np.int32 if top < 1 << 31 else np.int64
    return np.ascontiguousarray(a, dtype=np.dtype(dtype).newbyteorder("<"))


def write_indexed(root: Path, chunk_key: str, indexed: IndexedChunks) -> None:
    """Store ``indexed`` for the chunks of ``chunk_key`` (atomically)."""
    index = indexed.index
    terms, term_ids = SortedTerms.encode(index.vocabulary)
    arrays = [_compact(a) for a in (index.doc_len, index.tf_indptr, index.tf_indices, index.tf_data, term_ids)]
    texts = "\n".join(indexed.normalized).encode("utf-8")
    parts = [a.tobytes() for a in arrays] + [terms, texts]
    header = {
        "key": chunk_key,
        "tokenizer": _tokenizer_id(index.tokenizer),
        "n_chunks": int(index.doc_len.shape[0]),
        "n_terms": len(index.vocabulary),
        "n_postings": int(index.tf_indices.shape[0]),
        "dtypes": [a.dtype.str for a in arrays],
        "sizes": [len(part) for part in parts],
        "crc32": zlib.crc32(b"".join(parts)),
        "n_pages_unread": indexed.n_pages_unread,
        "n_chunks_cut": indexed.n_chunks_cut,
    }
    path = index_path(root, chunk_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, b"".join([INDEX_FORMAT, json.dumps(header).encode("utf-8"), b"\n", *parts]))


def read_indexed(root: Path, chunk_key: str, params: BM25Params) -> IndexedChunks | None:
    """The entry of ``chunk_key`` as an index with ``params``, or None (a miss)."""
    try:
        blob = index_path(root, chunk_key).read_bytes()
    except OSError:
        return None
    tokenizer = RegexTokenizer()
    try:
        if not blob.startswith(INDEX_FORMAT):
            return None
        end = blob.index(b"\n", len(INDEX_FORMAT))
        header = json.loads(blob[len(INDEX_FORMAT) : end])
        if header.get("key") != chunk_key or header.get("tokenizer") != _tokenizer_id(tokenizer):
            return None
        payload = memoryview(blob)[end + 1 :]
        sizes, dtypes = header["sizes"], header["dtypes"]
        if len(sizes) != 7 or len(dtypes) != 5 or not set(dtypes) <= _DTYPES or sum(sizes) != len(payload):
            return None
        if zlib.crc32(payload) != header["crc32"]:
            return None
        parts, at = [], 0
        for size in sizes:
            parts.append(payload[at : at + size])
            at += size
        doc_len, indptr, indices, data, term_ids = (
            np.frombuffer(part, dtype=np.dtype(dtype)).astype(target)
            for part, dtype, target in zip(parts, dtypes, (np.int64, np.int64, np.int32, np.int32, np.int64), strict=False)
        )
        n_chunks, n_terms, n_postings = header["n_chunks"], header["n_terms"], header["n_postings"]
        vocabulary = SortedTerms(bytes(parts[5]), term_ids)
        normalized = str(parts[6], "utf-8").split("\n") if n_chunks else []
        counts = header["n_pages_unread"], header["n_chunks_cut"]
        consistent = (
            len(vocabulary) == n_terms
            and np.array_equal(np.bincount(term_ids, minlength=n_terms), np.ones(n_terms, dtype=np.int64))
            and len(normalized) == doc_len.shape[0] == n_chunks
            and indptr.shape[0] == n_terms + 1
            and indices.shape[0] == data.shape[0] == n_postings
            and indptr[0] == 0
            and indptr[-1] == n_postings
            and int(doc_len.sum()) == int(data.sum())
            and (n_postings == 0 or 0 <= int(indices.min()) <= int(indices.max()) < n_chunks)
            and all(c is None or type(c) is int for c in counts)
        )
        if not consistent:
            return None
        index = BM25Index(
            tf_indptr=indptr,
            tf_indices=indices,
            tf_data=data,
            vocabulary=vocabulary,
            doc_len=doc_len,
            params=params,
            tokenizer=tokenizer,
        )
        return IndexedChunks(index, normalized, *counts)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
