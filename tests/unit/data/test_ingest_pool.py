"""Ingest on a process pool does each line's own work in the workers (parse, key, cache,
chunks) and gives exactly what one process gives: the same questions, skipped lines and
errors in file order, the same cache counts, and with a limit no line past it chunked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import streamrag.data.ingest as ingest_module
from streamrag.base.errors import RecordError
from streamrag.data.chunk_cache import ENTRY_SUFFIX, ChunkCache
from streamrag.data.generated.records import GeneratorSettings, generate_records
from streamrag.data.ingest import Question, ingest


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40 generated records of both splits, with bad lines and blank lines among them."""
    lines = [json.dumps(r) for r in generate_records(GeneratorSettings(n_questions=40, seed=3, page_words=200))]
    for i in range(0, 40, 2):  # both splits, on every other line
        record = json.loads(lines[i])
        record["split"] = 1
        lines[i] = json.dumps(record)
    lines[5] = lines[5][: len(lines[5]) // 2]  # cut short: not JSON, but its id can be guessed
    lines[11] = json.dumps({**json.loads(lines[11]), "query": 7})  # a number where text belongs
    lines[17:17] = ["", "   "]
    path = tmp_path_factory.mktemp("mixed") / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _seen(entries) -> list[tuple]:
    return [
        (e.interaction_id, e.record.split, tuple(e.chunks), e.n_pages_unread, e.n_chunks_cut, e.chunk_key)
        if isinstance(e, Question)
        else (e.line_no, e.interaction_id, e.reason)
        for e in entries
    ]


def _entries(root: Path) -> set[str]:
    return {p.name for p in root.rglob(f"*{ENTRY_SUFFIX}") if p.parent.name != "files"}


@pytest.mark.parametrize(
    "options",
    [
        {"split": None},
        {"split": 0},
        {"split": 1, "limit": 5},
        {"split": None, "limit": 7},
        {"split": None, "limit": 0},
        {"split": 0, "ids": "every third"},
        {"split": None, "ids": "every third", "limit": 4},
    ],
    ids=str,
)
def test_a_pool_gives_what_one_process_gives(mixed: Path, tmp_path: Path, monkeypatch, options: dict) -> None:
    monkeypatch.setattr(ingest_module, "_BATCH_LINES", 3)  # several batches in flight, a window to fill
    if options.get("ids") == "every third":
        everyone = [e.interaction_id for e in ingest(mixed, split=None, on_error="skip")]
        options = {**options, "ids": {rid for rid in everyone[::3] if rid is not None}}
    runs = {}
    for jobs in (1, 2):
        cache = ChunkCache(tmp_path / f"cache{jobs}")
        got = _seen(ingest(mixed, cache=cache, jobs=jobs, on_error="skip", **options))
        runs[jobs] = (got, (cache.hits, cache.misses, cache.rebuilt), _entries(cache.root))
    assert runs[1] == runs[2]
    got, (hits, misses, _), entries = runs[2]
    assert hits == 0 and misses == len(entries) == sum(len(row) == 6 for row in got)  # nothing past a limit was chunked
    if "limit" in options:
        assert len(got) == options["limit"]
    again = ChunkCache(tmp_path / "cache2")
    assert _seen(ingest(mixed, cache=again, jobs=2, on_error="skip", **options)) == got
    assert again.misses == 0


def test_the_pool_ends_with_the_error_not_when_its_traceback_is_collected(mixed: Path) -> None:
    # The error's traceback holds the reading generator's frame; the pool inside it once
    # lived on until the garbage collector (or the interpreter's exit, with a traceback of
    # its own about a bad file descriptor) closed it.
    import multiprocessing

    with pytest.raises(RecordError) as caught:
        list(ingest(mixed, jobs=2, split=None))
    assert caught.value.__traceback__ is not None  # still held here
    assert multiprocessing.active_children() == []


def test_a_pool_raises_the_first_bad_line_and_a_repeated_id_in_file_order(mixed: Path, tmp_path: Path) -> None:
    for jobs in (1, 2):
        with pytest.raises(RecordError, match=r"mixed\.jsonl:6: ") as caught:
            list(ingest(mixed, jobs=jobs, split=None))
        assert caught.value.line_no == 6
    lines = mixed.read_text().splitlines()
    repeated = tmp_path / "repeated.jsonl"
    repeated.write_text("\n".join([*lines[:4], lines[30], *lines[20:]]) + "\n")  # line 30 again at the end
    for jobs in (1, 2):
        with pytest.raises(RecordError, match=r"repeats line 5") as caught:
            list(ingest(repeated, jobs=jobs, split=None, on_error="skip"))
