"""The predictor under load: waits of both systems and the break-even utilization.

Sessions arrive by a Poisson process at rate λ and share c tool servers (the LLM
unlimited, as in ``sim/load.toml``); the offered load ρ is the baseline's tool
utilization, λ = ρ·c/E[L]. Each system's tool queue is treated as an M/G/c queue
(:mod:`~streamrag.simulator.queueing`): an arrival waits with probability C(c, a)
(Erlang C) and then an exponential time whose mean makes the mean wait Allen–Cunneen's
``W_q = C/(cμ − λ_jobs)·(1 + c_s²)/2``.

- **Baseline**: one job per session, service L.
- **Streaming**: the extra speculative load. A session's calls are the predictor's
  nominal timeline (:func:`~streamrag.simulator.predict.timeline`) with every call
  taking E[G] + W + E[L]; the reflector's decision at A cancels the calls still in flight
  (``cancel = "frees"``: a call in service stops, one still queued never uses a server),
  a mis-fire runs every call and the refire. The served work per session, its jobs and
  their service moments are a function of the streaming wait W, and W solves the fixed
  point ``W = W_q(λ·jobs(W), E[S](W), c_s²(W))`` (cancellation limits the load, so a
  root exists below saturation; none: the queue is unstable, W = ∞).
- **Who stops gaining.** The per-session paired difference D = baseline − streaming
  answer latency; P(D ≤ 0) for a question follows from the call latency X = G + L and
  the two waits (:func:`p_not_gaining`: exact sums over discrete distributions, the
  last-word call's shared draw conditioned on). The median of D over sessions is ≤ 0
  exactly when the mean over questions of P(D ≤ 0) reaches ½; the **break-even** is the
  smallest ρ at which it does (bisection).

The band: the break-even under two shapes of a waiting arrival's wait — exponential (the
M/M/c shape) and its mean for every waiting arrival (deterministic) — which bracket the
M/D/c and lognormal-service queues the simulator runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from streamrag.base.errors import ConfigError
from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.predict import Atoms, Timeline, add, call_latency, point, stage_atoms, supported, timeline
from streamrag.simulator.queueing import allen_cunneen_wait_s, erlang_c
from streamrag.simulator.scenario import ResolvedScenario

LOAD_ATOMS = 24
_WAIT_GRID_MS = np.concatenate([[0.0], np.geomspace(5.0, 120_000.0, 23)])
"""Streaming waits at which the served work per session is computed (interpolated between)."""
SHAPES = ("exponential", "deterministic")


def load_setting(rs: ResolvedScenario) -> int:
    """The tool servers of a load scenario the model covers (ConfigError otherwise)."""
    sc = rs.scenario
    supported(rs)
    tool = sc.resources.tool
    if sc.load is None or tool.kind != "servers":
        raise ConfigError("predict --load: the scenario needs [load] and a tool backend with servers ([resources] tool)")
    if any(
        r is not None and r.kind != "unlimited" for r in (sc.resources.llm, sc.resources.query_llm, sc.resources.response_llm)
    ):
        raise ConfigError("predict --load: the model queues the tool only; set [resources] llm to unlimited")
    if sc.policy.kind != "always" or tool.discipline != "fifo" or tool.queue_limit is not None:
        raise ConfigError("predict --load: the model covers policy 'always' on a FIFO tool queue without a queue limit")
    return int(tool.servers)


def wait_atoms(p_wait: float, mean_waiting_ms: float, shape: str, k: int = LOAD_ATOMS) -> Atoms:
    """A queue's wait: 0 with probability 1 − p_wait, else exponential (or constant) with
    mean ``mean_waiting_ms``."""
    if p_wait <= 0 or mean_waiting_ms <= 0:
        return point(0.0)
    if shape == "deterministic":
        tail = np.array([mean_waiting_ms])
    else:
        tail = -mean_waiting_ms * np.log1p(-(np.arange(k) + 0.5) / k)
        tail *= mean_waiting_ms / tail.mean()  # keep the mean exactly
    values = np.concatenate([[0.0], tail])
    probs = np.concatenate([[1.0 - p_wait], np.full(tail.size, p_wait / tail.size)])
    return Atoms(values, probs)


@dataclass(frozen=True, slots=True)
class Work:
    """A session's tool work in the streaming system at one wait."""

    jobs: float
    mean_service_ms: float
    cs2: float


def session_work(
    line: Timeline, mean_g_ms: float, wait_ms: float, l_atoms: Atoms, cancel_frees: bool
) -> tuple[int, float, float]:
    """``(jobs, Σ service, Σ service²)`` (ms) of one session on its nominal timeline."""
    mean_l, second_l = l_atoms.mean_ms, l_atoms.var_ms2 + l_atoms.mean_ms**2
    turn_end, check = line.turn_end_ms, line.check_ms
    start = turn_end - line.offsets_ms + mean_g_ms + wait_ms
    complete = start + mean_l
    n_calls = len(line.fired_t)
    if not line.deciding.any():  # mis-fire: every call runs, then the refire
        return n_calls + 1, (n_calls + 1) * mean_l, (n_calls + 1) * second_l
    decided = max(turn_end + check, float(complete[line.deciding].min()))
    jobs, total, square = 0, 0.0, 0.0
    for j in range(n_calls):
        if line.held[j] and decided <= turn_end + check:
            continue  # cancelled unstarted
        if complete[j] <= decided or (start[j] < decided and not cancel_frees):
            jobs, total, square = jobs + 1, total + mean_l, square + second_l
        elif start[j] < decided:
            cut = decided - start[j]
            served = np.minimum(l_atoms.values_ms, cut)
            jobs, total, square = jobs + 1, total + float(served @ l_atoms.probs), square + float(served**2 @ l_atoms.probs)
    return jobs, total, square


class LoadModel:
    """Both systems' waits against the offered load, and the break-even (module docstring)."""

    def __init__(self, questions: Sequence[SimQuestion], rs: ResolvedScenario) -> None:
        self.servers = load_setting(rs)
        self.questions = list(questions)
        if not self.questions:
            raise ConfigError("predict: no questions to predict (check select.population)")
        self.rs = rs
        self.x = call_latency(rs, LOAD_ATOMS)
        self.g = stage_atoms(rs.stages.G, LOAD_ATOMS)
        self.l_atoms = stage_atoms(rs.stages.L, LOAD_ATOMS)
        self.cancel_frees = rs.scenario.resources.tool.cancel == "frees"  # type: ignore[union-attr]
        self._lines: dict[float, list[Timeline]] = {}
        self.work = [self._work(w) for w in _WAIT_GRID_MS]

    def lines(self, wait_ms: float) -> list[Timeline]:
        key = round(wait_ms, 3)
        if key not in self._lines:
            nominal = self.x.mean_ms + wait_ms
            self._lines[key] = [timeline(q, self.rs, nominal) for q in self.questions]
        return self._lines[key]

    def _work(self, wait_ms: float) -> Work:
        parts = np.array(
            [session_work(line, self.g.mean_ms, wait_ms, self.l_atoms, self.cancel_frees) for line in self.lines(wait_ms)]
        )
        jobs, total, square = parts.sum(axis=0)
        mean = total / jobs
        return Work(jobs / len(self.questions), mean, max(0.0, square / jobs / mean**2 - 1.0))

    def rate_per_ms(self, offered: float) -> float:
        return offered * self.servers / self.l_atoms.mean_ms

    def baseline_wait(self, offered: float) -> tuple[float, float]:
        """(P(wait), mean wait of a waiting arrival, ms) of the baseline's tool queue."""
        lam = self.rate_per_ms(offered)
        cs2 = self.l_atoms.var_ms2 / self.l_atoms.mean_ms**2
        return self._wait(lam, self.l_atoms.mean_ms, cs2)

    def _wait(self, lam_per_ms: float, mean_s_ms: float, cs2: float) -> tuple[float, float]:
        p = erlang_c(self.servers, lam_per_ms * mean_s_ms)
        wq_ms = 1000 * allen_cunneen_wait_s(self.servers, lam_per_ms * 1000, mean_s_ms / 1000, cs2)
        return p, (wq_ms / p if p > 0 else 0.0)

    def streaming_wait(self, offered: float) -> tuple[float, float, float]:
        """(mean wait W, P(wait), mean wait of a waiting arrival) solving the fixed point; W = inf when none."""
        lam = self.rate_per_ms(offered)

        def formula(i: int) -> tuple[float, float, float]:
            w = self.work[i]
            p, waiting = self._wait(lam * w.jobs, w.mean_service_ms, w.cs2)
            return p * waiting if np.isfinite(waiting) else np.inf, p, waiting

        gaps = [formula(i)[0] - _WAIT_GRID_MS[i] for i in range(len(_WAIT_GRID_MS))]
        for i in range(len(gaps) - 1):
            if gaps[i] >= 0 > gaps[i + 1] or gaps[i] == 0:
                a, b = _WAIT_GRID_MS[i], _WAIT_GRID_MS[i + 1]
                g0, g1 = gaps[i], gaps[i + 1]
                w = a + (b - a) * g0 / (g0 - g1) if np.isfinite(g0) and g0 != g1 else a
                p0, p1 = formula(i)[1], formula(i + 1)[1]
                p = p0 + (p1 - p0) * (w - a) / (b - a)
                return w, p, (w / p if p > 0 else 0.0)
        return np.inf, 1.0, np.inf

    def share_not_gaining(self, offered: float, shape: str = "exponential") -> float:
        """Mean over questions of P(D ≤ 0) at offered load ρ."""
        w, p_s, waiting_s = self.streaming_wait(offered)
        if not np.isfinite(w):
            return 1.0
        p_b, waiting_b = self.baseline_wait(offered)
        vb, vs = wait_atoms(p_b, waiting_b, shape), wait_atoms(p_s, waiting_s, shape)
        return float(np.mean([p_not_gaining(line, self.x, vb, vs) for line in self.lines(w)]))

    def break_even(self, shape: str = "exponential", lo: float = 0.01, hi: float = 0.99, tol: float = 0.002) -> float | None:
        """The smallest offered load at which the median paired difference is ≤ 0 (None: not below ``hi``)."""
        if self.share_not_gaining(lo, shape) >= 0.5:
            return lo
        if self.share_not_gaining(hi, shape) < 0.5:
            return None
        while hi - lo > tol:
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if self.share_not_gaining(mid, shape) >= 0.5 else (mid, hi)
        return (lo + hi) / 2


def p_not_gaining(line: Timeline, x: Atoms, vb: Atoms, vs: Atoms) -> float:
    """P(baseline − streaming answer latency ≤ 0) of one session, with X = G + L per call,
    V_b the baseline's wait and V_s each streaming call's wait (all independent, except
    that the call on the full query shares its X with the baseline)."""
    y = add(x, vs, LOAD_ATOMS)
    check = line.check_ms
    full = [i for i, t in enumerate(line.fired_t) if t == line.n_words]
    if line.deciding.any():
        last = full[0] if full and line.deciding[full[0]] else None
        others = line.offsets_ms[line.deciding & (np.arange(len(line.fired_t)) != (-1 if last is None else last))]

        def p_others(b: np.ndarray) -> np.ndarray:  # P(min over the others of Y − d ≥ b)
            return np.prod(y.at_least(b[:, None] + others[None, :]), axis=1) if others.size else np.ones_like(b)

        if last is None:
            base = add(x, vb, LOAD_ATOMS)
            b = base.values_ms
            return float(base.probs @ np.where(b <= check + 1e-6, 1.0, p_others(b)))
        total = 0.0
        for xv, px in zip(x.values_ms, x.probs, strict=True):
            b = xv + vb.values_ms
            own = vs.at_least(vb.values_ms + line.offsets_ms[last])  # X_n + V_n − d_n ≥ X_n + V_b
            total += px * float(vb.probs @ np.where(b <= check + 1e-6, 1.0, p_others(b) * own))
        return total
    # Mis-fire: D = V_b − V_f − R with R = max(check, max_i (Y_i − d_i)⁺).
    offsets = line.offsets_ms

    def p_r(r: np.ndarray) -> np.ndarray:  # P(R ≥ r)
        miss = np.prod(1.0 - y.at_least(r[:, None] + offsets[None, :]), axis=1) if offsets.size else np.ones_like(r)
        return np.where(r <= max(check, 0.0) + 1e-6, 1.0, 1.0 - miss)

    need = vb.values_ms[:, None] - vs.values_ms[None, :]
    return float(vb.probs @ (p_r(need.ravel()).reshape(need.shape) @ vs.probs))


@dataclass(frozen=True, slots=True)
class LoadPrediction:
    break_even: float | None
    low: float | None
    high: float | None
    by_shape: dict[str, float | None]


def predict_break_even(questions: Sequence[SimQuestion], rs: ResolvedScenario) -> LoadPrediction:
    """The break-even offered load (baseline tool utilization) and its band over :data:`SHAPES`."""
    model = LoadModel(questions, rs)
    found = {shape: model.break_even(shape) for shape in SHAPES}
    values = [v for v in found.values() if v is not None]
    center = found["exponential"]
    return LoadPrediction(center, min(values) if values else None, max(values) if values else None, found)
