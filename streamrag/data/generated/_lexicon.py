"""The made-up language generated pages are written in.

A :class:`Lexicon` holds a Zipf-ranked vocabulary (real English function words at the
top ranks, then pronounceable pseudo-words that grow longer with rank, with a few years
mixed in), the surface variants each word can take in running text (capitalized, with a
period or a comma), and a pool of capitalized *names* that never occur in the
vocabulary, which generated answers are made of. Because names and non-year numbers
never appear in page text by chance, an answer is in a page exactly when the generator
planted it there.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# Real English at the top of the ranking so that text and queries open with familiar
# words; "yes" and "no" are left out because they are answers.
FUNCTION_WORDS = [
    "the", "of", "and", "to", "a", "in", "is", "for", "on", "that", "with", "as", "was", "by", "it",
    "at", "from", "this", "be", "are", "an", "or", "which", "his", "their", "has", "have", "its",
    "not", "but", "were", "had", "they", "first", "also", "who", "more", "one", "after", "new",
    "can", "all", "two", "been", "her", "other", "most", "into", "when", "there", "would", "some",
    "about", "over", "than", "year", "what", "many", "during", "time", "only", "between", "three",
    "world", "used", "up", "both", "where", "while", "then", "made", "out", "under", "years", "how",
    "he", "she", "these", "known", "may", "such", "later", "since", "people", "season", "team",
    "album", "film", "company", "market", "records", "city", "series", "including", "best"
]  # fmt: skip
_ONSETS = ("b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "br", "ch", "cl", "dr", "fr", "gr", "pl", "pr", "sh", "st", "th", "tr")  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "y")
_CODAS = ("", "", "", "n", "r", "s", "l", "t", "m", "nd", "rt", "ck", "st", "x")
_NAME_ONSETS = ("z", "x", "q", "kh", "vr", "zh", "dv", "yl", "tz", "ks")
N_VARIANTS = 5  # plain, Capitalized, "plain.", "Capitalized.", "plain,"
VARIANT_PLAIN, VARIANT_CAP, VARIANT_PERIOD, VARIANT_CAP_PERIOD, VARIANT_COMMA = range(N_VARIANTS)
# Ranks below this are "common" words; query words ranked at or above it are the
# content words the generator plants into pages (what BM25 keys on).
CONTENT_RANK = 300
_LEXICON_ENTROPY = 0x5EED_1E81C0  # the language is fixed; the seed varies the questions


@dataclass(frozen=True, slots=True)
class Lexicon:
    """A vocabulary with Zipf frequencies, its surface variants and a pool of names."""

    words: tuple[str, ...]
    surface: np.ndarray  # object array of N_VARIANTS * len(words) strings, variant-major
    cdf: np.ndarray  # cumulative Zipf probabilities over ranks 0 … V−1
    names: tuple[str, ...]  # capitalized, disjoint from ``words`` (case-insensitively)

    @property
    def size(self) -> int:
        return len(self.words)

    def draw(self, rng: np.random.Generator, n: int, *, low_rank: int = 0) -> np.ndarray:
        """``n`` word indices from the Zipf law, restricted to ranks ≥ ``low_rank``."""
        lo = self.cdf[low_rank - 1] if low_rank > 0 else 0.0
        u = lo + (1.0 - lo) * rng.random(n)
        return np.minimum(np.searchsorted(self.cdf, u, side="right"), self.size - 1)


def _pseudo_words(rng: np.random.Generator, n_syllables: np.ndarray, onsets: tuple[str, ...]) -> list[str]:
    """One pronounceable word per entry of ``n_syllables`` (1–4), drawn in bulk."""
    n = len(n_syllables)
    onset_idx = rng.integers(0, len(onsets), size=(n, 4)).tolist()
    vowel_idx = rng.integers(0, len(_VOWELS), size=(n, 4)).tolist()
    coda_idx = rng.integers(0, len(_CODAS), size=n).tolist()
    return [
        "".join(onsets[o] + _VOWELS[v] for o, v in zip(os_[:k], vs[:k], strict=True)) + _CODAS[c]
        for k, os_, vs, c in zip(n_syllables.tolist(), onset_idx, vowel_idx, coda_idx, strict=True)
    ]


@lru_cache(maxsize=4)
def build_lexicon(vocabulary_size: int, zipf_exponent: float, n_names: int = 20_000) -> Lexicon:
    """The lexicon for a vocabulary size and Zipf exponent (deterministic, cached)."""
    rng = np.random.default_rng(np.random.SeedSequence(_LEXICON_ENTROPY, spawn_key=(vocabulary_size,)))
    words: list[str] = list(FUNCTION_WORDS[:vocabulary_size])
    seen = set(words) | {"yes", "no"}
    years = [str(y) for y in range(1950, 2025)]
    year_ranks = set(rng.choice(np.arange(400, max(401, min(vocabulary_size, 4000))), size=len(years), replace=False).tolist())
    year_iter = iter(years)
    while len(words) < vocabulary_size:
        # Frequent words are short, rare ones long: 1–2 syllables near the top, 2–4 deep down.
        ranks = np.arange(len(words), len(words) + (vocabulary_size - len(words)) * 5 // 4 + 16)
        n_syl = 1 + (ranks > 300) + (ranks > 5000) + (rng.random(len(ranks)) < 0.4)
        for word in _pseudo_words(rng, n_syl, _ONSETS):
            if len(words) in year_ranks and (year := next(year_iter, None)) is not None:
                words.append(year)
                seen.add(year)
            if word not in seen and len(words) < vocabulary_size:
                seen.add(word)
                words.append(word)
    names: list[str] = []
    name_seen: set[str] = set()
    while len(names) < n_names:
        n_syl = 2 + (rng.random(n_names) < 0.5)
        for name in _pseudo_words(rng, n_syl, _NAME_ONSETS + _ONSETS[:8]):
            if name not in seen and name not in name_seen and name[0] in "zxqkvdyt" and len(names) < n_names:
                name_seen.add(name)
                names.append(name.capitalize())
    caps = [w.capitalize() for w in words]
    surface = np.array(words + caps + [w + "." for w in words] + [w + "." for w in caps] + [w + "," for w in words], dtype=object)
    zipf_ranks = np.arange(1, vocabulary_size + 1, dtype=float)
    cdf = np.cumsum(zipf_ranks**-zipf_exponent)
    cdf /= cdf[-1]
    return Lexicon(words=tuple(words), surface=surface, cdf=cdf, names=tuple(names))
