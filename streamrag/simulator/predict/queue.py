"""The streaming arm's tool queue under load: FIFO with withdrawn jobs, as M/M/c+G.

A speculative call that is still waiting for a tool server when its session decides is
withdrawn (``cancel``: it never uses a server), so the streaming queue is a queue of
*impatient* jobs: each job's patience is the time from its arrival at the queue until its
session cancels it. It is modelled as M/M/c+G (:func:`~streamrag.simulator.predict.queueing.impatient_queue`;
Baccelli & Hébuterne 1981, Zeltyn & Mandelbaum 2005): Poisson arrivals of every job that
enters the queue, a patience distribution taken from the sessions' nominal timelines
(:func:`~streamrag.simulator.predict.saving.timeline`), the mean served service time (a call in
service when its session decides stops there under ``cancel = "frees"``) and the
Allen–Cunneen stretch ``(1 + c_s²)/2`` of the waiting part for non-exponential service.
The deciding call never leaves, so its wait is the queue's *virtual wait* V.

On a session's timeline with every queued call waiting w (the fixed point: w = E[V]),
call j reaches the queue at ``a_j = T − d_j + E[G]`` and the session decides at
``D = max(T + check, a_k + w + E[L])``, k the first deciding call (a mis-fire: never —
every call runs, then the refire). Two models of how a session's calls wait:

- ``independent`` — each call an independent draw of V; job j leaves once it has waited
  ``D − a_j`` (calls reaching the queue at or after D never enter it);
- ``shared`` — one V for the whole session (its calls queue seconds apart behind the same
  backlog): a call queued before k is ahead of it and never leaves; one queued more than
  E[L] after k starts after D whatever V is, so it leaves once it has waited
  ``max(0, T + check − a_j)``; the others are served. The streaming answer then takes one V
  for all its calls (:mod:`~streamrag.simulator.predict.gaining` averaged over V).

The two bracket the simulator's sessions, whose calls' waits are neither independent nor
equal; their break-evens are the predictor's band (:mod:`~streamrag.simulator.predict.load`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from streamrag.simulator.predict.atoms import Atoms
from streamrag.simulator.predict.queueing import ImpatientQueue, impatient_queue
from streamrag.simulator.predict.saving import Timeline

WAIT_MODELS = ("independent", "shared")
_PATIENCE_STEP_MS = 10.0
"""Patience is rounded to this grid (ms) before the queue is solved (it bounds the segments)."""


@dataclass(frozen=True, slots=True)
class QueueLoad:
    """What a population of sessions offers the streaming tool queue at one nominal wait."""

    jobs: float
    """Jobs entering the queue per session."""
    mean_service_ms: float
    """Mean service time of a served job."""
    cs2: float
    """Squared coefficient of variation of a served job's service."""
    patience_ms: np.ndarray
    """Patience atoms (``inf``: never leaves)."""
    patience_probs: np.ndarray


def session_jobs(
    line: Timeline, mean_g_ms: float, wait_ms: float, l_atoms: Atoms, cancel_frees: bool, model: str
) -> tuple[list[float], float, float, float]:
    """One session's entering jobs: ``(patience of each, served jobs, Σ service, Σ service²)``
    on its nominal timeline with every queued call waiting ``wait_ms``."""
    mean_l, second_l = l_atoms.mean_ms, l_atoms.var_ms2 + l_atoms.mean_ms**2
    turn_end, check = line.turn_end_ms, line.check_ms
    arrive = turn_end - line.offsets_ms + mean_g_ms
    n_calls = len(line.fired_t)
    if not line.deciding.any():  # mis-fire: every call runs, then the refire
        return [np.inf] * (n_calls + 1), n_calls + 1, (n_calls + 1) * mean_l, (n_calls + 1) * second_l
    first = int(np.flatnonzero(line.deciding)[np.argmin(arrive[line.deciding])])
    decided = max(turn_end + check, float(arrive[first]) + wait_ms + mean_l)
    patience: list[float] = []
    served, total, square = 0.0, 0.0, 0.0
    for j in range(n_calls):
        if (line.held[j] and decided <= turn_end + check) or arrive[j] >= decided:
            continue  # cancelled before it reached the tool queue
        if j == first or (model == "shared" and arrive[j] <= arrive[first]):
            tau = np.inf
        elif model == "shared":
            tau = np.inf if arrive[j] - arrive[first] < mean_l else max(0.0, turn_end + check - float(arrive[j]))
        else:
            tau = decided - float(arrive[j])
        patience.append(tau)
        start = float(arrive[j]) + wait_ms
        if wait_ms > tau:
            continue  # withdrawn while waiting
        if not cancel_frees or start + mean_l <= decided:
            served, total, square = served + 1, total + mean_l, square + second_l
        elif start < decided:
            cut = np.minimum(l_atoms.values_ms, decided - start)
            served, total, square = served + 1, total + float(cut @ l_atoms.probs), square + float(cut**2 @ l_atoms.probs)
    return patience, served, total, square


def queue_load(
    lines: list[Timeline], mean_g_ms: float, wait_ms: float, l_atoms: Atoms, cancel_frees: bool, model: str
) -> QueueLoad:
    """The population's offer to the queue (:class:`QueueLoad`) at a nominal wait."""
    patience: list[float] = []
    served, total, square = 0.0, 0.0, 0.0
    memo: dict[tuple[object, ...], tuple[list[float], float, float, float]] = {}
    for line in lines:  # each distinct timeline once, summed in the sessions' order
        got = memo.get(line.key)
        if got is None:
            got = memo[line.key] = session_jobs(line, mean_g_ms, wait_ms, l_atoms, cancel_frees, model)
        p, s, t, q = got
        patience += p
        served, total, square = served + s, total + t, square + q
    values = np.array(patience)
    finite = np.isfinite(values)
    values[finite] = np.round(values[finite] / _PATIENCE_STEP_MS) * _PATIENCE_STEP_MS
    atoms, counts = np.unique(values, return_counts=True)
    mean = total / served if served else l_atoms.mean_ms
    cs2 = max(0.0, square / served / mean**2 - 1.0) if served else 0.0
    return QueueLoad(len(values) / len(lines), mean, cs2, atoms, counts / counts.sum())


def solve_queue(servers: int, sessions_per_ms: float, load: QueueLoad) -> ImpatientQueue | None:
    """The M/M/c+G steady state of the streaming queue (times in s; None: unstable)."""
    return impatient_queue(
        servers,
        sessions_per_ms * load.jobs * 1000.0,
        1000.0 / load.mean_service_ms,
        load.patience_ms / 1000.0,
        load.patience_probs,
        scale=(1.0 + load.cs2) / 2.0,
    )


def virtual_wait_atoms(queue: ImpatientQueue, k: int) -> Atoms:
    """V (ms) as atoms: 0 with probability 1 − P(wait), then ``k`` equal-mass quantiles of
    the waiting part, rescaled to keep E[V]."""
    if queue.p_wait <= 0:
        return Atoms(np.array([0.0]), np.array([1.0]))
    probs = 1.0 - queue.p_wait + queue.p_wait * (np.arange(k) + 0.5) / k
    tail = 1000.0 * queue.quantiles_s(probs)
    mean_ms = 1000.0 * queue.mean_wait_s
    if tail.mean() > 0:
        tail *= mean_ms / queue.p_wait / tail.mean()
    return Atoms(np.concatenate([[0.0], tail]), np.concatenate([[1.0 - queue.p_wait], np.full(k, queue.p_wait / k)]))
