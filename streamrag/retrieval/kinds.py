"""Retrievers by kind: the one registry.

A retriever is chosen by a config section with a ``kind`` (``[data.retriever]`` in a
scenario, ``retriever`` in analysis settings, ``--retriever KIND`` on the command line;
a bare string ``"dense"`` is short for ``{kind = "dense"}``). Each kind's config builds
the :class:`~streamrag.retrieval.base.Retriever` for both scopes and declares the scale
of its scores, which the heuristic reflector's threshold follows:

=========  ===================================================  ==========
``kind``   rankings                                             scale
=========  ===================================================  ==========
``bm25``   BM25 (the paper preset; per question: the question's  ``bm25``
           own index, incremental prefix scores; global: the
           pool's postings, :class:`PrefixScorer`)
``dense``  cosine of all-MiniLM-L6-v2 embeddings (``dense``       ``cosine``
           extra); per question or over a pool
``rank_    the reference rankings: every prefix re-scored from   ``bm25``
bm25``     scratch by rank_bm25's ``BM25Okapi`` (its idf, with
           the ε floor; :mod:`streamrag.retrieval.reference`);
           per question or over a pool
=========  ===================================================  ==========

Adding a retriever means its module (a class with ``rank(query, k=k) -> Rankings``) and
one config class here, added to :data:`RetrieverConfig`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, cast, get_args

from pydantic import BaseModel, BeforeValidator, Field

from streamrag.base.validation import SettingsModel

if TYPE_CHECKING:
    from streamrag.retrieval.base import Retriever
    from streamrag.retrieval.bm25 import BM25Index
    from streamrag.retrieval.dense.embed import Embedder
    from streamrag.retrieval.global_pool.index import GlobalIndex

__all__ = ["RETRIEVER_KINDS", "RetrieverConfig", "RetrieverEnv", "Scale", "retriever_config"]

Scale = Literal["bm25", "cosine"]
"""What a retriever's scores are: BM25 scores (≥ 0, unbounded) or cosines in [−1, 1]."""


class RetrieverEnv:
    """What the retrievers of one run share: where caches live and heavy resources.

    ``cache_dir`` holds the embedding cache (``cache_dir/embeddings``); ``embedder``
    replaces the dense model (tests pass a :class:`~streamrag.retrieval.dense.embed.HashingEmbedder`).
    The model is loaded once per process, on first use.
    """

    def __init__(self, cache_dir: str | Path | None = None, *, embedder: Embedder | None = None) -> None:
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self._embedder = embedder

    def embedder(self) -> Embedder:
        if self._embedder is None:
            from streamrag.retrieval.dense.retriever import minilm_embedder

            self._embedder = minilm_embedder(None if self.cache_dir is None else self.cache_dir / "embeddings")
        return self._embedder


class _Config(SettingsModel):
    kind: str
    scale: ClassVar[Scale]

    def retriever(self, chunks: Sequence[str], index: BM25Index, env: RetrieverEnv) -> Retriever:
        """The retriever of one question's chunks (``index``: their lexical BM25 index)."""
        raise NotImplementedError

    def pool_retriever(
        self, index: GlobalIndex, chunks: Sequence[str], env: RetrieverEnv, *, pool_size: int | None = None
    ) -> Retriever:
        """The retriever of a pool shared by every question (``index``: the pool's postings)."""
        raise NotImplementedError


class BM25RetrieverConfig(_Config):
    """BM25, parameters from the analysis' ``bm25`` settings (they also serve the lexical side)."""

    kind: Literal["bm25"] = "bm25"
    scale: ClassVar[Scale] = "bm25"

    def retriever(self, chunks: Sequence[str], index: BM25Index, env: RetrieverEnv) -> Retriever:
        from streamrag.retrieval.base import BM25Retriever

        return BM25Retriever.from_index(index)

    def pool_retriever(
        self, index: GlobalIndex, chunks: Sequence[str], env: RetrieverEnv, *, pool_size: int | None = None
    ) -> Retriever:
        from streamrag.retrieval.global_pool.scorer import PrefixScorer

        return PrefixScorer(index, pool_size=pool_size)


class DenseRetrieverConfig(_Config):
    """all-MiniLM-L6-v2 cosine (needs ``pip install 'streamrag[dense]'``)."""

    kind: Literal["dense"] = "dense"
    scale: ClassVar[Scale] = "cosine"

    def retriever(self, chunks: Sequence[str], index: BM25Index, env: RetrieverEnv) -> Retriever:
        from streamrag.retrieval.dense.retriever import DenseRetriever

        return DenseRetriever(chunks, env.embedder(), index=index)

    def pool_retriever(
        self, index: GlobalIndex, chunks: Sequence[str], env: RetrieverEnv, *, pool_size: int | None = None
    ) -> Retriever:
        from streamrag.retrieval.dense.pooled import DensePoolScorer

        return DensePoolScorer(index, chunks, env.embedder())


class RankBM25RetrieverConfig(_Config):
    """rank_bm25's ``BM25Okapi`` from scratch per prefix (k1, b, epsilon from the ``bm25`` settings)."""

    kind: Literal["rank_bm25"] = "rank_bm25"
    scale: ClassVar[Scale] = "bm25"

    def retriever(self, chunks: Sequence[str], index: BM25Index, env: RetrieverEnv) -> Retriever:
        from streamrag.retrieval.reference import RankBM25Retriever

        return RankBM25Retriever(chunks, index.params, index.tokenizer)

    def pool_retriever(
        self, index: GlobalIndex, chunks: Sequence[str], env: RetrieverEnv, *, pool_size: int | None = None
    ) -> Retriever:
        from streamrag.retrieval.reference import RankBM25Retriever

        return RankBM25Retriever(chunks, index.params, index.tokenizer)


def _from_string(value: Any) -> Any:
    return {"kind": value} if isinstance(value, str) else value


RetrieverConfig = Annotated[
    BM25RetrieverConfig | DenseRetrieverConfig | RankBM25RetrieverConfig,
    Field(discriminator="kind"),
    BeforeValidator(_from_string),
]
"""A retriever, chosen by ``kind`` (a bare string is the kind)."""

RETRIEVER_KINDS: tuple[str, ...] = tuple(cls.model_fields["kind"].default for cls in get_args(get_args(RetrieverConfig)[0]))
"""The registered kinds (``bm25``, ``dense``, ``rank_bm25``), in the order help texts list them."""


def retriever_config(
    value: str | dict[str, Any] | BaseModel,
) -> BM25RetrieverConfig | DenseRetrieverConfig | RankBM25RetrieverConfig:
    """A validated retriever config from a kind, a table or a config."""
    from pydantic import TypeAdapter

    adapter: TypeAdapter[BM25RetrieverConfig | DenseRetrieverConfig | RankBM25RetrieverConfig] = TypeAdapter(
        cast(Any, RetrieverConfig)
    )
    return adapter.validate_python(value if not isinstance(value, BaseModel) else value.model_dump())
