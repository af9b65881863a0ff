"""ranked_in_order: rankings handed back in query order, each scorer used by one thread at a time."""

from __future__ import annotations

import threading
import time

import pytest

from streamrag.base.errors import EmptyQueryError
from streamrag.retrieval.ahead import ranked_in_order


class _Scorer:
    """Returns (query, k); sleeps a query-dependent time so threads finish out of order."""

    n_chunks = 10

    def __init__(self, log: list[tuple[str, str]]) -> None:
        self.busy = False
        self.log = log

    def rank(self, query: str, *, k: int = 3) -> tuple[str, int]:  # the Rankings stand-in
        if self.busy:
            raise RuntimeError("scorer used by two threads at once")
        self.busy = True
        try:
            time.sleep(0.001 * (len(query) % 4))
            self.log.append((query, threading.current_thread().name))
            if not query.strip():
                raise EmptyQueryError("no words")
            return query, k
        finally:
            self.busy = False


@pytest.mark.parametrize("n_scorers", [1, 2, 3])
def test_results_come_back_in_order_with_skips_and_errors(n_scorers: int) -> None:
    log: list[tuple[str, str]] = []
    queries = [f"q{i} " + "x" * i for i in range(20)]
    stream = [*queries[:5], None, " ", *queries[5:]]
    got = list(ranked_in_order(stream, [_Scorer(log) for _ in range(n_scorers)], k=7))  # type: ignore[misc]
    assert got[5] is None
    with pytest.raises(EmptyQueryError):
        got[6]()  # type: ignore[misc]
    assert [call() for call in got[:5] + got[7:]] == [(q, 7) for q in queries]  # type: ignore[misc]
    threads = {name for _, name in log}
    assert (threads == {threading.current_thread().name}) == (n_scorers == 1)


def test_one_scorer_ranks_lazily_in_the_callers_thread() -> None:
    log: list[tuple[str, str]] = []
    calls = ranked_in_order(["a", "b"], [_Scorer(log)], k=3)  # type: ignore[list-item]
    first = next(calls)
    assert log == []  # nothing ranked until asked
    assert first() == ("a", 3)  # type: ignore[misc]
    assert log == [("a", threading.current_thread().name)]


def test_stopping_early_ranks_a_bounded_window() -> None:
    log: list[tuple[str, str]] = []
    calls = ranked_in_order((f"q{i}" for i in range(1000)), [_Scorer(log), _Scorer(log)], k=3)  # type: ignore[list-item]
    assert next(calls)() == ("q0", 3)  # type: ignore[misc]
    calls.close()
    assert len(log) <= 6  # the window (2 × threads + 1), not the 1,000 queries
    with pytest.raises(ValueError, match="at least one scorer"):
        next(ranked_in_order(["a"], [], k=3))
