"""Validation of the load engine against queueing theory: M/M/c and Erlang C.

With speculation off, no query generation or response time and exponential tool calls,
the tool backend is an M/M/c queue fed by Poisson sessions (each session's call is its
arrival shifted by its question's speaking time — iid shifts keep a Poisson process
Poisson). Its mean wait must match Erlang C's W_q = C(c, a) / (cμ − λ), a = λ/μ, within
the run's 95% confidence interval (batch means over the sessions after warm-up).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from _simhelpers import small_table

from streamrag.simulator.load import run_load
from streamrag.simulator.questions import questions_from_frame
from streamrag.simulator.scenario import scenario_from_dict

SERVERS = 2
MEAN_SERVICE_S = 1.0
WARMUP_S = 200.0
N_SESSIONS = 20_000
N_BATCHES = 20


def erlang_c_wait_s(servers: int, lam: float, mu: float) -> float:
    """Mean wait in queue of an M/M/c queue (Erlang C)."""
    a = lam / mu
    tail = a**servers / math.factorial(servers) * servers / (servers - a)
    c = tail / (sum(a**k / math.factorial(k) for k in range(servers)) + tail)
    return c / (servers * mu - lam)


@pytest.mark.parametrize("rho", [0.5, 0.8, 0.95])
def test_mean_tool_wait_matches_erlang_c(rho: float) -> None:
    lam = rho * SERVERS / MEAN_SERVICE_S
    rs = scenario_from_dict({
        "seed": 1,
        "trigger": {"kind": "none"},
        "latency": {"profile": "paper-rq3", "G_ms": 0, "F_ms": 0,
                    "stages": {"L": {"kind": "gamma", "shape": 1.0, "scale_ms": 1000 * MEAN_SERVICE_S}}},
        "select": {"population": "all"},
        "resources": {"tool": {"kind": "servers", "servers": SERVERS}},
        "load": {"arrivals": {"kind": "poisson", "rate_per_s": lam, "n_sessions": N_SESSIONS},
                 "warmup_s": WARMUP_S, "reference_sessions": 0},
    })  # fmt: skip
    run = run_load(questions_from_frame(small_table(50, seed=5)).questions, rs)
    m = run.systems["baseline"].measures
    waits_s = m.waits["tool"][m.arrival_us >= WARMUP_S * 1e6] / 1e6
    means = np.array([chunk.mean() for chunk in np.array_split(waits_s, N_BATCHES)])
    half = scipy.stats.t.ppf(0.975, N_BATCHES - 1) * means.std(ddof=1) / math.sqrt(N_BATCHES)
    expected = erlang_c_wait_s(SERVERS, lam, 1 / MEAN_SERVICE_S)
    assert abs(waits_s.mean() - expected) <= half, (waits_s.mean(), half, expected)
    # the queue measured its own utilization: ρ within the same kind of margin
    assert run.systems["baseline"].resources["tool"]["utilization"] == pytest.approx(rho, abs=0.03)  # type: ignore[index]
