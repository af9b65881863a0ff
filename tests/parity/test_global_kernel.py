"""The compiled prefix scorer (global_kernel, numba) against its numpy twin (global_prefix).

Both must return the same top-k, the same scores and leave the same accumulator after
every query: on Zipf corpora with many ties, okapi's negative impacts, pools from 1 to
4,096 chunks and k from 1 to past N. test_global_index checks both against from-scratch
oracles; this one drives far more queries through the pool's rarer paths.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from streamrag.retrieval import BM25Params
from streamrag.retrieval.global_pool.index import GlobalIndex
from streamrag.retrieval.global_pool.scorer import PrefixScorer

KERNELS = ["numpy", "numba"] if importlib.util.find_spec("numba") else ["numpy"]


def _corpus(rng: np.random.Generator, idf: str) -> GlobalIndex:
    n_chunks, n_terms = int(rng.integers(1, 2500)), int(rng.integers(2, 150))
    lens = rng.integers(1, 30, n_chunks)
    tokens = ((rng.zipf(1.3, int(lens.sum())) - 1) % n_terms).astype(np.int32)
    return GlobalIndex.from_token_ids(tokens, lens, [f"t{i}" for i in range(n_terms)], params=BM25Params(idf=idf))


@pytest.mark.parametrize("idf", ["paper", "okapi"])
def test_compiled_kernel_equals_numpy_twin(idf: str) -> None:
    pytest.importorskip("numba", reason="the compiled kernel needs numba (pip install 'streamrag[fast]')")
    rng = np.random.default_rng(7 if idf == "paper" else 8)
    n_checked = 0
    for _ in range(40):
        index = _corpus(rng, idf)
        pool_size = int(rng.choice([1, 2, 5, 64, 4096]))
        twins = (  # the pool kernel itself (test_global_blockmax covers the block kernel)
            PrefixScorer(index, pool_size=pool_size, kernel="numpy"),
            PrefixScorer(index, pool_size=pool_size, kernel="numba", blocks=False),
        )
        n_terms = index.indptr.shape[0] - 1
        for _ in range(6):
            words = [rng.integers(0, n_terms, int(rng.integers(0, 3))) for _ in range(int(rng.integers(1, 15)))]
            k = int(rng.choice([1, 3, 10, 100]))
            (top_a, sc_a), (top_b, sc_b) = (s.rank_words(words, k) for s in twins)
            np.testing.assert_array_equal(top_b, top_a)
            assert sc_b.tolist() == sc_a.tolist()  # the same floats
            np.testing.assert_array_equal(twins[1]._acc, twins[0]._acc)
            for s in twins:
                s.clear()
                assert not s._acc.any()
            n_checked += len(words)
    assert n_checked > 1000


def test_kernel_numba_without_numba_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba now raises ImportError
    monkeypatch.delitem(sys.modules, "streamrag.retrieval.global_pool.kernel", raising=False)
    index = GlobalIndex.build(["alpha beta", "beta"])
    with pytest.raises(ImportError, match=r"streamrag\[fast\]"):
        PrefixScorer(index, kernel="numba")
    scorer = PrefixScorer(index)  # auto: the numpy twin
    assert scorer._kernel is None
    assert scorer.rank("beta alpha", k=2).topk.tolist() == [[1, 0], [0, 1]]
    with pytest.raises(ValueError, match="kernel must be"):
        PrefixScorer(index, kernel="fast")  # type: ignore[arg-type]


@pytest.mark.parametrize("kernel", KERNELS)
def test_term_ids_outside_the_index_are_refused(kernel: str) -> None:
    # The compiled kernel reads without bounds checks, so ids are checked before it runs.
    scorer = PrefixScorer(GlobalIndex.build(["alpha beta", "beta"]), kernel=kernel)  # type: ignore[arg-type]
    for bad in (-1, 2):
        with pytest.raises(ValueError, match=f"term id {bad} is not in the index"):
            scorer.rank_words([np.array([0]), np.array([bad])], 1)
    scorer.clear()
    assert scorer.rank_words([np.array([1])], 2)[0].tolist() == [[1, 0]]
