"""The live run's twin: the same questions simulated with the durations the live run measured.

``live --replay`` compares a live run with a simulation of the same questions. To
measure the *simulator's* error rather than the spread of the latencies, the twin
replays what each call took live (:func:`run_twin`):

- per question and arm, each call's G (``thread_start`` → ``gen_done``), L
  (``gen_done`` → ``tool_done``) and F (``respond`` → ``answer_ready``) as measured,
  at the prefix (the query length) the call was on: the plan's ``g_us[t-1]``,
  ``l_us[t-1]`` and ``f_us``;
- each arm in a simulation of its own: the simulator's common random numbers give a
  prefix one duration whichever arm calls it, while live the streaming arm's and the
  baseline's call on the full query are two calls that took two durations. The
  streaming run's events (all but the baseline's) and the baseline run's are merged
  by instant (the streaming arm's first at an equal instant) into one trace, from which
  the row is derived as any other;
- a duration the live run did not measure (a call it cancelled or never made, which the
  twin makes only if it decides otherwise) comes from the fallback plan: G and F as the
  scenario draws them, L from the model fitted to the measured calls;
- words at the plan's instants (what the simulator is given) or, for the attribution,
  at the instants they were heard live (``live_words``).

What the twin leaves is what the simulator does not model (:func:`turn_measures`
measures it): **timer lateness** (a word heard after its planned instant; a G or F
delay that overran — absorbed by the replay of measured durations) and **event-loop
overhead** (the handoffs that take no time in virtual time: in the streaming arm from
the end of turn, or the used call's result if later, to F's start, which includes the
reflector re-scoring results with BM25; in the baseline arm from the end of turn to
its call's start plus from its result to F's start).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from streamrag.engine.clock import Clock
from streamrag.engine.loop import run_virtual
from streamrag.engine.trace import Recorder
from streamrag.pipeline.question import SimQuestion
from streamrag.pipeline.streaming import QuestionPlan, simulate_question
from streamrag.simulator.questions import ANALYZER_EVIDENCE
from streamrag.simulator.replay.planning import plan_question
from streamrag.simulator.scenario import ResolvedScenario
from streamrag.simulator.simulate import QuestionOutput, SimulationRun, question_output, reflector_model_of

ARMS = ("streaming", "baseline")


@dataclass(frozen=True, slots=True)
class ArmMeasure:
    """What one arm's calls took live (µs), by the prefix each call was on."""

    g_us: dict[int, int]
    l_us: dict[int, int]
    f_us: int | None
    handoff_us: int | None
    """The arm's handoffs that take no virtual time (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class TurnMeasure:
    """One live turn as measured: word arrivals and each arm's durations (µs from its origin)."""

    qid: str
    word_us: tuple[int, ...]
    arms: dict[str, ArmMeasure]
    reflector_us: int | None = None
    """The reflector's look: from its start (``reflect``), or the last result it waited
    for, to its ``decision`` — instantaneous in virtual time."""


def turn_measures(events: Iterable[dict[str, Any]]) -> dict[str, TurnMeasure]:
    """Each turn's measured word arrivals, call durations and handoffs, from its trace
    events (a call's first completed G and L count for its prefix)."""
    by_qid: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        by_qid.setdefault(e["qid"], []).append(e)
    return {qid: _measure(qid, evs) for qid, evs in by_qid.items()}


def _measure(qid: str, events: list[dict[str, Any]]) -> TurnMeasure:
    words: list[int] = []
    input_end = decision = reflect = None
    prefix: dict[tuple[str, int], int] = {}
    fired: dict[tuple[str, int], int] = {}
    by_reflector: set[int] = set()
    started: dict[tuple[str, int], int] = {}
    gen_done: dict[tuple[str, int], int] = {}
    tool_done: dict[tuple[str, int], int] = {}
    g: dict[str, dict[int, int]] = {arm: {} for arm in ARMS}
    l: dict[str, dict[int, int]] = {arm: {} for arm in ARMS}  # noqa: E741 - the stage's name
    respond: dict[str, tuple[int, int]] = {}
    answer: dict[str, int] = {}
    for e in events:
        kind, t = e["kind"], e["t_us"]
        key = (e.get("arm", "streaming"), e.get("call", 0))
        if kind == "word":
            words.append(t)
        elif kind == "input_end":
            input_end = t
        elif kind in ("fire", "reaim"):
            prefix[key] = e["prefix_t"]
            fired.setdefault(key, t)
            if e.get("by") == "reflector":
                by_reflector.add(key[1])
        elif kind == "thread_start":
            started[key] = t
        elif kind == "gen_done" and key in started:
            gen_done[key] = t
            g[key[0]].setdefault(prefix[key], t - started[key])
        elif kind == "tool_done" and key in gen_done:
            tool_done[key] = t
            l[key[0]].setdefault(prefix[key], t - gen_done[key])
        elif kind == "reflect" and reflect is None:
            reflect = t
        elif kind == "decision" and decision is None:
            decision = t
        elif kind == "respond":
            respond[key[0]] = (t, key[1])
        elif kind == "answer_ready":
            answer[key[0]] = t
    arms = {}
    for arm in ARMS:
        f_us = handoff = None
        if arm in respond and arm in answer and input_end is not None:
            at, call = respond[arm]
            f_us = answer[arm] - at
            if arm == "streaming" and decision is not None:
                handoff = _streaming_handoff(input_end, decision, at, call, call in by_reflector, fired, started, tool_done)
            elif arm == "baseline" and (arm, call) in started and (arm, call) in tool_done:
                # end of turn → the call starts, and its result → F starts
                handoff = started[(arm, call)] - input_end + at - tool_done[(arm, call)]
        arms[arm] = ArmMeasure(g[arm], l[arm], f_us, handoff)
    reflector = None
    if reflect is not None and decision is not None:  # its look, after the last result it waited for
        reflector = decision - max(reflect, _last_result(tool_done, decision, reflect))
    return TurnMeasure(qid, tuple(words), arms, reflector)


def _last_result(tool_done: dict[tuple[str, int], int], before: int, default: int) -> int:
    """The last streaming result in by ``before`` (``default`` if none)."""
    return max((t for (arm, _), t in tool_done.items() if arm == "streaming" and t <= before), default=default)


def _streaming_handoff(
    input_end: int,
    decision: int,
    respond: int,
    call: int,
    fallback: bool,
    fired: dict[tuple[str, int], int],
    started: dict[tuple[str, int], int],
    tool_done: dict[tuple[str, int], int],
) -> int:
    """The streaming arm's gaps on the way to F that take no virtual time:

    - a fallback: the reflector's look (after the end of turn, or after the last result
      it waited for), its call's start after the decision, F's start after its result;
    - a result in hand at the end of turn: everything from the end of turn to F's start;
    - a result still in flight at the end of turn: the call's start after its fire (a
      fire on the last word waits for the reflector's first look), F's start after it."""
    used = ("streaming", call)
    done = tool_done.get(used)
    if fallback and used in started and done is not None:
        waited = _last_result(tool_done, decision, input_end)
        return decision - max(input_end, waited) + started[used] - decision + respond - done
    if done is None or done <= input_end or used not in started:
        return respond - input_end
    return started[used] - fired.get(used, started[used]) + respond - done


def twin_plan(plan: QuestionPlan, measure: TurnMeasure, arm: str, *, live_words: bool = False) -> QuestionPlan:
    """``plan`` with ``arm``'s measured durations in place of its draws (and the words at
    their live instants when ``live_words``)."""
    m = measure.arms[arm]
    g, l_ = list(plan.g_us), list(plan.l_us)
    for t, us in m.g_us.items():
        g[t - 1] = us
    for t, us in m.l_us.items():
        l_[t - 1] = us
    words = measure.word_us if live_words and len(measure.word_us) == len(plan.word_us) else plan.word_us
    f_us = plan.f_us if m.f_us is None else m.f_us
    return replace(plan, g_us=tuple(g), l_us=tuple(l_), f_us=f_us, word_us=words)


def run_twin(
    questions: Sequence[SimQuestion], rs: ResolvedScenario, measures: dict[str, TurnMeasure], *, live_words: bool = False
) -> SimulationRun:
    """Simulate ``questions`` (in virtual time) replaying the measured durations; a
    question without a measure is simulated from its plan as drawn."""
    sc = rs.scenario

    async def one(clock: Clock, q: SimQuestion) -> QuestionOutput:
        plan = plan_question(q, rs)
        measure = measures.get(q.interaction_id)
        events: list[dict[str, Any]] = []
        for arm in ARMS:
            arm_plan = plan if measure is None else twin_plan(plan, measure, arm, live_words=live_words)
            rec = Recorder(q.interaction_id, clock, clock.now_us())
            await simulate_question(clock, arm_plan, sc.trigger.build(q), sc.reflector.build(q), rs.arm_rules, rec)
            events += [e for e in rec.events if (e.get("arm") == "baseline") == (arm == "baseline")]
        events.sort(key=lambda e: e["t_us"])  # stable: the streaming run's events first at an instant
        return question_output(q, events, rs)

    async def main(clock: Clock) -> list[QuestionOutput]:
        return [await one(clock, q) for q in questions]

    outputs = run_virtual(main)
    return SimulationRun(outputs, [o.row for o in outputs], reflector_model_of(questions, rs, ANALYZER_EVIDENCE))


def timer_lateness_us(plan: QuestionPlan, measure: TurnMeasure) -> dict[str, list[int]]:
    """How late the wall clock's timers were: each word (live − planned arrival), each
    measured G and F delay (measured − planned), in µs."""
    words = [live - planned for live, planned in zip(measure.word_us, plan.word_us, strict=False)]
    g = [us - plan.g_us[t - 1] for m in measure.arms.values() for t, us in m.g_us.items()]
    f = [m.f_us - plan.f_us for m in measure.arms.values() if m.f_us is not None]
    return {"word": words, "G": g, "F": f}
