"""The analyzer end to end: known values on the real sample, outputs, arms, anchors."""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from streamrag.analysis.execution import analyze_file
from streamrag.analysis.stabilize import QuestionAnalysis, analyze_question
from streamrag.analysis.studies.anchor import t_anchor, t_pivot
from streamrag.analysis.table import STABILIZATION_COLUMNS, read_table
from streamrag.cli import main
from streamrag.data.crag import CragRecord
from streamrag.data.demo import demo_path
from streamrag.data.ingest import Question, ingest
from streamrag.retrieval.bm25 import BM25Index
from streamrag.retrieval.tokenize import word_tokens

if TYPE_CHECKING:
    from streamrag.simulator.questions import QuestionSet


@pytest.fixture(scope="module")
def sample_analyses(crag_sample: Path) -> dict[str, QuestionAnalysis]:
    """The real sample analyzed once per module (read only): chunking its pages costs ~3 s."""
    return {a.row["interaction_id"]: a for a in analyze_file(crag_sample, split=None)}


@pytest.fixture(scope="module")
def sample_rows(sample_analyses: dict[str, QuestionAnalysis]) -> dict[str, dict]:
    return {qid: a.row for qid, a in sample_analyses.items()}


def test_known_questions_of_the_real_sample(sample_rows: dict[str, dict]) -> None:
    a = sample_rows["55b219e5-ba31-4318-a73d-551f0fb9c546"]
    assert (a["n_words"], a["n_passages"], a["t_sc"], a["t_suf"], a["volatility"]) == (11, 110, 6, 1, 0)
    assert a["groundable"] and a["retrieved_gold"]
    b = sample_rows["db078969-dcfd-4bd3-8d07-ee8ceceebafd"]
    assert (b["n_words"], b["n_passages"], b["t_sc"], b["t_suf"]) == (10, 80, 4, None)
    assert b["groundable"] is False and b["retrieved_gold"] is False and b["phi_suf"] is None


def test_rows_respect_the_definitions(sample_rows: dict[str, dict]) -> None:
    for row in sample_rows.values():
        assert 1 <= row["t_sc"] <= row["n_words"]
        assert row["phi_sc"] == row["t_sc"] / row["n_words"]
        assert row["retrieved_gold"] == (row["t_suf"] is not None)
        assert row["groundable"] == (row["n_gold"] > 0)
        assert not row["retrieved_gold"] or row["groundable"]


def _question(query: str, chunks: list[str], answer: str = "zeta") -> Question:
    record = CragRecord(interaction_id="x", query=query, answer=answer, split=0)
    return Question(record, chunks)


def test_hand_made_question() -> None:
    chunks = ["alpha beta", "beta gamma", "gamma delta zeta", "delta alpha"]
    result = analyze_question(_question("beta gamma delta", chunks))
    r = result.row
    # prefixes: "beta" → top1 0 (tie 0/1 by id), "beta gamma" → 1, "beta gamma delta" → ties resolved by BM25
    assert r["n_words"] == 3 and r["n_passages"] == 4 and r["n_gold"] == 1
    assert result.rankings is not None
    assert r["t_sc"] == next(t for t in range(1, 4) if all(x == result.rankings.top1[-1] for x in result.rankings.top1[t - 1 :]))
    assert r["retrieved_gold"] == (r["t_suf"] is not None)
    assert set(result.arm_t_suf) == {(k, g) for k in (1, 3, 5) for g in ("exact", "relaxed")}


def test_question_without_chunks_is_a_row_with_a_reason() -> None:
    r = analyze_question(_question("what is it", [])).row
    assert r["skip_reason"] == "no chunks" and r["t_sc"] is None and r["interaction_id"] == "x"


def test_anchor_positions() -> None:
    chunks = [f"common filler {i}" for i in range(40)] + ["common rareword filler"]
    index = BM25Index.build(chunks)
    words = word_tokens("common filler rareword", index.tokenizer)
    assert t_anchor(index, words) == 3  # "rareword": df 1 ≤ max(1, ⌊0.05·41⌋) = 2
    assert t_anchor(index, word_tokens("common unknownword", index.tokenizer)) is None
    assert t_pivot(index, words, final_top1=40) == 3  # the rare word scores most on chunk 40
    assert t_pivot(index, word_tokens("nothing", index.tokenizer), final_top1=0) is None


def test_arms_are_monotone_on_the_demo_set() -> None:
    analyses = [a for a in analyze_file(demo_path(), split=None) if a.rankings is not None]
    for a in analyses:
        for mode in ("exact", "relaxed"):
            t1, t3, t5 = (a.arm_t_suf[(k, mode)] for k in (1, 3, 5))
            # a larger k finds gold no later
            assert (t5 or 99) <= (t3 or 99) <= (t1 or 99)
        assert a.arm_groundable["relaxed"] or not a.arm_groundable["exact"]


def test_analyze_cli_outputs_and_stats_roundtrip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["analyze", str(demo_path()), "--out", str(out), "--split", "all", "--no-cache", "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "streamable at L=600 ms" in printed and "robustness" in printed
    with (out / "stabilization.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 32
    assert list(rows[0])[: len(STABILIZATION_COLUMNS)] == list(STABILIZATION_COLUMNS)
    assert {r["groundable"] for r in rows} <= {"True", "False"}
    assert all(r["t_suf"] == "" for r in rows if r["retrieved_gold"] == "False")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_questions"] == 32 and len(summary["rq2"]["grid"]) == 36
    assert len(summary["robustness"]) == 6 and summary["parameters"]["analysis"]["k"] == 3
    for name in ("phi_histograms.png", "phi_suf_by_type.png", "streamable_vs_L.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # stats recomputes the same statistics from the written table
    assert main(["stats", str(out / "stabilization.csv"), "--out", str(tmp_path / "again")]) == 0
    again = json.loads((tmp_path / "again" / "summary.json").read_text())
    assert again["rq1"] == summary["rq1"] and again["rq2"] == summary["rq2"] and again["rq4"] == summary["rq4"]
    assert len(read_table(out / "stabilization.csv")) == 32


def test_split_zero_is_the_default(tmp_path: Path) -> None:
    assert main(["analyze", str(demo_path()), "--out", str(tmp_path), "--no-cache", "--no-figures", "--jobs", "1"]) == 0
    with (tmp_path / "stabilization.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == 24


def test_k_and_grounding_flags_change_the_configured_arm(tmp_path: Path) -> None:
    args = [str(demo_path()), "--split", "all", "--no-cache", "--no-figures", "--jobs", "1"]
    assert main(["analyze", *args, "--out", str(tmp_path / "k1"), "--k", "1"]) == 0
    assert main(["analyze", *args, "--out", str(tmp_path / "k5"), "--k", "5", "--grounding", "relaxed"]) == 0
    k1 = json.loads((tmp_path / "k1" / "summary.json").read_text())
    k5 = json.loads((tmp_path / "k5" / "summary.json").read_text())
    arm = {(a["k"], a["grounding"]): a for a in k1["robustness"]}
    assert k1["rq1"]["n_retrieved_gold"] == arm[(1, "exact")]["n_retrieved_gold"]
    assert k5["rq1"]["n_retrieved_gold"] == arm[(5, "relaxed")]["n_retrieved_gold"]


def test_sim_questions_adapter_matches_the_table(sample_question_set: QuestionSet) -> None:
    qs = sample_question_set
    found = qs.questions
    assert qs.n_skipped == 0 and len(found) == 10
    questions = {q.interaction_id: q for q in found}
    q = questions["55b219e5-ba31-4318-a73d-551f0fb9c546"]
    assert (q.n_words, q.t_sc, q.t_suf) == (11, 6, 1)
    assert q.topk.shape == (11, 3) and q.top_score.shape == q.coverage_distinct.shape == q.gold_hit.shape == (11,)
    assert q.gold_hit[0] and 0.0 <= q.coverage_distinct.min() <= q.coverage_distinct.max() <= 1.0


def test_prefix_evidence_is_what_a_from_scratch_computation_gives(
    crag_sample: Path, sample_analyses: dict[str, QuestionAnalysis]
) -> None:
    """top1_score = BM25 of the full query on the prefix's top chunk; coverage = the share
    of the full query's distinct tokens (or occurrences) found in that chunk; gold_rank =
    rank of the first gold chunk in the prefix's top ids."""
    from streamrag.data.ingest import ingest
    from streamrag.retrieval.base import BM25Retriever
    from streamrag.retrieval.tokenize import RegexTokenizer

    tok = RegexTokenizer()
    for item in ingest(crag_sample, split=None):
        analysis = sample_analyses[item.interaction_id]
        ev = analysis.evidence
        assert ev is not None
        retriever = BM25Retriever(item.chunks)
        query = item.record.query
        tokens = tok(query)
        for t in range(1, ev.n_words + 1):
            top = int(ev.top_ids[t - 1, 0])
            assert ev.top1_score[t - 1] == retriever.score_chunk(top, query)
            chunk_tokens = set(tok(item.chunks[top]))
            distinct = list(dict.fromkeys(tokens))
            assert ev.coverage_distinct[t - 1] == sum(x in chunk_tokens for x in distinct) / len(distinct)
            assert ev.coverage_occurrences[t - 1] == sum(x in chunk_tokens for x in tokens) / len(tokens)
            ranks = [r for r, c in enumerate(ev.top_ids[t - 1].tolist(), start=1) if c in analysis.gold]
            assert ev.gold_rank[t - 1] == (ranks[0] if ranks else 0)


@pytest.mark.parametrize("cached", [False, True])
def test_analysis_on_two_processes_equals_one(tmp_path: Path, cached: bool) -> None:
    from streamrag.analysis.execution import analyze_file
    from streamrag.data.chunk_cache import ChunkCache

    cache = ChunkCache(tmp_path / "cache") if cached else None
    one = list(analyze_file(demo_path(), split=None, cache=cache, jobs=1))
    two = list(analyze_file(demo_path(), split=None, cache=cache, jobs=2))  # cached: workers read the chunks
    assert [a.row for a in two] == [a.row for a in one]
    assert all(
        (a.evidence is None and b.evidence is None) or np.array_equal(a.evidence.top_ids, b.evidence.top_ids)
        for a, b in zip(one, two, strict=True)
    )


def test_a_parallel_rerun_leaves_the_chunks_to_the_workers_and_rebuilds_a_bad_entry(tmp_path: Path, monkeypatch) -> None:
    from streamrag.data.chunk_cache import ENTRY_SUFFIX, ChunkCache

    cache = ChunkCache(tmp_path / "cache")
    first = [a.row for a in analyze_file(demo_path(), split=None, cache=cache, jobs=1)]  # fills cache and manifest
    # The parent reads no chunk entry on a parallel rerun (the forked workers count their own reads).
    reads: list[str] = []
    real_lookup = ChunkCache.lookup  # every read of an entry goes through it
    monkeypatch.setattr(ChunkCache, "lookup", lambda self, key: reads.append(key) or real_lookup(self, key))
    assert [a.row for a in analyze_file(demo_path(), split=None, cache=cache, jobs=2)] == first
    assert reads == []
    # An entry that went bad is rebuilt from the file, and the results do not change
    # (without the index cache, which the workers filled and would answer first).
    entries = sorted(p for p in (tmp_path / "cache").rglob(f"*{ENTRY_SUFFIX}") if p.parent.name != "files")
    assert len(list((tmp_path / "cache" / "index").rglob("*.bin"))) == len(entries)
    shutil.rmtree(tmp_path / "cache" / "index")
    entries[3].write_bytes(b"not zstd")
    assert [a.row for a in analyze_file(demo_path(), split=None, cache=cache, jobs=2)] == first
    assert len(reads) == 1  # the parent's one read: the rebuild looking the entry up before chunking again
    assert real_lookup(cache, entries[3].name.removesuffix(ENTRY_SUFFIX))[1] == "hit"


def test_parallel_analysis_batches_cached_questions_and_keeps_input_order(tmp_path: Path, monkeypatch) -> None:
    """Cached questions go to the workers 1, 2, 4, then MAX_BATCH per task; anything else
    (here a skipped record) ends the batch and goes alone; results come in input order."""
    from concurrent.futures import ThreadPoolExecutor

    import streamrag.base.system.processes as processes
    from streamrag.analysis.execution import MAX_BATCH, _analyze_item, _analyze_parallel
    from streamrag.analysis.stabilize import AnalysisSettings
    from streamrag.data.chunk_cache import ChunkCache
    from streamrag.data.crag import SkippedRecord

    cache = ChunkCache(tmp_path / "cache")
    questions = [q for q in ingest(demo_path(), split=None, cache=cache) if hasattr(q, "chunks")]
    assert len(questions) >= 3 + 4 + MAX_BATCH + 1
    sizes: list[int] = []

    class Recording(ThreadPoolExecutor):  # the workers' functions, in threads, to see the tasks
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
            sizes.append(len(args[0]))
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(processes, "worker_pool", Recording)
    skipped = SkippedRecord(4, "x", "bad line")
    items = [*questions[:3], skipped, *questions[3:]]
    settings = AnalysisSettings()
    got = list(_analyze_parallel(iter(items), settings, 2, cache))
    assert [a.row for a in got] == [_analyze_item(item, settings).row for item in items]
    rest = len(questions) - 3 - 4
    assert sizes == [1, 2, 1, 4, *[MAX_BATCH] * (rest // MAX_BATCH), *([rest % MAX_BATCH] if rest % MAX_BATCH else [])]


def test_workers_index_once_then_read_the_index_cache(tmp_path: Path, monkeypatch) -> None:
    """A worker's first analysis of cached chunks stores their index; the next reads it
    (the chunk entry untouched), and gives the same analysis; a bad entry is rebuilt."""
    from streamrag.analysis.execution import _analyze_cached
    from streamrag.analysis.stabilize import AnalysisSettings
    from streamrag.data.chunk_cache import ChunkCache
    from streamrag.retrieval.index_cache import index_path

    cache = ChunkCache(tmp_path / "cache")
    questions = [q for q in ingest(demo_path(), split=None, cache=cache) if hasattr(q, "chunks")][:6]
    settings = AnalysisSettings()
    expected = [analyze_question(q, settings) for q in questions]
    assert all(not index_path(cache.root, q.chunk_key).exists() for q in questions)
    first = [_analyze_cached(q.record, q.chunk_key, str(cache.root), settings) for q in questions]
    assert all(index_path(cache.root, q.chunk_key).is_file() for q in questions)
    real_lookup = ChunkCache.lookup
    monkeypatch.setattr(ChunkCache, "lookup", lambda self, key: pytest.fail("the chunk entry was read"))
    second = [_analyze_cached(q.record, q.chunk_key, str(cache.root), settings) for q in questions]
    for a, b, c in zip(expected, first, second, strict=True):
        assert a.row == b.row == c.row  # type: ignore[union-attr]
        for f in dataclasses.fields(a.evidence):  # type: ignore[arg-type]
            values = [getattr(x.evidence, f.name) for x in (a, b, c)]  # type: ignore[union-attr]
            for v in values[1:]:
                np.testing.assert_array_equal(np.asarray(v), np.asarray(values[0]))
        assert a.gold == c.gold and a.rankings.topk.tolist() == c.rankings.topk.tolist()  # type: ignore[union-attr]
    # Damaged, truncated or foreign entries are misses: the chunks are indexed again.
    monkeypatch.setattr(ChunkCache, "lookup", real_lookup)
    path = index_path(cache.root, questions[0].chunk_key)
    good = path.read_bytes()
    for bad in (b"", good[:-7], good.replace(questions[0].chunk_key.encode(), b"0" * len(questions[0].chunk_key), 1),
                good[:40] + b"x" + good[41:], good[:-20] + bytes([good[-20] ^ 0xFF]) + good[-19:]):  # fmt: skip
        path.write_bytes(bad)
        again = _analyze_cached(questions[0].record, questions[0].chunk_key, str(cache.root), settings)
        assert again is not None and again.row == expected[0].row
        assert path.read_bytes() == good  # rewritten


def test_one_process_reruns_read_the_index_cache_too(tmp_path: Path, monkeypatch) -> None:
    from streamrag.data.chunk_cache import ENTRY_SUFFIX, ChunkCache

    cache = ChunkCache(tmp_path / "cache")
    plain = [a.row for a in analyze_file(demo_path(), split=None, cache=None, jobs=1)]  # no cache at all
    first = [a.row for a in analyze_file(demo_path(), split=None, cache=cache, jobs=1)]  # fills both caches
    assert first == plain
    n_chunk_entries = len([p for p in (tmp_path / "cache").rglob(f"*{ENTRY_SUFFIX}") if p.parent.name != "files"])
    assert len(list((tmp_path / "cache" / "index").rglob("*.bin"))) == n_chunk_entries > 0
    monkeypatch.setattr(ChunkCache, "lookup", lambda self, key: pytest.fail("a chunk entry was read"))
    assert [a.row for a in analyze_file(demo_path(), split=None, cache=cache, jobs=1)] == first
