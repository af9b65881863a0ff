"""Incremental-recognition measures (streamrag.data.human.incremental) on hand-made
hypothesis sequences, every answer counted by hand in the test."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamrag.data.human.incremental import (
    MEASURES,
    corpus_measures,
    question_measures,
    settled_at,
    word_edits,
)

# "what is the capitol" is taken back for "what is the capital of": one revoke.
CAPITAL = [
    ("what",),
    ("what", "is"),
    ("what", "is", "the", "capitol"),
    ("what", "is", "the", "capital", "of"),
    ("what", "is", "the", "capital", "of", "france"),
]
# "b" shown, taken back for "c", then shown again: it settles only at the end.
FLICKER = [("a", "b"), ("a", "c"), ("a", "b", "d")]
PREFIXES = [("x",), ("x", "y"), ("x", "y", "z")]


def test_an_edit_revokes_and_adds_the_words_after_the_common_prefix() -> None:
    assert word_edits((), ("what",)) == (1, 0)
    assert word_edits(("what", "is", "the", "capitol"), ("what", "is", "the", "capital", "of")) == (2, 1)
    # a changed word revokes the words after it too, as an IU network does
    assert word_edits(("a", "b", "c"), ("a", "x", "c")) == (2, 2)
    assert word_edits(("a", "b"), ("a", "b")) == (0, 0)


def test_the_capital_question_counted_by_hand() -> None:
    # adds 1 + 1 + 2 + 2 + 1 = 7, revokes 1 ("capitol"); 6 final words; edits 8.
    q = question_measures(CAPITAL, [300, 700, 1100, 1500, 1900], duration_ms=2000)
    assert (q.n_final_words, q.n_adds, q.n_revokes) == (6, 7, 1)
    # common prefix with the final: 1, 2, 3, 5, 6 → positions settle at 0, 1, 2, 3, 3, 4
    assert settled_at(CAPITAL) == [0, 1, 2, 3, 3, 4]
    assert q.n_final_at_end == 1  # only "france", which arrives last
    assert (q.duration_s, q.first_partial_ms, q.first_partial_available_ms) == (2.0, 300.0, None)
    m = corpus_measures([q])
    assert m["revokes_per_s"] == 0.5  # 1 revoke over 2 s
    assert m["edit_overhead"] == 2 / 8  # 8 edits, 6 needed
    assert m["edits_per_word"] == 8 / 6
    assert m["final_at_end_share"] == 1 / 6


def test_a_word_taken_back_and_shown_again_settles_only_at_the_end() -> None:
    # adds 2, then 1 (+c) with 1 revoke (b), then 2 (b d) with 1 revoke (c): 5 adds, 2 revokes
    q = question_measures(FLICKER, [200, 400, 900], duration_ms=1000, available_ms=[260, 470, 990])
    assert (q.n_final_words, q.n_adds, q.n_revokes) == (3, 5, 2)
    assert settled_at(FLICKER) == [0, 2, 2]
    assert q.n_final_at_end == 2
    assert q.first_partial_available_ms == 260.0
    assert corpus_measures([q])["edit_overhead"] == 4 / 7


def test_word_prefixes_take_nothing_back_and_settle_each_word_on_arrival() -> None:
    m = corpus_measures([question_measures(PREFIXES, [100, 200, 300], duration_ms=300)])
    assert (m["n_revokes"], m["revokes_per_s"], m["edit_overhead"], m["edits_per_word"]) == (0, 0.0, 0.0, 1.0)
    assert m["final_at_end_share"] == 1 / 3


def test_pooled_over_questions_is_a_ratio_of_sums() -> None:
    a = question_measures(CAPITAL, [300, 700, 1100, 1500, 1900], duration_ms=2000)
    b = question_measures(FLICKER, [200, 400, 900], duration_ms=1000, available_ms=[260, 470, 990])
    m = corpus_measures([a, b])
    assert list(m) == list(MEASURES)
    assert m["n_revokes"] == 3 and m["revokes_per_s"] == 1.0  # 3 revokes over 3 s
    assert m["edit_overhead"] == pytest.approx(6 / 15)  # edits 8 + 7, needed 6 + 3
    assert m["edits_per_word"] == pytest.approx(15 / 9)
    assert m["final_at_end_share"] == pytest.approx(3 / 9)
    assert m["first_partial_ms_median"] == 250.0  # median of 300 and 200
    assert m["first_partial_available_ms_median"] == 260.0  # only b has available times


def test_without_a_denominator_a_measure_is_none_never_zero() -> None:
    m = corpus_measures([])
    assert m["n_revokes"] == 0
    assert all(m[k] is None for k in MEASURES if k != "n_revokes")
    m = corpus_measures([question_measures(PREFIXES, None, duration_ms=0)])
    assert m["revokes_per_s"] is None and m["first_partial_ms_median"] is None


words = st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=5).map(tuple)


@given(st.lists(words, min_size=1, max_size=8))
def test_edits_are_the_final_words_plus_twice_the_revokes(shown: list[tuple[str, ...]]) -> None:
    q = question_measures(shown, None, duration_ms=1000)
    assert q.n_adds + q.n_revokes == q.n_final_words + 2 * q.n_revokes
    m = corpus_measures([q])
    assert 0.0 <= m["edit_overhead"] < 1.0  # type: ignore[operator]
    assert m["edits_per_word"] == pytest.approx(1 / (1 - m["edit_overhead"]))  # type: ignore[operator]
    settled = settled_at(shown)
    assert settled == sorted(settled) and all(0 <= j < len(shown) for j in settled)
    assert 0 <= q.n_final_at_end <= q.n_final_words
    if len(shown) == 1 or len(shown[-1]) > len(shown[-2]):
        assert q.n_final_at_end >= 1  # a word the last hypothesis adds settles with it
