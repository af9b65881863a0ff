"""The predictor under load: waits of both systems and the break-even utilization.

Sessions arrive by a Poisson process at rate λ and share c tool servers (the LLM
unlimited, as in ``sim/load.toml``); the offered load ρ is the baseline's tool
utilization, λ = ρ·c/E[L].

- **Baseline**: one job per session, service L, an M/G/c queue
  (:mod:`~streamrag.simulator.predict.queueing`): an arrival waits with probability C(c, a)
  (Erlang C), then an exponential time whose mean makes the mean wait Allen–Cunneen's
  ``W_q = C/(cμ − λ)·(1 + c_s²)/2``.
- **Streaming**: the speculative calls queue FIFO and the ones still waiting when their
  session decides are withdrawn: an M/M/c+G queue of impatient jobs
  (:mod:`~streamrag.simulator.predict.queue`), solved at the fixed point of its mean
  virtual wait against the nominal timelines (:func:`~streamrag.simulator.predict.saving.timeline`
  with every call taking E[G] + w + E[L]: the thread cap, who enters the queue, each
  job's patience and its served service all move with w). Under two models of how a
  session's calls wait — ``independent`` draws or one ``shared`` wait.
- **Who stops gaining.** The per-session paired difference D = baseline − streaming
  answer latency; P(D ≤ 0) for a question follows from the call latency X = G + L and
  the two waits (:mod:`~streamrag.simulator.predict.gaining`: exact sums over discrete
  distributions, the last-word call's shared draw conditioned on, every distinct timeline
  at once; the ``shared`` model averages it over one V for every call). The median of D over sessions is ≤ 0 exactly when the mean over
  questions of P(D ≤ 0) reaches ½; the **break-even** is the smallest ρ at which it does
  (bisection).

The answer is the midpoint of the two wait models' break-evens, the band their range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from streamrag.base.errors import ConfigError
from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.predict.atoms import Atoms, add, compress, point, stage_atoms
from streamrag.simulator.predict.gaining import LineBatch
from streamrag.simulator.predict.queue import WAIT_MODELS, QueueLoad, queue_load, solve_queue, virtual_wait_atoms
from streamrag.simulator.predict.queueing import allen_cunneen_wait_s, erlang_c
from streamrag.simulator.predict.saving import Timeline, call_latency, supported
from streamrag.simulator.predict.timelines import TimelineCache
from streamrag.simulator.predict.users import Packed, population_cdf
from streamrag.simulator.scenario import ResolvedScenario

LOAD_ATOMS = 24
_QUANTILE_ATOMS = 256
"""Atoms of the baseline's answer latency whose quantile the p90 user's crossing reads."""
_TIE_MS = 1e-6
CROSSINGS = ("median_saved", "p90")
"""The statistics whose break-even is predicted, named as ``sweep``'s ``break_even.csv``
crossings (:mod:`streamrag.sweep.break_even`): ``median_saved`` — the median per-session
paired difference (``saved_ms.median``); ``p90`` — the p90 user's gain, baseline p90 −
streaming p90 answer latency (``answer_ms_difference.p90``)."""
_USER_QUANTILE = {"p90": 0.9}
SHARED_ATOMS = 9
"""Atoms of the one wait a session's calls share (each is a full per-question sum)."""
_WAIT_GRID_MS = np.concatenate([[0.0], np.geomspace(5.0, 120_000.0, 23)])
"""Streaming waits at which the served work per session is computed (interpolated between)."""


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


def wait_atoms(p_wait: float, mean_waiting_ms: float, k: int = LOAD_ATOMS) -> Atoms:
    """The baseline queue's wait: 0 with probability 1 − p_wait, else exponential with
    mean ``mean_waiting_ms`` (``k`` equal-mass atoms, the mean kept exactly)."""
    if p_wait <= 0 or mean_waiting_ms <= 0:
        return point(0.0)
    tail = -mean_waiting_ms * np.log1p(-(np.arange(k) + 0.5) / k)
    tail *= mean_waiting_ms / tail.mean()
    values = np.concatenate([[0.0], tail])
    probs = np.concatenate([[1.0 - p_wait], np.full(tail.size, p_wait / tail.size)])
    return Atoms(values, probs)


class LoadModel:
    """Both systems' waits against the offered load, and the break-even (module docstring)."""

    def __init__(self, questions: Sequence[SimQuestion], rs: ResolvedScenario, timelines: TimelineCache | None = None) -> None:
        self.servers = load_setting(rs)
        self.questions = list(questions)
        if not self.questions:
            raise ConfigError("predict: no questions to predict (check select.population)")
        self.rs = rs
        self.x = call_latency(rs, LOAD_ATOMS)
        self.g = stage_atoms(rs.stages.G, LOAD_ATOMS)
        self.l_atoms = stage_atoms(rs.stages.L, LOAD_ATOMS)
        self.cancel_frees = rs.scenario.resources.tool.cancel == "frees"  # type: ignore[union-attr]
        self.f = stage_atoms(rs.stages.F, LOAD_ATOMS)
        self._timelines = TimelineCache(self.questions, rs) if timelines is None else timelines
        self._lines: dict[float, list[Timeline]] = {}
        self._packed: dict[float, Packed] = {}
        self._batches: dict[float, LineBatch] = {}
        self._offers: dict[tuple[str, int], QueueLoad] = {}
        self._waits: dict[tuple[float, str], tuple[float, Atoms | None]] = {}
        self._crossed: dict[str, dict[float, int]] = {}

    def offer(self, model: str, i: int) -> QueueLoad:
        """What the sessions offer the streaming queue at the ``i``-th grid wait (computed
        when first asked: the fixed-point search stops at its first crossing)."""
        key = (model, i)
        if key not in self._offers:
            w = float(_WAIT_GRID_MS[i])
            self._offers[key] = queue_load(self.lines(w), self.g.mean_ms, w, self.l_atoms, self.cancel_frees, model)
        return self._offers[key]

    def lines(self, wait_ms: float) -> list[Timeline]:
        key = round(wait_ms, 3)
        if key not in self._lines:
            self._lines[key] = self._timelines.at(self.x.mean_ms + wait_ms)
        return self._lines[key]

    def rate_per_ms(self, offered: float) -> float:
        return offered * self.servers / self.l_atoms.mean_ms

    def turns_per_s(self, offered: float) -> float:
        """The arrival rate (turns/s) that offers load ρ: ``λ = ρ·c/E[L]``."""
        return 1000.0 * self.rate_per_ms(offered)

    def baseline_wait(self, offered: float) -> tuple[float, float]:
        """(P(wait), mean wait of a waiting arrival, ms) of the baseline's tool queue."""
        lam = self.rate_per_ms(offered)
        cs2 = self.l_atoms.var_ms2 / self.l_atoms.mean_ms**2
        return self._wait(lam, self.l_atoms.mean_ms, cs2)

    def _wait(self, lam_per_ms: float, mean_s_ms: float, cs2: float) -> tuple[float, float]:
        p = erlang_c(self.servers, lam_per_ms * mean_s_ms)
        wq_ms = 1000 * allen_cunneen_wait_s(self.servers, lam_per_ms * 1000, mean_s_ms / 1000, cs2)
        return p, (wq_ms / p if p > 0 else 0.0)

    def streaming_wait(self, offered: float, model: str = "independent") -> tuple[float, Atoms | None]:
        """(E[V] in ms, V as atoms) of the streaming queue at the fixed point w = E[V](w)
        (:mod:`~streamrag.simulator.predict.queue`); (inf, None) when none is stable.

        The fixed point is the first grid wait w_i past which E[V](w) − w turns negative
        (E[V](0) − 0 ≥ 0 always). At a fixed w, E[V] grows with the arrival rate, so at a
        higher load the gap stays ≥ 0 at least up to a lower load's crossing: the scan starts
        there (the same crossing as a scan from 0, fewer queues solved)."""
        key = (offered, model)
        if key not in self._waits:
            self._waits[key] = self._fixed_point(offered, model)
        return self._waits[key]

    def _fixed_point(self, offered: float, model: str) -> tuple[float, Atoms | None]:
        lam = self.rate_per_ms(offered)
        means: dict[int, float] = {}

        def gap(i: int) -> float:  # E[V] at the i-th grid wait, less that wait
            if i not in means:
                queue = solve_queue(self.servers, lam, self.offer(model, i))
                means[i] = np.inf if queue is None else 1000.0 * queue.mean_wait_s
            return means[i] - float(_WAIT_GRID_MS[i])

        crossed = self._crossed.setdefault(model, {})
        start = max((i for rho, i in crossed.items() if rho < offered), default=0)
        for i in range(start, len(_WAIT_GRID_MS) - 1):
            g0, g1 = gap(i), gap(i + 1)
            if g0 >= 0 > g1 or g0 == 0:
                crossed[offered] = i
                a, b = _WAIT_GRID_MS[i], _WAIT_GRID_MS[i + 1]
                # g0 infinite: unstable at wait a, stable at b; the fixed point lies between, taken at b
                t = (g0 / (g0 - g1) if g0 != g1 else 0.0) if np.isfinite(g0) else 1.0
                near = i if t <= 0.5 else i + 1
                queue = solve_queue(self.servers, lam, self.offer(model, near))
                assert queue is not None
                atoms = virtual_wait_atoms(queue, LOAD_ATOMS)
                w = a + (b - a) * t
                mean = atoms.mean_ms
                if mean > 0:  # the nearer grid point's shape, at the fixed point's mean
                    atoms = Atoms(atoms.values_ms * w / mean, atoms.probs)
                return w, atoms
        return np.inf, None

    def share_not_gaining(self, offered: float, model: str = "independent") -> float:
        """Mean over questions of P(D ≤ 0) at offered load ρ under a wait model."""
        w, vs = self.streaming_wait(offered, model)
        if vs is None:
            return 1.0
        p_b, waiting_b = self.baseline_wait(offered)
        vb = wait_atoms(p_b, waiting_b)
        key = round(w, 3)
        if key not in self._batches:
            self._batches[key] = LineBatch(self.lines(w))
        batch = self._batches[key]
        base = add(self.x, vb, LOAD_ATOMS)
        if model == "shared":  # one V for all of a session's calls
            shared = compress(vs.values_ms, vs.probs, SHARED_ATOMS)
            total: np.ndarray | float = 0.0
            for v, p in zip(shared.values_ms, shared.probs, strict=True):
                total = total + p * batch.p_not_gaining(self.x, vb, point(v), add(self.x, point(v), LOAD_ATOMS), base)
            return batch.share(np.asarray(total))
        return batch.share(batch.p_not_gaining(self.x, vb, vs, add(self.x, vs, LOAD_ATOMS), base))

    def user_not_gaining(self, offered: float, model: str, q: float) -> bool:
        """Whether the ``q``-quantile user gains nothing at offered load ρ: streaming's
        q-quantile answer latency ≥ the baseline's (:mod:`~streamrag.simulator.predict.users`),
        i.e. P(streaming < baseline's quantile) < q."""
        w, vs = self.streaming_wait(offered, model)
        if vs is None:
            return True
        vb = wait_atoms(*self.baseline_wait(offered))
        baseline = add(add(self.x, vb, _QUANTILE_ATOMS), self.f, _QUANTILE_ATOMS)
        key = round(w, 3)
        if key not in self._packed:
            self._packed[key] = Packed(self.lines(w))
        if model == "shared":  # one V for all of a session's calls
            shared = compress(vs.values_ms, vs.probs, SHARED_ATOMS)
            ys = [(p, add(self.x, point(v), LOAD_ATOMS)) for v, p in zip(shared.values_ms, shared.probs, strict=True)]
        else:
            ys = [(1.0, add(self.x, vs, LOAD_ATOMS))]
        below = population_cdf(self._packed[key], ys, self.f, np.array(baseline.quantile_ms(q) - _TIE_MS))
        return float(below) < q

    def not_gaining(self, offered: float, model: str, crossing: str) -> bool:
        """Whether the crossing's statistic (:data:`CROSSINGS`) gains nothing at ρ."""
        if crossing == "median_saved":
            return self.share_not_gaining(offered, model) >= 0.5
        return self.user_not_gaining(offered, model, _USER_QUANTILE[crossing])

    def break_even(
        self,
        model: str = "independent",
        lo: float = 0.01,
        hi: float = 0.99,
        tol: float = 0.002,
        crossing: str = "median_saved",
    ) -> float | None:
        """The smallest offered load at which the crossing's statistic (default: the median
        paired difference) is ≤ 0 (None: not below ``hi``)."""
        if self.not_gaining(lo, model, crossing):
            return lo
        if not self.not_gaining(hi, model, crossing):
            return None
        while hi - lo > tol:
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if self.not_gaining(mid, model, crossing) else (mid, hi)
        return (lo + hi) / 2


def p_not_gaining(line: Timeline, x: Atoms, vb: Atoms, vs: Atoms) -> float:
    """P(baseline − streaming answer latency ≤ 0) of one session
    (:class:`~streamrag.simulator.predict.gaining.LineBatch`)."""
    batch = LineBatch([line])
    return float(batch.p_not_gaining(x, vb, vs, add(x, vs, LOAD_ATOMS), add(x, vb, LOAD_ATOMS))[0])


@dataclass(frozen=True, slots=True)
class Crossing:
    """One statistic's break-even offered load: the midpoint of the two wait models' (the
    one found, if only one is), the band their range."""

    break_even: float | None
    low: float | None
    high: float | None
    by_waits: dict[str, float | None]


@dataclass(frozen=True, slots=True)
class LoadPrediction:
    """The break-even of the median paired difference (``break_even``, ``low``, ``high``,
    ``by_waits``), every crossing's (:data:`CROSSINGS`), and the arrival rate per unit of
    offered load."""

    break_even: float | None
    low: float | None
    high: float | None
    by_waits: dict[str, float | None]
    crossings: dict[str, Crossing] = field(default_factory=dict)
    turns_per_s_at_full_load: float | None = None
    """Turns/s at offered load 1 (``c/E[L]``): turns/s = ρ × this."""

    def turns_per_s(self, offered: float | None) -> float | None:
        """The arrival rate (turns/s) of an offered load."""
        if offered is None or self.turns_per_s_at_full_load is None:
            return None
        return offered * self.turns_per_s_at_full_load

    def record(self, name: str) -> dict[str, float | None]:
        """Crossing ``name``'s break-even, band and their arrival rates: the fields
        ``predict --out`` and ``advise`` write (``by_waits`` left to the caller)."""
        c = self.crossings[name]
        return {
            "offered_load": c.break_even,
            "low": c.low,
            "high": c.high,
            "turns_per_s": self.turns_per_s(c.break_even),
            "turns_per_s_low": self.turns_per_s(c.low),
            "turns_per_s_high": self.turns_per_s(c.high),
        }


def crossing_of(model: LoadModel, crossing: str) -> Crossing:
    found = {name: model.break_even(name, crossing=crossing) for name in WAIT_MODELS}
    values = [v for v in found.values() if v is not None]
    low, high = (min(values), max(values)) if values else (None, None)
    center = (low + high) / 2 if low is not None and high is not None else None
    return Crossing(center, low, high, found)


def predict_break_even(
    questions: Sequence[SimQuestion], rs: ResolvedScenario, timelines: TimelineCache | None = None
) -> LoadPrediction:
    """The break-even offered load (baseline tool utilization) of every crossing
    (:data:`CROSSINGS`: the median paired difference and the p90 user's gain), each with
    its band over the wait models (:data:`~streamrag.simulator.predict.queue.WAIT_MODELS`)."""
    model = LoadModel(questions, rs, timelines)
    crossings = {name: crossing_of(model, name) for name in CROSSINGS}
    m = crossings["median_saved"]
    return LoadPrediction(m.break_even, m.low, m.high, m.by_waits, crossings, model.turns_per_s(1.0))
