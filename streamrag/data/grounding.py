"""Which chunks hold a gold answer (design §3, "Grounding").

``exact``: normalize = lowercase, every character outside ``[a-z0-9 ]`` → space, collapse
spaces. Candidates are the answer and the alt answers; candidates that normalize to one
of :data:`DROPPED_ANSWERS` are ignored. A multi-token candidate matches as a substring of
the normalized chunk; a single-token candidate must match a whole word. yes/no answers
are kept on purpose (the anchor study's convention; gold density exposes the bias).

``relaxed``: everything ``exact`` matches, and in addition a multi-token candidate with
≥ 2 content tokens (after removing :data:`RELAXED_STOPWORDS`) matches a chunk holding
all its content tokens anywhere, in any order.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from typing import Literal

GroundingMode = Literal["exact", "relaxed"]

DROPPED_ANSWERS = frozenset({"", "i don't know", "i dont know", "invalid question", "unknown"})
RELAXED_STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "in",
        "on",
        "at",
        "to",
        "and",
        "or",
        "for",
        "is",
        "are",
        "was",
        "were",
        "be",
        "by",
        "with",
        "as",
        "that",
        "this",
    ]
)
_NOT_ALNUM_SPACE = re.compile(r"[^a-z0-9 ]")


def normalize(text: str) -> str:
    """Lowercase; every char outside ``[a-z0-9 ]`` → space; collapse spaces."""
    return " ".join(_NOT_ALNUM_SPACE.sub(" ", text.lower()).split())


def answer_candidates(answers: Iterable[str]) -> list[str]:
    """Normalized, de-duplicated candidates in order, minus the dropped ones.

    The drop list is checked on the lowercased raw answer too, since normalizing turns
    "i don't know" into "i don t know".
    """
    out: list[str] = []
    for answer in answers:
        lowered = " ".join(answer.lower().split())
        candidate = normalize(answer)
        if lowered in DROPPED_ANSWERS or candidate in DROPPED_ANSWERS:
            continue
        if candidate not in out:
            out.append(candidate)
    return out


def _content_tokens(candidate: str) -> list[str]:
    return [t for t in candidate.split() if t not in RELAXED_STOPWORDS]


def chunk_is_gold(normalized_chunk: str, candidates: Sequence[str], mode: GroundingMode = "exact") -> bool:
    """Whether a normalized chunk contains one of the (normalized) candidates."""
    padded = f" {normalized_chunk} "
    words: set[str] | None = None
    for candidate in candidates:
        tokens = candidate.split()
        if len(tokens) > 1:
            content = _content_tokens(candidate) if mode == "relaxed" else []
            if candidate in normalized_chunk:
                return True
            if len(content) >= 2:
                if words is None:
                    words = set(normalized_chunk.split())
                if all(t in words for t in content):
                    return True
        elif f" {candidate} " in padded:
            return True
    return False


def gold_chunks(chunks: Sequence[str], answers: Iterable[str], mode: GroundingMode = "exact") -> frozenset[int]:
    """Ids of the chunks that hold a gold answer."""
    return gold_in_normalized([normalize(c) for c in chunks], answers, mode)


def gold_in_normalized(normalized_chunks: Sequence[str], answers: Iterable[str], mode: GroundingMode = "exact") -> frozenset[int]:
    """:func:`gold_chunks` for chunks already passed through :func:`normalize`.

    With the paper tokenizer, ``normalize(chunk) == " ".join(tokens(chunk))``, so the
    analyzer normalizes each chunk once, from the tokens it indexes anyway.
    """
    return gold_by_mode(normalized_chunks, answers, (mode,))[mode]


def gold_by_mode(
    normalized_chunks: Sequence[str], answers: Iterable[str], modes: Sequence[GroundingMode] = ("exact", "relaxed")
) -> dict[GroundingMode, frozenset[int]]:
    """:func:`gold_in_normalized` in each of ``modes``, reading the chunks once.

    The same sets as :func:`chunk_is_gold` chunk by chunk (property-tested), found by
    searching each candidate once in all chunks joined as ``"\\n ␣chunk␣ \\n"``: a
    normalized chunk holds no newline, so no match spans two chunks.
    """
    for mode in modes:
        if mode not in ("exact", "relaxed"):
            raise ValueError(f"unknown grounding mode {mode!r}; use 'exact' or 'relaxed'")
    candidates = answer_candidates(answers)
    if not candidates:
        return dict.fromkeys(modes, frozenset())
    joined = _Joined(normalized_chunks)
    exact: set[int] = set()
    extra: set[int] = set()  # what the relaxed rule adds
    for candidate in candidates:
        tokens = candidate.split()
        exact.update(joined.holding(candidate if len(tokens) > 1 else f" {candidate} "))
        content = _content_tokens(candidate) if "relaxed" in modes and len(tokens) > 1 else []
        if len(content) >= 2:
            # every content token as a whole word: check the chunks holding the first one
            others = [f" {t} " for t in content[1:]]
            extra.update(i for i in joined.holding(f" {content[0]} ") if all(t in joined.padded(i) for t in others))
    return {mode: frozenset(exact if mode == "exact" else exact | extra) for mode in modes}


class _Joined:
    """Normalized chunks in one string, ``"\\n c_0 \\n c_1 \\n …"``: chunk i padded with a
    space on both sides at ``text[starts[i] : ends[i]]``."""

    __slots__ = ("ends", "starts", "text")

    def __init__(self, normalized_chunks: Sequence[str]) -> None:
        self.text = "\n " + " \n ".join(normalized_chunks) + " \n"
        self.starts: list[int] = []
        self.ends: list[int] = []
        at = 1
        for chunk in normalized_chunks:
            self.starts.append(at)
            at += len(chunk) + 2
            self.ends.append(at)
            at += 1

    def padded(self, i: int) -> str:
        """``" chunk_i "``."""
        return self.text[self.starts[i] : self.ends[i]]

    def holding(self, needle: str) -> list[int]:
        """Ids of the chunks whose padded text contains ``needle`` (no newline in it), ascending."""
        found: list[int] = []
        find, starts = self.text.find, self.starts
        at = find(needle)
        while at >= 0:
            i = bisect.bisect_right(starts, at) - 1
            found.append(i)
            if i + 1 == len(starts):
                break
            at = find(needle, starts[i + 1])
        return found
