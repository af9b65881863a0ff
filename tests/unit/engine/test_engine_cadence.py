"""Input cadence and random streams."""

from __future__ import annotations

import numpy as np
from _simhelpers import table_q

from streamrag.engine.cadence import JitteredCadence, UniformCadence
from streamrag.engine.rng import stream
from streamrag.simulator.replay.planning import plan_question
from streamrag.simulator.scenario import scenario_from_dict
from streamrag.simulator.simulate import run_chunk


def test_uniform_word_times_are_exact_microseconds_without_drift():
    times = UniformCadence(delta_wps=3.0).word_times_us(3000)
    assert times[:3].tolist() == [333_333, 666_667, 1_000_000]
    assert times[-1] == 1_000_000_000  # word 3000 at exactly 1000 s
    assert UniformCadence(delta_wps=2.0).word_times_us(4).tolist() == [500_000, 1_000_000, 1_500_000, 2_000_000]


def test_word_times_as_lists_are_the_arrays_values():
    # The uniform cadence without pauses computes its list without an array: same values.
    for delta in (1.0, 2.0, 2.5, 3.0, 3.3, 7.0, 2.7777, 0.37):
        c = UniformCadence(delta_wps=delta)
        for n in (1, 2, 7, 40, 3000):
            listed = c.word_times_list_us(n)
            assert listed == c.word_times_us(n).tolist() and all(type(t) is int for t in listed)
    for c in (UniformCadence(delta_wps=2.0, pause_prob=0.5, pause_ms=300), JitteredCadence(delta_wps=2.5, cv=0.4)):
        assert c.word_times_list_us(30, np.random.default_rng(4)) == c.word_times_us(30, np.random.default_rng(4)).tolist()


def test_pauses_shift_every_later_word():
    c = UniformCadence(delta_wps=2.0, pause_prob=1.0, pause_ms=300)
    assert c.word_times_us(3, np.random.default_rng(0)).tolist() == [500_000, 1_300_000, 2_100_000]


def test_jittered_gaps_have_the_given_mean_and_cv():
    c = JitteredCadence(delta_wps=2.5, cv=0.4)
    times = c.word_times_us(100_000, np.random.default_rng(3)) / 1e6
    gaps = np.diff(np.concatenate([[0.0], times]))
    assert abs(gaps.mean() - 0.4) < 0.004
    assert abs(gaps.std() / gaps.mean() - 0.4) < 0.01
    assert JitteredCadence(delta_wps=2.0, cv=0.0).word_times_us(3, np.random.default_rng(0)).tolist() == [
        500_000,
        1_000_000,
        1_500_000,
    ]


def _jitter_scenario(seed: int):
    return scenario_from_dict(
        {
            "seed": seed,
            "input": {"kind": "jittered", "delta_wps": 2.5, "cv": 0.5},
            "trigger": {"kind": "interval", "words": 2},
            "latency": {"profile": "arora2025"},
        }
    )


def test_jittered_cadence_is_deterministic_per_seed():
    q = table_q("same", n=12, t_sc=5)
    a = plan_question(q, _jitter_scenario(11))
    b = plan_question(q, _jitter_scenario(11))
    c = plan_question(q, _jitter_scenario(12))
    assert a == b
    assert a.word_us != c.word_us and a.l_us != c.l_us


def test_a_questions_draws_do_not_depend_on_the_other_questions():
    rs = _jitter_scenario(5)
    qa, qb, qc = table_q("a", n=9, t_sc=4), table_q("b", n=7, t_sc=7, t_suf=2), table_q("c", n=5, t_sc=1)
    alone = run_chunk([qb], rs)[0]
    with_others = run_chunk([qa, qb, qc], rs)[1]
    reordered = run_chunk([qc, qb], rs)[1]
    assert alone.trace == with_others.trace == reordered.trace
    assert alone.row == with_others.row


def test_streams_differ_by_question_and_component():
    draws = {(qid, comp): stream(1, qid, comp).random() for qid in ("q1", "q2") for comp in ("cadence", "latency.G", "latency.L")}
    assert len(set(draws.values())) == len(draws)
    assert stream(1, "q1", "cadence").random() == draws[("q1", "cadence")]
