"""Workloads: when sessions arrive and which question each one asks (load runs).

A load run interleaves many *sessions* on one virtual clock. Each session replays one
question of the population; ``[load]`` in a scenario says how they come:

==========  ===========================================================================
``poisson`` open loop: ``n_sessions`` sessions at rate ``rate_per_s`` (exponential
            gaps, seeded) — or at the rate that puts ``offered_load`` ρ on the tool
            backend's servers in the baseline system: λ = ρ·c / E[L] (one tool call per
            session; E[L] the mean of the L stage), which lets profiles with different
            tool latencies share one load axis
``piecewise`` open loop, a rate that moves: ``segments``, each ``duration_s`` long at its
            own ``rate_per_s`` or ``offered_load`` (as ``poisson``); a Poisson process whose
            rate is constant within a segment (a simulated day: 0.2 → 0.9 → 0.2 of
            capacity). Gaps are exponential at the segment's rate; a gap that crosses the
            segment's end is dropped and the next segment draws afresh from its start,
            which is exact because the exponential is memoryless. One segment gives
            exactly the arrivals of ``poisson`` at that rate that fall inside it
``file``    open loop: arrival times (seconds) from a file, one per line or a CSV with
            a column ``arrival_s``; one session per time
``closed``  closed loop: ``users`` users, each asking again after an exponential think
            time of mean ``think_s`` once its previous answer is ready, until
            ``n_sessions`` sessions in all have started
==========  ===========================================================================

The question of session i is drawn uniformly (with replacement) from the selected
population. Questions, gaps and think times are each one seeded stream
(:mod:`streamrag.engine.rng`) read in session order, and a session's latencies come
from streams keyed by its id, so the streaming and baseline systems see exactly the
same sessions (paired comparison) and adding sessions never changes earlier ones. ``warmup_s``: sessions arriving before
it are simulated but left out of the statistics (steady state).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, ClassVar, Literal, Self

import numpy as np
from pydantic import Field, model_validator

from streamrag.base.errors import ConfigError, InputError
from streamrag.base.validation import SettingsModel
from streamrag.engine.rng import stream

US_PER_S = 1_000_000


class _Section(SettingsModel):
    """Frozen, no unknown key, no boolean for a number (:class:`~streamrag.base.validation.SettingsModel`)."""


class _Rated(_Section):
    """A Poisson rate: ``rate_per_s``, or the ``offered_load`` it puts on the tool servers."""

    rate_per_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Sessions arriving per second (exponential gaps); or ``offered_load`` instead."""
    offered_load: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """ρ on the tool servers in the baseline system (instead of ``rate_per_s``)."""
    EXCLUSIVE: ClassVar[tuple[frozenset[str], ...]] = (frozenset({"rate_per_s", "offered_load"}),)

    @model_validator(mode="after")
    def _one_rate(self) -> Self:
        if (self.rate_per_s is None) == (self.offered_load is None):
            raise ValueError("set exactly one of 'rate_per_s' and 'offered_load'")
        return self

    def rate(self, tool_servers: int | None, mean_l_ms: float) -> float:
        """Sessions per second: λ = ρ·c / E[L] for an offered load ρ on c tool servers."""
        if self.rate_per_s is not None:
            return self.rate_per_s
        if not tool_servers:
            raise ConfigError("load.arrivals.offered_load needs a tool backend with servers ([resources] tool)")
        return float(self.offered_load) * tool_servers / (mean_l_ms / 1000)  # type: ignore[arg-type]


class PoissonArrivals(_Rated):
    """Open loop: ``n_sessions`` sessions arriving at a constant Poisson rate."""

    kind: Literal["poisson"] = "poisson"
    n_sessions: int = Field(ge=1)
    """How many sessions arrive in all."""


class RateSegment(_Rated):
    """One stretch of a :class:`PiecewiseArrivals` profile."""

    duration_s: float = Field(gt=0, allow_inf_nan=False)


class PiecewiseArrivals(_Section):
    """Open loop: a Poisson rate that moves, constant within each of ``segments``."""

    kind: Literal["piecewise"] = "piecewise"
    segments: list[RateSegment] = Field(min_length=1)
    """The profile in time order; arrivals end with the last segment."""

    def span_s(self) -> float:
        """The profile's length (s)."""
        return float(sum(seg.duration_s for seg in self.segments))


class FileArrivals(_Section):
    """Open loop: one session at each arrival time of a file."""

    kind: Literal["file"] = "file"
    path: str
    """Arrival times in seconds: one per line, or a CSV with a column ``arrival_s``."""


class ClosedArrivals(_Section):
    """Closed loop: ``users`` users, each asking again a think time after its answer."""

    kind: Literal["closed"] = "closed"
    users: int = Field(ge=1)
    """How many users ask at once (each has at most one session open)."""
    think_s: float = Field(ge=0, allow_inf_nan=False)
    """Mean (s) of the exponential think time between a user's answer and its next question."""
    n_sessions: int = Field(ge=1)
    """How many sessions start in all (over every user)."""


OpenArrivals = PoissonArrivals | PiecewiseArrivals | FileArrivals
"""The open-loop kinds: arrival instants that do not depend on the system's answers."""
Arrivals = Annotated[PoissonArrivals | PiecewiseArrivals | FileArrivals | ClosedArrivals, Field(discriminator="kind")]


DEFAULT_TRACE_SESSIONS = 10_000
"""A load run's trace holds at most this many sessions unless asked (``load.trace_sessions``):
every session of a run up to that size (the built-in ``load`` scenario's 3,000), and at
≈ 4.3 kB a session at most ≈ 43 MB however long the run (all of a 10⁶-session run: 4.1 GB)."""


class LoadConfig(_Section):
    """``[load]``: many sessions sharing the resources on one clock."""

    arrivals: Arrivals
    warmup_s: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    """Sessions arriving before this are simulated but not counted."""
    reference_sessions: int = Field(default=2000, ge=0)
    """How many of the first sessions are also replayed on unlimited capacity, for the
    report's ``saved_ms`` against the unlimited-capacity saving (0: none)."""
    trace_sessions: Annotated[int, Field(ge=0)] | Literal["all"] = DEFAULT_TRACE_SESSIONS
    """How many sessions ``trace.jsonl`` holds, every event of each: all of them when the
    run has at most this many, else every k-th (k = ⌈n / trace_sessions⌉: sessions 0, k,
    2k, …, spread over the whole run); ``"all"``: every session; 0: no trace."""

    def trace_every(self, n_sessions: int) -> int:
        """Every how many sessions one is traced (0: none; see :attr:`trace_sessions`)."""
        if self.trace_sessions == "all":
            return 1
        if self.trace_sessions == 0:
            return 0
        return max(1, -(-n_sessions // self.trace_sessions))


def session_id(i: int) -> str:
    """The id of session i (traces, ``sessions.csv``)."""
    return f"s{i:07d}"


def question_draws(seed: int, n_questions: int) -> Callable[[int], np.ndarray]:
    """``draw(k)``: the population index the next k sessions ask (uniform, one stream in
    session order; k at a time gives the same values as all at once)."""
    rng = stream(seed, "workload", "questions")
    return lambda k: rng.integers(n_questions, size=k)


def draw_questions(seed: int, n_sessions: int, n_questions: int) -> np.ndarray:
    """The population index each session asks (see :func:`question_draws`)."""
    return question_draws(seed, n_questions)(n_sessions)


def think_draws(seed: int, mean_s: float) -> Callable[[int], np.ndarray]:
    """``draw(k)``: the think time (µs) before each of the next k sessions of a closed loop
    (exponential, one stream)."""
    if mean_s == 0:
        return lambda k: np.zeros(k, dtype=np.int64)
    rng = stream(seed, "workload", "think")
    return lambda k: np.rint(rng.exponential(mean_s, size=k) * US_PER_S).astype(np.int64)


def read_arrival_file(path: str | os.PathLike[str]) -> list[int]:
    """Arrival instants (µs) from a file of seconds (sorted, ≥ 0); errors name the line."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{p}: cannot read the arrivals file ({exc.strerror or exc})") from None
    column = 0
    start = 0
    if lines and not _is_number(lines[0].split(",")[0]):
        header = [h.strip() for h in lines[0].split(",")]
        if "arrival_s" not in header:
            raise InputError(f"{p}:1: arrival_s: no such column (a CSV of arrivals needs a column arrival_s)")
        column, start = header.index("arrival_s"), 1
    out: list[int] = []
    for line_no, line in enumerate(lines[start:], start=start + 1):
        if not line.strip():
            continue
        fields = line.split(",")
        raw = fields[column].strip() if column < len(fields) else ""
        if not _is_number(raw) or float(raw) < 0 or not np.isfinite(float(raw)):
            raise InputError(f"{p}:{line_no}: arrival_s: {raw!r} is not a time in seconds ≥ 0")
        out.append(round(float(raw) * US_PER_S))
    if not out:
        raise InputError(f"{p}: the arrivals file lists no arrival")
    if any(b < a for a, b in itertools.pairwise(out)):
        raise InputError(f"{p}: arrival_s: times must not decrease (sort the file)")
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def open_arrivals(arrivals: OpenArrivals, seed: int, tool_servers: int | None = None, mean_l_ms: float = 0.0) -> Iterator[int]:
    """Arrival instants (µs, non-decreasing) of an open-loop workload; ``tool_servers`` and
    ``mean_l_ms`` turn an ``offered_load`` into a rate (:meth:`_Rated.rate`)."""
    if isinstance(arrivals, FileArrivals):
        yield from read_arrival_file(arrivals.path)
        return
    rng = stream(seed, "workload", "arrivals")
    at = 0.0
    if isinstance(arrivals, PoissonArrivals):
        scale_s = 1.0 / arrivals.rate(tool_servers, mean_l_ms)
        for _ in range(arrivals.n_sessions):
            at += rng.exponential(scale_s)
            yield round(at * US_PER_S)
        return
    end = 0.0
    for segment in arrivals.segments:
        end += segment.duration_s
        scale_s = 1.0 / segment.rate(tool_servers, mean_l_ms)
        while (following := at + rng.exponential(scale_s)) < end:
            at = following
            yield round(at * US_PER_S)
        at = end  # the crossing gap is dropped: memoryless, so the next segment restarts here


def count_open_arrivals(arrivals: OpenArrivals, seed: int, tool_servers: int | None = None, mean_l_ms: float = 0.0) -> int:
    """How many sessions an open-loop workload holds (a piecewise profile's count is drawn)."""
    if isinstance(arrivals, PoissonArrivals):
        return arrivals.n_sessions
    if isinstance(arrivals, FileArrivals):
        return len(read_arrival_file(arrivals.path))
    return sum(1 for _ in open_arrivals(arrivals, seed, tool_servers, mean_l_ms))
