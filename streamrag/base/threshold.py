"""The heuristic reflector's score threshold: the anchor's fixed values, or one calibrated per retriever.

The heuristic reflector accepts a result when the full query's score of its top chunk is
at least a threshold (and its coverage rule holds). ``reflector.threshold`` picks the rule:

- ``fixed`` (the anchor's; the ``paper`` preset and the default): ``score_threshold``
  (:data:`ANCHOR_SCORE_THRESHOLD`) on BM25 scores, ``cosine_threshold``
  (:data:`ANCHOR_COSINE_THRESHOLD`) on cosines, as the retriever's scale picks;
- ``calibrated``: each retriever's own threshold, set from its own scores on the
  analyzed questions by the rule below.

**The rule.** Over the m analyzed questions i (every question the analysis ranked, before
a run's selection), let

- ``b_i`` be the *reference* score: the full query's BM25 score of BM25's top-1 chunk
  (the highest BM25 score of the full query over the question's chunks, with the
  analysis' BM25 parameters), and
- ``s_i`` the retriever's score of its own final-query top-1 chunk, the number the
  reflector reads (the evidence's ``top1_score`` at t = n: the retriever's own score, or
  the chunk's BM25 score for a class that declares no scale).

The anchor's threshold τ_B (``score_threshold``) accepts ``c = #{i : b_i ≥ τ_B}`` of them.
With ``s_(1) ≥ s_(2) ≥ … ≥ s_(m)`` the retriever's scores in descending order, its
calibrated threshold is::

    τ = τ_B                      if s = b (BM25 itself: the anchor's value is kept)
    τ = s_(c)                    if 1 ≤ c ≤ m
    τ = the next float above s_(1)  if c = 0 (it accepts none, as τ_B does)

τ accepts the retriever's c highest final-query scores: exactly c, unless scores tie at
``s_(c)`` (then every question tied there too; :attr:`Calibration.n_accepted` counts them).

**Why this rule.** The anchor's number means something on BM25's scale only: how often
the reflector trusts the best-informed result, the final query's top-1. On a cosine or a
user's score the same number is arbitrary, so a comparison of retrievers would compare
reflectors of different strictness. Matching the share accepted holds the reflector's
strictness equal, and the differences left are the rankings'. It reads no gold label
(string-matched gold is noisy, and a threshold tuned on it would fold the outcome
measured into the rule), takes one result per question (a long question weighs no more
than a short one, and no trigger decides which results exist), and leaves BM25 as the
anchor ran it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

__all__ = [
    "ANCHOR_COSINE_THRESHOLD",
    "ANCHOR_SCORE_THRESHOLD",
    "Calibration",
    "ScoreSample",
    "ThresholdRule",
    "calibrate",
]

ANCHOR_SCORE_THRESHOLD = 2.0
"""The anchor's threshold on BM25 scores (``reflector.score_threshold``)."""

ANCHOR_COSINE_THRESHOLD = 0.4
"""The anchor's threshold on cosines, its dense setting (``reflector.cosine_threshold``)."""

ThresholdRule = Literal["fixed", "calibrated"]
"""How the heuristic reflector's threshold is set (module docstring)."""


@dataclass(frozen=True, slots=True, eq=False)
class ScoreSample:
    """One retriever's final-query top-1 scores ``s`` and the reference BM25 scores ``b``
    of the same analyzed questions, in question order (float64 (m,) each, read-only):
    what a calibrated threshold is set from. Build it with :meth:`of`."""

    scores: np.ndarray
    reference: np.ndarray
    descending: np.ndarray
    """``scores`` sorted in descending order (the rule's ``s_(1) … s_(m)``)."""
    is_reference: bool
    """``s = b``: the retriever is BM25 itself."""

    @classmethod
    def of(cls, scores: Any, reference: Any) -> ScoreSample:
        s, b = np.array(scores, dtype=np.float64), np.array(reference, dtype=np.float64)
        if s.shape != b.shape or s.ndim != 1:
            raise ValueError(f"ScoreSample: scores {s.shape} and reference {b.shape} differ")
        desc = np.sort(s)[::-1].copy()
        for a in (s, b, desc):
            a.flags.writeable = False
        return cls(s, b, desc, bool(np.array_equal(s, b)))

    @property
    def n(self) -> int:
        return int(self.scores.size)


@dataclass(frozen=True, slots=True)
class Calibration:
    """A calibrated threshold and what it was set from (module docstring)."""

    threshold: float
    """τ, on the scale of the scores the reflector reads for this retriever."""
    reference_threshold: float
    """τ_B, the anchor's threshold on the reference BM25 scores."""
    n_questions: int
    """m, the analyzed questions."""
    n_reference_accepted: int
    """c, the questions whose reference score clears τ_B."""
    n_accepted: int
    """The questions whose own score clears τ (c, or more when scores tie at τ)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": "calibrated",
            "threshold": self.threshold,
            "reference_threshold": self.reference_threshold,
            "n_questions": self.n_questions,
            "n_reference_accepted": self.n_reference_accepted,
            "n_accepted": self.n_accepted,
        }

    def describe(self) -> str:
        """One line for outputs: ``threshold calibrated 0.5312 (accepts 21/32 final top-1, as BM25 ≥ 2 does 21)``."""
        return (
            f"threshold calibrated {self.threshold:.6g} (accepts {self.n_accepted}/{self.n_questions} final top-1, "
            f"as BM25 ≥ {self.reference_threshold:g} does {self.n_reference_accepted})"
        )


def calibrate(sample: ScoreSample, reference_threshold: float) -> Calibration | None:
    """The calibrated threshold of ``sample`` against τ_B = ``reference_threshold`` (the
    module docstring's rule); None when the sample is empty (nothing to calibrate on)."""
    m = sample.n
    if m == 0:
        return None
    c = int(np.count_nonzero(sample.reference >= reference_threshold))
    if sample.is_reference:
        threshold = float(reference_threshold)
    elif c == 0:
        threshold = float(np.nextafter(sample.descending[0], np.inf))
    else:
        threshold = float(sample.descending[c - 1])
    n_accepted = int(np.count_nonzero(sample.scores >= threshold))
    return Calibration(threshold, float(reference_threshold), m, c, n_accepted)
