"""The calibrated reflector threshold (streamrag.base.threshold): the stated rule, exactly,
on constructed cases and on any sample."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamrag.base.threshold import ANCHOR_SCORE_THRESHOLD, ScoreSample, calibrate


def test_the_c_th_highest_own_score_where_bm25_clears_the_anchor_on_c() -> None:
    reference = [5.0, 3.0, 2.0, 1.9, 0.5]  # BM25 clears 2.0 on c = 3 (2.0 itself counts)
    scores = [0.9, 0.1, 0.7, 0.3, 0.5]  # descending 0.9, 0.7, 0.5, 0.3, 0.1
    got = calibrate(ScoreSample.of(scores, reference), 2.0)
    assert got is not None
    assert (got.threshold, got.n_questions, got.n_reference_accepted, got.n_accepted) == (0.5, 5, 3, 3)
    assert got.reference_threshold == 2.0
    assert got.as_dict() == {
        "rule": "calibrated",
        "threshold": 0.5,
        "reference_threshold": 2.0,
        "n_questions": 5,
        "n_reference_accepted": 3,
        "n_accepted": 3,
    }
    assert got.describe() == "threshold calibrated 0.5 (accepts 3/5 final top-1, as BM25 ≥ 2 does 3)"


def test_ties_at_the_c_th_score_are_all_accepted() -> None:
    got = calibrate(ScoreSample.of([0.9, 0.5, 0.5, 0.1], [3.0, 2.5, 1.0, 1.0]), 2.0)  # c = 2; s_(2) = s_(3) = 0.5
    assert got is not None and (got.threshold, got.n_reference_accepted, got.n_accepted) == (0.5, 2, 3)


def test_none_accepted_all_accepted_and_bm25_itself() -> None:
    scores = [0.3, 0.8, 0.6]
    none = calibrate(ScoreSample.of(scores, [1.0, 1.5, 0.0]), 2.0)  # c = 0: just above the highest score
    assert none is not None and none.threshold == np.nextafter(0.8, np.inf) and none.n_accepted == 0
    every = calibrate(ScoreSample.of(scores, [2.0, 9.0, 4.0]), 2.0)  # c = m: the lowest score
    assert every is not None and every.threshold == 0.3 and every.n_accepted == 3
    bm25 = [4.25, 2.5, 1.0]
    itself = calibrate(ScoreSample.of(bm25, bm25), 2.0)  # s = b: the anchor's value, not 2.5
    assert itself is not None and (itself.threshold, itself.n_accepted) == (2.0, 2)
    assert calibrate(ScoreSample.of([], []), 2.0) is None  # nothing to calibrate on


def test_a_sample_holds_aligned_read_only_arrays() -> None:
    sample = ScoreSample.of([1, 3, 2], [0, 0, 0])
    assert sample.descending.tolist() == [3.0, 2.0, 1.0] and not sample.is_reference and sample.n == 3
    with pytest.raises(ValueError, match="differ"):
        ScoreSample.of([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="read-only"):
        sample.scores[0] = 9.0


scores_st = st.lists(st.floats(-5, 5, allow_nan=False).map(lambda x: round(x, 1)), min_size=1, max_size=30)


@given(scores_st, st.data())
def test_it_accepts_the_c_highest_own_scores(scores: list[float], data: st.DataObject) -> None:
    reference = data.draw(st.lists(st.floats(0, 6, allow_nan=False), min_size=len(scores), max_size=len(scores)))
    got = calibrate(ScoreSample.of(scores, reference), ANCHOR_SCORE_THRESHOLD)
    assert got is not None
    s = np.array(scores)
    c = int((np.array(reference) >= ANCHOR_SCORE_THRESHOLD).sum())
    accepted = s >= got.threshold
    assert got.n_reference_accepted == c and got.n_accepted == int(accepted.sum()) >= c
    if np.array_equal(s, reference):
        assert got.threshold == ANCHOR_SCORE_THRESHOLD
    else:
        # Every accepted score is at least every rejected one, and beyond c only ties at τ are accepted.
        assert not accepted.any() or not (~accepted).any() or s[accepted].min() > s[~accepted].max()
        assert int((s > got.threshold).sum()) <= c <= int(accepted.sum())
