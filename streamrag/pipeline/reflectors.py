"""Reflectors: at end of turn, which speculative result (if any) to answer from.

The *decisions* here are plain functions of finished results; the waiting lives in the
streaming arm (:mod:`streamrag.pipeline.streaming`), which applies the same shell to
every policy:

1. optionally spend ``check_us`` (e.g. ``topk_match`` retrieving the full query);
2. judge the finished results in the policy's order; the first sufficient one wins;
3. else wait for in-flight calls, judging each as it completes (completion order);
4. else fall back to the full query: a call on prefix n if one exists, otherwise fire
   once on the full query (G + L) — the mis-fire penalty.

Once a result is chosen, the calls still in flight are cancelled.

Policies (config ``kind``):

- ``heuristic`` (anchor): full mode — re-score each result's top chunk with the full
  query; sufficient iff ``final_scores[top] ≥`` the threshold on the retriever's scale —
  ``score_threshold`` (BM25 score, 2.0) or, for questions ranked by dense retrieval,
  ``cosine_threshold`` (cosine, 0.4, the anchor's dense setting) — and
  ``final_coverage[top] ≥ min_coverage`` (0.4, lexical in both modes); of the finished
  results only the best-scoring one is judged (the anchor's "take the best"); calls
  still in flight are then judged as they complete. Trace-driven — sufficient iff
  ``t ≥ t*``.
- ``topk_match`` (Stream RAG): sufficient iff the result's top-k equals the full
  query's top-k (as sets); finished results tried earliest call first; ``check_ms`` is
  spent once at end of turn (the full-query retrieval the comparison needs). Full mode.
- ``gold`` (oracle): sufficient iff the result's top-k holds a gold chunk;
  trace-driven — iff ``t ≥ t*``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from streamrag.errors import ConfigError
from streamrag.pipeline.question import SimQuestion


@dataclass(frozen=True, slots=True)
class Verdict:
    """A reflector's judgment of one result (``score``/``coverage`` when it re-scored)."""

    sufficient: bool
    score: float | None = None
    coverage: float | None = None


class Reflector(Protocol):
    """Judges one question's speculative results (fresh per question)."""

    check_us: int

    def order(self, finished: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Finished ``(call_idx, prefix_t)`` pairs (completion order) in trial order."""
        ...

    def judge(self, prefix_t: int) -> Verdict:
        """Is the result of a call on prefix t sufficient to answer?"""
        ...


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PrefixReflector:
    """Trace-driven judgment: sufficient iff ``t ≥ t*``; completion order."""

    check_us = 0

    def __init__(self, t_star: int) -> None:
        self.t_star = t_star

    def order(self, finished: list[tuple[int, int]]) -> list[tuple[int, int]]:
        return finished

    def judge(self, prefix_t: int) -> Verdict:
        return Verdict(prefix_t >= self.t_star)


class HeuristicReflector:
    """The anchor's: re-score the result's top chunk with the full query."""

    check_us = 0

    def __init__(self, q: SimQuestion, score_threshold: float, min_coverage: float) -> None:
        if q.final_scores is None or q.final_coverage is None or q.topk is None:
            raise ConfigError(
                f"reflector.kind: 'heuristic' needs final_scores and final_coverage, question {q.interaction_id!r} has none"
            )
        self._top = q.topk[:, 0]
        self._scores = q.final_scores
        self._coverage = q.final_coverage
        self.score_threshold = score_threshold
        self.min_coverage = min_coverage

    def _score(self, prefix_t: int) -> float:
        return float(self._scores[int(self._top[prefix_t - 1])])

    def order(self, finished: list[tuple[int, int]]) -> list[tuple[int, int]]:
        # The anchor judges only the best finished result (highest full-query score;
        # ties keep completion order, the sort is stable); if it is insufficient the
        # arm goes on to wait for the calls in flight.
        return sorted(finished, key=lambda ct: -self._score(ct[1]))[:1]

    def judge(self, prefix_t: int) -> Verdict:
        top = int(self._top[prefix_t - 1])
        score = float(self._scores[top])
        coverage = float(self._coverage[top])
        return Verdict(score >= self.score_threshold and coverage >= self.min_coverage, score, coverage)


class TopkMatchReflector:
    """Stream RAG's: the result's top-k equals the full query's top-k."""

    def __init__(self, q: SimQuestion, check_us: int) -> None:
        assert q.topk is not None
        self._sets = [frozenset(int(c) for c in row) for row in q.topk]
        self._final = self._sets[-1]
        self.check_us = check_us

    def order(self, finished: list[tuple[int, int]]) -> list[tuple[int, int]]:
        return sorted(finished, key=lambda ct: ct[0])  # earliest call first

    def judge(self, prefix_t: int) -> Verdict:
        return Verdict(self._sets[prefix_t - 1] == self._final)


class GoldReflector:
    """Oracle: the result's top-k holds a gold chunk."""

    check_us = 0

    def __init__(self, q: SimQuestion) -> None:
        assert q.topk is not None
        gold = q.gold or frozenset()
        self._hit = [any(int(c) in gold for c in row) for row in q.topk]

    def order(self, finished: list[tuple[int, int]]) -> list[tuple[int, int]]:
        return finished

    def judge(self, prefix_t: int) -> Verdict:
        return Verdict(self._hit[prefix_t - 1])


class HeuristicReflectorConfig(_Config):
    kind: Literal["heuristic"] = "heuristic"
    score_threshold: float = Field(default=2.0, allow_inf_nan=False)
    """Minimum BM25 score of the full query on the top chunk (questions ranked by BM25)."""
    cosine_threshold: float = Field(default=0.4, ge=-1, le=1, allow_inf_nan=False)
    """Minimum cosine of the full query with the top chunk (questions ranked by dense retrieval)."""
    min_coverage: float = Field(default=0.4, ge=0, le=1)

    def build(self, q: SimQuestion) -> Reflector:
        if q.trace_driven:
            return PrefixReflector(q.t_star)
        threshold = self.cosine_threshold if q.scale == "cosine" else self.score_threshold
        return HeuristicReflector(q, threshold, self.min_coverage)


class TopkMatchReflectorConfig(_Config):
    kind: Literal["topk_match"] = "topk_match"
    check_ms: float = Field(default=0.0, ge=0, allow_inf_nan=False)

    def build(self, q: SimQuestion) -> Reflector:
        if q.trace_driven:
            raise ConfigError(
                f"reflector.kind: 'topk_match' needs prefix rankings, but question {q.interaction_id!r} "
                "is trace-driven (a table only gives t*); use heuristic or gold"
            )
        return TopkMatchReflector(q, round(self.check_ms * 1000))


class GoldReflectorConfig(_Config):
    kind: Literal["gold"] = "gold"

    def build(self, q: SimQuestion) -> Reflector:
        if q.trace_driven:
            return PrefixReflector(q.t_star)
        return GoldReflector(q)


ReflectorConfig = Annotated[
    HeuristicReflectorConfig | TopkMatchReflectorConfig | GoldReflectorConfig,
    Field(discriminator="kind"),
]
"""A reflector policy, chosen by ``kind``."""

NEEDS_RANKINGS = frozenset({"topk_match"})
"""Reflector kinds that cannot run trace-driven."""
