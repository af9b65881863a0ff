"""Tools for live runs: BM25 over a corpus in process, and a user's HTTP endpoint.

The HTTP contract (what ``streamrag serve`` implements and what a user's endpoint must):
``POST URL`` with JSON ``{"query": str, "k": int}``, answered with JSON
``{"hits": [{"id": int, "score": float, "text": str}, ...]}``, best first (``text``
optional). Anything else — no connection, no reply within the timeout, a status other
than 200, a body of another shape — is a :class:`~streamrag.base.errors.ToolError` whose
message names the URL and what to check.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from streamrag.base.errors import ConfigError, ToolError, ToolUnreachableError
from streamrag.engine.clock import Clock
from streamrag.live.http import JsonEndpoint
from streamrag.pipeline.reflectors import Coverage
from streamrag.pipeline.tools import Hit, ToolResult
from streamrag.retrieval.base import chunk_coverage
from streamrag.retrieval.bm25 import BM25Index
from streamrag.retrieval.ranking import rank_topk


class BM25Tool:
    """BM25 (the paper preset) over a list of chunks, in process (chunk id = position).

    It also judges results: :meth:`judge` gives the full query's score of a chunk and the
    share of the full query's tokens in it, exactly as the analyzer's evidence does, so
    the live heuristic reflector decides as the simulated one."""

    def __init__(self, chunks: Sequence[str], clock: Clock, *, name: str = "bm25") -> None:
        if not chunks:
            raise ConfigError(f"{name}: the corpus has no chunks")
        self.chunks = list(chunks)
        self.index = BM25Index.build(self.chunks)
        self.clock = clock
        self.name = name
        self._judged: tuple[str, np.ndarray, dict[str, tuple[str, ...]]] | None = None

    @classmethod
    def from_corpus(cls, corpus: str | os.PathLike[str], clock: Clock) -> BM25Tool:
        """Every chunk of a corpus (``demo``, a CRAG file, the CRAG data folder, a BEIR folder)."""
        return cls(load_corpus(corpus), clock, name=f"bm25 {corpus}")

    def rank(self, query: str, k: int) -> tuple[Hit, ...]:
        """The top ``k`` chunks of ``query`` (score descending, ties by id)."""
        scores = self.index.score(self.index.tokenizer(query))
        return tuple(Hit(int(c), float(scores[c]), self.chunks[c]) for c in rank_topk(scores, k).tolist())

    async def search(self, query: str, k: int) -> ToolResult:
        start = self.clock.now_us()
        hits = self.rank(query, k)
        return ToolResult(hits, self.clock.now_us() - start)

    def judge(self, full_query: str, chunk_id: int, coverage: Coverage = "distinct") -> tuple[float, float]:
        """``(score, coverage)``: the full query's BM25 score of the chunk, and the share of
        its distinct tokens (``coverage="occurrences"``: of its token occurrences) the
        chunk holds — what the heuristic reflector compares."""
        if self._judged is None or self._judged[0] != full_query:
            tokens = self.index.tokenizer(full_query)
            counted = {"distinct": tuple(dict.fromkeys(tokens)), "occurrences": tuple(tokens)}
            self._judged = (full_query, self.index.score(tokens), counted)
        _, scores, counted = self._judged
        share = chunk_coverage(self.index, counted[coverage], np.array([chunk_id], dtype=np.int64))
        return float(scores[chunk_id]), float(share[0])


def load_corpus(corpus: str | os.PathLike[str]) -> list[str]:
    """The chunks of a corpus as global scope pools them: ``demo`` (the built-in set's
    pages), a CRAG file, the CRAG data folder or a BEIR folder."""
    from pathlib import Path

    from streamrag.analysis.entry import open_source
    from streamrag.data.selection import Selection

    path = Path(corpus)
    if str(corpus) == "demo":
        from streamrag.data.demo import demo_path

        path = demo_path()
    return open_source(path, selection=Selection(split=None)).pool.chunks


class HttpTool:
    """A user's retrieval endpoint over HTTP (see the module docstring for the contract);
    ``timeout_ms`` and ``concurrency`` as :class:`~streamrag.live.http.JsonEndpoint`'s."""

    def __init__(self, url: str, clock: Clock, *, timeout_ms: float = 2000.0, concurrency: int = 8) -> None:
        self.endpoint = JsonEndpoint("tool", url, clock, timeout_ms=timeout_ms, concurrency=concurrency)
        self.url = url
        self.clock = clock
        self.name = f"http {url}"

    async def search(self, query: str, k: int) -> ToolResult:
        start = self.clock.now_us()
        body = await self.endpoint.post({"query": query, "k": k})
        return ToolResult(_hits(body, self.url), self.clock.now_us() - start)

    async def check_reachable(self) -> None:
        """One call before the run: :class:`ToolUnreachableError` when nothing answers at
        the URL (any answer, even an error or a slow one, shows the endpoint is there)."""
        try:
            await self.search("streamrag", 1)
        except ToolUnreachableError:
            raise
        except ToolError:
            pass

    async def aclose(self) -> None:
        await self.endpoint.aclose()


def _hits(body: Any, url: str) -> tuple[Hit, ...]:
    """The hits of a reply, or ToolError naming what is wrong with it."""
    raw = body.get("hits") if isinstance(body, dict) else None
    if not isinstance(raw, list):
        raise ToolError(f'tool {url}: bad reply: expected {{"hits": [...]}}, got {str(body)[:80]!r}')
    hits = []
    for i, h in enumerate(raw):
        if not isinstance(h, dict) or not isinstance(h.get("id"), int) or not isinstance(h.get("score"), int | float):
            raise ToolError(f"tool {url}: bad reply: hits[{i}] needs an integer id and a numeric score, got {str(h)[:80]!r}")
        hits.append(Hit(h["id"], float(h["score"]), str(h.get("text", ""))))
    return tuple(hits)
