"""Validation of the load engine against queueing theory: M/M/c and Erlang C.

With speculation off, no query generation or response time and exponential tool calls,
the tool backend is an M/M/c queue fed by Poisson sessions (each session's call is its
arrival shifted by its question's speaking time — iid shifts keep a Poisson process
Poisson). Its mean wait must match Erlang C's W_q = C(c, a) / (cμ − λ), a = λ/μ, at the
arrival rate λ each run drew.

The interval is over **independent replications** (one seed each), not batch means of
one run: near saturation the waits of consecutive sessions stay correlated for a
relaxation time of about 1/(cμ(1 − √ρ)²) — 190 s at ρ = 0.9, 780 s at ρ = 0.95 — longer
than the batches of one run of 20,000 sessions, so a batch-means interval was too narrow
(at ρ = 0.95 it covered Erlang C for 6 of 8 seeds). Each replication discards
:data:`WARMUP_RELAXATIONS` relaxation times (the queue starts empty) and measures
:data:`MEASURED_RELAXATIONS` more, so its mean is nearly unbiased and nearly normal, and
the replications' t interval is honest. The slow sweep below runs the check on many seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from _simhelpers import small_table

from streamrag.simulator.load.run import run_load
from streamrag.simulator.predict.queueing import erlang_c_wait_s
from streamrag.simulator.questions import questions_from_frame
from streamrag.simulator.scenario import scenario_from_dict

SERVERS = 2
MEAN_SERVICE_S = 1.0
N_REPLICATIONS = 10
WARMUP_RELAXATIONS = 3.0
MEASURED_RELAXATIONS = 12.0
MIN_MEASURED_SESSIONS = 3000
LEVEL = 0.999
"""Two-sided level of the asserted interval: a correct engine fails one check in 1,000
(the sweep runs 30), where a 95% interval would fail one in 20 by construction."""
RHOS = (0.5, 0.8, 0.9)
MAX_RELATIVE_HALF_WIDTH = 0.6
"""The check is not vacuous: its interval stays within 60% of Erlang C's value (honest
intervals are that wide only at ρ = 0.9; at lower loads they are much tighter)."""


def relaxation_s(servers: int, rho: float, mu: float) -> float:
    """The M/M/c queue's relaxation time ≈ 1/(cμ(1 − √ρ)²) (how long waits stay correlated)."""
    return 1.0 / (servers * mu * (1.0 - math.sqrt(rho)) ** 2)


def _questions():
    """One-word questions: the speaking-time shift stays iid, and a session costs few events."""
    table = small_table(50, seed=5)
    table["n_words"], table["t_sc"], table["t_suf"], table["retrieved_gold"] = 1, 1, None, False
    return questions_from_frame(table).questions


def replication(rho: float, seed: int, questions) -> tuple[float, float, float]:
    """One independent run at load ρ: (mean tool wait after warm-up in s, Erlang C's W_q
    at the arrival rate the run drew, tool utilization)."""
    mu = 1 / MEAN_SERVICE_S
    lam = rho * SERVERS * mu
    warmup_s = WARMUP_RELAXATIONS * relaxation_s(SERVERS, rho, mu)
    measured_s = max(MEASURED_RELAXATIONS * relaxation_s(SERVERS, rho, mu), MIN_MEASURED_SESSIONS / lam)
    rs = scenario_from_dict({
        "seed": seed,
        "trigger": {"kind": "none"},
        "latency": {"profile": "paper-rq3", "G_ms": 0, "F_ms": 0,
                    "stages": {"L": {"kind": "gamma", "shape": 1.0, "scale_ms": 1000 * MEAN_SERVICE_S}}},
        "select": {"population": "all"},
        "resources": {"tool": {"kind": "servers", "servers": SERVERS}},
        "load": {"arrivals": {"kind": "poisson", "rate_per_s": lam, "n_sessions": math.ceil(lam * (warmup_s + measured_s))},
                 "warmup_s": warmup_s, "reference_sessions": 0},
    })  # fmt: skip
    run = run_load(questions, rs)
    m = run.systems["baseline"].measures
    measured = m.arrival_us >= warmup_s * 1e6
    waits_s = m.waits["tool"][measured] / 1e6
    # The rate this run's arrivals had: a run whose Poisson draws came slow or fast is held
    # to the queue it was fed (its arrival count is most of a run's variance near saturation).
    arrivals_s = np.sort(m.arrival_us[measured]) / 1e6
    drawn_lam = (arrivals_s.shape[0] - 1) / (arrivals_s[-1] - arrivals_s[0])
    utilization = float(run.systems["baseline"].resources["tool"]["utilization"])  # type: ignore[index, arg-type]
    return float(waits_s.mean()), erlang_c_wait_s(SERVERS, drawn_lam, mu), utilization


def replicated(rho: float, seed: int, questions) -> tuple[float, float, float, float]:
    """(mean over replications of measured − Erlang C at the drawn rate, its standard
    error, Erlang C's W_q at the nominal rate, mean utilization)."""
    runs = np.array([replication(rho, seed * N_REPLICATIONS + r, questions) for r in range(N_REPLICATIONS)])
    diff = runs[:, 0] - runs[:, 1]
    expected = erlang_c_wait_s(SERVERS, rho * SERVERS / MEAN_SERVICE_S, 1 / MEAN_SERVICE_S)
    return float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(N_REPLICATIONS)), expected, float(runs[:, 2].mean())


def half_width(se: float, level: float) -> float:
    return float(scipy.stats.t.ppf(0.5 + level / 2, N_REPLICATIONS - 1)) * se


@pytest.mark.parametrize("rho", [0.5, 0.8, pytest.param(0.9, marks=pytest.mark.slow)])  # 0.9: 51,000 sessions
def test_mean_tool_wait_matches_erlang_c(rho: float) -> None:
    diff, se, expected, utilization = replicated(rho, 0, _questions())
    assert abs(diff) <= half_width(se, LEVEL), (diff, se, expected)
    assert half_width(se, LEVEL) < MAX_RELATIVE_HALF_WIDTH * expected
    # the queue measured its own utilization: ρ within the same kind of margin
    assert utilization == pytest.approx(rho, abs=0.03)


N_SEEDS = 10


@pytest.mark.slow
def test_erlang_c_check_holds_on_every_seed() -> None:
    """N_SEEDS seeds × 3 loads: every check passes at the asserted level, and the 95%
    intervals cover Erlang C about 95% of the time (an interval too narrow would cover less)."""
    questions = _questions()
    z = []
    for seed in range(1, N_SEEDS + 1):  # seed 0 is the default test's
        for rho in RHOS:
            diff, se, expected, _ = replicated(rho, seed, questions)
            z.append(abs(diff) / se)
            print(
                f"seed {seed} rho {rho}: measured − Erlang C {diff:+.4f} s, se {se:.4f}, W_q {expected:.4f} s, |z| {z[-1]:.2f}",
                flush=True,
            )
            assert abs(diff) <= half_width(se, LEVEL), (seed, rho, diff, se, expected)
    covered_95 = float(np.mean(np.array(z) <= half_width(1.0, 0.95)))
    print(f"95% intervals covering Erlang C: {covered_95:.3f} of {len(z)}; max |z| {max(z):.2f}")
    assert covered_95 >= 0.85
