"""The shape of CRAG, as counts: what generated data is drawn from.

Every number here was measured once from the 2,706 questions of CRAG tasks 1&2 v4
(``shared/data/crag/crag_v4_questions.jsonl``, both splits) and is kept as a count so the
proportions stay exact. Only counts are stored, no question text.
"""

from __future__ import annotations

import numpy as np

# n_words = len(query.split()) → number of questions (mean 11.93, median 11, 3–40).
N_WORDS_HISTOGRAM: dict[int, int] = {
    3: 3, 4: 17, 5: 29, 6: 80, 7: 146, 8: 227, 9: 306, 10: 315, 11: 301, 12: 233,
    13: 252, 14: 199, 15: 130, 16: 132, 17: 74, 18: 71, 19: 73, 20: 40, 21: 30, 22: 12,
    23: 6, 24: 6, 25: 4, 26: 3, 27: 2, 28: 2, 29: 6, 31: 2, 32: 2, 33: 1, 38: 1, 40: 1,
}  # fmt: skip

QUESTION_TYPES: dict[str, int] = {
    "simple": 754, "simple_w_condition": 407, "comparison": 333, "aggregation": 315,
    "false_premise": 309, "set": 249, "multi-hop": 231, "post-processing": 108,
}  # fmt: skip

DOMAINS: tuple[str, ...] = ("finance", "sports", "music", "movie", "open")
STATIC_OR_DYNAMIC: tuple[str, ...] = ("static", "slow-changing", "fast-changing", "real-time")

# domain × static_or_dynamic counts (rows follow DOMAINS, columns STATIC_OR_DYNAMIC):
# dynamism depends strongly on the domain (finance is mostly real-time, movies static),
# so the pair is drawn jointly. Domain totals: 661, 519, 373, 611, 542.
DOMAIN_DYNAMISM: dict[str, tuple[int, int, int, int]] = {
    "finance": (156, 107, 134, 264),
    "sports": (217, 134, 168, 0),
    "music": (262, 86, 23, 2),
    "movie": (499, 104, 8, 0),
    "open": (369, 152, 20, 1),
}

# Answer shape per question type, counts of answers that are
# (number, text with digits, name of ≤ 4 words, longer text/list, yes/no, "invalid question").
ANSWER_KINDS: tuple[str, ...] = ("number", "mixed", "name", "list", "yes_no", "invalid")
ANSWER_KIND_COUNTS: dict[str, tuple[int, int, int, int, int, int]] = {
    "simple": (366, 44, 274, 44, 26, 0),
    "simple_w_condition": (73, 163, 126, 40, 5, 0),
    "set": (10, 72, 21, 146, 0, 0),
    "comparison": (15, 122, 148, 29, 19, 0),
    "aggregation": (141, 137, 5, 32, 0, 0),
    "multi-hop": (16, 128, 47, 40, 0, 0),
    "post-processing": (34, 52, 7, 5, 10, 0),
    "false_premise": (0, 1, 0, 0, 0, 308),
}

# First word of the query (lower-cased), counts of the most common ones; the rest
# (≈ 8% of questions) start with an ordinary word.
FIRST_WORDS: dict[str, int] = {
    "what": 721, "how": 470, "which": 370, "who": 331, "can": 147, "what's": 111,
    "when": 97, "in": 87, "on": 62, "is": 41, "was": 28, "did": 23, "where": 21, "do": 17,
    "for": 17, "why": 14, "during": 12, "at": 12, "tell": 11, "does": 9,
}  # fmt: skip
N_QUESTIONS = 2706
N_VALIDATION = 1371  # split == 0


P_FALSE_PREMISE = QUESTION_TYPES["false_premise"] / N_QUESTIONS
P_FIRST_WORD_LISTED = sum(FIRST_WORDS.values()) / N_QUESTIONS


def _cdf(counts) -> np.ndarray:
    values = np.cumsum(np.asarray(counts, dtype=float))
    return values / values[-1]


_TYPE_KEYS, _TYPE_CDF = tuple(QUESTION_TYPES), _cdf(list(QUESTION_TYPES.values()))
_N_WORDS_KEYS, _N_WORDS_CDF = tuple(N_WORDS_HISTOGRAM), _cdf(list(N_WORDS_HISTOGRAM.values()))
_FIRST_KEYS, _FIRST_CDF = tuple(FIRST_WORDS), _cdf(list(FIRST_WORDS.values()))
_CELLS = tuple((d, s) for d in DOMAINS for s in STATIC_OR_DYNAMIC)
_CELL_CDF = _cdf([c for d in DOMAINS for c in DOMAIN_DYNAMISM[d]])
_KIND_CDF = {t: _cdf(counts) for t, counts in ANSWER_KIND_COUNTS.items()}


def _pick(keys: tuple, cdf: np.ndarray, rng: np.random.Generator):
    return keys[min(int(np.searchsorted(cdf, rng.random(), side="right")), len(keys) - 1)]


def draw_question_type(rng: np.random.Generator) -> str:
    """A question type with CRAG's proportions."""
    return _pick(_TYPE_KEYS, _TYPE_CDF, rng)


def draw_n_words(rng: np.random.Generator) -> int:
    """A query length (words) from CRAG's histogram."""
    return int(_pick(_N_WORDS_KEYS, _N_WORDS_CDF, rng))


def draw_domain_and_dynamism(rng: np.random.Generator) -> tuple[str, str]:
    """``(domain, static_or_dynamic)`` drawn jointly with CRAG's proportions."""
    return _pick(_CELLS, _CELL_CDF, rng)


def draw_answer_kind(rng: np.random.Generator, question_type: str) -> str:
    """One of :data:`ANSWER_KINDS`, with CRAG's proportions for ``question_type``."""
    return _pick(ANSWER_KINDS, _KIND_CDF[question_type], rng)


def draw_first_word(rng: np.random.Generator) -> str:
    """One of CRAG's common first words, with their proportions among themselves."""
    return _pick(_FIRST_KEYS, _FIRST_CDF, rng)
