"""On-disk embedding cache, keyed by model id and text; an ``Embedder`` that uses it.

Every chunk and every prefix is embedded once: :class:`CachedEmbedder` de-duplicates the
texts of a call, looks them up in an :class:`EmbeddingCache`, embeds only the misses (in
the inner embedder's batches) and stores them.

Storage: one SQLite file per model id, ``ROOT/<model-slug>-<hash>.sqlite3``, table
``vec(key BLOB PRIMARY KEY, v BLOB)`` (16 kB pages) with

    key = blake2b(model_id ‖ 0x00 ‖ utf-8(text), 16 bytes)      v = float32[d], little-endian

so an entry costs 16 + 4d bytes plus SQLite's b-tree overhead (measured by
``benchmarks/bench_dense.py``: ≈ 1.6 kB for d = 384). Why SQLite and not a file per entry
like the chunk cache: entries are 1.5 kB and there are 10⁵–10⁶ of them (a file each
would take a 4 kB block and an inode); SQLite gives the same guarantees in one file —
every write is a transaction (atomic: a crash leaves the old state or the new one, never
half an entry), concurrent processes are serialized by its locks (WAL journal), and a
lookup of a few hundred keys is one indexed query.

A file that is not a valid cache for this model (corrupt, truncated, another format or
model id, wrong vector size) is deleted and rebuilt — a cache miss, never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from streamrag.base.errors import CacheError
from streamrag.retrieval.dense.embed import Embedder

__all__ = ["CachedEmbedder", "EmbeddingCache", "text_key"]

CACHE_FORMAT = "2"
_LOOKUP_CHUNK = 500  # keys per SELECT … IN (…): below SQLite's default variable limit (999)


def text_key(model_id: str, text: str) -> bytes:
    """The 16-byte cache key of ``text`` under ``model_id`` (lone surrogates are kept, not dropped)."""
    data = model_id.encode("utf-8") + b"\0" + text.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).digest()


def _slug(model_id: str) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "-", model_id.split(" ")[0].split("/")[-1]).strip("-")[:40] or "model"
    return f"{name}-{hashlib.blake2b(model_id.encode('utf-8'), digest_size=6).hexdigest()}"


class EmbeddingCache:
    """float32 vectors of dimension ``dim`` per text, for one model id, in ``root``.

    ``hits`` / ``misses`` count looked-up texts; ``rebuilt`` counts files (or entries)
    thrown away as invalid. Not shareable across processes as an object (each process
    opens its own); the file is.
    """

    def __init__(self, root: Path | str, model_id: str, dim: int) -> None:
        self.root = Path(root)
        self.model_id = model_id
        self.dim = dim
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"{self.root}: cannot create the embedding cache folder ({exc.strerror})") from None
        if not os.access(self.root, os.W_OK):
            raise CacheError(f"{self.root}: embedding cache folder is not writable; pass another with --cache DIR")
        self.path = self.root / f"{_slug(model_id)}.sqlite3"
        self.hits = 0
        self.misses = 0
        self.rebuilt = 0
        self._conn: sqlite3.Connection | None = None

    # ------------------------------------------------------------------ connection

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=60.0)
        try:
            # Before any table exists (a no-op afterwards): 16 kB pages hold ten 1.5 kB
            # vectors; at 4 kB, two, with a quarter of each page wasted.
            conn.execute("PRAGMA page_size=16384")
            with contextlib.suppress(sqlite3.OperationalError):  # e.g. a file system without shared memory
                conn.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: atomic and consistent; a power cut may lose the last commits.
            conn.execute("PRAGMA synchronous=NORMAL")
            with conn:
                conn.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
                # A rowid table, not WITHOUT ROWID: the latter keeps rows in an index b-tree
                # whose in-page payload limit (~1/4 page) would push every vector to an
                # overflow page (measured: 4.7 kB per entry instead of 1.6 kB).
                conn.execute("CREATE TABLE IF NOT EXISTS vec (key BLOB PRIMARY KEY, v BLOB NOT NULL)")
                conn.executemany(
                    "INSERT OR IGNORE INTO meta VALUES (?, ?)",
                    [("format", CACHE_FORMAT), ("model_id", self.model_id), ("dim", str(self.dim))],
                )
            meta = dict(conn.execute("SELECT name, value FROM meta").fetchall())
        except BaseException:
            conn.close()
            raise
        if meta != {"format": CACHE_FORMAT, "model_id": self.model_id, "dim": str(self.dim)}:
            conn.close()
            raise sqlite3.DatabaseError(f"stale cache file (meta {meta})")
        return conn

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.path}{suffix}")

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self._conn = self._open()
            except sqlite3.OperationalError as exc:  # busy, locked, I/O: the file may be fine, keep it
                raise CacheError(f"{self.path}: cannot open the embedding cache ({exc})") from None
            except sqlite3.DatabaseError:  # not a database, malformed, stale meta
                self.rebuilt += 1
                self._remove_files()
                try:
                    self._conn = self._open()
                except sqlite3.Error as exc:
                    raise CacheError(f"{self.path}: cannot use the embedding cache ({exc})") from None
        return self._conn

    def _reset(self) -> None:
        """Drop a file found corrupt while in use; the next call starts a fresh one."""
        self.close()
        self.rebuilt += 1
        self._remove_files()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # ------------------------------------------------------------------ access

    def key(self, text: str) -> bytes:
        return text_key(self.model_id, text)

    def get_many(self, keys: Sequence[bytes]) -> dict[bytes, np.ndarray]:
        """The cached vectors among ``keys`` (float32 (dim,) each); absent or invalid ones are left out."""
        found: dict[bytes, np.ndarray] = {}
        nbytes = 4 * self.dim
        try:
            conn = self._connection()
            for start in range(0, len(keys), _LOOKUP_CHUNK):
                part = keys[start : start + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(part))
                for key, blob in conn.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", part):
                    if isinstance(blob, bytes) and len(blob) == nbytes:
                        found[key] = np.frombuffer(blob, dtype="<f4")
                    else:
                        self.rebuilt += 1  # overwritten by the next put
        except sqlite3.OperationalError:  # e.g. locked by another process past the timeout: a miss, not a reset
            found = {}
        except sqlite3.DatabaseError:
            self._reset()
            found = {}
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put_many(self, items: Iterable[tuple[bytes, np.ndarray]]) -> None:
        """Store vectors in one transaction (all or none)."""
        rows = [(key, np.ascontiguousarray(v, dtype="<f4").tobytes()) for key, v in items]
        for _, blob in rows:
            if len(blob) != 4 * self.dim:
                raise ValueError(f"vector of {len(blob) // 4} floats for a cache of dimension {self.dim}")
        try:
            conn = self._connection()
            with conn:
                conn.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)", rows)
        except sqlite3.OperationalError:
            pass  # not written this time (locked, disk full): only a lost speed-up
        except sqlite3.DatabaseError:
            self._reset()

    def __len__(self) -> int:
        return int(self._connection().execute("SELECT COUNT(*) FROM vec").fetchone()[0])

    def __repr__(self) -> str:
        return f"EmbeddingCache({str(self.path)!r})"


class CachedEmbedder:
    """An :class:`~streamrag.retrieval.dense.embed.Embedder` that embeds each distinct text once.

    Within a call, repeated texts are embedded once (so identical chunks get identical
    vectors and tie exactly); across calls and runs, the optional ``cache`` serves texts
    seen before. ``n_requested`` / ``n_embedded`` count texts asked for and texts the
    inner embedder actually computed.
    """

    __slots__ = ("cache", "inner", "n_embedded", "n_requested")

    def __init__(self, inner: Embedder, cache: EmbeddingCache | None = None) -> None:
        if cache is not None and (cache.model_id != inner.model_id or cache.dim != inner.dim):
            raise ValueError(f"cache for {cache.model_id!r} (d={cache.dim}) used with {inner.model_id!r} (d={inner.dim})")
        self.inner = inner
        self.cache = cache
        self.n_requested = 0
        self.n_embedded = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.n_requested += len(texts)
        unique = list(dict.fromkeys(texts))
        vectors: dict[str, np.ndarray] = {}
        if self.cache is not None and unique:
            keys = [self.cache.key(t) for t in unique]
            found = self.cache.get_many(keys)
            todo = [(t, k) for t, k in zip(unique, keys, strict=True) if k not in found]
            vectors.update((t, found[k]) for t, k in zip(unique, keys, strict=True) if k in found)
        else:
            todo = [(t, b"") for t in unique]
        if todo:
            computed = np.asarray(self.inner.embed([t for t, _ in todo]), dtype=np.float32)
            self.n_embedded += len(todo)
            vectors.update((t, computed[i]) for i, (t, _) in enumerate(todo))
            if self.cache is not None:
                self.cache.put_many((k, computed[i]) for i, (_, k) in enumerate(todo))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = vectors[text]
        return out

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, {self.cache!r})"
