"""On-disk cache of a chunked corpus file: a rerun loads its pool instead of re-reading it.

A BEIR corpus is read, validated and cut into windows on every run, even when its index
is memory-mapped from ``--index-dir``; at 300,000 documents that is most of a rerun.
The cache stores the :class:`~streamrag.data.pools.corpus.ChunkPool` built from a whole corpus
file under ``ROOT/pools/<key>.npz``, with key = sha256 of the file's bytes and the chunk
settings, so an edited file or other settings miss. An entry holds the chunks (one text
and their character offsets), the document names and boundaries, and the pool's
:meth:`~streamrag.data.pools.corpus.ChunkPool.content_key` (what the index key hashes). Only
files that were read without error are stored, so a hit is a file known to be valid.

Writes are atomic; an entry that cannot be read or names another key or format is a
miss, rebuilt and replaced.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import zipfile
from pathlib import Path

import numpy as np

from streamrag.base.atomic import atomic_path
from streamrag.data.chunking import ChunkSettings
from streamrag.data.pools.corpus import ChunkPool

__all__ = ["POOL_CACHE_FORMAT", "load_pool", "pool_key", "store_pool"]

POOL_CACHE_FORMAT = 1
_READ_BLOCK = 1 << 24


def pool_key(path: Path, settings: ChunkSettings, kind: str) -> str:
    """sha256 of the cache format, ``kind``, the chunk settings and the file's bytes."""
    digest = hashlib.sha256(f"pool-cache-v{POOL_CACHE_FORMAT}|{kind}|{settings.model_dump_json()}|".encode())
    with open(path, "rb") as fh:
        while block := fh.read(_READ_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _entry(root: Path, key: str) -> Path:
    return root / "pools" / f"{key}.npz"


def load_pool(root: Path, key: str) -> ChunkPool | None:
    """The cached pool for ``key``, or None (absent, unreadable, or another key or format)."""
    try:
        # The file is opened here, not by np.load: on a truncated archive np.load raises
        # without closing the file it opened (numpy 2.4), which leaks a descriptor per miss.
        with open(_entry(root, key), "rb") as fh, np.load(fh, allow_pickle=False) as entry:
            meta = json.loads(bytes(entry["meta"]))
            if meta.get("format") != POOL_CACHE_FORMAT or meta.get("key") != key:
                return None
            text = bytes(entry["text"]).decode("utf-8", "surrogatepass")
            bounds = entry["bounds"].tolist()
            doc_start = entry["doc_start"]
        doc_ids, content_key = meta["doc_ids"], meta["content_key"]
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, UnicodeDecodeError):
        return None
    if len(bounds) < 1 or bounds[-1] != len(text) or doc_start.shape[0] != len(doc_ids) + 1:
        return None  # not what store_pool writes
    chunks = [text[a:b] for a, b in itertools.pairwise(bounds)]
    pool = ChunkPool(chunks, doc_ids, doc_start)
    pool.remember_content_key(content_key)
    return pool


def store_pool(root: Path, key: str, pool: ChunkPool) -> None:
    """Write ``pool`` under ``key`` (atomic; replaces an older entry)."""
    path = _entry(root, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    bounds = np.zeros(pool.n_chunks + 1, dtype=np.int64)
    np.cumsum([len(c) for c in pool.chunks], out=bounds[1:])
    meta = {"format": POOL_CACHE_FORMAT, "key": key, "doc_ids": pool.doc_ids, "content_key": pool.content_key()}
    buffer = io.BytesIO()
    np.savez(
        buffer,
        meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        text=np.frombuffer("".join(pool.chunks).encode("utf-8", "surrogatepass"), dtype=np.uint8),
        bounds=bounds,
        doc_start=np.asarray(pool.doc_start, dtype=np.int64),
    )
    with atomic_path(path) as tmp:
        tmp.write_bytes(buffer.getbuffer())
