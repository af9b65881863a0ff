"""The live run's twin replays each call's measured G, L and F: on the virtual clock, where
the live path has no timer lateness and no event-loop cost, it reproduces the live rows
exactly, whatever the tool's latency spread; drawing L from a fit does not."""

from __future__ import annotations

import numpy as np
from _livehelpers import replay_setup

from streamrag.engine.clock import Clock
from streamrag.engine.latency import GammaLatency
from streamrag.engine.loop import run_virtual
from streamrag.live.backends import BM25Tool, load_corpus
from streamrag.live.fidelity import fitted, measured_L_ms
from streamrag.live.live_run import result_row
from streamrag.live.session import run_turn
from streamrag.live.twin import run_twin, timer_lateness_us, turn_measures, twin_plan
from streamrag.pipeline.tools import DelayedTool
from streamrag.simulator.replay.planning import plan_question
from streamrag.simulator.simulate import simulate


def _live_on_the_virtual_clock(n: int):
    rs, questions, turns = replay_setup(n, ["input.delta_wps=10", "latency.G_ms=20", "latency.F_ms=40"])
    chunks = load_corpus("demo")

    async def main_(clock: Clock):
        tool = BM25Tool(chunks, clock)
        # a tool whose calls spread widely: each call, in each arm, takes its own draw
        delayed = DelayedTool(tool, GammaLatency(shape=2.0, scale_ms=100.0), clock, np.random.default_rng(5))
        return [(turn, await run_turn(clock, turn, delayed, tool, rs, lambda e: None)) for turn in turns]

    outcomes = run_virtual(main_)
    events = [e for _, outcome in outcomes for e in outcome.events]
    rows = {turn.qid: result_row(outcome, turn, rs) for turn, outcome in outcomes}
    return rs, questions, events, rows


def test_the_twin_reproduces_a_virtual_clock_live_run_exactly_and_a_fitted_l_does_not():
    rs, questions, events, live = _live_on_the_virtual_clock(8)
    measures = turn_measures(events)
    twin = {r.interaction_id: r for r in run_twin(questions, rs, measures).rows}
    for qid, row in live.items():
        assert (twin[qid].saved_ms, twin[qid].streaming_ms, twin[qid].baseline_ms) == (
            row.saved_ms,
            row.streaming_ms,
            row.baseline_ms,
        )
        assert (twin[qid].used_prefix_t, twin[qid].calls_fired, twin[qid].misfire) == (
            row.used_prefix_t,
            row.calls_fired,
            row.misfire,
        )
        m = measures[qid]
        # no virtual time between a stage's end and the next one's start, no late timer
        assert (m.arms["streaming"].handoff_us, m.arms["baseline"].handoff_us, m.reflector_us) == (0, 0, 0)
        q = next(q for q in questions if q.interaction_id == qid)
        late = timer_lateness_us(plan_question(q, rs), m)
        assert set(late["word"]) == {0} and set(late["G"]) == {0} and set(late["F"]) == {0}
    # the full-query call of each arm took its own draw: the plan's common number cannot hold both
    assert any(
        m.arms["streaming"].l_us.get(t) not in (None, us) for m in measures.values() for t, us in m.arms["baseline"].l_us.items()
    )
    rs_fit, _ = fitted(rs, measured_L_ms(events))
    drawn = {r.interaction_id: r for r in simulate(questions, rs_fit).rows}
    assert any(drawn[qid].saved_ms != row.saved_ms for qid, row in live.items())


def test_a_twin_plan_takes_the_measured_durations_and_keeps_the_draws_it_has_no_measure_for():
    rs, questions, events, _ = _live_on_the_virtual_clock(2)
    q = questions[0]
    plan = plan_question(q, rs)
    m = turn_measures(events)[q.interaction_id]
    arm = m.arms["baseline"]
    p = twin_plan(plan, m, "baseline")
    n = q.n_words
    assert p.l_us[n - 1] == arm.l_us[n] and p.g_us[n - 1] == arm.g_us[n] and p.f_us == arm.f_us
    assert p.l_us[: n - 1] == plan.l_us[: n - 1] and p.word_us == plan.word_us  # unmeasured prefixes: as drawn
    assert twin_plan(plan, m, "baseline", live_words=True).word_us == m.word_us
