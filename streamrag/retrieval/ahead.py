"""Rank a stream of queries ahead of their consumer, on threads, handing results back in order.

Global-scope analysis ranks each question against the pool, then spends Python time on
its gold, metrics and evidence. When the ranking releases the GIL (the compiled kernel
of :class:`~streamrag.retrieval.global_pool.scorer.PrefixScorer`), threads holding one scorer
each rank the next questions meanwhile. Each scorer owns its accumulator, so a scorer
is never shared between two rankings at once; the rankings are the same as one scorer's
in sequence (they never depend on what a scorer ranked before).
"""

from __future__ import annotations

import queue
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

from streamrag.retrieval.base import Rankings, Retriever

__all__ = ["ranked_in_order"]


def ranked_in_order(
    queries: Iterable[str | None], scorers: Sequence[Retriever], k: int
) -> Iterator[Callable[[], Rankings] | None]:
    """One item per query, in order: a call returning its rankings (or raising the ranking's
    error, e.g. ``NothingToRankError``), or None for a None query (a skipped record).

    With one scorer nothing runs ahead: the call ranks, in the caller's thread. With n
    scorers, n threads rank up to 2n queries ahead of the one being consumed.
    """
    if not scorers:
        raise ValueError("ranked_in_order needs at least one scorer")
    if len(scorers) == 1:
        for query in queries:
            yield None if query is None else partial(scorers[0].rank, query, k=k)
        return
    free: queue.SimpleQueue[Retriever] = queue.SimpleQueue()
    for scorer in scorers:
        free.put(scorer)

    def rank(query: str) -> Rankings:
        scorer = free.get()  # never waits: as many scorers as threads
        try:
            return scorer.rank(query, k=k)
        finally:
            free.put(scorer)

    window: deque[Future[Rankings] | None] = deque()
    with ThreadPoolExecutor(len(scorers), thread_name_prefix="streamrag-rank") as pool:
        try:
            for query in queries:
                window.append(None if query is None else pool.submit(rank, query))
                if len(window) > 2 * len(scorers):
                    yield _result(window.popleft())
            while window:
                yield _result(window.popleft())
        finally:  # the consumer stopped early: do not rank what nobody will read
            for future in window:
                if future is not None:
                    future.cancel()


def _result(future: Future[Rankings] | None) -> Callable[[], Rankings] | None:
    return None if future is None else future.result
