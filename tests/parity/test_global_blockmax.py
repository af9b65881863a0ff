"""The block-max scorer (global_blockmax) against the pool scorer's numpy reference.

Every prefix's top-k ids and scores, and the full query's scores of the ranked chunks,
must be the same floats as the reference's (a from-scratch sum in query order), on
corpora small enough to check many queries but cut into many blocks, with the long-list
threshold lowered so that most query words are deferred: ties (duplicated chunks), words
of several terms, repeated terms, words absent from the corpus, k past the kept top
impacts, rare words only (the zero-fill regime handed to the pool kernel), and a
candidate limit of 0 (every deferred list added after all).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba", reason="the block-max kernel needs numba (pip install 'streamrag[fast]')")

from streamrag.retrieval import BM25Params
from streamrag.retrieval.global_pool import blocks as global_blocks
from streamrag.retrieval.global_pool.index import GlobalIndex
from streamrag.retrieval.global_pool.scorer import PrefixScorer


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Block-max ranking on small corpora, with lists long from 64 postings on."""
    monkeypatch.setattr(global_blocks, "MIN_DOCS", 1)
    monkeypatch.setattr(global_blocks, "LONG_SHARE", 0.0)


def _corpus(rng: np.random.Generator, *, duplicates: bool) -> GlobalIndex:
    n_chunks, n_terms = int(rng.integers(200, 3000)), int(rng.integers(20, 400))
    lens = rng.integers(1, 40, n_chunks)
    tokens = ((rng.zipf(1.2, int(lens.sum())) - 1) % n_terms).astype(np.int32)
    if duplicates:  # every chunk's copy right after it (exact ties, in the same and the next block)
        offsets = np.concatenate([[0], np.cumsum(lens)])
        parts = [tokens[offsets[i] : offsets[i + 1]] for i in range(n_chunks)]
        tokens = np.concatenate([p for p in parts for _ in range(2)])
        lens = np.repeat(lens, 2)
    return GlobalIndex.from_token_ids(tokens, lens, [f"t{i}" for i in range(n_terms)], params=BM25Params(idf="paper"))


def _query(rng: np.random.Generator, index: GlobalIndex) -> list[np.ndarray]:
    n_terms = index.indptr.shape[0] - 1
    df = np.diff(index.indptr)
    rare = np.flatnonzero((df > 0) & (df < 64))
    words = []
    for _ in range(int(rng.integers(1, 16))):
        n = int(rng.choice([0, 1, 1, 1, 2, 3]))
        if rare.size and rng.random() < 0.3:
            words.append(rng.choice(rare, n))
        else:
            words.append(rng.integers(0, n_terms, n))
    return words


def _same(words: list[np.ndarray], k: int, ours: PrefixScorer, ref: PrefixScorer) -> None:
    (top_a, sc_a), (top_b, sc_b) = ref.rank_words(words, k), ours.rank_words(words, k)
    np.testing.assert_array_equal(top_b, top_a)
    assert sc_b.tolist() == sc_a.tolist()  # the same floats
    support = np.unique(top_a).astype(np.int64)
    assert ours.final_scores(support).tolist() == ref.final_scores(support).tolist()
    for s in (ours, ref):
        s.clear()
        assert not s._acc.any()


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("duplicates", [False, True])
def test_block_max_rankings_equal_the_reference(duplicates: bool) -> None:
    rng = np.random.default_rng(11 if duplicates else 12)
    n_block_ranked = 0
    for _ in range(25):
        index = _corpus(rng, duplicates=duplicates)
        ours, ref = PrefixScorer(index), PrefixScorer(index, kernel="numpy")
        assert ours._blocks is not None
        for _ in range(8):
            words = _query(rng, index)
            k = int(rng.choice([1, 3, 10, 100]))
            _same(words, k, ours, ref)
            n_block_ranked += not ours._exact_in_acc
        assert not ours._blocks._state.dpart.any() and not ours._blocks._state.acc_max.any()
    assert n_block_ranked > 120  # of 200: most queries took the block path, not the hand-over


@pytest.mark.usefixtures("small_blocks")
def test_materialising_every_deferred_list_gives_the_same_rankings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(global_blocks, "CANDIDATE_LIMIT", 0)
    rng = np.random.default_rng(13)
    for _ in range(10):
        index = _corpus(rng, duplicates=bool(rng.integers(2)))
        ours, ref = PrefixScorer(index), PrefixScorer(index, kernel="numpy")
        for _ in range(8):
            _same(_query(rng, index), int(rng.choice([1, 3, 10])), ours, ref)


@pytest.mark.usefixtures("small_blocks")
def test_rare_words_only_are_handed_to_the_pool_kernel() -> None:
    # Two chunks hold the only word: fewer than k = 3 chunks score above 0.
    chunks = ["alpha beta", "alpha"] + [f"common filler{i % 7}" for i in range(300)]
    index = GlobalIndex.build(chunks)
    ours, ref = PrefixScorer(index), PrefixScorer(index, kernel="numpy")
    ranked = ours.rank("alpha common", k=3)
    assert ours._exact_in_acc  # the pool kernel ranked it
    expected = ref.rank("alpha common", k=3)
    np.testing.assert_array_equal(ranked.topk, expected.topk)
    assert ranked.topk_scores.tolist() == expected.topk_scores.tolist()
    assert sorted(ranked.topk[0][:2].tolist()) == [0, 1] and ranked.topk[0][2] == 2  # then the smallest other id


def test_block_max_ranking_applies_only_where_it_can(monkeypatch: pytest.MonkeyPatch) -> None:
    index = GlobalIndex.build(["alpha beta", "beta gamma"])
    assert PrefixScorer(index)._blocks is None  # fewer chunks than MIN_DOCS
    monkeypatch.setattr(global_blocks, "MIN_DOCS", 1)
    assert PrefixScorer(index)._blocks is not None
    assert PrefixScorer(index, blocks=False)._blocks is None
    okapi = GlobalIndex.build(["alpha beta", "beta gamma", "beta"], params=BM25Params(idf="okapi"))
    assert not okapi.nonnegative and PrefixScorer(okapi)._blocks is None  # negative impacts: no bounds
    assert PrefixScorer(index, kernel="numpy")._blocks is None


@pytest.mark.usefixtures("small_blocks")
def test_block_data_bounds_every_impact_and_is_shared_by_the_scorers() -> None:
    rng = np.random.default_rng(14)
    index = _corpus(rng, duplicates=False)
    a, b = PrefixScorer(index), PrefixScorer(index)
    assert a._blocks is not None and b._blocks is not None and a._blocks.store is b._blocks.store
    store = a._blocks.store
    long_terms = np.flatnonzero(np.diff(index.indptr) >= store.min_df)
    slot, bm, bp, top = store.slots(long_terms)
    assert store.n_terms == long_terms.shape[0]
    for term, s in zip(long_terms.tolist(), slot.tolist(), strict=True):
        ids, vals = index.term_postings(term)
        blocks = ids >> global_blocks.BLOCK_SHIFT
        assert (bm[s][blocks].astype(np.float64) >= vals).all()  # float32, rounded up
        np.testing.assert_array_equal(np.diff(bp[s]), np.bincount(blocks, minlength=store.n_blocks))
        assert top[s].tolist() == sorted(vals.tolist(), reverse=True)[: top.shape[1]]


@pytest.mark.usefixtures("small_blocks")
def test_a_tie_hidden_by_the_order_of_summing_is_ranked_as_the_query_sums_it() -> None:
    # Chunk 0 holds w1, w2, w3 with impacts a, b, c; chunk 1 holds w2 alone with d = (a + b) + c,
    # the float the query's order gives chunk 0 too. The block kernel sums chunk 0 as
    # b + (a + c) (w1 and w3 are long lists, deferred), one ulp below d: only the exact
    # rescoring in query order sees the tie, which the lower id, chunk 0, wins.
    a, b, c = 2.59, 1.89, 2.11
    d = (a + b) + c
    assert b + (a + c) < d
    n = 72
    others = np.arange(2, n, dtype=np.int32)
    lists = [
        (np.concatenate([[0], others]), np.concatenate([[a], np.full(others.shape[0], 1e-3)])),  # w1
        (np.array([0, 1]), np.array([b, d])),  # w2
        (np.concatenate([[0], others]), np.concatenate([[c], np.full(others.shape[0], 1e-3)])),  # w3
    ]
    index = GlobalIndex(
        indptr=np.cumsum([0] + [ids.shape[0] for ids, _ in lists]).astype(np.int64),
        chunk_idx=np.concatenate([ids for ids, _ in lists]).astype(np.int32),
        impact=np.concatenate([vals for _, vals in lists]).astype(np.float64),
        doc_len=np.ones(n, dtype=np.int32),
        idf=np.ones(3),
        max_impact=np.array([vals.max() for _, vals in lists]),
        head_impact=np.full(3, -np.inf),
        terms=["w1", "w2", "w3"],
        params=BM25Params(),
        tokenizer=GlobalIndex.build(["x"]).tokenizer,
    )
    ours, ref = PrefixScorer(index), PrefixScorer(index, kernel="numpy")
    words = [np.array([0]), np.array([1]), np.array([2])]
    _same(words, 1, ours, ref)
    assert not ours._exact_in_acc  # the block kernel ranked it
    top, scores = ours.rank_words(words, 1)
    assert top[-1].tolist() == [0] and scores[-1].tolist() == [d]
