"""An analytic predictor of saved time: per question and per population, without replaying.

A question's saving is decided by four things the model computes in closed form:

1. **When calls fire.** The streaming arm's own machine (:mod:`~streamrag.pipeline.arm`:
   the scenario's trigger, the thread cap, deferral, slot release, calls held at the last
   word) on the cadence's word times and the *nominal* timeline (every call taking
   E[G] + E[L]); call j fires on prefix t_j at s_j and, T being the end of turn, has
   ``d_j = T − s_j`` of input left to overlap.
2. **Which calls can end the wait** (the hit rate, from the per-prefix evidence): the
   scenario's own reflector judges each fired prefix; a sufficient call j *decides* at
   ``max(T, c_j)`` (c_j its nominal completion) unless the reflector's pick over the
   results completed by then is insufficient (the heuristic judges only the best-scoring
   result, so an earlier insufficient result with a higher score blocks j). O is the set
   of calls that decide; a question with O empty mis-fires.
3. **The overlapped G + L.** With X = G + L per call (independent draws, the latency
   profile's distribution as a discrete one, :class:`~streamrag.simulator.predict.atoms.Atoms`), the streaming arm waits
   ``W = max(check, min_{j∈O} (X_j − d_j)⁺)`` after T, the baseline ``X_n``, and both then
   spend F: ``E[saved] = E[X] − E[W]``, with ``E[W] = check + ∫_check^∞ Π_{j∈O} P(X > d_j + w) dw``.
   With constant latencies this is ``min(G + L, max_j d_j)`` — H_G at the first deciding call.
4. **The mis-fire cost.** O empty: the reflector waits for every call in flight, then
   fires the full query again (the paper's ``refire``): ``E[saved] = −E[max(check, (max_j X_j − d_j)⁺)]``.

The integrals are exact sums over the steps of the discrete distributions, so with
constant latencies (the ``paper-rq3`` profile) the model is exact except where the thread
cap or same-instant ordering bites. What it approximates: blocking and the cap are decided
on the nominal order of completions (random latencies can reorder them); ``reuse`` and
the policies under load are not modelled; triggers that kill calls in flight (``replace``)
are refused. The error band (:func:`predict_population`) states what those
approximations and the simulator's own sampling noise can move.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from streamrag.base.errors import ConfigError
from streamrag.pipeline.plan import QuestionPlan
from streamrag.pipeline.question import SimQuestion
from streamrag.pipeline.reflectors import Reflector
from streamrag.pipeline.triggers import Trigger
from streamrag.simulator.predict.atoms import N_ATOMS, TIE_MS, Atoms, add, stage_atoms, tail_moments
from streamrag.simulator.replay.closed import replay_arm
from streamrag.simulator.scenario import ResolvedScenario

Z_95 = 1.959964


@dataclass(frozen=True, slots=True)
class Timeline:
    """One question's calls on the nominal timeline (ms from its arrival)."""

    fired_t: tuple[int, ...]
    offsets_ms: np.ndarray
    """``d_j = T − s_j`` of every fired call (0 for a call held at the last word)."""
    deciding: np.ndarray
    """bool per fired call: in O (its completion can end the reflector's wait)."""
    sufficient: np.ndarray
    """bool per fired call: the reflector judges its result sufficient."""
    held: np.ndarray
    """bool per fired call: fired on the last word, started only if the reflector waits."""
    turn_end_ms: float
    check_ms: float
    n_words: int
    key: tuple[object, ...] = field(init=False, repr=False, compare=False)
    """Everything above as one hashable value: two timelines with equal keys predict alike
    (the load model computes each distinct one once)."""

    def __post_init__(self) -> None:
        arrays = (self.offsets_ms, self.deciding, self.sufficient, self.held)
        parts = (self.fired_t, *(np.asarray(a).tobytes() for a in arrays), self.turn_end_ms, self.check_ms, self.n_words)
        object.__setattr__(self, "key", parts)


MUTATING = (
    "tool.effects: predict's model runs every call as soon as it is fired; a mutating tool's calls wait for the "
    "turn (tool.mutating_policy): simulate it instead"
)
ENDPOINTER = (
    "endpoint.kind: predict's model ends every turn input.end_of_turn_ms after the last word; an endpointer and "
    "its false cut-offs are simulated in replays only (streamrag simulate)"
)


def supported(rs: ResolvedScenario) -> None:
    """Refuse (ConfigError) inputs the model does not cover (triggers are asked per
    question, :func:`timeline`)."""
    if rs.scenario.input.needs_rng:
        raise ConfigError("input: predict needs deterministic word times (a uniform cadence without pauses, or timings)")
    if rs.scenario.tool.mutating is not None:
        raise ConfigError(MUTATING)
    if rs.scenario.endpoint.kind != "fixed":
        raise ConfigError(ENDPOINTER)


def word_times_us(q: SimQuestion, rs: ResolvedScenario) -> list[int]:
    if q.input_us is not None:
        return list(q.input_us)
    return rs.scenario.input.word_times_list_us(q.n_words, None, question_id=q.interaction_id)


class _Noting:
    """A trigger that notes the words at which it offered a fire (for
    :class:`~streamrag.simulator.predict.timelines.TimelineCache`)."""

    __slots__ = ("inner", "kills_in_flight", "offered", "tick_us")

    def __init__(self, inner: Trigger, offered: list[int]) -> None:
        self.inner, self.offered = inner, offered
        self.tick_us, self.kills_in_flight = inner.tick_us, inner.kills_in_flight

    def on_word(self, t: int) -> bool:
        if self.inner.on_word(t):
            self.offered.append(t)
            return True
        return False

    def on_tick(self, t: int) -> bool:
        return self.inner.on_tick(t)

    def fired(self, t: int) -> None:
        self.inner.fired(t)


def unpredictable(rs: ResolvedScenario, trigger: Trigger) -> str:
    """Why predict does not model ``rs`` with its built ``trigger`` ("" when it does)."""
    if trigger.kills_in_flight:
        return f"trigger.kind: {rs.scenario.trigger.kind!r} kills calls in flight; predict models the other triggers"
    if rs.scenario.pipeline.ranking == "tool":
        return (
            "pipeline.ranking: 'tool' does not apply to predict, whose queue model has no searches per word on the "
            "tool; simulate the scenario (a load run gives the saving at a load)"
        )
    if rs.scenario.tool.mutating is not None:
        return MUTATING
    if rs.scenario.endpoint.kind != "fixed":
        return ENDPOINTER
    return ""


def timeline(
    q: SimQuestion,
    rs: ResolvedScenario,
    x_nominal_ms: float,
    reflector: Reflector | None = None,
    offered: list[int] | None = None,
) -> Timeline:
    """Fire the scenario's trigger on the words through the streaming arm's own machine on
    the nominal timeline (every call taking ``x_nominal_ms``,
    :func:`~streamrag.simulator.replay.closed.replay_arm`), judge each call with its
    reflector, and find which calls decide (module docstring). The words at which the
    trigger offered a fire are appended to ``offered`` when given."""
    sc, rules = rs.scenario, rs.arm_rules
    trigger: Trigger = sc.trigger.build(q)
    if offered is not None:
        trigger = _Noting(trigger, offered)
    why = unpredictable(rs, trigger)
    if why:
        raise ConfigError(why)
    reflector = reflector or sc.reflector.build(q)
    word_us = word_times_us(q, rs)
    n = q.n_words
    rank_us = (sc.pipeline.local_rank_us,) * n if rules.ranking == "local" else ()  # a constant: the words' order kept
    nominal = QuestionPlan(
        q, tuple(word_us), sc.input.end_of_turn_us, (round(x_nominal_ms * 1000),) * n, (0,) * n, 0, rank_us=rank_us
    )
    machine, _ = replay_arm(nominal, trigger, reflector, rules)
    calls = [c for c in machine.calls if c.by == "trigger"]
    ts = tuple(c.prefix_t for c in calls)
    turn_end = nominal.turn_end_us / 1000
    held = np.array([machine.holds(c) for c in calls], dtype=bool)
    # A call starts as it is fired, unless held (its instant is then unused: d_j = 0).
    at = np.array([c.started_us / 1000 for c in calls])
    offsets = np.where(held, 0.0, turn_end - at)
    complete = np.where(held, turn_end, at) + x_nominal_ms
    ok = np.array([reflector.judge(t).sufficient for t in ts], dtype=bool)
    check = reflector.check_us / 1000
    deciding = np.zeros(len(ts), dtype=bool)
    verdict = dict(zip(ts, ok, strict=True))
    for j in map(int, np.flatnonzero(ok)):
        when = max(turn_end + check, complete[j])
        done = [i for i in range(len(ts)) if complete[i] <= when + TIE_MS]
        if when > turn_end + check + TIE_MS:  # a result that comes in while the reflector waits
            done = rules.judged_after(done, j)
        pairs = [(i + 1, ts[i]) for i in sorted(done, key=lambda i: (complete[i], i))]
        deciding[j] = any(verdict[t] for _, t in reflector.pick(pairs))
    return Timeline(ts, offsets, deciding, ok, held, turn_end, check, n)


@dataclass(frozen=True, slots=True)
class QuestionPrediction:
    """The model's saving of one question (ms) and what it is made of."""

    interaction_id: str
    saved_ms: float
    var_ms2: float
    hit: bool
    n_fired: int
    """The trigger's calls on the nominal timeline (a held call included, started or not)."""
    calls_fired: float
    """Expected tool calls started, as ``calls_fired`` in ``results.csv`` counts them
    (:func:`expected_calls`): the trigger's started calls and the refire of a mis-fire."""
    fragile: bool
    """Its set O could change if random latencies reorder completions (see the band)."""
    alt_saved_ms: float
    """The saving if every sufficient call decided (blocking ignored)."""


def expected_saving(line: Timeline, x: Atoms) -> tuple[float, float, bool]:
    """``(E[saved], Var[saved] bound, hit)`` of a timeline under call latency X = G + L."""
    check = line.check_ms
    if line.deciding.any():
        first, second = tail_moments(x, line.offsets_ms[line.deciding], check, "min")
        mean_w = check + first
        var_w = max(0.0, check**2 + second - mean_w**2)
        return x.mean_ms - mean_w, x.var_ms2 + var_w, True
    # The reflector waits for every call in flight (the held ones start), then refires.
    first, second = tail_moments(x, line.offsets_ms, check, "max")
    mean_r = check + first
    return -mean_r, max(0.0, check**2 + second - mean_r**2), False


def expected_calls(line: Timeline, x: Atoms) -> float:
    """E[calls started] of a question: every call not held; a held call (fired on the last
    word) only if the reflector's first look finds no deciding result in, i.e. with
    probability ``Π_{j∈O, not held} P(X > d_j + check)`` (1 for a mis-fire); and the refire
    of a mis-fire. With constant latencies this is the count the simulator measures."""
    held = line.held
    if not line.deciding.any():
        return float(len(line.fired_t)) + 1.0
    early = line.deciding & ~held
    p_wait = float(np.prod(x.greater(line.offsets_ms[early] + line.check_ms))) if early.any() else 1.0
    return float((~held).sum()) + float(held.sum()) * p_wait


def spread_ms(x: Atoms) -> float:
    """How far random latencies can move one completion against another: P90 − P10 of X."""
    return x.quantile_ms(0.9) - x.quantile_ms(0.1)


def predict_question(q: SimQuestion, rs: ResolvedScenario, x: Atoms, line: Timeline | None = None) -> QuestionPrediction:
    """One question's prediction, on its nominal ``line`` (replayed when not given)."""
    line = timeline(q, rs, x.mean_ms) if line is None else line
    saved, var, hit = expected_saving(line, x)
    alt = line
    blocked = line.sufficient & ~line.deciding
    fragile = False
    if blocked.any():
        alt = Timeline(
            line.fired_t,
            line.offsets_ms,
            line.sufficient,
            line.sufficient,
            line.held,
            line.turn_end_ms,
            line.check_ms,
            line.n_words,
        )
        # Blocking is decided by the order of completions, which spread can reorder.
        gaps = np.abs(line.offsets_ms[:, None] - line.offsets_ms[None, :])[blocked][:, ~line.sufficient]
        fragile = bool(gaps.size and gaps.min() < spread_ms(x))
    alt_saved = expected_saving(alt, x)[0]
    calls = expected_calls(line, x)
    return QuestionPrediction(q.interaction_id, saved, var, hit, len(line.fired_t), calls, fragile, alt_saved)


def call_latency(rs: ResolvedScenario, k: int = N_ATOMS) -> Atoms:
    """X = G + L of one call, as atoms."""
    return add(stage_atoms(rs.stages.G, k), stage_atoms(rs.stages.L, k), k)


@dataclass(frozen=True, slots=True)
class PopulationPrediction:
    """The population's predicted mean saving and its error band (ms)."""

    n_questions: int
    saved_ms: float
    band_ms: float
    noise_ms: float
    """1.96 × the standard error of a simulated mean about its expectation (random latencies)."""
    structure_ms: float
    """Mean |blocking − no blocking| over the questions whose blocking random latencies can flip."""
    hit_rate: float
    saved_on_hit_ms: float | None
    misfire_cost_ms: float | None
    calls_fired_mean: float
    """Mean expected tool calls started per question, refires included (``calls_fired.mean``)."""
    questions: tuple[QuestionPrediction, ...]
    lines: tuple[Timeline, ...] = ()
    """Every question's nominal timeline (in order)."""


def predict_population(
    questions: Sequence[SimQuestion],
    rs: ResolvedScenario,
    timelines: Callable[[float], list[Timeline]] | None = None,
) -> PopulationPrediction:
    """Every question's prediction and the population's mean with its band:
    ``band = 1.96·√(Σ Var_q)/N + mean over fragile questions' |saved − alt_saved| / N``.
    ``timelines(x_ms)`` gives every question's timeline when the caller keeps them
    (:class:`~streamrag.simulator.predict.timelines.TimelineCache`)."""
    supported(rs)
    if not questions:
        raise ConfigError("predict: no questions to predict (check select.population)")
    x = call_latency(rs)
    lines = timelines(x.mean_ms) if timelines is not None else [timeline(q, rs, x.mean_ms) for q in questions]
    preds = tuple(predict_question(q, rs, x, line) for q, line in zip(questions, lines, strict=True))
    n = len(preds)
    saved = np.array([p.saved_ms for p in preds])
    hits = np.array([p.hit for p in preds])
    noise = Z_95 * float(np.sqrt(sum(p.var_ms2 for p in preds))) / n
    structure = sum(abs(p.saved_ms - p.alt_saved_ms) for p in preds if p.fragile) / n
    return PopulationPrediction(
        n_questions=n,
        saved_ms=float(saved.mean()),
        band_ms=noise + structure,
        noise_ms=noise,
        structure_ms=structure,
        hit_rate=float(hits.mean()),
        saved_on_hit_ms=float(saved[hits].mean()) if hits.any() else None,
        misfire_cost_ms=float(-saved[~hits].mean()) if (~hits).any() else None,
        calls_fired_mean=float(np.mean([p.calls_fired for p in preds])),
        questions=preds,
        lines=tuple(lines),
    )
