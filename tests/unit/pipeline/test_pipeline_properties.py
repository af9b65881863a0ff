"""Properties of the pipeline that must hold on every question."""

from __future__ import annotations

import pytest
from _simhelpers import const_scenario, full_q, replay, table_q
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamrag.analysis import metrics
from streamrag.base.errors import ConfigError
from streamrag.simulator.results import derive_result
from streamrag.simulator.scenario import scenario_from_dict
from streamrag.simulator.simulate import run_chunk

# δ values whose word interval is a whole number of µs, so that every instant is exact
# and the engine's µs arithmetic equals the real-valued formula.
EXACT_DELTAS = [0.5, 0.8, 1.0, 1.25, 2.0, 2.5, 3.125, 4.0, 5.0, 8.0]

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _result(q, rs):
    events = replay(q, rs)
    return derive_result(events, n_words=q.n_words, t_star=q.t_star, L_ms=rs.L_ms, G_ms=rs.G_ms, delta_wps=rs.delta_wps)


@st.composite
def table_questions(draw, max_n=25):
    n = draw(st.integers(1, max_n))
    t_sc = draw(st.integers(1, n))
    t_suf = draw(st.one_of(st.none(), st.integers(1, n)))
    return table_q(f"q{n}-{t_sc}-{t_suf}", n=n, t_sc=t_sc, t_suf=t_suf)


@FAST
@given(
    q=table_questions(),
    delta=st.sampled_from(EXACT_DELTAS),
    G=st.integers(0, 2000),
    L=st.integers(0, 5000),
    F=st.integers(0, 3000),
)
def test_oracle_trigger_gold_reflector_saves_exactly_H_G(q, delta, G, L, F):
    rs = const_scenario(delta=delta, G=G, L=L, F=F, trigger={"kind": "oracle"}, reflector={"kind": "gold"})
    row = _result(q, rs)
    H_G = metrics.H_G(q.n_words, q.t_star, L, delta, G)
    assert round(row.saved_ms * 1000) == round(H_G * 1000)  # equal to the µs
    assert not row.misfire


def test_none_trigger_saves_exactly_zero_on_every_question():
    # stochastic latencies, jittered cadence with pauses and an end-of-turn delay: the
    # baseline and the fallback call share the draws of the full query, so saving is 0.
    rs = scenario_from_dict(
        {
            "seed": 7,
            "input": {"kind": "jittered", "delta_wps": 2.5, "cv": 0.5, "pause_prob": 0.2, "pause_ms": 400, "end_of_turn_ms": 300},
            "trigger": {"kind": "none"},
            "reflector": {"kind": "heuristic"},
            "latency": {"profile": "arora2025"},
        }
    )
    questions = [table_q(f"q{i}", n=1 + i % 17, t_sc=1 + i % (1 + i % 17), t_suf=None if i % 3 else 1) for i in range(60)]
    outputs = run_chunk(questions, rs)
    assert [o.row.saved_ms for o in outputs] == [0.0] * len(questions)
    assert all(o.row.calls_fired == 1 and not o.row.misfire for o in outputs)


@st.composite
def any_scenario(draw):
    trigger = draw(
        st.sampled_from(
            [{"kind": "interval", "words": 1}, {"kind": "interval", "words": 3}, {"kind": "interval", "seconds": 0.7},
             {"kind": "every_word"}, {"kind": "oracle"}, {"kind": "none"}]
        )
    )  # fmt: skip
    reflector = draw(st.sampled_from([{"kind": "heuristic"}, {"kind": "gold"}]))
    profile = draw(st.sampled_from(["arora2025", "paper-rq3"]))
    raw = {
        "seed": draw(st.integers(0, 2**32)),
        "input": {
            "kind": "jittered",
            "delta_wps": draw(st.sampled_from([0.6, 0.867, 2.5, 3.0])),
            "cv": draw(st.sampled_from([0.0, 0.3, 1.0])),
            "end_of_turn_ms": draw(st.sampled_from([0, 250])),
        },
        "trigger": trigger,
        "pipeline": {"max_threads": draw(st.sampled_from([0, 1, 4]))},
        "reflector": reflector,
        "latency": {"profile": profile},
    }
    return scenario_from_dict(raw)


@FAST
@given(q=table_questions(max_n=15), rs=any_scenario())
def test_saved_never_exceeds_baseline_minus_f(q, rs):
    events = replay(q, rs)
    row = derive_result(events, n_words=q.n_words, t_star=q.t_star, L_ms=rs.L_ms, G_ms=rs.G_ms, delta_wps=rs.delta_wps)
    respond = {e["arm"]: e["t_us"] for e in events if e["kind"] == "respond"}
    answer = {e["arm"]: e["t_us"] for e in events if e["kind"] == "answer_ready"}
    f_us = answer["streaming"] - respond["streaming"]
    assert f_us == answer["baseline"] - respond["baseline"]  # one F for both arms
    e_us = next(e["t_us"] for e in events if e["kind"] == "input_end")
    baseline_us, streaming_us = answer["baseline"] - e_us, answer["streaming"] - e_us
    assert baseline_us - streaming_us <= baseline_us - f_us  # saved ≤ baseline − F, in exact µs
    assert streaming_us >= f_us
    assert round(row.saved_ms * 1000) == baseline_us - streaming_us
    # every fired call ends exactly once: done or cancelled
    fired = {e["call"] for e in events if e["kind"] == "fire" and e["arm"] == "streaming"}
    ended = [e["call"] for e in events if e["kind"] in ("tool_done", "cancel") and e["arm"] == "streaming"]
    assert sorted(ended) == sorted(fired)
    # timestamps never go backwards
    times = [e["t_us"] for e in events]
    assert times == sorted(times)
    # each distinct prefix fires at most once by the trigger
    prefixes = [e["prefix_t"] for e in events if e["kind"] == "fire" and e["by"] == "trigger"]
    assert len(prefixes) == len(set(prefixes))


def test_stable_trigger_fires_once_per_stable_run():
    # top-1 per prefix: 4 4 4 2 2 2 2; stable(2) fires when a top-1 has held for 2 more
    # words: at prefix 3 (4,4,4) and prefix 6 (2,2,2).
    topk = [[4, 0, 1], [4, 1, 0], [4, 0, 1], [2, 4, 0], [2, 0, 4], [2, 4, 1], [2, 1, 4]]
    q = full_q("s", topk, gold={2})
    rs = const_scenario(trigger={"kind": "stable", "words": 2}, reflector={"kind": "gold"})
    events = replay(q, rs)
    assert [e["prefix_t"] for e in events if e["kind"] == "fire" and e["by"] == "trigger"] == [3, 6]


def test_gold_reflector_full_mode_uses_gold_membership():
    topk = [[0, 1, 2], [0, 1, 3], [3, 0, 1]]
    q = full_q("g", topk, gold={3})
    rs = const_scenario(trigger={"kind": "every_word"}, reflector={"kind": "gold"}, max_threads=None)
    events = replay(q, rs)
    checks = [(e["prefix_t"], e["sufficient"]) for e in events if e["kind"] == "check"]
    assert checks[0] == (1, False) and (2, True) in checks
    assert next(e for e in events if e["kind"] == "decision")["prefix_t"] == 2


@pytest.mark.parametrize(
    ("section", "spec"),
    [("trigger", {"kind": "replace"}), ("trigger", {"kind": "stable", "words": 2}), ("reflector", {"kind": "topk_match"})],
)
def test_policies_needing_rankings_refuse_trace_driven_input(section, spec):
    kwargs = {section: spec}
    rs = const_scenario(**kwargs)
    from streamrag.simulator.simulate import simulate

    with pytest.raises(ConfigError, match=rf"{section}\.kind: '{spec['kind']}' needs per-prefix evidence"):
        simulate([table_q("x", n=5, t_sc=3)], rs)
