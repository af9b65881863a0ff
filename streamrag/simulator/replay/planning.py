"""A question's plan: its word arrivals, end of turn and stage latencies, drawn in advance.

A plan is drawn from the question's own random streams (:mod:`streamrag.engine.rng`,
keyed by seed, question and stage) and from exactly the settings in :class:`PlanSettings`:
:func:`plan_settings` is the one place that reads them off a scenario, and the draw
(:func:`_draw`) sees nothing else of it. So a plan is a pure function of
``(PlanSettings, stream id, question id, n_words, input_us)``, and :class:`PlanCache`
can keep it under exactly that key: the points of a sweep or frontier that differ only in
what a plan does not read (trigger, reflector, caps, selection, …) replay the plans drawn
once, instead of redrawing identical ones for each point. A setting the draw starts to
read has to enter :class:`PlanSettings` first, and then it is in the key
(``tests/unit/simulator/test_plan_cache.py`` changes each field and checks the key does).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from pydantic import BaseModel

from streamrag.base.errors import ConfigError
from streamrag.data.human.asr import HypothesesFile
from streamrag.data.human.hypotheses_file import recorded_speech_us
from streamrag.engine.cadence import CadenceModel, TimingsCadence
from streamrag.engine.endpoint import EndOfTurn, EndpointConfig, EndpointTurn
from streamrag.engine.latency import LatencyStages
from streamrag.engine.rng import stream
from streamrag.pipeline.plan import QuestionPlan
from streamrag.pipeline.question import SimQuestion
from streamrag.pipeline.ranking_cost import Ranking

if TYPE_CHECKING:
    from streamrag.simulator.scenario import ResolvedScenario

Planner = Callable[[SimQuestion], QuestionPlan]
"""A question's plan under one scenario (:meth:`PlanCache.planner`, :func:`planner`)."""


class PlanSettings(NamedTuple):
    """Everything of a scenario a plan is drawn from, and nothing else."""

    seed: int
    cadence: CadenceModel
    """``[input]``: word times, the fixed end of turn, the nominal word interval."""
    stages: LatencyStages
    """G, L, F (and, with ``ranking = "tool"``, each word's search: an L draw)."""
    ranking: Ranking
    local_rank_us: int
    endpoint: EndpointConfig
    speech: HypothesesFile | None
    """Recorded hypotheses, whose audio's speech segments a (non-``fixed``) endpointer reads."""


def plan_settings(rs: ResolvedScenario) -> PlanSettings:
    """What a plan reads of ``rs`` (the module docstring)."""
    sc = rs.scenario
    asr = sc.data.asr
    return PlanSettings(
        seed=sc.seed,
        cadence=sc.input,
        stages=rs.stages,
        ranking=sc.pipeline.ranking,
        local_rank_us=sc.pipeline.local_rank_us,
        endpoint=sc.endpoint,
        speech=asr if isinstance(asr, HypothesesFile) else None,
    )


def settings_key(settings: PlanSettings) -> str:
    """``settings`` as canonical JSON, every field in: two settings draw the same plans
    iff their keys are equal."""
    fields = {
        name: value.model_dump(mode="json") if isinstance(value, BaseModel) else value
        for name, value in settings._asdict().items()
    }
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), allow_nan=False)


class _Draws(NamedTuple):
    """A plan less its question, what a cache keeps: :class:`QuestionPlan`'s fields after
    ``question``, in its order (a test checks)."""

    word_us: tuple[int, ...]
    end_of_turn_us: int
    g_us: tuple[int, ...]
    l_us: tuple[int, ...]
    f_us: int
    rank_us: tuple[int, ...]
    endpoint: EndpointTurn | None


def _plan(q: SimQuestion, draws: _Draws) -> QuestionPlan:
    return QuestionPlan(q, *draws)


QuestionKey = tuple[str, str, int, tuple[int, ...] | None]
"""What a plan reads of its question, in :func:`_draw`'s order: the streams' id, the
question's id, ``n_words`` and ``input_us``."""


def question_key(q: SimQuestion, stream_id: str | None = None) -> QuestionKey:
    """:data:`QuestionKey` of ``q`` drawn on the streams of ``stream_id`` (default its id)."""
    return (q.interaction_id if stream_id is None else stream_id, q.interaction_id, q.n_words, q.input_us)


def plan_question(q: SimQuestion, rs: ResolvedScenario, *, stream_id: str | None = None) -> QuestionPlan:
    """Draw a question's word arrivals and per-prefix latencies (µs), from the random
    streams of ``stream_id`` (default: the question's id; a load run's session id, so
    two sessions asking one question draw independently)."""
    return _plan(q, _draw(plan_settings(rs), *question_key(q, stream_id)))


def _draw(s: PlanSettings, key: str, question_id: str, n: int, input_us: tuple[int, ...] | None) -> _Draws:
    """The draws of question ``question_id`` (``n`` words; ``input_us``: recorded
    hypotheses' own arrival times) on the streams of ``key``."""
    if n < 1:
        raise ConfigError(f"question {question_id!r}: n_words must be ≥ 1, got {n}")
    cadence = s.cadence
    if input_us is not None:  # recorded ASR hypotheses arrive at their own times
        word_us = input_us
    else:
        cadence_rng = stream(s.seed, key, "cadence") if cadence.needs_rng else None
        word_us = tuple(cadence.word_times_list_us(n, cadence_rng, question_id=question_id))

    def draw(stage: str, size: int) -> list[int]:
        model = getattr(s.stages, stage)
        rng = stream(s.seed, key, f"latency.{stage}") if model.needs_rng else None
        return model.sample_list_us(rng, size)

    if s.ranking == "tool":  # a search per word on the tool: its latency, drawn apart from the calls'
        model = s.stages.L
        rank_us = tuple(model.sample_list_us(stream(s.seed, key, "latency.R") if model.needs_rng else None, n))
    else:
        rank_us = (s.local_rank_us,) * n if s.ranking == "local" else ()
    end = _end_of_turn(s, key, question_id, word_us, recorded=input_us is not None)
    g_us, l_us, f_us = tuple(draw("G", n)), tuple(draw("L", n)), draw("F", 1)[0]
    priced = None if s.endpoint.kind == "fixed" else EndpointTurn.priced(end, s.endpoint, g_us, l_us, f_us)
    return _Draws(word_us, end.start_us, g_us, l_us, f_us, rank_us, priced)


def _end_of_turn(s: PlanSettings, key: str, question_id: str, word_us: tuple[int, ...], *, recorded: bool) -> EndOfTurn:
    """The endpointer's decision for one question (:mod:`streamrag.engine.endpoint`), its
    detector's draws on the question's ``endpoint`` stream."""
    endpoint, cadence = s.endpoint, s.cadence
    starts = cadence.word_starts_us(question_id) if isinstance(cadence, TimingsCadence) and not recorded else None
    speech = None
    if endpoint.kind != "fixed" and s.speech is not None:  # spoken: the end of speech from the audio
        speech = recorded_speech_us(s.speech, question_id)
    return endpoint.decide(
        word_us,
        starts,
        word_interval_us=round(1e6 / cadence.delta_wps),
        fixed_us=cadence.end_of_turn_us,
        rng=stream(s.seed, key, "endpoint") if endpoint.needs_rng else None,
        speech_us=speech,
    )


class PlanCache:
    """Plans kept by :class:`PlanSettings` and question, for the points one process runs.

    Reuse is exact (the module docstring), so a run through a cache gives the bytes of a run
    without. It keeps the plans of the ``max_settings`` settings used last (a sweep's points
    that change a plan setting, L or δ, each bring their own): a plan holds a few tuples of
    ints per word, small beside the question (its per-prefix evidence) it is drawn for.
    Files a setting names (a timings file, recorded hypotheses) are keyed by path: a cache
    lives for one sweep, whose point keys already fix their content.
    """

    def __init__(self, max_settings: int = 4) -> None:
        self.max_settings = max_settings
        self._plans: OrderedDict[str, dict[QuestionKey, _Draws]] = OrderedDict()

    def planner(self, rs: ResolvedScenario) -> Planner:
        """``plan_question(q, rs)`` for each question, drawn once per question and settings."""
        settings = plan_settings(rs)
        name = settings_key(settings)
        kept = self._plans.pop(name, {})
        self._plans[name] = kept  # the newest last: the oldest settings go first
        while len(self._plans) > self.max_settings:
            self._plans.popitem(last=False)

        def plan(q: SimQuestion) -> QuestionPlan:
            key = question_key(q)
            draws = kept.get(key)
            if draws is None:
                draws = kept[key] = _draw(settings, *key)
            return _plan(q, draws)

        return plan


def planner(rs: ResolvedScenario, plans: PlanCache | None = None) -> Planner:
    """Each question's plan under ``rs``: through ``plans`` when given, else drawn anew."""
    if plans is not None:
        return plans.planner(rs)
    settings = plan_settings(rs)
    return lambda q: _plan(q, _draw(settings, *question_key(q)))
