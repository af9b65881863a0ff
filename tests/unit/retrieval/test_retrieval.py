"""streamrag.retrieval: tokenizer, BM25 index, rankings, incremental prefix rankings.

Property tests recompute every prefix from scratch — with rank_bm25 (okapi idf) and with
the loop-over-Counters oracle in bm25_reference.py (paper idf) — and compare.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pytest
from bm25_reference import naive_paper_scores, naive_prefix_tokens, naive_tokens, naive_topk
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from rank_bm25 import BM25Okapi

import streamrag.retrieval as retrieval
import streamrag.retrieval.prefix as prefix_module
from streamrag.base.errors import InputError
from streamrag.retrieval import (
    BM25Index,
    BM25Params,
    BM25Retriever,
    EmptyCorpusError,
    EmptyQueryError,
    NothingToRankError,
    RegexTokenizer,
    Retriever,
    full_ranking,
    prefix_rankings,
    prefix_scores,
    rank_topk,
    rank_topk_rows,
    word_tokens,
)

OKAPI = BM25Params(idf="okapi")

# A tiny vocabulary makes repeated tokens, shared df and exact score ties common.
CORPUS_WORDS = ["a", "b", "c", "Dog", "dog", "3", "3-point", "x1", "a-b", "?", "B."]
# Queries add punctuation-only words, unknown tokens and a word mixing both.
QUERY_WORDS = [*CORPUS_WORDS, "--", "...", "zzz", "qq-a", "POINT!"]

chunk_texts = st.lists(st.sampled_from(CORPUS_WORDS), max_size=12).map(" ".join)
corpora = st.lists(chunk_texts, min_size=1, max_size=8)
queries = st.builds(
    lambda words, sep: sep.join(words),
    st.lists(st.sampled_from(QUERY_WORDS), min_size=1, max_size=8),
    st.sampled_from([" ", "  ", "\t", " \n "]),
)
ks = st.integers(min_value=1, max_value=10)  # often > N: k_eff = N

fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
strategies = st.sampled_from(["dense", "sparse"])


@contextmanager
def strategy(name: str):
    """Force prefix scoring's dense (tokens × N matrix) or sparse (per-word loop) strategy."""
    limit = 1 << 62 if name == "dense" else -1
    with mock.patch.object(prefix_module, "_DENSE_MAX_CELLS", limit):
        yield


# ---------------------------------------------------------------- tokenizer


def test_regex_tokenizer_is_the_paper_tokenizer() -> None:
    tok = RegexTokenizer()
    assert tok("Hello, WORLD! 3-point shot") == ["hello", "world", "3", "point", "shot"]
    assert tok("?!") == []
    assert tok("\u212a") == ["k"]  # Kelvin sign lowercases to ASCII k: lowercase first
    assert tok("café") == ["caf"]
    assert RegexTokenizer() == tok and hash(RegexTokenizer()) == hash(tok)


_ASCII_AND_MORE = st.text(
    alphabet=st.one_of(st.characters(max_codepoint=127), st.sampled_from("\u212aéİß\u00a0\u2003ÅΣ")), max_size=120
)


@given(_ASCII_AND_MORE)
@settings(max_examples=400, deadline=None)
def test_paper_tokenizer_fast_path_equals_the_regex(text: str) -> None:
    # The paper tokenizer skips the regex engine on ASCII text (translate + split); it
    # must give exactly re.findall("[a-z0-9]+", text.lower()) on any text.
    assert RegexTokenizer()(text) == re.findall(r"[a-z0-9]+", text.lower())
    # any other pattern keeps the regex
    assert RegexTokenizer(r"[a-z]+")(text) == re.findall(r"[a-z]+", text.lower())


def test_word_tokens_per_whitespace_word() -> None:
    assert word_tokens("What's the 3-point  record ?") == [
        ["what", "s"],
        ["the"],
        ["3", "point"],
        ["record"],
        [],
    ]
    assert word_tokens("") == [] and word_tokens("   ") == []


@given(st.text(max_size=60))
@settings(max_examples=200, deadline=None)
def test_tokenizer_is_word_local(text: str) -> None:
    # The incremental identity rests on tok(prefix) == concatenation of tok(word).
    tok = RegexTokenizer()
    words = text.split()
    for t in range(1, len(words) + 1):
        prefix = " ".join(words[:t])
        assert tok(prefix) == [x for w in word_tokens(text)[:t] for x in w]


# ---------------------------------------------------------------- ranking


def test_tie_rule_score_desc_then_id_asc() -> None:
    scores = np.array([1.0, 2.0, 2.0, 0.0, 2.0, 3.0])
    assert rank_topk(scores, 3).tolist() == [5, 1, 2]
    assert rank_topk(scores, 1).tolist() == [5]
    assert full_ranking(scores).tolist() == [5, 1, 2, 4, 0, 3]
    assert rank_topk(np.zeros(4), 2).tolist() == [0, 1]  # zero scores are eligible
    assert rank_topk(np.array([-0.0, 0.0, -0.0]), 3).tolist() == [0, 1, 2]  # -0.0 ties 0.0
    assert rank_topk(scores, 99).tolist() == full_ranking(scores).tolist()
    assert rank_topk(np.zeros(0), 3).tolist() == []


def test_tie_group_cut_by_the_k_boundary() -> None:
    # Large N takes the argpartition path; a group of 50 tied scores straddles rank k.
    rng = np.random.default_rng(7)
    n = 5000
    scores = np.zeros(n)
    scores[[4000, 17]] = 9.0  # two clear winners
    tied = np.sort(rng.choice(np.arange(100, n), size=50, replace=False))
    scores[tied] = 1.0
    got = rank_topk(scores[::-1].copy(), 5)  # reversed too, so ids are not pre-sorted
    assert got.tolist() == full_ranking(scores[::-1].copy())[:5].tolist()
    top = rank_topk(scores, 5).tolist()
    assert top == [17, 4000, *tied[:3].tolist()]


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 2000),
    n_values=st.integers(1, 20),
    k=st.integers(1, 12),
)
@settings(max_examples=150, deadline=None)
def test_rank_topk_equals_full_ranking_prefix(seed: int, n: int, n_values: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, n_values, size=n).astype(np.float64)  # many ties
    got = rank_topk(scores, k)
    assert got.tolist() == full_ranking(scores)[:k].tolist()
    assert got.tolist() == naive_topk(scores.tolist(), k)


@given(
    seed=st.integers(0, 2**32 - 1),
    shape=st.tuples(st.integers(0, 12), st.integers(0, 40)),
    n_values=st.integers(1, 6),
    k=st.integers(1, 12),
)
@settings(max_examples=150, deadline=None)
def test_rank_topk_rows_equals_rank_topk_per_row(seed: int, shape: tuple, n_values: int, k: int) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, n_values, size=shape).astype(np.float64)
    got = rank_topk_rows(scores, k)
    assert got.dtype == np.int32 and got.shape == (shape[0], min(k, shape[1]))
    for row, expected in zip(got, scores, strict=True):
        assert row.tolist() == naive_topk(expected.tolist(), k)


def test_rank_topk_rejects_negative_k() -> None:
    with pytest.raises(ValueError, match="k must be"):
        rank_topk(np.zeros(3), -1)
    with pytest.raises(ValueError, match="2-D"):
        rank_topk_rows(np.zeros(3), 1)


# ---------------------------------------------------------------- index


def test_index_holds_sparse_tf_vocabulary_and_lengths() -> None:
    index = BM25Index.build(["the cat, the hat", "a dog", ""])
    assert index.n_docs == 3 and index.n_terms == 5
    assert index.vocabulary == {"the": 0, "cat": 1, "hat": 2, "a": 3, "dog": 4}
    assert index.doc_len.tolist() == [4, 2, 0]
    assert index.avgdl == 2.0
    assert index.tf.shape == (5, 3)
    assert index.tf.toarray()[0].tolist() == [2, 0, 0]
    assert "cat" in index and "zzz" not in index


def test_unknown_tokens_score_zero() -> None:
    index = BM25Index.build(["alpha beta", "beta gamma"])
    col = index.term_scores("zzz")
    assert col.dtype == np.float64 and col.shape == (2,) and not col.any()
    assert index.score(["zzz", "zzz"]).tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(index.score(["alpha", "zzz"]), index.score(["alpha"]))


def test_term_columns_are_cached_and_read_only() -> None:
    index = BM25Index.build(["alpha beta", "beta gamma"])
    col = index.term_scores("beta")
    assert index.term_scores("beta") is col
    with pytest.raises(ValueError, match="read-only"):
        col[0] = 1.0
    idx, vals = index.postings("beta")
    assert idx.tolist() == [0, 1] and vals.tolist() == col.tolist()
    index.clear_cache()
    assert index.term_scores("beta") is not col


def test_okapi_negative_idf_floor_matches_rank_bm25() -> None:
    # N = 1: every raw idf is ln(0.5/1.5) < 0, so average_idf < 0 and the floor
    # ε·average_idf is negative: matching chunks score below zero.
    docs = [["x", "y", "y"]]
    index = BM25Index.from_tokens(docs, params=OKAPI)
    ref = BM25Okapi(docs)
    assert index.score(["y"])[0] < 0
    np.testing.assert_allclose(index.score(["x", "y", "q"]), ref.get_scores(["x", "y", "q"]), rtol=1e-12)
    # N = 2, df = 1: idf exactly 0 is not negative and stays 0.
    docs = [["x"], ["y"]]
    assert BM25Index.from_tokens(docs, params=OKAPI).score(["x"]).tolist() == [0.0, 0.0]


def test_corpus_without_any_token_scores_zero() -> None:
    index = BM25Index.build(["?!", "...", ""])
    assert index.n_terms == 0 and index.avgdl == 0.0
    pr = prefix_rankings(index, "what is this", k=2)
    assert pr.topk.tolist() == [[0, 1]] * 3 and not pr.final_scores.any()


def test_mathematical_ties_follow_float_rounding_like_rank_bm25() -> None:
    # Chunks 5 and 6 tie mathematically for "b b c 3" (df(c) = df(3), same length, tf
    # swapped), but with the paper idf the two sums round apart by one ulp: the ranking
    # follows the float scores (computed in rank_bm25's operation order), not the id.
    chunks = ["", "", "", "a", "a a a", "a b b c 3 3 3-point a-b", "a a b b c c c 3 a-b"]
    tokens = naive_tokens("b b c 3")
    scores = BM25Index.build(chunks).score(tokens)
    assert scores[5] > scores[6] and scores[5] - scores[6] < 1e-12 * scores[5]
    assert prefix_rankings(BM25Index.build(chunks), "b b c 3", k=1).top1[-1] == 5
    # With the okapi idf they happen to round alike: a true tie, broken by the lower id.
    index = BM25Index.build(chunks, params=OKAPI)
    assert index.score(tokens)[5] == index.score(tokens)[6]
    assert prefix_rankings(index, "b b c 3", k=1).top1[-1] == 5
    ref = BM25Okapi([naive_tokens(c) for c in chunks]).get_scores(tokens)
    np.testing.assert_allclose(index.score(tokens), ref, rtol=1e-12)


def test_tokens_coverage_counts_repetitions() -> None:
    index = BM25Index.build(["alpha beta", "gamma"])
    assert index.tokens_coverage(0, ["alpha", "alpha", "gamma", "zzz"]) == 0.5
    assert index.tokens_coverage(1, ["alpha", "gamma"]) == 0.5
    assert index.tokens_coverage(0, []) == 0.0
    with pytest.raises(IndexError):
        index.tokens_coverage(2, ["alpha"])


def test_params_are_validated_and_frozen() -> None:
    assert BM25Params() == BM25Params(k1=1.5, b=0.75, idf="paper", epsilon=0.25)
    with pytest.raises(ValidationError):
        BM25Params(b=1.5)
    with pytest.raises(ValidationError):
        BM25Params(idf="bm25+")
    with pytest.raises(ValidationError):
        BM25Params(k1=float("nan"))
    with pytest.raises(ValidationError):
        BM25Params().k1 = 2.0  # type: ignore[misc]


# ---------------------------------------------------------------- prefix rankings


def test_prefix_rankings_shape_and_edge_cases() -> None:
    index = BM25Index.build(["red apple pie", "green apple", "blue sky"])
    pr = prefix_rankings(index, "apple ?? sky pie", k=2)
    assert pr.n_words == 4 and pr.k == 2 and pr.k_eff == 2 and pr.n_chunks == 3
    assert pr.topk.dtype == np.int32 and pr.topk.shape == (4, 2)
    assert pr.topk[1].tolist() == pr.topk[0].tolist()  # "??" has no token: unchanged
    assert pr.top1.tolist() == pr.topk[:, 0].tolist()
    assert pr.final_tokens == ("apple", "sky", "pie")
    # N < k: k_eff = N
    assert prefix_rankings(index, "apple", k=5).topk.shape == (1, 3)
    # no matching token at all: zero scores are eligible, so top1 is chunk 0
    assert prefix_rankings(index, "zzz ?", k=3).topk.tolist() == [[0, 1, 2]] * 2


def test_nothing_to_rank_errors_carry_a_reason() -> None:
    with pytest.raises(EmptyCorpusError) as exc:
        prefix_rankings(BM25Index.build([]), "a question")
    assert exc.value.reason == "no chunks"
    with pytest.raises(EmptyQueryError) as exc2:
        prefix_rankings(BM25Index.build(["x"]), "  \n ")
    assert exc2.value.reason == "empty query"
    assert issubclass(NothingToRankError, InputError)
    with pytest.raises(ValueError, match="k must be ≥ 1, got 0"):
        prefix_rankings(BM25Index.build(["x"]), "x", k=0)
    assert prefix_scores(BM25Index.build([]), "a b").shape == (2, 0)


@given(corpora, queries, ks, strategies)
@fast
def test_okapi_every_prefix_matches_rank_bm25_from_scratch(chunks: list[str], query: str, k: int, how: str) -> None:
    """The oracle: the ``rank_bm25`` retriever kind (BM25Okapi re-run on every prefix)."""
    from streamrag.retrieval.rank_bm25_reference import RankBM25Retriever

    index = BM25Index.build(chunks, params=OKAPI)
    reference = RankBM25Retriever(chunks)
    with strategy(how):
        got = prefix_scores(index, query)
        pr = prefix_rankings(index, query, k=k)
    oracle = reference.rank(query, k=k)
    assert pr.topk.shape == oracle.topk.shape == (len(query.split()), min(k, len(chunks)))
    np.testing.assert_array_equal(pr.topk, oracle.topk)
    np.testing.assert_array_equal(pr.final_scores, oracle.final_scores)
    for t, tokens in enumerate(naive_prefix_tokens(query)):
        expected = reference.scores(tokens)
        np.testing.assert_array_equal(got[t], expected)  # same operations, same order: every bit
        assert pr.topk[t].tolist() == naive_topk(expected.tolist(), k)


@given(corpora, queries, ks, strategies)
@fast
def test_paper_every_prefix_matches_naive_from_scratch(chunks: list[str], query: str, k: int, how: str) -> None:
    docs = [naive_tokens(c) for c in chunks]
    index = BM25Index.build(chunks)
    with strategy(how):
        pr = prefix_rankings(index, query, k=k)
        got = prefix_scores(index, query)
    for t, tokens in enumerate(naive_prefix_tokens(query)):
        expected = naive_paper_scores(docs, tokens)
        np.testing.assert_allclose(got[t], expected, rtol=1e-9, atol=1e-12)
        assert pr.topk[t].tolist() == naive_topk(expected, k)


@given(corpora, queries, st.sampled_from(["paper", "okapi"]), ks)
@fast
def test_incremental_identity_is_exact(chunks: list[str], query: str, idf: str, k: int) -> None:
    # score(q[1:t]) built word by word equals scoring the prefix's tokens in one go, bit
    # for bit, and both strategies agree exactly (scores and rankings).
    index = BM25Index.build(chunks, params=BM25Params(idf=idf))
    with strategy("dense"):
        got = prefix_scores(index, query)
        dense = prefix_rankings(index, query, k=k)
    with strategy("sparse"):
        np.testing.assert_array_equal(prefix_scores(index, query), got)
        sparse = prefix_rankings(index, query, k=k)
    np.testing.assert_array_equal(dense.topk, sparse.topk)
    np.testing.assert_array_equal(dense.final_scores, sparse.final_scores)
    for t, tokens in enumerate(naive_prefix_tokens(query)):
        np.testing.assert_array_equal(got[t], index.score(tokens))
        if index.n_docs:
            np.testing.assert_array_equal(got[t], sum((index.term_scores(x) for x in tokens), np.zeros(index.n_docs)))


# ---------------------------------------------------------------- retriever role


def test_bm25_retriever_satisfies_the_role() -> None:
    chunks = ["the shortest highway in the us", "longest river", "highway 1 feet"]
    r = BM25Retriever(chunks)
    assert isinstance(r, Retriever) and r.n_chunks == 3
    pr = r.prefix_rankings("shortest highway in feet", k=2)
    # "shortest" matches chunk 0 only; the zero-score tie for rank 2 goes to the lower id 1
    assert pr.topk.tolist() == [[0, 1], [0, 2], [0, 2], [0, 2]]
    for i in range(3):
        assert r.score_chunk(i, "shortest highway in feet") == pr.final_scores[i]
    assert r.token_coverage(2, "highway feet highway x") == 0.75
    assert BM25Retriever.from_index(r.index).prefix_rankings("longest", k=1).top1.tolist() == [1]


def test_public_api_is_pinned() -> None:
    assert sorted(retrieval.__all__) == sorted(
        [
            "BM25Index",
            "BM25Params",
            "BM25Retriever",
            "ChunkValues",
            "DenseRetriever",
            "Embedder",
            "EmptyCorpusError",
            "EmptyQueryError",
            "GlobalIndex",
            "GlobalPrefixRankings",
            "HashingEmbedder",
            "NothingToRankError",
            "PrefixRankings",
            "PrefixScorer",
            "RegexTokenizer",
            "Retriever",
            "Tokenizer",
            "exact_topk",
            "full_ranking",
            "global_prefix_rankings",
            "load_index",
            "prefix_rankings",
            "prefix_scores",
            "rank_topk",
            "rank_topk_rows",
            "save_index",
            "word_tokens",
        ]
    )


@given(st.lists(_ASCII_AND_MORE, max_size=12).map(" ".join))
@settings(max_examples=300, deadline=None)
def test_word_tokens_in_one_pass_equal_one_call_per_word(query: str) -> None:
    tok = RegexTokenizer()
    assert word_tokens(query) == [tok(w) for w in query.split()]
    assert word_tokens(query + "\x00a") == [tok(w) for w in (query + "\x00a").split()]  # NUL: the per-word path


# --- the rank_bm25 retriever kind: the reference rankings --------------------------------

# "robot" is in 3 of 4 chunks: rank_bm25's raw idf is negative there and floored at
# ε·mean(raw idf), where the paper idf stays positive; the two presets then rank apart.
_FREQUENT = ["robot arm robot", "robot robot robot dog", "robot cat", "arm dog cat fish"]


def test_rank_bm25_kind_equals_okapi_and_differs_from_paper() -> None:
    from streamrag.retrieval.kinds import RetrieverEnv, retriever_config
    from streamrag.retrieval.rank_bm25_reference import RankBM25Retriever

    config = retriever_config("rank_bm25")
    assert (config.kind, config.scale) == ("rank_bm25", "bm25")
    query = "robot robot fish arm"
    okapi = BM25Retriever(_FREQUENT, params=BM25Params(idf="okapi")).rank(query, k=4)
    paper = BM25Retriever(_FREQUENT).rank(query, k=4)
    index = BM25Index.build(_FREQUENT, params=BM25Params(idf="okapi"))
    ref = config.retriever(_FREQUENT, index, RetrieverEnv()).rank(query, k=4)
    assert isinstance(config.retriever(_FREQUENT, index, RetrieverEnv()), RankBM25Retriever)
    np.testing.assert_array_equal(ref.topk, okapi.topk)
    np.testing.assert_array_equal(ref.final_scores, okapi.final_scores)
    assert ref.topk.tolist() != paper.topk.tolist()  # the documented difference is real here


def test_rank_bm25_kind_edges() -> None:
    from streamrag.base.errors import EmptyCorpusError, EmptyQueryError
    from streamrag.retrieval.rank_bm25_reference import RankBM25Retriever

    with pytest.raises(EmptyQueryError):
        RankBM25Retriever(_FREQUENT).rank("  ")
    with pytest.raises(EmptyCorpusError):
        RankBM25Retriever([]).rank("robot")
    with pytest.raises(ValueError, match="k must be"):
        RankBM25Retriever(_FREQUENT).rank("robot", k=0)
    # no token anywhere (rank_bm25 would divide by zero): all scores 0, chunk ids in order
    blank = RankBM25Retriever(["!!", "??", "--"]).rank("robot arm", k=2)
    assert blank.topk.tolist() == [[0, 1], [0, 1]] and blank.final_scores.tolist() == [0.0, 0.0, 0.0]
    assert (
        blank.topk.tolist()
        == BM25Retriever(["!!", "??", "--"], params=BM25Params(idf="okapi")).rank("robot arm", k=2).topk.tolist()
    )
