"""Reflectors: at end of turn, which speculative result (if any) to answer from.

The *decisions* are plain functions of finished results; the waiting lives in the
streaming arm (:mod:`streamrag.pipeline.streaming`), which runs the same shell for every
policy:

1. optionally spend ``check_us`` (``topk_match`` retrieving the full query);
2. judge the results finished so far: the policy picks the candidates in its order
   (the heuristic only the best one) and the first sufficient one wins;
3. else wait: after each completion judge again — ``rejudge = "best_of_completed"``
   (the anchor's code): the policy's pick over **all** completed results;
   ``"newest"``: the new result alone;
4. else fall back to the full query — ``fallback = "refire"`` (the anchor's code):
   always dispatch the full query again (G + L), even when a call on it has just
   returned, the mis-fire penalty; ``"reuse"``: answer from a finished call on the
   full query when there is one, else fire it.

Once a result is chosen, the calls still in flight are cancelled. A result's verdict is
a pure function of its prefix, so each call is judged (and traced) once; re-judging an
insufficient result can only say no again.

Policies (config ``kind``):

- ``heuristic`` (the anchor's): the full query's score of the result's top chunk
  ``≥ score_threshold`` (BM25, 2.0) — or, on a cosine scale (dense retrieval),
  ``≥ cosine_threshold`` (0.4, the anchor's dense setting) — and the chunk's token
  coverage ``≥ min_coverage`` (0.4). ``threshold = "calibrated"`` replaces the fixed
  threshold by the retriever's own, set from its final-query scores on the analyzed
  questions to accept as many as ``score_threshold`` accepts of BM25's
  (:mod:`streamrag.base.threshold`). ``coverage = "distinct"`` (the anchor's code): the
  share of the full query's *distinct* tokens found in the chunk; ``"occurrences"``:
  token occurrences, repeated tokens counted again. Its pick: the best finished result
  by that score (first finished on ties). The rule is :class:`HeuristicReflector`; the
  score and coverage come from a :class:`TopChunkEvidence`: the analyzer's per-prefix
  arrays in simulation, the real result's top chunk re-scored in live runs.
- ``topk_match`` (Stream RAG): the result's top-k equals the full query's top-k (as
  sets); pick: every finished result, earliest call first; ``check_ms`` is spent once at
  end of turn (the full-query retrieval the comparison needs).
- ``gold`` (oracle): the result's top-k holds a gold chunk; pick: every finished result,
  in completion order.

Without per-prefix evidence (a bare stabilization table), ``heuristic`` and ``gold``
judge by the oracle rule ``t ≥ t*`` (:class:`PrefixReflector`); ``topk_match`` needs
the evidence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal, Protocol

import numpy as np
from pydantic import BaseModel, Field

from streamrag.base.errors import ConfigError
from streamrag.base.threshold import (
    ANCHOR_COSINE_THRESHOLD,
    ANCHOR_SCORE_THRESHOLD,
    Calibration,
    ScoreSample,
    ThresholdRule,
    calibrate,
)
from streamrag.base.validation import MAX_MS, SettingsModel
from streamrag.pipeline.question import Need, SimQuestion, kinds_without

Rejudge = Literal["best_of_completed", "newest"]
Fallback = Literal["refire", "reuse"]
Coverage = Literal["distinct", "occurrences"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """A reflector's judgment of one result (``score``/``coverage`` when it re-scored)."""

    sufficient: bool
    score: float | None = None
    coverage: float | None = None


class Reflector(Protocol):
    """Judges one question's speculative results (fresh per question)."""

    check_us: int

    def pick(self, finished: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Of the finished ``(call_idx, prefix_t)`` pairs (completion order), the ones to
        judge, in trial order."""
        ...

    def judge(self, prefix_t: int) -> Verdict:
        """Is the result of a call on prefix t sufficient to answer?"""
        ...


class PrefixReflector:
    """Oracle judgment: sufficient iff ``t ≥ t*``; completion order."""

    check_us = 0

    def __init__(self, t_star: int) -> None:
        self.t_star = t_star

    def pick(self, finished: list[tuple[int, int]]) -> list[tuple[int, int]]:
        return finished

    def judge(self, prefix_t: int) -> Verdict:
        return Verdict(prefix_t >= self.t_star)


class TopChunkEvidence(Protocol):
    """What the heuristic rule reads of a result: the full query's score of its top chunk
    and that chunk's coverage of the full query's tokens."""

    def top_chunk(self, prefix_t: int) -> tuple[float, float] | None:
        """``(score, coverage)`` of the top chunk of the call on prefix t; ``None`` when the
        result has no hits (never sufficient)."""
        ...


class EvidenceArrays:
    """Per-prefix evidence computed in advance (the analyzer's ``top1_score`` and coverage
    columns): prefix t at row t − 1."""

    __slots__ = ("coverage", "scores")

    def __init__(self, scores: np.ndarray, coverage: np.ndarray) -> None:
        self.scores = scores
        self.coverage = coverage

    def top_chunk(self, prefix_t: int) -> tuple[float, float]:
        return float(self.scores[prefix_t - 1]), float(self.coverage[prefix_t - 1])


class HeuristicReflector:
    """The anchor's rule: the best finished result by the full query's score of its top
    chunk (first finished on ties); sufficient iff that score ``≥ score_threshold`` and
    the chunk's coverage ``≥ min_coverage``. Where the score and coverage come from is
    ``evidence``'s business: arrays in simulation, a re-scored real result live."""

    check_us = 0

    def __init__(self, evidence: TopChunkEvidence, score_threshold: float, min_coverage: float) -> None:
        self.evidence = evidence
        self.score_threshold = score_threshold
        self.min_coverage = min_coverage

    def _score(self, prefix_t: int) -> float:
        scored = self.evidence.top_chunk(prefix_t)
        return scored[0] if scored is not None else -math.inf

    def pick(self, finished: list[tuple[int, int]]) -> list[tuple[int, int]]:
        # max() keeps the first of equal scores, i.e. the first finished.
        if not finished:
            return []
        return [max(finished, key=lambda ct: self._score(ct[1]))]

    def judge(self, prefix_t: int) -> Verdict:
        scored = self.evidence.top_chunk(prefix_t)
        if scored is None:
            return Verdict(False)
        score, coverage = scored
        return Verdict(score >= self.score_threshold and coverage >= self.min_coverage, score, coverage)


class TopkMatchReflector:
    """Stream RAG's: the result's top-k equals the full query's top-k."""

    def __init__(self, q: SimQuestion, check_us: int) -> None:
        if q.topk is None:
            raise ConfigError(f"reflector.kind: 'topk_match' needs per-prefix evidence, question {q.interaction_id!r} has none")
        self._sets = [frozenset(int(c) for c in row) for row in q.topk]
        self._final = self._sets[-1]
        self.check_us = check_us

    def pick(self, finished: list[tuple[int, int]]) -> list[tuple[int, int]]:
        return sorted(finished, key=lambda ct: ct[0])  # earliest call first

    def judge(self, prefix_t: int) -> Verdict:
        return Verdict(self._sets[prefix_t - 1] == self._final)


class GoldReflector:
    """Oracle: the result's top-k holds a gold chunk."""

    check_us = 0

    def __init__(self, q: SimQuestion) -> None:
        if q.gold_hit is None:
            raise ConfigError(f"reflector.kind: 'gold' needs per-prefix evidence, question {q.interaction_id!r} has none")
        self._hit = q.gold_hit

    def pick(self, finished: list[tuple[int, int]]) -> list[tuple[int, int]]:
        return finished

    def judge(self, prefix_t: int) -> Verdict:
        return Verdict(bool(self._hit[prefix_t - 1]))


class _Config(SettingsModel):
    if TYPE_CHECKING:  # each kind declares it after the shared rules (field order is dump order)
        kind: str
    needs: ClassVar[frozenset[Need]] = frozenset()
    """What the policy reads of a question besides its results' prefixes: ``rankings``
    (each prefix's evidence), so it cannot judge on a bare stabilization table."""
    rejudge: Rejudge = "best_of_completed"
    """While waiting after end of input, judge the policy's pick over all completed
    results after each completion (the anchor's code), or the newest result alone."""
    fallback: Fallback = "refire"
    """When nothing is sufficient: always fire the full query again (the anchor's code),
    or reuse a finished call on the full query."""

    def build(self, q: SimQuestion) -> Reflector:
        """The reflector of question ``q``; ConfigError when ``q`` lacks what :attr:`needs`
        declares."""
        if "rankings" in self.needs and q.trace_driven:
            raise ConfigError(
                f"reflector.kind: {self.kind!r} needs per-prefix evidence, but question {q.interaction_id!r} "
                "comes from a table without it; simulate from DATA, give the table's prefixes.parquet, "
                f"or use {' or '.join(kinds_without(ReflectorConfig, 'rankings'))}"
            )
        return self._build(q)

    def _build(self, q: SimQuestion) -> Reflector:  # pragma: no cover - overridden
        raise NotImplementedError


class HeuristicReflectorConfig(_Config):
    """Top chunk's full-query BM25 score ≥ 2.0 (cosine ≥ 0.4) and ≥ 40% of its distinct tokens in it."""

    kind: Literal["heuristic"] = "heuristic"
    score_threshold: float = Field(default=ANCHOR_SCORE_THRESHOLD, allow_inf_nan=False)
    """Minimum BM25 score of the full query on the top chunk (questions ranked by BM25);
    with ``threshold = "calibrated"``, the reference every retriever's threshold is set against."""
    cosine_threshold: float = Field(default=ANCHOR_COSINE_THRESHOLD, ge=-1, le=1, allow_inf_nan=False)
    """Minimum cosine of the full query with the top chunk (questions ranked by dense
    retrieval; not read with ``threshold = "calibrated"``)."""
    threshold: ThresholdRule = "fixed"
    """How the score threshold is set: ``fixed`` (the anchor's, the paper preset):
    ``score_threshold`` on BM25 scores, ``cosine_threshold`` on cosines; ``calibrated``:
    the retriever's own threshold, its ``c``-th highest final-query top-1 score over the
    analyzed questions, ``c`` being how many of them BM25 clears ``score_threshold`` on
    (:mod:`streamrag.base.threshold`; needs the analysis, so ``simulate DATA``)."""
    min_coverage: float = Field(default=0.4, ge=0, le=1)
    """Minimum share (0–1) of the full query's tokens (as ``coverage`` counts them) found in
    the top chunk."""
    coverage: Coverage = "distinct"
    """Coverage counts the full query's distinct tokens (the anchor's code) or occurrences."""

    def _build(self, q: SimQuestion) -> Reflector:
        if q.trace_driven:
            return PrefixReflector(q.t_star)
        cov = q.coverage_distinct if self.coverage == "distinct" else q.coverage_occurrences
        if q.top_score is None or cov is None:
            raise ConfigError(f"reflector.kind: 'heuristic' needs per-prefix evidence, question {q.interaction_id!r} has none")
        return self.on(EvidenceArrays(q.top_score, cov), q.scale, q.threshold_sample)

    def calibration(self, sample: ScoreSample | None) -> Calibration | None:
        """The calibrated threshold set from ``sample`` (None with ``threshold = "fixed"``);
        ConfigError when calibrated and there is no sample to set it from."""
        if self.threshold == "fixed":
            return None
        found = None if sample is None else calibrate(sample, self.score_threshold)
        if found is None:
            raise ConfigError(
                "reflector.threshold: 'calibrated' is set from an analysis' final-query scores, and this run has none "
                "(a table, generated questions or a live run): simulate the data file, or give the value analyze "
                "records (summary.json retrievers) as reflector.score_threshold or cosine_threshold"
            )
        return found

    def on(
        self, evidence: TopChunkEvidence, scale: Literal["bm25", "cosine"] = "bm25", sample: ScoreSample | None = None
    ) -> HeuristicReflector:
        """This rule judging ``evidence`` (scores on ``scale``: BM25 or cosine); ``sample``:
        the run's final-query scores, what a calibrated threshold is set from."""
        calibrated = self.calibration(sample)
        if calibrated is not None:
            threshold = calibrated.threshold
        else:
            threshold = self.cosine_threshold if scale == "cosine" else self.score_threshold
        return HeuristicReflector(evidence, threshold, self.min_coverage)


class TopkMatchReflectorConfig(_Config):
    """The call's top-k equals the full query's (needs per-prefix evidence)."""

    kind: Literal["topk_match"] = "topk_match"
    needs: ClassVar[frozenset[Need]] = frozenset({"rankings"})
    check_ms: float = Field(default=0.0, ge=0, le=MAX_MS, allow_inf_nan=False)
    """Time (ms) spent once at end of turn retrieving the full query, before any result is
    compared with its top-k."""

    def _build(self, q: SimQuestion) -> Reflector:
        return TopkMatchReflector(q, round(self.check_ms * 1000))


class GoldReflectorConfig(_Config):
    """The call's top-k holds a gold chunk."""

    kind: Literal["gold"] = "gold"

    def _build(self, q: SimQuestion) -> Reflector:
        if q.trace_driven:
            return PrefixReflector(q.t_star)
        return GoldReflector(q)


ReflectorConfig = Annotated[
    HeuristicReflectorConfig | TopkMatchReflectorConfig | GoldReflectorConfig,
    Field(discriminator="kind"),
]
"""A reflector policy, chosen by ``kind``."""


def reflector_model(config: BaseModel, *, evidence_source: str, sample: ScoreSample | None = None) -> str:
    """What judged the results, for outputs: ``heuristic on per-prefix evidence`` (or on
    synthetic evidence, …), with ``threshold = "calibrated"`` followed by the threshold and
    what set it (``sample``: the run's final-query scores), or ``oracle reflector (t ≥ t*):
    no per-prefix evidence``."""
    kind = getattr(config, "kind", "?")
    if not evidence_source:
        return "oracle reflector (t ≥ t*): no per-prefix evidence"
    if isinstance(config, HeuristicReflectorConfig) and config.threshold == "calibrated":
        calibrated = config.calibration(sample)
        if calibrated is not None:
            return f"{kind} on {evidence_source}, {calibrated.describe()}"
    return f"{kind} on {evidence_source}"
