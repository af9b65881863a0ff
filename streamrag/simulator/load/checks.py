"""What a load run may ask for, checked before it starts (issue 33).

- At most :data:`MAX_LOAD_SESSIONS` sessions: a run's memory is flat in its sessions
  (:mod:`~streamrag.simulator.load.measures`) except at the end, where the summary's exact
  percentiles read one column of every session at a time; 10¹² sessions are refused at
  once instead of ending in a memory error.
- An open-loop workload whose every session arrives within ``load.warmup_s`` would count
  none: refused, with the instant of the last arrival.
- An offered load ρ ≥ 1 on the tool servers (λ·E[L]/c, λ the workload's mean arrival
  rate) runs, with a warning: the baseline system cannot keep up, its queue (and the run's
  memory and time) grows with the sessions, and no steady state exists.
"""

from __future__ import annotations

from typing import NamedTuple

from streamrag.base.errors import ConfigError
from streamrag.simulator.load.workload import (
    US_PER_S,
    ClosedArrivals,
    FileArrivals,
    PoissonArrivals,
    count_open_arrivals,
    open_arrivals,
)
from streamrag.simulator.scenario import ResolvedScenario

MAX_LOAD_SESSIONS = 10_000_000
"""The most sessions one load run takes: the summary step holds a few 8-byte columns of
every session at once, and the session table takes 124 bytes per session on disk with
the built-in scenario (a trace about 4.3 kB)."""


def tool_servers(rs: ResolvedScenario) -> int | None:
    """Servers of the tool backend (None: unlimited)."""
    tool = rs.scenario.resources.tool
    return getattr(tool, "servers", None) or getattr(tool, "max_batch", None)


def n_sessions(rs: ResolvedScenario) -> int:
    """How many sessions the scenario's workload holds (a piecewise profile's count is drawn)."""
    arrivals = rs.scenario.load.arrivals  # type: ignore[union-attr]
    if isinstance(arrivals, ClosedArrivals):
        return arrivals.n_sessions
    return count_open_arrivals(arrivals, rs.scenario.seed, tool_servers(rs), rs.stages.L.mean_ms)


class LoadCheck(NamedTuple):
    n_sessions: int
    last_arrival_s: float | None
    """When the last session arrives (open loop; None: closed loop, not known before)."""
    offered_load: float | None
    """λ·E[L]/c on the tool servers (None: unlimited tool, or a closed loop)."""
    warnings: tuple[str, ...]


def check_load(rs: ResolvedScenario) -> LoadCheck:
    """The run's size, refused (:class:`ConfigError`) when it cannot be run or would count
    no session, with warnings for what runs but misleads (see the module docstring)."""
    load = rs.scenario.load
    if load is None:
        raise ConfigError("the scenario has no [load] section")
    arrivals = load.arrivals
    n = n_sessions(rs)
    field = "load.arrivals.path" if isinstance(arrivals, FileArrivals) else "load.arrivals.n_sessions"
    if n > MAX_LOAD_SESSIONS:
        raise ConfigError(
            f"{field}: {n:,} sessions, more than the {MAX_LOAD_SESSIONS:,} a load run takes "
            f"(MAX_LOAD_SESSIONS: its summary holds a few 8-byte columns of every session in memory); run fewer, "
            "or several runs with different seeds"
        )
    if isinstance(arrivals, ClosedArrivals):
        return LoadCheck(n, None, None, ())
    servers = tool_servers(rs)
    rate = arrivals.rate(servers, rs.stages.L.mean_ms) if isinstance(arrivals, PoissonArrivals) else 0.0
    last_us = 0
    for at_us in open_arrivals(arrivals, rs.scenario.seed, servers, rs.stages.L.mean_ms):
        last_us = at_us
    last_s = last_us / US_PER_S
    if load.warmup_s > 0 and last_s < load.warmup_s:
        raise ConfigError(
            f"load.warmup_s: {load.warmup_s:g} s is longer than the run: all {n:,} sessions arrive by {last_s:.1f} s, so none "
            "would be counted; lower load.warmup_s or raise the number of sessions"
        )
    if not isinstance(arrivals, PoissonArrivals):  # a file or a piecewise profile: its mean rate
        rate = n / last_s if last_s > 0 else 0.0
    rho = None if not servers or not rate else rate * rs.stages.L.mean_ms / 1000 / servers
    warnings: tuple[str, ...] = ()
    if rho is not None and rho >= 1:
        warnings = (
            f"offered load {rho:.2f} ≥ 1 on the {servers} tool servers: the baseline system cannot keep up, its tool "
            "queue (and the run's memory and time) grows with every session and no steady state exists; "
            "its percentiles describe a growing backlog",
        )
    return LoadCheck(n, last_s, rho, warnings)
