"""ASR partial hypotheses: the revision model, and ranking them incrementally."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamrag.data.human.asr import RevisionModel, misheard, question_rng, revise
from streamrag.retrieval.bm25 import BM25Index
from streamrag.retrieval.hypotheses import HypothesisScorer, hypothesis_rankings
from streamrag.retrieval.prefix import prefix_rankings, prefix_scores
from streamrag.retrieval.tokenize import RegexTokenizer

WORDS = ["a", "b", "c", "Dog", "dog", "3", "3-point", "x1", "a-b", "?", "B.", "capital", "zzz"]
corpora = st.lists(st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join), min_size=1, max_size=8)
word_lists = st.lists(st.sampled_from(WORDS), min_size=1, max_size=10)
fast = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _index(chunks: list[str]) -> BM25Index:
    tok = RegexTokenizer()
    return BM25Index.from_tokens([tok(c) for c in chunks], tokenizer=tok)


@fast
@given(corpus=corpora, sequence=st.lists(word_lists, min_size=1, max_size=8))
def test_each_hypothesis_scored_incrementally_equals_scoring_it_from_scratch(corpus, sequence) -> None:
    # Any sequence, revisions anywhere: rolled back and re-added, never approximated.
    index = _index(corpus)
    scorer = HypothesisScorer(index)
    for words in sequence:
        incremental = scorer.scores(words).copy()
        scratch = prefix_scores(index, " ".join(words))[-1]
        assert np.array_equal(incremental, scratch)


@fast
@given(corpus=corpora, words=word_lists, p=st.sampled_from([0.3, 0.7, 1.0]), r=st.integers(1, 4), seed=st.integers(0, 9))
def test_rankings_of_revised_hypotheses_equal_ranking_each_from_scratch(corpus, words, p, r, seed) -> None:
    index = _index(corpus)
    hyps = revise(" ".join(words), RevisionModel(p=p, r=r, seed=seed), "q").words
    got = hypothesis_rankings(index, hyps, k=3)
    for i, h in enumerate(hyps):
        assert got.topk[i].tolist() == prefix_rankings(index, " ".join(h), k=3).topk[-1].tolist()
    assert got.words_scored <= sum(map(len, hyps))


@fast
@given(corpus=corpora, words=word_lists)
def test_without_revisions_hypotheses_are_the_word_prefixes_and_rank_identically(corpus, words) -> None:
    index = _index(corpus)
    query = " ".join(words)
    hyps = revise(query, RevisionModel(p=0.0), "q")
    assert hyps.words == tuple(tuple(words[: i + 1]) for i in range(len(words)))
    assert not any(hyps.revised) and hyps.n_revisions == 0
    got, want = hypothesis_rankings(index, hyps.words, k=3), prefix_rankings(index, query, k=3)
    assert np.array_equal(got.topk, want.topk)
    assert np.array_equal(got.final_scores, want.final_scores)  # bit for bit
    assert got.final_tokens == want.final_tokens
    assert got.words_scored == len(words)  # one word per hypothesis: nothing rescored


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 30), p=st.floats(0.0, 1.0), r=st.integers(1, 5), final=st.integers(1, 5), seed=st.integers(0, 99))
def test_the_revision_model_keeps_its_rules(n, p, r, final, seed) -> None:
    words = [f"word{i}a" for i in range(n)]
    hyps = revise(" ".join(words), RevisionModel(p=p, r=r, final_words=final, seed=seed), f"id{seed}")
    assert len(hyps.words) == n
    assert hyps.words[-1] == tuple(words)  # the last hypothesis is the question
    for i, h in enumerate(hyps.words):
        assert len(h) == i + 1
        assert hyps.revised[i] == (list(h) != words[: i + 1])
        for j in range(i + 1):
            if h[j] != words[j]:
                # wrong now, so some later arrival within r and within the finality window rewrites it
                assert i + 1 - j <= min(r, final), (i, j)
    if p == 0.0:
        assert not any(hyps.revised)


def test_a_revision_rewrites_the_trailing_words_and_they_were_wrong_until_then() -> None:
    words = ["what", "is", "the", "capital", "of", "france"]
    hyps = revise(" ".join(words), RevisionModel(p=1.0, r=2, final_words=3, seed=1), "q1")
    # every arrival revises: word j is wrong until arrival j+2 (its last rewrite), then right
    for i, h in enumerate(hyps.words):
        for j in range(i + 1):
            right = j + 2 <= i or j == len(words) - 1 or (i == len(words) - 1)
            assert (h[j] == words[j]) == right, (i, j, h)
    assert hyps.n_revisions == len(words) - 1


def test_draws_depend_on_the_seed_and_the_question_only() -> None:
    model = RevisionModel(p=0.5, seed=3)
    query = " ".join(f"w{i}x" for i in range(40))
    assert revise(query, model, "a") == revise(query, model, "a")
    assert revise(query, model, "a") != revise(query, model, "b")
    assert revise(query, model, "a") != revise(query, RevisionModel(p=0.5, seed=4), "a")


@pytest.mark.parametrize(
    ("word", "alphabet"),
    [("capital", "aeiou"), ("Paris", "aeiou"), ("rhythm", "abcdefghijklmnopqrstuvwxyz"), ("2019", "0123456789")],
)
def test_a_misheard_word_differs_in_one_character_of_its_kind(word: str, alphabet: str) -> None:
    rng = question_rng(0, word)
    for _ in range(20):
        wrong = misheard(word, rng)
        diff = [(a, b) for a, b in zip(word, wrong, strict=True) if a != b]
        assert len(diff) == 1
        assert diff[0][1].lower() in alphabet
    assert misheard("?!", rng) == "?!"
