"""Incremental-recognition measures of a hypothesis stream: how much a recognizer (or a
typist) takes back, per second and per word, how soon it shows something, and how late
its words settle.

Edits follow the incremental-unit model of incremental ASR evaluation (Baumann, Atterer
and Schlangen, NAACL 2009; Whetten, Imtiaz and Kennington, arXiv 2302.12049, whose
recognizers feed an IU network): going from hypothesis ``prev`` to ``cur``, the words
after their common word prefix ``c`` are *revoked* (``len(prev) − c`` revokes) and the
words of ``cur`` after it are *added* (``len(cur) − c`` adds). A changed word is a revoke
and an add; a word after a changed one is revoked and added again, as an IU network
must. The first hypothesis adds its words to an empty one. Since the stream starts empty
and ends on the final transcript, ``adds − revokes = n_final_words``, so
``edits = adds + revokes = n_final_words + 2 · revokes``.

Per question (:func:`question_measures`), then pooled over questions
(:func:`corpus_measures`; a ratio of sums, so a long question weighs by its words or
seconds). Canonical names, used as JSON keys and columns:

- ``revokes_per_s`` = Σ revokes / Σ input seconds (Revokes per Second, Whetten et al.;
  input seconds: the audio's length for speech, the last hypothesis' time otherwise);
- ``edit_overhead`` = Σ (edits − n_final_words) / Σ edits: the share of word edits that
  were not needed (Baumann et al.'s EO; 0 for word prefixes, → 1 for a stream that
  rewrites everything);
- ``edits_per_word`` = Σ edits / Σ n_final_words: word updates per recognized word
  (1 for word prefixes; = 1 / (1 − edit_overhead));
- ``first_partial_ms_median``: the median over questions of the first hypothesis' time
  (from the start of speech or typing), and ``first_partial_available_ms_median`` the
  same on the times hypotheses became available (recorded speech only);
- ``final_at_end_share`` = Σ positions final only at the end / Σ n_final_words. Word
  position i of the final transcript is *settled* from the first hypothesis after which
  every hypothesis starts with the final's first i + 1 words; it is final only at the
  end when that is the last hypothesis. Word prefixes settle every word on arrival, so
  only the last word counts (1 / n).

A figure without a denominator (no questions, no words, no seconds) is None, never 0.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import NamedTuple

MEASURES: tuple[str, ...] = (
    "n_revokes",
    "revokes_per_s",
    "edit_overhead",
    "edits_per_word",
    "first_partial_ms_median",
    "first_partial_available_ms_median",
    "final_at_end_share",
)
"""The keys of :func:`corpus_measures`, in the order tables show them."""


class QuestionMeasures(NamedTuple):
    """One question's counts (module docstring)."""

    n_final_words: int
    n_adds: int
    n_revokes: int
    n_final_at_end: int
    """Word positions of the final transcript settled only at its last hypothesis."""
    duration_s: float
    first_partial_ms: float | None
    first_partial_available_ms: float | None


def word_edits(prev: Sequence[str], cur: Sequence[str]) -> tuple[int, int]:
    """``(adds, revokes)`` going from hypothesis ``prev`` to ``cur``: the words past their
    common word prefix, added and revoked."""
    common = 0
    for a, b in zip(prev, cur, strict=False):
        if a != b:
            break
        common += 1
    return len(cur) - common, len(prev) - common


def settled_at(shown: Sequence[Sequence[str]]) -> list[int]:
    """For each word position i of the final (last) hypothesis, the index of the first
    hypothesis from which on every hypothesis starts with the final's first i + 1 words."""
    if not shown:
        return []
    final = tuple(shown[-1])
    # m[j] = min over k ≥ j of the common prefix of shown[k] with the final: position i is
    # settled from the first j with m[j] > i (m does not decrease with j).
    suffix_min = [0] * len(shown)
    running = len(final)
    for j in range(len(shown) - 1, -1, -1):
        h = tuple(shown[j])
        common = 0
        for a, b in zip(h, final, strict=False):
            if a != b:
                break
            common += 1
        running = min(running, common)
        suffix_min[j] = running
    out = []
    j = 0
    for i in range(len(final)):
        while suffix_min[j] <= i:
            j += 1
        out.append(j)
    return out


def question_measures(
    shown: Sequence[Sequence[str]],
    times_ms: Sequence[float] | None,
    duration_ms: float,
    available_ms: Sequence[float] | None = None,
) -> QuestionMeasures:
    """The counts of one question's hypotheses ``shown`` (each a word sequence, the last
    the final transcript), at ``times_ms`` (None: no times), over ``duration_ms`` of input."""
    adds = revokes = 0
    prev: Sequence[str] = ()
    for cur in shown:
        a, r = word_edits(prev, cur)
        adds, revokes, prev = adds + a, revokes + r, cur
    last = len(shown) - 1
    return QuestionMeasures(
        n_final_words=len(shown[-1]) if shown else 0,
        n_adds=adds,
        n_revokes=revokes,
        n_final_at_end=sum(1 for j in settled_at(shown) if j == last),
        duration_s=duration_ms / 1000,
        first_partial_ms=float(times_ms[0]) if times_ms else None,
        first_partial_available_ms=float(available_ms[0]) if available_ms else None,
    )


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def corpus_measures(questions: Sequence[QuestionMeasures]) -> dict[str, float | int | None]:
    """The pooled measures (:data:`MEASURES`, module docstring) of ``questions``."""
    n_final = sum(q.n_final_words for q in questions)
    revokes = sum(q.n_revokes for q in questions)
    edits = sum(q.n_adds + q.n_revokes for q in questions)
    return {
        "n_revokes": revokes,
        "revokes_per_s": _ratio(revokes, sum(q.duration_s for q in questions)),
        "edit_overhead": _ratio(edits - n_final, edits),
        "edits_per_word": _ratio(edits, n_final),
        "first_partial_ms_median": _median([q.first_partial_ms for q in questions]),
        "first_partial_available_ms_median": _median([q.first_partial_available_ms for q in questions]),
        "final_at_end_share": _ratio(sum(q.n_final_at_end for q in questions), n_final),
    }
