"""Cache entries are verified against what they claim: an edited, mistyped or malformed
chunk entry or manifest is a miss, rebuilt from the file, and said so — never a traceback,
never a silently changed question."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import zstandard

from streamrag.data.chunk_cache import ENTRY_SUFFIX, ChunkCache, content_digest, entry_of
from streamrag.data.generated.records import GeneratorSettings, write_crag_file
from streamrag.data.ingest import ingest


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_crag_file(tmp_path / "d.jsonl", GeneratorSettings(n_questions=4, seed=5, page_words=150)).path


def _entries(root: Path, manifests: bool = False) -> list[Path]:
    return sorted(p for p in root.rglob(f"*{ENTRY_SUFFIX}") if (p.parent.name == "files") == manifests)


def _edit(path: Path, change, redigest: bool = False) -> None:
    """Change an entry and write it back well compressed; ``redigest``: as a careful editor
    would, with its digest recomputed (so only the type and shape checks can catch it)."""
    entry = entry_of(path.read_bytes())
    change(entry)
    if redigest and isinstance(entry.get("body"), dict):
        entry["digest"] = content_digest(entry["body"])
    path.write_bytes(zstandard.ZstdCompressor().compress(json.dumps(entry).encode()))


def _questions(data: Path, cache: ChunkCache) -> list[tuple]:
    return [
        (q.record.interaction_id, q.record.answer, q.record.question_type, tuple(q.chunks)) for q in ingest(data, cache=cache)
    ]


def _set(path: tuple, value):
    def change(entry: dict) -> None:
        target = entry
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return change


@pytest.mark.parametrize(
    ("change", "redigest"),
    [
        (_set(("body", "chunks", 0), "an edited chunk"), False),  # content no longer matches its digest
        (_set(("body", "chunks", 0), 7), True),  # a number where text belongs, digest recomputed
        (_set(("body", "n_chunks_cut"), True), True),  # a boolean where a count belongs
        (_set(("body",), ["not", "an", "object"]), False),
    ],
)
def test_an_edited_or_mistyped_chunk_entry_is_rebuilt_and_said_so(data, tmp_path, change, redigest, caplog):
    cache = ChunkCache(tmp_path / "cache")
    first = _questions(data, cache)
    for manifest in _entries(cache.root, manifests=True):
        manifest.unlink()  # the file is read: every record's entry is looked up
    _edit(_entries(cache.root)[0], change, redigest)
    again = ChunkCache(cache.root)
    with caplog.at_level(logging.WARNING, logger="streamrag.data.chunk_cache"):
        assert _questions(data, again) == first
    assert again.rebuilt == 1 and again.hits == 3
    assert any("damaged, edited or stale: rebuilt" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("change", "redigest", "warned"),
    [
        # a well-formed edit that would change a question's answer: its digest no longer matches
        (_set(("body", "items", 0, 1, "answer"), "edited"), False, True),
        (_set(("body", "items", 0), ["q", "not a record", 3, "x"]), True, True),  # a malformed item
        (_set(("body", "items", 0, 1), {"interaction_id": 5}), True, True),  # a record that does not validate
    ],
)
def test_an_edited_or_malformed_manifest_is_ignored_and_the_file_read_again(data, tmp_path, change, redigest, warned, caplog):
    cache = ChunkCache(tmp_path / "cache")
    first = _questions(data, cache)
    (manifest,) = _entries(cache.root, manifests=True)
    _edit(manifest, change, redigest)
    with caplog.at_level(logging.WARNING, logger="streamrag.data.chunk_cache"):
        assert _questions(data, ChunkCache(cache.root)) == first  # answers and types as in the file
    assert any("manifest" in r.getMessage() for r in caplog.records) == warned
    # the read rewrote the manifest, and it is used again
    assert _questions(data, ChunkCache(cache.root)) == first


def test_an_entry_of_format_3_is_rebuilt_and_its_file_removed(data, tmp_path):
    cache = ChunkCache(tmp_path / "cache")
    first = _questions(data, cache)
    old = []
    for entry in [*_entries(cache.root), *_entries(cache.root, manifests=True)]:  # as format 3 left them
        gz = entry.with_name(entry.name.removesuffix(ENTRY_SUFFIX) + ".json.gz")
        gz.write_bytes(b"\x1f\x8b a format 3 entry")
        entry.unlink()
        old.append(gz)
    again = ChunkCache(cache.root)
    assert _questions(data, again) == first and again.misses == 4 and again.rebuilt == 0
    assert not any(p.exists() for p in old) and len(_entries(cache.root)) == 4
