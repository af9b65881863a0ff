"""Tokenizers: text → list of tokens (the first stage of tokenizer → index → scorer → ranking).

The ``paper`` tokenizer lowercases, then keeps every maximal run of ``[a-z0-9]``. No
stopwords, no stemming. It is *word-local*: for whitespace-separated words ``w_1 … w_t``,

    tok("w_1 … w_t") == tok(w_1) + … + tok(w_t)

which is what makes prefix scoring incremental (``score(q[1:t]) = score(q[1:t−1]) +
Σ term scores of tok(q_t)``). A whitespace word may yield 0 tokens (``"?"``), 1 or several
(``"3-point"`` → ``["3", "point"]``).
"""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

__all__ = ["PAPER_PATTERN", "RegexTokenizer", "Tokenizer", "word_tokens"]

#: The token pattern of the ``paper`` preset, applied after lowercasing.
PAPER_PATTERN = r"[a-z0-9]+"


@runtime_checkable
class Tokenizer(Protocol):
    """Role: turn a text into its list of tokens.

    Tokenizers used for prefix scoring must be word-local (see the module docstring);
    the incremental prefix rankings are only exact for such tokenizers.
    """

    def __call__(self, text: str) -> list[str]: ...


class RegexTokenizer:
    """``tokens(text) = re.findall(pattern, text.lower())`` (the ``paper`` tokenizer by default).

    Lowercasing happens *before* matching, so e.g. the Kelvin sign ``"K"`` becomes ``"k"``.
    Equality and hashing follow ``(pattern, lowercase)`` so a tokenizer can be part of a
    cache key.
    """

    __slots__ = ("_findall", "lowercase", "pattern")

    def __init__(self, pattern: str = PAPER_PATTERN, *, lowercase: bool = True) -> None:
        self.pattern = pattern
        self.lowercase = lowercase
        self._findall = re.compile(pattern).findall

    def __call__(self, text: str) -> list[str]:
        return self._findall(text.lower() if self.lowercase else text)

    def __repr__(self) -> str:
        return f"RegexTokenizer(pattern={self.pattern!r}, lowercase={self.lowercase})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RegexTokenizer):
            return NotImplemented
        return (self.pattern, self.lowercase) == (other.pattern, other.lowercase)

    def __hash__(self) -> int:
        return hash((RegexTokenizer, self.pattern, self.lowercase))


def word_tokens(query: str, tokenizer: Tokenizer | None = None) -> list[list[str]]:
    """Tokens of each whitespace word of ``query``: ``[tok(q_1), …, tok(q_n)]``, n = len(query.split()).

    With a word-local tokenizer, the tokens of prefix ``q[1:t]`` are the concatenation of
    the first t lists. ``tokenizer`` defaults to the ``paper`` :class:`RegexTokenizer`.
    """
    tok = tokenizer if tokenizer is not None else RegexTokenizer()
    return [tok(word) for word in query.split()]
