"""Operating points on one frontier: a finished policy sweep read as a deployer's decision.

A frontier grid (``sim/grids/frontier.toml``) is a simulate grid with a variants axis
named ``policy``: each entry a policy, a list-valued key its knob (a *family*,
:mod:`~streamrag.sweep.grid`). Every point runs the same scenario, questions, seeds and
latency draws; only the trigger differs. Other axes (say ``latency.L_ms``) make groups,
each its own frontier. Per point, over the replayed questions (design §10):

- ``extra_calls`` = tool calls − 1 per question (the baseline makes one call), its cost:
  the calls fired and, for a policy whose rankings are searches on the tool
  (``pipeline.ranking = "tool"``), one per word ranked (:func:`tool_calls`);
  ``saved_ms``, its benefit; ``misfire`` and ``negative`` (saved < 0) rates, its risk;
- ``on_frontier``: on the upper envelope of (mean extra calls, mean saved ms) over the
  deployable points of the group (not dominated: no other point has fewer or equal extra
  calls and more or equal saving, one strictly; ``oracle`` knows t*: a bound, never on it);
  ``policy_frontier``: the same within the point's policy;
- ``optimum_saved_ms``: the mean offline optimum (:mod:`streamrag.simulator.predict.optimum`) of
  the same questions; ``pct_of_optimal`` = 100 · mean saved / mean optimum;
  ``regret_ms`` = mean optimum − mean saved. The optimum makes no extra call, so the
  regret of a point's score at a price λ per call is ``regret_ms + λ · extra_calls``.

Operating points per policy (``operating_points.csv``):

- at **budget** b ∈ :data:`BUDGETS` extra calls per question: the policy's point with
  the most saving among those with mean extra calls ≤ b (undefined when none is);
- at **saving** s ∈ :data:`SAVINGS` ms: the policy's cheapest point (fewest extra calls,
  then most saving) with mean saved ≥ s, and its mis-fire and net-negative rates.

The three tables are declared in :mod:`~streamrag.sweep.frontier.tables`: the group columns (the grid's other axes) first, typed as in the sweep
table, then the declared ones, each of one type whatever the values (a knob's value is a
number: ``knob_value`` is a float).

Every estimate has a percentile bootstrap CI over questions (:func:`bootstrap_weights`:
``n_boot`` resamples of the questions drawn from ``seed``, the same resamples for every
point, and an operating point is re-chosen in every resample, so its CI includes the
choice). Same seed, same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from streamrag.base.errors import ConfigError
from streamrag.sweep.frontier.tables import FRONTIER_POINTS, OPERATING_POINTS, OPTIMA

if TYPE_CHECKING:
    import pandas as pd

    from streamrag.base.columns import TableKind
    from streamrag.simulator.predict.optimum import Optimum
    from streamrag.sweep.grid import Grid
    from streamrag.sweep.resumable import SweepResult

BUDGETS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0)
"""Extra calls per question a deployer may spend (operating points at budget b)."""
SAVINGS: tuple[float, ...] = (300.0, 600.0)
"""Savings (ms) at which a policy's risk is read (its cheapest point reaching them)."""
POLICY_AXIS = "policy"
LEVEL = 0.95
"""Confidence level of the bootstrap intervals."""


@dataclass(frozen=True, slots=True)
class PointRow:
    """What the frontier knows of one point before aggregation."""

    label: str
    policy: str
    knob: str
    knob_value: Any
    trigger: str
    group: tuple[tuple[str, Any], ...]
    key: str


def bootstrap_weights(n: int, n_boot: int, seed: int) -> np.ndarray:
    """``(n_boot, n)`` resample counts of n questions (each row sums to n), from ``seed``."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed), 25])))
    draws = rng.integers(0, n, size=(n_boot, n))
    return np.stack([np.bincount(row, minlength=n) for row in draws]).astype(np.float64)


def _ci(samples: np.ndarray) -> tuple[float | None, float | None]:
    ok = samples[np.isfinite(samples)]
    if ok.size == 0:
        return None, None
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(ok, [tail, 100 - tail])
    return float(low), float(high)


def check_frontier_grid(grid: Grid) -> None:
    """A frontier grid is a simulate grid with a variants axis ``policy`` whose knobs take
    numbers (``knob_value`` is a float column); else a ConfigError, before anything runs."""
    axes = {a.name: a for a in grid.axes}
    if grid.kind != "simulate" or POLICY_AXIS not in axes:
        raise ConfigError(f"grid {grid.origin}: a frontier grid is a simulate grid with a variants axis [axes.{POLICY_AXIS}]")
    for v in axes[POLICY_AXIS].values:
        value = dict(v.overrides)[v.knob] if v.knob else None
        if isinstance(value, bool) or not isinstance(value, int | float | None):
            raise ConfigError(
                f"grid {grid.origin}: policy {v.family!r}: its knob {v.knob} takes {value!r}; a frontier's knob is a "
                "number (give each other value a variant of its own)"
            )


def _policy_points(result: SweepResult) -> list[PointRow]:
    grid = result.plan.grid
    check_frontier_grid(grid)
    axes = {a.name: a for a in grid.axes}
    variants = {v.label: v for v in axes[POLICY_AXIS].values}
    rows = []
    for p in result.plan.runnable:
        v = variants[str(p.values[POLICY_AXIS])]
        value = dict(v.overrides)[v.knob] if v.knob else None
        group = tuple((name, p.values[name]) for name in axes if name != POLICY_AXIS)
        knob = (v.knob or "").rsplit(".", 1)[-1]
        rows.append(PointRow(v.label, v.family or v.label, knob, value, str(p.descriptors["trigger"]), group, p.key))
    return rows


def _check_one_harness(result: SweepResult, keys: list[str]) -> Any:
    """The group's scenario (ConfigError if its points differ in more than the trigger)."""
    by_key = {p.key: p for p in result.plan.runnable}
    first = by_key[keys[0]]

    def rest(point: Any) -> dict[str, Any]:
        """The scenario less what a policy is: its trigger and what its rankings cost."""
        scenario = {k: v for k, v in point.identity["scenario"].items() if k != "trigger"}
        pipeline = scenario.get("pipeline")
        if isinstance(pipeline, dict):
            scenario["pipeline"] = {k: v for k, v in pipeline.items() if k not in ("ranking", "local_rank_ms")}
        return scenario

    if first.job.settings.scenario.load is not None:
        raise ConfigError(
            f"grid {result.plan.grid.origin}: a frontier replays questions one at a time; its scenario has a [load] "
            "section (shared capacity), where the offline optimum's argument does not hold"
        )
    for key in keys[1:]:
        if rest(by_key[key]) != rest(first):
            raise ConfigError(
                f"grid {result.plan.grid.origin}: points {first.describe()} and {by_key[key].describe()} differ in more than "
                "the trigger and its pipeline.ranking; a frontier compares policies on one harness (move the other settings "
                "to an axis)"
            )
    return first.job.settings


def _matrix(result: SweepResult, keys: list[str]) -> tuple[list[str], dict[str, np.ndarray]]:
    from streamrag.sweep.table import read_point_results

    ids: list[str] | None = None
    cols: dict[str, list[np.ndarray]] = {"saved_ms": [], "extra_calls": [], "misfire": [], "negative": []}
    for key in keys:
        df = read_point_results(result.out, key)
        df = df[df["skip_reason"].isna() | (df["skip_reason"] == "")]
        these = df["interaction_id"].astype(str).tolist()
        if ids is None:
            ids = these
        elif these != ids:
            raise ConfigError(f"point {key}: replayed other questions than the group's first point")
        cols["saved_ms"].append(df["saved_ms"].to_numpy(dtype=float))
        cols["extra_calls"].append(tool_calls(df, _ranking(result, key)) - 1)
        cols["misfire"].append(df["misfire"].astype(str).eq("True").to_numpy(dtype=float))
        cols["negative"].append(df["negative"].astype(str).eq("True").to_numpy(dtype=float))
    return ids or [], {name: np.stack(v) for name, v in cols.items()}


def _ranking(result: SweepResult, key: str) -> str:
    return str(next(p for p in result.plan.runnable if p.key == key).job.settings.scenario.pipeline.ranking)


def tool_calls(results: Any, ranking: str) -> np.ndarray:
    """Tool calls per question of a point's ``results`` (a frame of ``results.csv``): the
    calls fired and, with ``pipeline.ranking = "tool"``, a search per ranking of a word prefix."""
    calls = results["calls_fired"].to_numpy(dtype=float)
    return calls + results["rankings"].to_numpy(dtype=float) if ranking == "tool" else calls


def _envelope(x: np.ndarray, y: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Not dominated among the ``ok`` points (fewer-or-equal x and more-or-equal y, one strict)."""
    out = np.zeros(len(x), dtype=bool)
    for i in np.flatnonzero(ok):
        dominated = ok & (x <= x[i]) & (y >= y[i]) & ((x < x[i]) | (y > y[i]))
        out[i] = not dominated.any()
    return out


def _best_under_budget(extra: np.ndarray, saved: np.ndarray, members: np.ndarray, budget: float) -> np.ndarray:
    """Per row of ``(R, P)`` arrays: the index of the most-saving member with extra ≤ budget (−1: none)."""
    allowed = members[None, :] & (extra <= budget + 1e-12)
    masked = np.where(allowed, saved, -np.inf)
    best = masked.argmax(axis=1)
    return np.where(allowed.any(axis=1), best, -1)


def _cheapest_reaching(extra: np.ndarray, saved: np.ndarray, members: np.ndarray, level: float) -> np.ndarray:
    """Per row: the member with the fewest extra calls (then most saving) among saved ≥ level (−1: none)."""
    allowed = members[None, :] & (saved >= level)
    order_key = np.where(allowed, extra - saved * 1e-9, np.inf)
    best = order_key.argmin(axis=1)
    return np.where(allowed.any(axis=1), best, -1)


def _pick(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    out = np.full(len(idx), np.nan)
    ok = idx >= 0
    out[ok] = values[np.flatnonzero(ok), idx[ok]]
    return out


@dataclass(frozen=True, slots=True)
class Frontier:
    """The frontier's tables (pandas) and each group's optima."""

    points: pd.DataFrame
    operating: pd.DataFrame
    optima: pd.DataFrame
    n_boot: int
    seed: int


def compute_frontier(
    result: SweepResult, *, n_boot: int = 1000, seed: int = 0, jobs: int = 1, on_optimum: Any = None
) -> Frontier:
    """Read a finished frontier sweep (see the module docstring); ``jobs`` processes compute the optima."""

    from streamrag.simulator.predict.optimum import optima
    from streamrag.simulator.question_select import select_for
    from streamrag.sweep.table import table_dtypes

    if n_boot < 1:
        raise ConfigError(f"--bootstrap: must be ≥ 1, got {n_boot}")
    rows = _policy_points(result)
    groups: dict[tuple[tuple[str, Any], ...], list[PointRow]] = {}
    for r in rows:
        groups.setdefault(r.group, []).append(r)
    point_rows: list[dict[str, Any]] = []
    operating: list[dict[str, Any]] = []
    optimum_rows: list[dict[str, Any]] = []
    for group, members in groups.items():
        keys = [m.key for m in members]
        rs = _check_one_harness(result, keys)
        ids, cols = _matrix(result, keys)
        selected = select_for(result.plan.inputs.questions(_analysis_of(result, keys[0])), rs.scenario.selection())
        questions = {q.interaction_id: q for q in selected.questions}
        opts: list[Optimum] = optima([questions[i] for i in ids], rs, jobs=jobs, on_progress=on_optimum)
        opt = np.array([o.saved_ms for o in opts])
        optimum_rows += [
            {
                **dict(group),
                "interaction_id": o.interaction_id,
                "optimum_saved_ms": o.saved_ms,
                "optimum_fire_t": o.fire_t,
                "n_candidates": o.n_candidates,
            }
            for o in opts
        ]
        point_rows += _point_table(group, members, cols, opt, n_boot, seed)
        operating += _operating_points(group, members, cols, opt, n_boot, seed)
    group_names = [name for name, _ in rows[0].group] if rows else []
    extra = {name: dtype for name, dtype in table_dtypes(result.out).items() if name in group_names}

    def frame(kind: TableKind, records: list[dict[str, Any]]) -> pd.DataFrame:
        return kind.frame(records, [*group_names, *kind.columns], extra)

    return Frontier(
        frame(FRONTIER_POINTS, point_rows), frame(OPERATING_POINTS, operating), frame(OPTIMA, optimum_rows), n_boot, seed
    )


def _analysis_of(result: SweepResult, key: str) -> Any:
    from streamrag.sweep.inputs import ref_analysis

    point = next(p for p in result.plan.runnable if p.key == key)
    return ref_analysis(point.job.input_ref)


def _resampled(
    cols: dict[str, np.ndarray], opt: np.ndarray, n_boot: int, seed: int
) -> tuple[dict[str, np.ndarray], float, np.ndarray]:
    """The bootstrap over questions both tables use (the same seeded weights): each column's
    resampled means (B, P), the optimum's mean and its resampled means (B,)."""
    n = opt.size
    w = bootstrap_weights(n, n_boot, seed)
    return {name: w @ m.T / n for name, m in cols.items()}, float(opt.mean()), w @ opt / n


def _point_table(
    group: tuple[tuple[str, Any], ...],
    members: list[PointRow],
    cols: dict[str, np.ndarray],
    opt: np.ndarray,
    n_boot: int,
    seed: int,
) -> list[dict[str, Any]]:
    n = opt.size
    means = {name: m.mean(axis=1) for name, m in cols.items()}
    boot, opt_mean, opt_boot = _resampled(cols, opt, n_boot, seed)
    bound = np.array([m.policy == "oracle" or m.trigger == "oracle" for m in members])
    on_frontier = _envelope(means["extra_calls"], means["saved_ms"], ~bound)
    out = []
    for i, m in enumerate(members):
        same = np.array([o.policy == m.policy for o in members])
        own = _envelope(means["extra_calls"], means["saved_ms"], same)
        row: dict[str, Any] = {
            **dict(group),
            "policy": m.policy,
            "knob": m.knob or None,
            "knob_value": m.knob_value,
            "label": m.label,
            "trigger": m.trigger,
            "n_questions": n,
        }
        for name in ("extra_calls", "saved_ms", "misfire", "negative"):
            stat = "mean" if name in ("extra_calls", "saved_ms") else "rate"
            low, high = _ci(boot[name][:, i])
            row.update({f"{name}.{stat}": float(means[name][i]), f"{name}.ci_low": low, f"{name}.ci_high": high})
        pct = 100 * boot["saved_ms"][:, i] / np.where(opt_boot > 0, opt_boot, np.nan)
        row["optimum_saved_ms"] = opt_mean
        row["pct_of_optimal"] = 100 * float(means["saved_ms"][i]) / opt_mean if opt_mean > 0 else None
        row["pct_of_optimal.ci_low"], row["pct_of_optimal.ci_high"] = _ci(pct)
        row["regret_ms"] = opt_mean - float(means["saved_ms"][i])
        row["regret_ms.ci_low"], row["regret_ms.ci_high"] = _ci(opt_boot - boot["saved_ms"][:, i])
        row["bound"] = bool(bound[i])
        row["on_frontier"] = bool(on_frontier[i])
        row["policy_frontier"] = bool(own[i])
        out.append(row)
    return out


def _operating_points(
    group: tuple[tuple[str, Any], ...],
    members: list[PointRow],
    cols: dict[str, np.ndarray],
    opt: np.ndarray,
    n_boot: int,
    seed: int,
) -> list[dict[str, Any]]:
    full = {name: m.mean(axis=1)[None, :] for name, m in cols.items()}  # (1, P)
    boot, opt_mean, opt_boot = _resampled(cols, opt, n_boot, seed)
    out = []
    for policy in dict.fromkeys(m.policy for m in members):
        mine = np.array([m.policy == policy for m in members])
        for budget in BUDGETS:
            idx = int(_best_under_budget(full["extra_calls"], full["saved_ms"], mine, budget)[0])
            bidx = _best_under_budget(boot["extra_calls"], boot["saved_ms"], mine, budget)
            saved_b = _pick(boot["saved_ms"], bidx)
            row = _op_row(group, policy, "budget", budget, members, idx, full)
            row["saved_ms.ci_low"], row["saved_ms.ci_high"] = _ci(saved_b)
            row["pct_of_optimal"] = None if idx < 0 or opt_mean <= 0 else 100 * row["saved_ms.mean"] / opt_mean
            row["pct_of_optimal.ci_low"], row["pct_of_optimal.ci_high"] = _ci(
                100 * saved_b / np.where(opt_boot > 0, opt_boot, np.nan)
            )
            row["regret_ms"] = None if idx < 0 else opt_mean - row["saved_ms.mean"]
            out.append(row)
        for level in SAVINGS:
            idx = int(_cheapest_reaching(full["extra_calls"], full["saved_ms"], mine, level)[0])
            bidx = _cheapest_reaching(boot["extra_calls"], boot["saved_ms"], mine, level)
            row = _op_row(group, policy, "saving", level, members, idx, full)
            for name in ("misfire", "negative"):
                row[f"{name}.ci_low"], row[f"{name}.ci_high"] = _ci(_pick(boot[name], bidx))
            out.append(row)
    return out


def _op_row(
    group: tuple[tuple[str, Any], ...],
    policy: str,
    at: str,
    level: float,
    members: list[PointRow],
    idx: int,
    full: dict[str, np.ndarray],
) -> dict[str, Any]:
    row: dict[str, Any] = {**dict(group), "policy": policy, "at": at, "level": level}
    chosen = members[idx] if idx >= 0 else None
    row["label"] = chosen.label if chosen else None
    row["knob_value"] = chosen.knob_value if chosen else None
    for name, stat in (("extra_calls", "mean"), ("saved_ms", "mean"), ("misfire", "rate"), ("negative", "rate")):
        row[f"{name}.{stat}"] = float(full[name][0, idx]) if chosen else None
    return row
