"""Dense retrieval plumbing without torch: the hashing test double stands in for the model.

The real model (all-MiniLM-L6-v2, the ``dense`` extra) is tested in test_dense_model.py.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrag.analysis.execution import analyze_file
from streamrag.analysis.stabilize import AnalysisSettings, analyze_question
from streamrag.analysis.studies.retrievers import retriever_comparison
from streamrag.analysis.study import run_study
from streamrag.base.errors import CacheError, EmptyCorpusError, EmptyQueryError
from streamrag.cli import main
from streamrag.data.crag import CragRecord
from streamrag.data.demo import demo_path
from streamrag.data.ingest import Question
from streamrag.data.selection import Selection
from streamrag.pipeline.reflectors import HeuristicReflectorConfig
from streamrag.retrieval.base import BM25Retriever, Retriever
from streamrag.retrieval.dense import retriever as dense_mod
from streamrag.retrieval.dense.embed import HashingEmbedder
from streamrag.retrieval.dense.embed_cache import CachedEmbedder, EmbeddingCache
from streamrag.retrieval.dense.retriever import DenseRetriever, cosine_scores, exact_topk, to_grid
from streamrag.retrieval.kinds import RetrieverEnv
from streamrag.simulator.questions import to_sim_question
from streamrag.simulator.scenario import load_scenario

CHUNKS = [
    "the eiffel tower is in paris, the capital of france",
    "berlin is the capital of germany",
    "the eiffel tower is in paris, the capital of france",  # duplicate of chunk 0: an exact tie
    "bananas are yellow",
    "",
]
QUERY = "what is the capital of france"


def _reference_topk(scores: np.ndarray, k: int) -> np.ndarray:
    """§3 by definition: lexsort by (−score, id)."""
    return np.array([np.lexsort((np.arange(row.shape[0]), -row))[:k] for row in scores])


# --------------------------------------------------------------------------- embedder


def test_hashing_embedder_is_deterministic_unit_and_zero_without_tokens() -> None:
    emb = HashingEmbedder(dim=32)
    a = emb.embed(["Paris, France!", "?", "paris france"])
    assert a.dtype == np.float32 and a.shape == (3, 32)
    assert np.isclose(np.linalg.norm(a[0]), 1.0) and not a[1].any()
    assert np.array_equal(a[0], a[2])  # same tokens, same vector
    assert np.array_equal(a, HashingEmbedder(dim=32).embed(["Paris, France!", "?", "paris france"]))
    assert emb.model_id != HashingEmbedder(dim=16).model_id


# --------------------------------------------------------------------------- retriever


def test_dense_retriever_satisfies_the_protocol_and_ranks_by_cosine() -> None:
    emb = HashingEmbedder(dim=64)
    r = DenseRetriever(CHUNKS, emb)
    assert isinstance(r, Retriever) and r.n_chunks == 5
    pr = r.prefix_rankings(QUERY, k=3)
    words = QUERY.split()
    prefixes = to_grid(emb.embed([" ".join(words[:t]) for t in range(1, len(words) + 1)]))
    scores = prefixes @ to_grid(emb.embed(CHUNKS)).T
    assert pr.topk.dtype == np.int32 and pr.topk.shape == (6, 3) and not pr.topk.flags.writeable
    assert np.array_equal(pr.topk, _reference_topk(scores, 3))
    assert np.array_equal(pr.final_scores, scores[-1]) and not pr.final_scores.flags.writeable
    assert pr.final_tokens == ("what", "is", "the", "capital", "of", "france")
    assert pr.top1[-1] == 0 and list(pr.topk[-1][:2]) == [0, 2]  # the duplicate ties: lower id first


def test_zero_scores_are_eligible_and_ties_go_by_id() -> None:
    r = DenseRetriever(["alpha", "beta", "gamma"], HashingEmbedder(dim=64))
    pr = r.prefix_rankings("??? !!!", k=3)  # no token: zero vector, every cosine 0
    assert pr.topk.tolist() == [[0, 1, 2], [0, 1, 2]]
    assert r.prefix_rankings("x", k=10).k_eff == 3


def test_score_chunk_equals_final_scores_exactly_and_coverage_stays_lexical() -> None:
    r = DenseRetriever(CHUNKS, HashingEmbedder(dim=64))
    pr = r.prefix_rankings(QUERY, k=2)
    fresh = DenseRetriever(CHUNKS, HashingEmbedder(dim=64))  # no memo: embeds the query itself
    bm25 = BM25Retriever(CHUNKS)
    for c in range(len(CHUNKS)):
        assert r.score_chunk(c, QUERY) == pr.final_scores[c] == fresh.score_chunk(c, "  what is the capital  of france ")
        assert r.token_coverage(c, QUERY) == bm25.token_coverage(c, QUERY)
    with pytest.raises(IndexError):
        r.score_chunk(5, QUERY)


def test_dense_errors_match_the_bm25_ones() -> None:
    r = DenseRetriever(CHUNKS, HashingEmbedder())
    with pytest.raises(EmptyQueryError):
        r.prefix_rankings("   ")
    with pytest.raises(EmptyCorpusError):
        DenseRetriever([], HashingEmbedder()).prefix_rankings(QUERY)
    with pytest.raises(ValueError, match="k must be ≥ 1, got 0"):
        r.prefix_rankings(QUERY, k=0)


# --------------------------------------------------------------------------- exact scores, blocked top-k


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), d=st.integers(1, 48))
def test_grid_dot_products_do_not_depend_on_summation_order(seed: int, d: int) -> None:
    rng = np.random.default_rng(seed)
    x, y = (to_grid(v / np.linalg.norm(v)) for v in rng.standard_normal((2, d)))
    forward = float(x @ y)
    assert forward == float(np.sum((x * y)[::-1])) == float(sum((x * y).tolist())) == float(np.einsum("i,i", x, y))


def test_exact_topk_in_blocks_equals_one_full_product(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    emb = rng.standard_normal((5000, 24))
    emb = to_grid(emb / np.linalg.norm(emb, axis=1, keepdims=True))
    emb[4321] = emb[17]  # exact ties across blocks
    emb[600:700] = emb[5]  # a tie group larger than k
    queries = to_grid(rng.standard_normal((9, 24)) / 5)
    queries[0] = emb[5]
    full = queries @ emb.T
    monkeypatch.setattr(dense_mod, "_MAX_BLOCK_ROWS", 256)  # 20 blocks
    for k in (1, 3, 7):
        assert np.array_equal(exact_topk(queries, emb.astype(np.float32), k), _reference_topk(full, k))
    assert np.array_equal(cosine_scores(queries, emb.astype(np.float32)), full)
    assert exact_topk(queries, emb[:2], 5).shape == (9, 2)
    # A retriever over a large corpus takes the blocked path and gives the same rankings.
    monkeypatch.setattr(dense_mod, "_BLOCK_CELLS", 64)
    big = DenseRetriever(["paris france"] * 300 + CHUNKS, HashingEmbedder(dim=64))
    small_path = big.prefix_rankings(QUERY, k=4)
    assert big.n_chunks > dense_mod._block_rows(6, 4)
    monkeypatch.setattr(dense_mod, "_BLOCK_CELLS", 1 << 22)
    assert np.array_equal(big.prefix_rankings(QUERY, k=4).topk, small_path.topk)


# --------------------------------------------------------------------------- embedding cache


def test_cached_embedder_embeds_each_text_once_and_persists(tmp_path: Path) -> None:
    inner = HashingEmbedder(dim=16)
    cached = CachedEmbedder(inner, EmbeddingCache(tmp_path, inner.model_id, inner.dim))
    texts = ["a b", "c", "a b", "d e f"]
    first = cached.embed(texts)
    assert np.array_equal(first, inner.embed(texts)) and (cached.n_requested, cached.n_embedded) == (4, 3)
    again = CachedEmbedder(inner, EmbeddingCache(tmp_path, inner.model_id, inner.dim))  # a new process, say
    assert np.array_equal(again.embed(["d e f", "c", "new"]), inner.embed(["d e f", "c", "new"]))
    assert again.n_embedded == 1 and again.cache is not None and again.cache.hits == 2 and len(again.cache) == 4
    assert list(tmp_path.glob("*.sqlite3")) == [again.cache.path]


def test_cache_keys_separate_models_and_texts() -> None:
    from streamrag.retrieval.dense.embed_cache import text_key

    assert text_key("m1", "x") != text_key("m2", "x") and text_key("m1", "x") != text_key("m1", "x ")
    assert len(text_key("m", "\ud800 lone surrogate")) == 16


def test_corrupt_or_stale_cache_files_are_rebuilt(tmp_path: Path) -> None:
    inner = HashingEmbedder(dim=16)
    cache = EmbeddingCache(tmp_path, inner.model_id, inner.dim)
    cache.path.write_bytes(b"this is not a database" * 100)
    cached = CachedEmbedder(inner, cache)
    assert np.array_equal(cached.embed(["x y"]), inner.embed(["x y"]))
    assert cache.rebuilt == 1 and len(cache) == 1
    cache.close()
    # A wrong-sized vector (e.g. written by another version) is a miss and gets overwritten.
    with sqlite3.connect(cache.path) as conn:
        conn.execute("UPDATE vec SET v = ?", (b"\0" * 8,))
    fresh = EmbeddingCache(tmp_path, inner.model_id, inner.dim)
    assert fresh.get_many([fresh.key("x y")]) == {} and fresh.rebuilt == 1
    CachedEmbedder(inner, fresh).embed(["x y"])
    assert len(fresh.get_many([fresh.key("x y")])) == 1
    # Another model's metadata in the file: stale, rebuilt.
    fresh.close()
    with sqlite3.connect(fresh.path) as conn:
        conn.execute("UPDATE meta SET value = 'other' WHERE name = 'model_id'")
    stale = EmbeddingCache(tmp_path, inner.model_id, inner.dim)
    assert stale.get_many([stale.key("x y")]) == {} and stale.rebuilt == 1


def test_unwritable_cache_folder_is_a_clear_error(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("")
    with pytest.raises(CacheError, match="embedding cache"):
        EmbeddingCache(target / "sub", "m", 4)


def test_cache_must_match_the_embedder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\(d=16\) used with .*\(d=8\)"):
        CachedEmbedder(HashingEmbedder(dim=8), EmbeddingCache(tmp_path, HashingEmbedder(dim=16).model_id, 16))


# --------------------------------------------------------------------------- analysis and simulation


def _question(query: str, chunks: list[str], answer: str) -> Question:
    return Question(CragRecord(interaction_id="q", query=query, answer=answer, split=0, question_type="simple"), chunks)


def test_dense_analysis_row_and_sim_question() -> None:
    q = _question(QUERY, CHUNKS, "paris")
    settings_ = AnalysisSettings(retriever="dense", compare_retrievers=True)
    result = analyze_question(q, settings_, env=RetrieverEnv(embedder=HashingEmbedder(dim=64)))
    row = result.row
    assert row["n_passages"] == 5 and row["groundable"] and row["retrieved_gold"] and row["skip_reason"] == ""
    assert result.scale == "cosine" and set(result.by_retriever) == {"bm25", "dense"}
    plain = analyze_question(q)
    assert result.by_retriever["bm25"].row == plain.row  # the comparison arm is the plain BM25 analysis
    assert result.by_retriever["bm25"].final_score == plain.reference_score == result.reference_score
    assert result.by_retriever["dense"].scale == "cosine" and list(result.by_retriever) == ["dense", "bm25"]
    sim = to_sim_question(result, 3)
    assert sim is not None and sim.scale == "cosine" and sim.top_score is not None
    assert float(sim.top_score.max()) <= 1.0 + 1e-9  # cosines
    # The heuristic reflector judges dense questions on the cosine scale.
    reflector = HeuristicReflectorConfig(cosine_threshold=0.2).build(sim)
    assert reflector.score_threshold == 0.2  # type: ignore[attr-defined]
    assert HeuristicReflectorConfig().build(to_sim_question(analyze_question(q), 3)).score_threshold == 2.0  # type: ignore[arg-type,attr-defined]
    empty = analyze_question(_question(QUERY, [], "paris"), settings_, env=RetrieverEnv(embedder=HashingEmbedder()))
    assert empty.row["skip_reason"] == "no chunks" and empty.rankings is None


def test_compare_retrievers_on_the_demo_set(tmp_path: Path) -> None:
    settings_ = AnalysisSettings(retriever="dense", compare_retrievers=True)
    result = run_study(
        demo_path(),
        tmp_path / "out",
        settings_,
        Selection(split=None),
        figures=False,
        env=RetrieverEnv(embedder=HashingEmbedder(dim=128)),
    )
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    section = summary["retrievers"]
    assert summary["parameters"]["analysis"]["retriever"] == {"kind": "dense"}
    assert set(section["arms"]) == {"bm25", "dense"}
    assert section["arms"]["dense"]["n_retrieved_gold"] == summary["rq1"]["n_retrieved_gold"]
    assert section["arms"]["bm25"]["n_groundable"] == section["arms"]["dense"]["n_groundable"]
    bm25_only = list(analyze_file(demo_path(), split=None))
    assert section["arms"]["bm25"]["n_retrieved_gold"] == sum(bool(a.row["retrieved_gold"]) for a in bm25_only)
    assert section["retrievers"] == ["dense", "bm25"]  # the analysis' own retriever first
    (pair,) = section["pairs"]
    assert (pair["a"], pair["b"]) == ("dense", "bm25")
    order = pair["type_order"]
    assert order["n"] == len(order["types"]) >= 3 and -1 <= order["rho"] <= 1
    agreement = pair["agreement"]
    assert (
        agreement["n_retrieved_gold_both"] + agreement["n_retrieved_gold_a_only"] == section["arms"]["dense"]["n_retrieved_gold"]
    )
    assert section["arms"]["dense"]["rq1"]["n_retrieved_gold"] == summary["rq1"]["n_retrieved_gold"]
    assert retriever_comparison([a for a in bm25_only if a.rankings is not None], summary["parameters"]) is None
    assert len(result.analyses) == 32


def test_scenario_and_cli_take_the_retriever(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rs = load_scenario("paper_rq3", ["data.retriever=dense"])
    assert rs.scenario.data.retriever.kind == "dense" and rs.scenario.reflector.cosine_threshold == 0.4  # type: ignore[union-attr]
    assert (
        main(
            [
                "simulate",
                "--table",
                str(tmp_path / "t.csv"),
                "--scenario",
                "paper_rq3",
                "--out",
                str(tmp_path),
                "--retriever",
                "dense",
            ]
        )
        == 1
    )
    assert "--retriever applies to DATA" in capsys.readouterr().err


def test_missing_extra_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from streamrag.retrieval.dense import minilm

    monkeypatch.setattr(minilm, "DENSE_PACKAGES", ("streamrag_no_such_module",))
    code = main(
        ["analyze", str(demo_path()), "--split", "all", "--out", str(tmp_path / "o"), "--retriever", "dense", "--no-figures"]
    )
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1
    assert "pip install 'streamrag[dense]'" in err and "streamrag_no_such_module" in err
    assert not (tmp_path / "o").exists()


def test_importing_the_dense_modules_does_not_import_torch() -> None:
    code = (
        "import sys, streamrag.retrieval.dense.retriever, streamrag.retrieval.dense.minilm, streamrag.analysis.stabilize, streamrag.cli; "
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
