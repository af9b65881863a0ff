"""Parity of incremental prefix rankings on CRAG's real 10-record sample.

Chunks come from streamrag's paper-preset chunker (html.parser, removed tags, snippet
fallback, 120-word windows at stride 100, ≤ 400); the known chunk counts and top-1 lists
pin it end to end. Every prefix of every question is re-scored from scratch by the
``rank_bm25`` retriever kind (rank_bm25's BM25Okapi: the reference rankings) and by the
naive oracle (paper), and compared with streamrag's incremental scores and top-k.
"""

from __future__ import annotations

import bz2
import json
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from bm25_reference import naive_paper_scores, naive_prefix_tokens, naive_tokens, naive_topk
from rank_bm25 import BM25Okapi

import streamrag.retrieval.prefix as prefix_module
from streamrag.data.chunking import chunk_pages
from streamrag.data.crag import SearchResult
from streamrag.retrieval import BM25Index, BM25Params, prefix_rankings, prefix_scores
from streamrag.retrieval.rank_bm25_reference import RankBM25Retriever


@pytest.fixture(scope="module")
def sample(crag_sample: Path) -> dict[str, tuple[str, list[str]]]:
    """interaction_id → (query, chunks) for the 10 records."""
    out = {}
    with bz2.open(crag_sample, "rt", encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            pages = [SearchResult(**page) for page in record["search_results"]]
            out[record["interaction_id"]] = (record["query"], chunk_pages(pages))
    return out


@pytest.mark.parametrize(
    ("interaction_id", "n_chunks", "top1"),
    [
        ("55b219e5-ba31-4318-a73d-551f0fb9c546", 110, [73, 26, 26, 26, 24, 41, 41, 41, 41, 41, 41]),
        ("db078969-dcfd-4bd3-8d07-ee8ceceebafd", 80, [18, 23, 23, 24, 24, 24, 24, 24, 24, 24]),
    ],
)
def test_known_top1_per_prefix(sample: dict, interaction_id: str, n_chunks: int, top1: list[int]) -> None:
    query, chunks = sample[interaction_id]
    assert len(chunks) == n_chunks
    pr = prefix_rankings(BM25Index.build(chunks), query, k=3)
    assert pr.n_words == len(top1)
    assert pr.top1.tolist() == top1


def test_okapi_parity_with_rank_bm25_every_prefix(sample: dict) -> None:
    assert len(sample) == 10
    for query, chunks in sample.values():
        reference = RankBM25Retriever(chunks)
        index = BM25Index.build(chunks, params=BM25Params(idf="okapi"))
        got = prefix_scores(index, query)
        pr = prefix_rankings(index, query, k=5)
        oracle = reference.rank(query, k=5)
        # the reference rankings are the incremental ones under idf = "okapi", every prefix
        np.testing.assert_array_equal(pr.topk, oracle.topk)
        np.testing.assert_array_equal(pr.final_scores, oracle.final_scores)
        assert pr.final_tokens == oracle.final_tokens
        for t, tokens in enumerate(naive_prefix_tokens(query)):
            expected = reference.scores(tokens)
            # Same operations in the same order, same libm log: equal to the last bit.
            np.testing.assert_array_equal(got[t], expected)
            assert oracle.topk[t, :3].tolist() == naive_topk(expected.tolist(), 3)


def test_the_reference_retriever_is_rank_bm25_itself(sample: dict) -> None:
    """The ``rank_bm25`` kind adds nothing to BM25Okapi: same scores, naive ranking."""
    query, chunks = sample["55b219e5-ba31-4318-a73d-551f0fb9c546"]
    ref = BM25Okapi([naive_tokens(c) for c in chunks])
    reference = RankBM25Retriever(chunks)
    for tokens in naive_prefix_tokens(query):
        np.testing.assert_array_equal(reference.scores(tokens), ref.get_scores(tokens))


def test_paper_parity_with_naive_every_prefix(sample: dict) -> None:
    for query, chunks in sample.values():
        docs = [naive_tokens(c) for c in chunks]
        index = BM25Index.build(chunks)
        got = prefix_scores(index, query)
        pr = prefix_rankings(index, query, k=3)
        np.testing.assert_array_equal(pr.final_scores, got[-1])
        for t, tokens in enumerate(naive_prefix_tokens(query)):
            expected = naive_paper_scores(docs, tokens)
            np.testing.assert_array_equal(got[t], expected)
            assert pr.topk[t].tolist() == naive_topk(expected, 3)


def test_dense_and_sparse_strategies_agree_on_real_sample(sample: dict) -> None:
    for query, chunks in sample.values():
        index = BM25Index.build(chunks)
        dense = prefix_rankings(index, query, k=5)
        with mock.patch.object(prefix_module, "_DENSE_MAX_CELLS", -1):
            sparse = prefix_rankings(index, query, k=5)
        np.testing.assert_array_equal(dense.topk, sparse.topk)
        np.testing.assert_array_equal(dense.final_scores, sparse.final_scores)
