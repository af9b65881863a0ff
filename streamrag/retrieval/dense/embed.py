"""Text embedders for dense retrieval: the ``Embedder`` role and a torch-free test double.

An embedder maps texts to unit vectors, float32 ``(m, d)`` with ``‖e‖₂ = 1`` (a text
without any content may map to the zero vector), so that cosine similarity is a dot
product. Implementations:

- :class:`HashingEmbedder` — a deterministic hashed bag of words (no model, no torch);
  a test double with lexical behaviour, also handy for quick dry runs;
- :class:`~streamrag.retrieval.dense.minilm.MiniLMEmbedder` — all-MiniLM-L6-v2 (the ``dense``
  extra), loaded lazily;
- :class:`~streamrag.retrieval.dense.embed_cache.CachedEmbedder` — wraps either with an
  on-disk cache keyed by model id and text.

``model_id`` names everything that decides the vectors (model, weights version, input
truncation, pooling); it is part of every cache key, so two embedders with the same id
must return the same vectors for the same text (up to float noise, see ``minilm``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from streamrag.retrieval.tokenize import RegexTokenizer, Tokenizer

__all__ = ["Embedder", "HashingEmbedder", "normalize_rows"]


@runtime_checkable
class Embedder(Protocol):
    """Role: texts → L2-normalized embeddings, float32 (m, dim)."""

    @property
    def model_id(self) -> str:
        """Identity of the vectors (model, weights, truncation, pooling): part of cache keys."""
        ...

    @property
    def dim(self) -> int:
        """d, the embedding dimension."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (len(texts), dim), row i = unit vector of ``texts[i]`` (or zeros for no content)."""
        ...


def normalize_rows(m: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm, float32; zero rows stay zero (cosine 0 with everything)."""
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


class HashingEmbedder:
    """Hashed bag of words: ``e(text) = normalize(Σ_tokens sign(w) · onehot(bucket(w)))``.

    Each token w (the ``paper`` tokenizer by default) goes to bucket
    ``blake2b(w) mod dim`` with sign ± from another bit of the same digest, so the vector
    is the same in every process and on every platform (Python's ``hash`` is salted per
    process). Cosine is then a signed, collision-prone token overlap — lexical, but on
    the cosine scale — which is what tests of the dense plumbing need without torch.
    """

    __slots__ = ("_buckets", "_dim", "tokenizer")

    def __init__(self, dim: int = 64, tokenizer: Tokenizer | None = None) -> None:
        if dim < 1:
            raise ValueError(f"dim must be ≥ 1, got {dim}")
        self._dim = dim
        self.tokenizer = tokenizer if tokenizer is not None else RegexTokenizer()
        self._buckets: dict[str, tuple[int, float]] = {}

    @property
    def model_id(self) -> str:
        return f"hashing-bow/dim={self._dim}/{self.tokenizer!r}"

    @property
    def dim(self) -> int:
        return self._dim

    def _bucket(self, token: str) -> tuple[int, float]:
        hit = self._buckets.get(token)
        if hit is None:
            h = int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")
            hit = self._buckets[token] = (h % self._dim, 1.0 if (h >> 63) & 1 else -1.0)
        return hit

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in self.tokenizer(text):
                j, sign = self._bucket(token)
                out[i, j] += sign
        return normalize_rows(out)

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self._dim})"
