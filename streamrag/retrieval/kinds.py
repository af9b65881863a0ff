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
           the ε floor; :mod:`streamrag.retrieval.rank_bm25_reference`);
           per question or over a pool
``python`` a user's class, ``target = "package.module:Class"`` or  declared,
           ``"path/to/file.py:Class"`` (a bare string with a      else
           ``:`` is short for it): its ``score(query)`` per       ``bm25``
           prefix (:mod:`streamrag.retrieval.plugin`); per
           question only
=========  ===================================================  ==========

Each kind declares the scopes it ranks in (``scopes``); a pool asked of a kind without
``global`` is refused in one line. A ``python`` retriever's scale is the one its class
declares; without one, the heuristic reflector judges its top chunk by the chunk's BM25
score of the full query (a threshold is never applied to scores on no known scale).

Adding a retriever means its module (a class with ``rank(query, k=k) -> Rankings``) and
one config class here, added to :data:`RetrieverConfig`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, cast, get_args

from pydantic import BaseModel, BeforeValidator, Field, model_validator

from streamrag.base.errors import ConfigError
from streamrag.base.validation import SettingsModel

if TYPE_CHECKING:
    from streamrag.retrieval.base import Retriever
    from streamrag.retrieval.bm25 import BM25Index
    from streamrag.retrieval.dense.embed import Embedder
    from streamrag.retrieval.global_pool.index import GlobalIndex

__all__ = ["RETRIEVER_KINDS", "AnyRetrieverConfig", "RetrieverConfig", "RetrieverEnv", "Scale", "retriever_config"]

Scale = Literal["bm25", "cosine"]
"""What a retriever's scores are: BM25 scores (≥ 0, unbounded) or cosines in [−1, 1]."""

RetrieverScope = Literal["per-question", "global"]
"""Where a retriever ranks: one question's chunks, or a pool shared by every question."""


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
    """A retriever kind. Each declares ``scale`` (a class constant, or a property where the
    user's class decides it) and the ``scopes`` it ranks in."""

    kind: str
    scopes: ClassVar[frozenset[RetrieverScope]] = frozenset({"per-question", "global"})
    """Where the kind ranks (a kind without ``global`` has no pool retriever)."""

    def retriever(self, chunks: Sequence[str], index: BM25Index, env: RetrieverEnv) -> Retriever:
        """The retriever of one question's chunks (``index``: their lexical BM25 index)."""
        raise NotImplementedError

    def pool_retriever(
        self, index: GlobalIndex, chunks: Sequence[str], env: RetrieverEnv, *, pool_size: int | None = None
    ) -> Retriever:
        """The retriever of a pool shared by every question (``index``: the pool's postings)."""
        raise self.refusal("global")

    def refusal(self, scope: RetrieverScope) -> ConfigError:
        """The one line refusing ``scope`` to a kind that does not rank there."""
        where = " and ".join(sorted(self.scopes))
        pooled = ", ".join(k for k, cls in _KINDS.items() if scope in cls.scopes)
        return ConfigError(f"retriever {self.name}: ranks in {where} scope only, not {scope}; in {scope} scope use {pooled}")

    @property
    def name(self) -> str:
        """How messages name the retriever (its kind)."""
        return self.kind

    @property
    def label(self) -> str:
        """The retriever's stable name in outputs that compare retrievers (its kind): the
        same on every machine, unlike :attr:`name`, which holds a file's absolute path."""
        return self.kind


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
        from streamrag.retrieval.rank_bm25_reference import RankBM25Retriever

        return RankBM25Retriever(chunks, index.params, index.tokenizer)

    def pool_retriever(
        self, index: GlobalIndex, chunks: Sequence[str], env: RetrieverEnv, *, pool_size: int | None = None
    ) -> Retriever:
        from streamrag.retrieval.rank_bm25_reference import RankBM25Retriever

        return RankBM25Retriever(chunks, index.params, index.tokenizer)


class PythonRetrieverConfig(_Config):
    """Your own class, named as package.module:Class or path/to/file.py:Class (per question)."""

    kind: Literal["python"] = "python"
    scopes: ClassVar[frozenset[RetrieverScope]] = frozenset({"per-question"})
    target: str
    """``package.module:Class`` or ``path/to/file.py:Class`` (:mod:`streamrag.retrieval.plugin`);
    a file's path is stored absolute, so outputs say which file ran."""
    sha256: str | None = None
    """SHA-256 of the file defining the class, filled in on validation (what outputs record
    of its code); a value given must match the file (None: the class has no source file)."""

    @model_validator(mode="before")
    @classmethod
    def _load(cls, data: Any) -> Any:
        """Import the class now: a bad target is refused with the settings, before any
        data is read, and the file's digest is recorded."""
        if not isinstance(data, dict) or not isinstance(data.get("target"), str):
            return data  # the field's own check reports it
        from streamrag.retrieval.plugin import load_target, source_sha256

        try:
            target, found = load_target(data["target"])
            digest = source_sha256(target, found)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        given = data.get("sha256")
        if given is not None and given != digest:
            raise ValueError(f"retriever {target.text}: its file's sha256 is {digest}, not the {given} given (the file changed)")
        return {**data, "target": target.text, "sha256": digest}

    @property
    def name(self) -> str:
        return self.target

    @property
    def label(self) -> str:
        """``FILE.py:Class`` (the file's name, not its folder) or ``package.module:Class``."""
        from streamrag.retrieval.plugin import Target

        target = Target(self.target)
        return self.target if target.path is None else f"{target.path.name}:{target.name}"

    @property
    def scale(self) -> Scale:
        """The class's declared scale; without one, ``bm25``: the top chunk is judged by
        its BM25 score of the full query (:mod:`streamrag.retrieval.plugin`)."""
        from streamrag.retrieval.plugin import declared_scale, load_target

        target, found = load_target(self.target, self.sha256)
        return declared_scale(target, found) or "bm25"

    def retriever(self, chunks: Sequence[str], index: BM25Index, env: RetrieverEnv) -> Retriever:
        from streamrag.retrieval.plugin import PythonRetriever, load_target

        target, found = load_target(self.target, self.sha256)
        return PythonRetriever(target, found, chunks, index)


AnyRetrieverConfig = BM25RetrieverConfig | DenseRetrieverConfig | RankBM25RetrieverConfig | PythonRetrieverConfig
"""Every retriever config class (what :data:`RetrieverConfig` validates to)."""


def _from_string(value: Any) -> Any:
    """A bare string: a kind, or a Python target (it holds a ``:``, which no kind does)."""
    if isinstance(value, str):
        return {"kind": "python", "target": value} if ":" in value else {"kind": value}
    return value


RetrieverConfig = Annotated[AnyRetrieverConfig, Field(discriminator="kind"), BeforeValidator(_from_string)]
"""A retriever, chosen by ``kind`` (a bare string is the kind, or a ``python`` target)."""

_KINDS: dict[str, type[_Config]] = {cls.model_fields["kind"].default: cls for cls in get_args(AnyRetrieverConfig)}

RETRIEVER_KINDS: tuple[str, ...] = tuple(_KINDS)
"""The registered kinds (``bm25``, ``dense``, ``rank_bm25``, ``python``), in the order help texts list them."""


def retriever_config(value: str | dict[str, Any] | BaseModel) -> AnyRetrieverConfig:
    """A validated retriever config from a kind, a Python target, a table or a config."""
    from pydantic import TypeAdapter

    adapter: TypeAdapter[AnyRetrieverConfig] = TypeAdapter(cast(Any, RetrieverConfig))
    return adapter.validate_python(value if not isinstance(value, BaseModel) else value.model_dump())
