"""Queries and answers of generated questions."""

from __future__ import annotations

import numpy as np

from streamrag.data.generated import crag_shape as profile
from streamrag.data.generated._lexicon import CONTENT_RANK, Lexicon
from streamrag.data.grounding import RELAXED_STOPWORDS, normalize

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_UNITS = ("points", "goals", "games", "tracks", "minutes", "awards", "shares", "employees", "episodes", "wins")


def draw_query(rng: np.random.Generator, n_words: int, lexicon: Lexicon) -> tuple[str, np.ndarray]:
    """The query text (``n_words`` words) and the vocabulary indices of its content words.

    Content words (rank ≥ ``CONTENT_RANK``) are what the generator plants into pages;
    every query gets at least one. The first word is one of CRAG's usual openers
    ("what", "how", …) as often as in CRAG.
    """
    idx = lexicon.draw(rng, n_words)
    content = [pos for pos in range(1, n_words) if idx[pos] >= CONTENT_RANK]
    if not content:
        pos = int(rng.integers(1, n_words)) if n_words > 1 else 0
        idx[pos] = lexicon.draw(rng, 1, low_rank=CONTENT_RANK)[0]
        content = [pos]
    words = [lexicon.words[i] for i in idx.tolist()]
    if rng.random() < profile.P_FIRST_WORD_LISTED:
        words[0] = profile.draw_first_word(rng)
    return " ".join(words) + "?", np.unique(idx[content])


def draw_answer(rng: np.random.Generator, kind: str, lexicon: Lexicon) -> tuple[str, list[str]]:
    """An answer of CRAG's shape ``kind`` (see ``crag_profile.ANSWER_KINDS``) and its alternatives.

    Every form is built from names (never in page text) or from numbers that are not
    years (page text holds no other numbers), so it occurs in a page only if planted.
    """
    names = lexicon.names

    def name(n_parts: int) -> str:
        return " ".join(names[int(i)] for i in rng.integers(0, len(names), size=n_parts))

    if kind == "invalid":
        return "invalid question", []
    if kind == "yes_no":
        return ("yes" if rng.random() < 0.5 else "no"), []
    if kind == "number":
        form = rng.random()
        if form < 0.4:
            return str(int(rng.integers(0, 1000))), []
        if form < 0.75:
            value = int(rng.integers(1000, 100_000))
            alt = [str(value)] if not 1950 <= value <= 2024 else []  # years do occur in text
            return f"{value:,}", alt
        return f"{rng.integers(0, 100)}.{rng.integers(1, 100):02d}", []
    if kind == "mixed":
        form = rng.random()
        if form < 0.45:
            day, year, month = int(rng.integers(1, 29)), int(rng.integers(1960, 2024)), int(rng.integers(0, 12))
            return f"{MONTHS[month]} {day}, {year}", [f"{month + 1:02d}/{day:02d}/{year}"]
        if form < 0.75:
            return f"${rng.integers(1, 100)}.{rng.integers(0, 10)} billion", []
        return f"{rng.integers(2, 500)} {_UNITS[int(rng.integers(len(_UNITS)))]}", []
    if kind == "name":
        n_parts = int(rng.choice(3, p=[0.45, 0.45, 0.10])) + 1
        answer = name(n_parts)
        alt = [answer.split()[-1]] if n_parts > 1 and rng.random() < 0.3 else []
        return answer, alt
    items = [name(int(rng.integers(1, 3))) for _ in range(int(rng.integers(3, 6)))]  # "list"
    return ", ".join(items[:-1]) + ", and " + items[-1], []


_FILLERS = tuple(sorted(RELAXED_STOPWORDS))


def relaxed_form(rng: np.random.Generator, answer: str) -> str | None:
    """``answer`` as a page may word it so that only relaxed grounding finds it: its content
    tokens (design §3) in another order, a stopword between each two — "universal pictures"
    becomes e.g. "pictures of the universal" — or None when the rule cannot apply (fewer
    than two words or two content tokens, or content tokens all equal).

    Every content token stays a whole word, so the relaxed rule matches; consecutive
    content tokens of the answer are never adjacent, so its normalized form is not a
    substring and the exact rule does not (unless a single-token alternative answer is
    among the tokens, as CRAG's last names are)."""
    tokens = normalize(answer).split()
    content = [t for t in tokens if t not in RELAXED_STOPWORDS]
    if len(tokens) < 2 or len(content) < 2 or len(set(content)) < 2:
        return None
    order = rng.permutation(len(content)).tolist()
    if order == sorted(order):
        order.reverse()
    out: list[str] = []
    for i, pos in enumerate(order):
        if i:
            out += [_FILLERS[int(j)] for j in rng.integers(0, len(_FILLERS), size=int(rng.integers(1, 3)))]
        out.append(content[pos])
    return " ".join(out)
