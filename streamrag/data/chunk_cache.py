"""On-disk cache of processed chunks, keyed by record content and chunk settings.

One zstd-compressed JSON file per entry, ``ROOT/ab/abcdef….json.zst``, holding the key it
was written for, the format version, the chunks and what the chunk cap dropped
(:class:`~streamrag.data.chunking.PageChunks`), and the SHA-256 of that body as written.
``ROOT/files/`` holds one manifest per input file read to the end
(:mod:`streamrag.data.ingest`): what the reading yielded, records without pages and their
chunk keys, so a rerun need not decompress the file. ``ROOT/pools/`` holds whole chunked
corpora (BEIR, :mod:`streamrag.data.pools.cache`); ``ROOT/index/`` each question's BM25
index and normalized texts (:mod:`streamrag.retrieval.index_cache`). An entry whose file
is unreadable, fails zstd's checksum, names another key or version, holds values of the
wrong type, or whose content does not match the SHA-256 it was written with (an edited
entry, re-compressed by hand) is treated as a miss, rebuilt, and counted in ``rebuilt``;
a warning names it. A manifest is verified the same way, item by item, so an edited one
cannot change a question's answer or type: it is ignored and the file read again.
Writes go to a temporary file in the same folder and are renamed into place, so a
crash never leaves a half-written entry behind; they are not flushed to disk first
(:func:`~streamrag.base.atomic.atomic_path`'s ``durable=False``): an entry a power cut
empties or tears fails its checks and is rebuilt. Entries of format 3 (``.json.gz``) are
not read: each is rebuilt under the new name once, and the old file removed then.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any, Literal

from streamrag.base.atomic import write_bytes_atomic
from streamrag.base.errors import CacheError
from streamrag.data.chunking import PageChunks

CACHE_FORMAT = 4
"""4: zstd instead of gzip, the digest taken of the body as written (4 encodes the body
once where 3 encoded it twice), entries not flushed to disk before their rename."""

ENTRY_SUFFIX = ".json.zst"
_FORMAT_3_SUFFIX = ".json.gz"
_LEVEL = 1
"""zstd's fastest level: an entry is written once per cold read of a question and read on
every rerun without a manifest; its entries are smaller than format 3's gzip level 1 (on
the real CRAG sample's 10 questions 0.26 MB against 0.38 MB)."""

Lookup = Literal["hit", "miss", "rebuilt"]
"""What a lookup found: an intact entry, none, or one that failed its checks."""

log = logging.getLogger(__name__)


def _body_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def content_digest(value: Any) -> str:
    """SHA-256 of ``value``'s JSON as an entry holds it: what its ``digest`` is."""
    return _digest(_body_json(value).encode("utf-8"))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def entry_bytes(body: dict[str, Any]) -> bytes:
    """The file content of an entry holding ``body`` (its JSON encoded once, digest and all)."""
    import zstandard

    data = _body_json(body).encode("utf-8")
    head = f'{{"format":{CACHE_FORMAT},"digest":"{_digest(data)}","body":'.encode()  # content_digest(body)
    return zstandard.ZstdCompressor(level=_LEVEL, write_checksum=True).compress(head + data + b"}")


def entry_of(blob: bytes) -> Any:
    """The JSON value an entry file's bytes decompress to (ValueError if they do not)."""
    import zstandard

    try:
        return json.loads(zstandard.ZstdDecompressor().decompress(blob))
    except zstandard.ZstdError as exc:
        raise ValueError(f"not a zstd frame ({exc})") from None


def _read_entry(path: Path) -> dict[str, Any] | None:
    """The entry at ``path`` if it is a zstd-compressed JSON object of this format whose
    ``digest`` matches its ``body``; None otherwise (FileNotFoundError propagates)."""
    blob = path.read_bytes()
    try:
        entry = entry_of(blob)
    except ValueError:  # not zstd, bad checksum, not UTF-8, not JSON
        return None
    if not (isinstance(entry, dict) and entry.get("format") == CACHE_FORMAT and isinstance(entry.get("body"), dict)):
        return None
    return entry if entry.get("digest") == content_digest(entry["body"]) else None


def _write_entry(path: Path, body: dict[str, Any]) -> None:
    path.parent.mkdir(exist_ok=True)
    write_bytes_atomic(path, entry_bytes(body), durable=False)
    with contextlib.suppress(FileNotFoundError):  # the same key's entry of format 3, replaced
        path.with_name(path.name.removesuffix(ENTRY_SUFFIX) + _FORMAT_3_SUFFIX).unlink()


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
        return self.root / key[:2] / f"{key}{ENTRY_SUFFIX}"

    def get(self, key: str) -> PageChunks | None:
        """The cached chunks, or ``None`` on a miss or a corrupt, stale or edited entry."""
        chunked, found = self.lookup(key)
        self.count(key, found)
        return chunked

    def lookup(self, key: str) -> tuple[PageChunks | None, Lookup]:
        """The cached chunks and what the lookup found, counting and saying nothing: for a
        worker process, whose caller passes ``found`` to :meth:`count`."""
        path = self.path_for(key)
        try:
            entry = _read_entry(path)
        except FileNotFoundError:
            return None, "miss"
        except OSError:
            entry = None
        body = entry["body"] if entry is not None else None
        ok = (
            body is not None
            and body.get("key") == key
            and isinstance(body.get("chunks"), list)
            and all(isinstance(c, str) for c in body["chunks"])
            and all(_is_int(body.get(n)) for n in ("n_pages_unread", "n_chunks_cut"))
        )
        if not ok or body is None:
            return None, "rebuilt"
        return PageChunks(body["chunks"], body["n_pages_unread"], body["n_chunks_cut"]), "hit"

    def count(self, key: str, found: Lookup) -> None:
        """Count a lookup of ``key`` (and warn of an entry that failed its checks)."""
        if found == "hit":
            self.hits += 1
        elif found == "miss":
            self.misses += 1
        else:
            self.rebuilt += 1
            log.warning("chunk cache entry %s is damaged, edited or stale: rebuilt", self.path_for(key))

    def manifest_path(self, key: str) -> Path:
        return self.root / "files" / f"{key}{ENTRY_SUFFIX}"

    def get_manifest(self, key: str) -> list[Any] | None:
        """A file's manifest (what reading it yielded), or ``None`` if absent or unusable:
        unreadable, written for another key, of another format, edited (its digest), or
        holding an item of the wrong shape (see :mod:`streamrag.data.ingest`)."""
        path = self.manifest_path(key)
        try:
            entry = _read_entry(path)
        except OSError:
            return None
        body = entry["body"] if entry is not None else None
        items = body.get("items") if body is not None and body.get("key") == key else None
        if not (isinstance(items, list) and all(_manifest_item_ok(item) for item in items)):
            log.warning("chunk cache manifest %s is damaged, edited or stale: the file is read again", path)
            return None
        return items

    def put_manifest(self, key: str, items: list[Any]) -> None:
        _write_entry(self.manifest_path(key), {"key": key, "items": items})

    def has(self, key: str) -> bool:
        """Whether an entry file exists for ``key`` (not whether it is intact)."""
        return self.path_for(key).is_file()

    def put(self, key: str, chunked: PageChunks) -> None:
        body = {
            "key": key,
            "chunks": chunked.chunks,
            "n_pages_unread": chunked.n_pages_unread,
            "n_chunks_cut": chunked.n_chunks_cut,
        }
        _write_entry(self.path_for(key), body)


def _manifest_item_ok(item: Any) -> bool:
    """A manifest item as :mod:`streamrag.data.ingest` writes it: ``["q", record, chunk_key,
    line_no]`` or ``["s", line_no, interaction_id, reason]``."""
    if not isinstance(item, list) or len(item) != 4:
        return False
    if item[0] == "q":
        return isinstance(item[1], dict) and isinstance(item[2], str) and _is_int(item[3])
    if item[0] == "s":
        return _is_int(item[1]) and (item[2] is None or isinstance(item[2], str)) and isinstance(item[3], str)
    return False
