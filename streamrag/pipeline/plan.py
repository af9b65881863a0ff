"""What is drawn in advance for one question: word arrivals, end of turn, stage latencies."""

from __future__ import annotations

from dataclasses import dataclass

from streamrag.engine.endpoint import EndpointTurn
from streamrag.pipeline.question import SimQuestion


@dataclass(frozen=True, slots=True)
class QuestionPlan:
    """Everything drawn in advance for one question (µs offsets from its arrival)."""

    question: SimQuestion
    word_us: tuple[int, ...]
    """Arrival of words 1..n."""
    end_of_turn_us: int
    """Delay from the last word to end of turn (when reflector and baseline start): the
    endpointer's (:mod:`~streamrag.engine.endpoint`)."""
    g_us: tuple[int, ...]
    """Query-generation latency of a call on prefix t at index t-1."""
    l_us: tuple[int, ...]
    """Tool latency of a call on prefix t at index t-1."""
    f_us: int
    """Response-generation latency (both arms)."""
    rank_us: tuple[int, ...] = ()
    """How long ranking prefix t takes, at index t-1 (``pipeline.ranking`` tool or local;
    empty when rankings are free)."""
    endpoint: EndpointTurn | None = None
    """A (non-``fixed``) endpointer's decision: its delay, false cut-offs and their price
    (:mod:`~streamrag.engine.endpoint`); None: the study's fixed end of turn."""

    @property
    def input_end_us(self) -> int:
        return self.word_us[-1]

    @property
    def turn_end_us(self) -> int:
        return self.word_us[-1] + self.end_of_turn_us

    @property
    def confirm_us(self) -> int:
        """When the endpointer confirms the end of turn (the turn end, but after an eager start)."""
        return self.word_us[-1] + (self.end_of_turn_us if self.endpoint is None else self.endpoint.end.confirm_us)

    @property
    def holds_tools(self) -> bool:
        """The reflector's and the baseline's tool stages wait for :attr:`confirm_us`."""
        return self.endpoint is not None and self.endpoint.hold_tools
