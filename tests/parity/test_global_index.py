"""Global-scope prefix retrieval: parity with from-scratch oracles, the per-question scorer, reload.

The oracles (``bm25_reference`` and rank_bm25) share no code with the global engine; the
rankings and scores must match bit for bit at every prefix, whatever the pool size (the
pool only decides how much work the engine skips).
"""

from __future__ import annotations

import importlib.util
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from bm25_reference import naive_paper_scores, naive_prefix_tokens, naive_tokens, naive_topk
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from streamrag.base.errors import DataFileError, EmptyCorpusError, EmptyQueryError
from streamrag.retrieval import BM25Index, BM25Params, prefix_rankings
from streamrag.retrieval.global_pool.index import GlobalIndex
from streamrag.retrieval.global_pool.scorer import ChunkValues, PrefixScorer, global_prefix_rankings
from streamrag.retrieval.global_pool.store import load_index, read_key, save_index

# Both twins of the prefix scorer; the compiled one where numba is installed (the fast extra).
KERNELS = ["numpy", "numba"] if importlib.util.find_spec("numba") else ["numpy"]
WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa", "x1", "y2"]

word = st.sampled_from(WORDS)
chunk = st.lists(word, min_size=0, max_size=12).map(" ".join)
# Query words: known words, unknown words, punctuation-only words and multi-token words.
query_word = st.one_of(word, st.just("?"), st.just("unknownword"), st.tuples(word, word).map("-".join))
query = st.lists(query_word, min_size=1, max_size=8).map(" ".join)


def _expected(chunks: list[str], q: str, k: int, idf: str) -> list[tuple[list[int], list[float]]]:
    """Top-k and their scores at every prefix, from scratch (paper: naive oracle; okapi: rank_bm25)."""
    docs = [naive_tokens(c) for c in chunks]
    okapi = BM25Okapi(docs) if idf == "okapi" and sum(map(len, docs)) else None
    out = []
    for tokens in naive_prefix_tokens(q):
        if idf == "paper":
            scores = naive_paper_scores(docs, tokens) if sum(map(len, docs)) else [0.0] * len(docs)
        else:
            scores = okapi.get_scores(tokens).tolist() if okapi is not None else [0.0] * len(docs)
        top = naive_topk(scores, k)
        out.append((top, [scores[i] for i in top]))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chunks=st.lists(chunk, min_size=1, max_size=30),
    q=query,
    k=st.sampled_from([1, 3, 5]),
    idf=st.sampled_from(["paper", "okapi"]),
    pool_size=st.sampled_from([1, 2, 8, 4096]),
    kernel=st.sampled_from(KERNELS),
)
def test_rankings_equal_from_scratch(chunks: list[str], q: str, k: int, idf: str, pool_size: int, kernel: str) -> None:
    index = GlobalIndex.build(chunks, params=BM25Params(idf=idf))
    got = PrefixScorer(index, pool_size=pool_size, kernel=kernel).rank(q, k=k)
    expected = _expected(chunks, q, k, idf)
    assert got.n_words == len(q.split())
    for t, (top, scores) in enumerate(expected):
        assert got.topk[t].tolist() == top
        assert got.topk_scores[t].tolist() == scores  # same floats, not just close


@settings(max_examples=100, deadline=None)
@given(chunks=st.lists(chunk, min_size=1, max_size=25), q=query, idf=st.sampled_from(["paper", "okapi"]))
def test_equal_to_per_question_scorer(chunks: list[str], q: str, idf: str) -> None:
    params = BM25Params(idf=idf)
    per_question = prefix_rankings(BM25Index.build(chunks, params=params), q, k=5)
    glob = global_prefix_rankings(GlobalIndex.build(chunks, params=params), q, k=5)
    np.testing.assert_array_equal(glob.topk, per_question.topk)
    assert glob.final_tokens == per_question.final_tokens
    for c in glob.final_scores.ids.tolist():
        assert glob.final_scores[c] == per_question.final_scores[c]


@pytest.mark.parametrize("kernel", KERNELS)
def test_scorer_is_reusable_and_clears_between_queries(kernel: str) -> None:
    chunks = ["alpha beta", "beta gamma gamma", "delta", "alpha alpha eps", ""]
    index = GlobalIndex.build(chunks)
    scorer = PrefixScorer(index, pool_size=2, kernel=kernel)
    first = scorer.rank("gamma alpha beta", k=3)
    scorer.rank("alpha delta eps zeta", k=3)
    again = scorer.rank("gamma alpha beta", k=3)
    np.testing.assert_array_equal(first.topk, again.topk)
    assert not scorer._acc.any()


def test_zero_score_prefixes_rank_by_id_and_k_above_n() -> None:
    index = GlobalIndex.build(["alpha", "beta", "gamma"])
    pr = global_prefix_rankings(index, "? nothing beta", k=5)
    assert pr.topk.tolist() == [[0, 1, 2], [0, 1, 2], [1, 0, 2]]
    assert pr.k_eff == 3 and pr.n_chunks == 3


def test_errors_for_empty_query_and_corpus() -> None:
    with pytest.raises(EmptyQueryError):
        global_prefix_rankings(GlobalIndex.build(["alpha"]), "   ")
    with pytest.raises(EmptyCorpusError):
        global_prefix_rankings(GlobalIndex.build([]), "alpha")
    with pytest.raises(ValueError, match="k must be"):
        global_prefix_rankings(GlobalIndex.build(["alpha"]), "alpha", k=0)


def test_final_scores_and_coverage_hold_only_ranked_chunks() -> None:
    chunks = ["alpha beta", "beta", "gamma", "alpha alpha"]
    pr = global_prefix_rankings(GlobalIndex.build(chunks), "alpha beta beta", k=1)
    reference = BM25Index.build(chunks)
    for c in pr.final_scores.ids.tolist():
        assert pr.final_scores[c] == reference.score(["alpha", "beta", "beta"])[c]
        assert pr.final_coverage[c] == reference.tokens_coverage(c, ["alpha", "beta", "beta"])
    with pytest.raises(KeyError, match="chunk 2"):
        pr.final_scores[2]
    values = pickle.loads(pickle.dumps(pr.final_scores))
    assert isinstance(values, ChunkValues) and values.as_dict() == pr.final_scores.as_dict()


def test_from_token_ids_checks_its_input() -> None:
    with pytest.raises(ValueError, match="sums to"):
        GlobalIndex.from_token_ids(np.array([0, 1]), np.array([3]), ["a", "b"])
    with pytest.raises(ValueError, match="token ids must lie"):
        GlobalIndex.from_token_ids(np.array([0, 5]), np.array([2]), ["a", "b"])


def test_memmap_reload_gives_identical_rankings(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    chunks = [" ".join(rng.choice(WORDS, size=int(rng.integers(0, 20)))) for _ in range(300)]
    index = GlobalIndex.build(chunks)
    folder = save_index(index, tmp_path / "idx", key="k1")
    save_index(index, folder, key="k2")  # replacing an existing index is atomic too
    assert read_key(folder) == "k2"
    loaded = load_index(folder)
    assert isinstance(loaded.impact, np.memmap) and not loaded.impact.flags.writeable
    for name in ("indptr", "chunk_idx", "impact", "doc_len", "idf", "max_impact", "head_impact"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(index, name))
    assert loaded.terms == index.terms and loaded.avgdl == index.avgdl
    for q in ("alpha beta gamma delta", "kappa x1 y2 eta ? zeta", "iota iota theta"):
        a, b = global_prefix_rankings(index, q, k=5), global_prefix_rankings(loaded, q, k=5)
        np.testing.assert_array_equal(a.topk, b.topk)
        np.testing.assert_array_equal(a.topk_scores, b.topk_scores)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_broken_index_folder_names_the_file(tmp_path: Path) -> None:
    folder = save_index(GlobalIndex.build(["alpha beta", "gamma"]), tmp_path / "idx")
    (folder / "impact.npy").unlink()
    with pytest.raises(DataFileError, match=r"impact\.npy: missing"):
        load_index(folder)
    (folder / "meta.json").write_text(json.dumps({"format": "streamrag-global-index", "version": 99}))
    with pytest.raises(DataFileError, match=r"meta\.json: field 'version'"):
        load_index(folder)
    assert read_key(folder) is None
    with pytest.raises(DataFileError, match="no such index folder"):
        load_index(tmp_path / "absent")


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("idf", ["paper", "okapi"])
def test_large_corpus_with_common_terms_matches_per_question_scorer(idf: str, kernel: str) -> None:
    # 3,000 chunks over 60 terms: the common terms have df ≥ HEAD_RANK (the precomputed
    # first-word cut) and tie a lot, which exercises every pool path.
    rng = np.random.default_rng(3)
    lens = rng.integers(0, 40, 3000)
    ids = (rng.zipf(1.5, int(lens.sum())) - 1) % 60
    terms = [f"t{i}" for i in range(60)]
    offsets = np.concatenate([[0], np.cumsum(lens)])
    docs = [[terms[i] for i in ids[offsets[d] : offsets[d + 1]]] for d in range(3000)]
    params = BM25Params(idf=idf)
    glob = GlobalIndex.from_tokens(docs, params=params)
    assert int(np.diff(glob.indptr).max()) >= 1024
    reference = BM25Index.from_tokens(docs, params=params)
    scorer = PrefixScorer(glob, pool_size=64, kernel=kernel)
    for _ in range(40):
        q = " ".join(f"t{int(w)}" for w in (rng.zipf(1.5, int(rng.integers(1, 12))) - 1) % 70)
        np.testing.assert_array_equal(scorer.rank(q, k=3).topk, prefix_rankings(reference, q, k=3).topk)
