"""On-disk cache of processed chunks, keyed by record content and chunk settings.

One gzip-compressed JSON file per entry, ``ROOT/ab/abcdef….json.gz``, holding the key it
was written for, the format version, the chunks and what the chunk cap dropped
(:class:`~streamrag.data.chunking.PageChunks`; format 1 entries lack it and are rebuilt).
``ROOT/files/`` holds one manifest per input file read to the end
(:mod:`streamrag.data.ingest`): what the reading yielded, records without pages and their
chunk keys, so a rerun need not decompress the file. ``ROOT/pools/`` holds whole chunked
corpora (BEIR, :mod:`streamrag.data.pool_cache`); ``ROOT/index/`` each question's BM25
index and normalized texts (:mod:`streamrag.retrieval.index_cache`). An entry whose file
is unreadable, fails gzip's CRC, or names another key or version is treated as a miss
and rebuilt.
Writes go to a temporary file in the same folder and are renamed into place, so a
crash never leaves a half-written entry behind.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from pathlib import Path
from typing import Any

from streamrag.base.atomic import write_bytes_atomic
from streamrag.base.errors import CacheError
from streamrag.data.chunking import PageChunks

CACHE_FORMAT = 2


def default_cache_dir() -> Path:
    """``$STREAMRAG_CACHE``, else ``$XDG_CACHE_HOME/streamrag``, else ``~/.cache/streamrag``."""
    if env := os.environ.get("STREAMRAG_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "streamrag"


class ChunkCache:
    """Chunks of questions, stored per content key. ``hits`` / ``misses`` / ``rebuilt`` count lookups."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"{self.root}: cannot create the cache folder ({exc.strerror})") from None
        if not os.access(self.root, os.W_OK):
            raise CacheError(f"{self.root}: cache folder is not writable; pass another with --cache DIR")
        self.hits = 0
        self.misses = 0
        self.rebuilt = 0

    def path_for(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json.gz"

    def get(self, key: str) -> PageChunks | None:
        """The cached chunks, or ``None`` on a miss or a corrupt / stale entry."""
        path = self.path_for(key)
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            self.misses += 1
            return None
        except OSError:
            self.rebuilt += 1
            return None
        try:
            entry = json.loads(gzip.decompress(blob))
            ok = (
                isinstance(entry, dict)
                and entry.get("format") == CACHE_FORMAT
                and entry.get("key") == key
                and isinstance(entry.get("chunks"), list)
                and entry.get("n_chunks") == len(entry["chunks"])
                and all(isinstance(entry.get(n), int) for n in ("n_pages_unread", "n_chunks_cut"))
            )
        except (OSError, EOFError, zlib.error, ValueError):
            ok = False
        if not ok:
            self.rebuilt += 1
            return None
        self.hits += 1
        return PageChunks(entry["chunks"], entry["n_pages_unread"], entry["n_chunks_cut"])

    def manifest_path(self, key: str) -> Path:
        return self.root / "files" / f"{key}.json.gz"

    def get_manifest(self, key: str) -> list[Any] | None:
        """A file's manifest (what reading it yielded), or ``None`` if absent or unusable."""
        try:
            entry = json.loads(gzip.decompress(self.manifest_path(key).read_bytes()))
        except (OSError, EOFError, zlib.error, ValueError):
            return None
        ok = isinstance(entry, dict) and entry.get("format") == CACHE_FORMAT and entry.get("key") == key
        return entry["items"] if ok and isinstance(entry.get("items"), list) else None

    def put_manifest(self, key: str, items: list[Any]) -> None:
        entry = {"format": CACHE_FORMAT, "key": key, "items": items}
        data = gzip.compress(json.dumps(entry, ensure_ascii=False).encode("utf-8"), compresslevel=1, mtime=0)
        path = self.manifest_path(key)
        path.parent.mkdir(exist_ok=True)
        write_bytes_atomic(path, data)

    def has(self, key: str) -> bool:
        """Whether an entry file exists for ``key`` (not whether it is intact)."""
        return self.path_for(key).is_file()

    def put(self, key: str, chunked: PageChunks) -> None:
        entry = {
            "format": CACHE_FORMAT,
            "key": key,
            "n_chunks": len(chunked.chunks),
            "chunks": chunked.chunks,
            "n_pages_unread": chunked.n_pages_unread,
            "n_chunks_cut": chunked.n_chunks_cut,
        }
        data = gzip.compress(json.dumps(entry, ensure_ascii=False).encode("utf-8"), compresslevel=1, mtime=0)
        path = self.path_for(key)
        path.parent.mkdir(exist_ok=True)
        write_bytes_atomic(path, data)
