"""The BEIR pool cache: a rerun loads the chunked corpus instead of reading it; any change misses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from streamrag.cli import main
from streamrag.data.chunking import ChunkSettings
from streamrag.data.pools.beir import read_beir
from streamrag.data.pools.cache import load_pool, pool_key


def _folder(tmp_path: Path, texts: list[str]) -> Path:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    corpus = [{"_id": f"d{i}", "title": f"t{i}", "text": text} for i, text in enumerate(texts)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "where is the tower"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


TEXTS = ["alpha beta " * 150, "the tower is in paris", "", "naïve café \ud800 lone surrogate", "x " * 400]


def _same_pool(a, b) -> None:  # type: ignore[no-untyped-def]
    assert a.chunks == b.chunks and a.doc_ids == b.doc_ids
    np.testing.assert_array_equal(a.doc_start, b.doc_start)
    assert a.content_key() == b.content_key()


def test_second_read_loads_the_same_pool_without_reading_the_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, cache = _folder(tmp_path, TEXTS), tmp_path / "cache"
    first = read_beir(folder, cache_root=cache)
    assert len(list((cache / "pools").glob("*.npz"))) == 1
    from streamrag.data.pools import beir

    monkeypatch.setattr(beir, "_read_corpus", lambda *a: pytest.fail("the corpus was read again"))
    again = read_beir(folder, cache_root=cache)
    _same_pool(again.pool, first.pool)
    assert again.parameters == first.parameters and again.items == first.items
    _same_pool(read_beir(folder, cache_root=cache, limit=1).pool, first.pool)  # the limit selects queries only


def test_edits_and_other_settings_miss_and_a_broken_entry_is_rebuilt(tmp_path: Path) -> None:
    folder, cache = _folder(tmp_path, TEXTS), tmp_path / "cache"
    read_beir(folder, cache_root=cache)
    small = ChunkSettings(window_words=50, overlap_words=10)
    other = read_beir(folder, cache_root=cache, settings=small)
    _same_pool(other.pool, read_beir(folder, settings=small).pool)
    (folder / "corpus.jsonl").write_text((folder / "corpus.jsonl").read_text().replace("paris", "rome"))
    edited = read_beir(folder, cache_root=cache)
    assert any("rome" in c for c in edited.pool.chunks)
    assert len(list((cache / "pools").glob("*.npz"))) == 3
    key = pool_key(folder / "corpus.jsonl", ChunkSettings(), "beir")
    entry = cache / "pools" / f"{key}.npz"
    entry.write_bytes(entry.read_bytes()[:100])  # truncated: a miss, then rewritten
    assert load_pool(cache, key) is None
    _same_pool(read_beir(folder, cache_root=cache).pool, edited.pool)
    assert load_pool(cache, key) is not None


def test_distractor_samples_are_cut_from_a_cached_corpus_and_not_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, cache = _folder(tmp_path, TEXTS), tmp_path / "cache"
    read_beir(folder, cache_root=cache, distractors=1)
    assert not (cache / "pools").exists()
    read_beir(folder, cache_root=cache)  # the whole corpus, stored
    expected = {n: read_beir(folder, distractors=n, seed=3) for n in (0, 2, 10)}
    from streamrag.data.pools import beir

    monkeypatch.setattr(beir, "_read_corpus", lambda *a: pytest.fail("the corpus was read again"))
    monkeypatch.setattr(beir, "_corpus_ids", lambda *a: pytest.fail("the corpus was read again"))
    for n, reference in expected.items():
        got = read_beir(folder, cache_root=cache, distractors=n, seed=3)
        _same_pool(got.pool, reference.pool)
        assert got.parameters == reference.parameters
    assert len(list((cache / "pools").glob("*.npz"))) == 1


def test_cli_rerun_uses_the_cache_and_writes_the_same_table(tmp_path: Path) -> None:
    folder = _folder(tmp_path, TEXTS)
    outs = []
    for run in ("a", "b"):
        out = tmp_path / run
        assert main(["analyze", "--corpus", str(folder), "--scope", "global", "--cache", str(tmp_path / "c"),
                     "--out", str(out), "--no-figures", "--quiet"]) == 0  # fmt: skip
        outs.append((out / "stabilization.csv").read_bytes())
    assert outs[0] == outs[1]
    assert len(list((tmp_path / "c" / "pools").glob("*.npz"))) == 1
