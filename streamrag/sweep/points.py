"""Expand a grid into points, give each a stable key, validate all before any runs.

A point's **key** is the first 16 hex digits of the SHA-256 of the canonical JSON of
``{format, kind, input fingerprint, settings}`` — the *resolved* settings (a scenario
with its latency profile expanded, or the parameters), not the raw overrides. So
``L_ms = 600`` and ``600.0`` are one point, reordering or extending axes keeps every
existing key, and a changed input (content hash) or profile gives new keys. The key
names the point's folder, which is what makes sweeps resumable.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass
from typing import Any, NamedTuple

from streamrag.base.errors import ConfigError, EmptySelectionError
from streamrag.sweep.grid import AxisValue, Grid, Scalar
from streamrag.sweep.inputs import PreparedInputs, ref_analysis
from streamrag.sweep.point_kinds import PointJob, point_kind

FORMAT = 2
"""Version of what a point folder holds; part of every key."""


def point_key(kind: str, fingerprint: dict[str, Any], identity: dict[str, Any]) -> str:
    """The stable key of a point: 16 hex digits of a SHA-256 (see the module docstring)."""
    blob = json.dumps(
        {"format": FORMAT, "kind": kind, "input": fingerprint, "settings": identity},
        sort_keys=True,
        separators=(",", ":"),
        allow_nan=False,
        ensure_ascii=True,
    )
    return hashlib.sha256(blob.encode("ascii")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Point:
    """One grid point, resolved."""

    index: int
    """Position in the grid's expansion (first axis outermost), from 0."""
    key: str
    values: dict[str, Scalar]
    """Axis column → value (the value itself, or a variant's label)."""
    overrides: tuple[tuple[str, Scalar], ...]
    """Every override the point applies, base first, as ``(dotted path, value)``."""
    descriptors: dict[str, Any]
    identity: dict[str, Any]
    job: PointJob
    skipped: str | None = None
    """Why the point is not run (``on_incompatible = "skip"``), else ``None``."""

    def describe(self) -> str:
        """``trigger=oracle, L_ms=300`` (or ``base`` for a grid without axes)."""
        return ", ".join(f"{k}={v}" for k, v in self.values.items()) or "base"


@dataclass(frozen=True, slots=True)
class SweepPlan:
    """A grid's points, validated, with the input they read."""

    grid: Grid
    inputs: PreparedInputs
    points: list[Point]

    @property
    def runnable(self) -> list[Point]:
        return [p for p in self.points if p.skipped is None]

    @property
    def skipped(self) -> list[Point]:
        return [p for p in self.points if p.skipped is not None]


def expand(grid: Grid) -> list[tuple[AxisValue, ...]]:
    """The grid's points as tuples of axis values, first axis outermost."""
    return list(itertools.product(*(axis.values for axis in grid.axes)))


def _fail(grid: Grid, index: int, values: dict[str, Scalar], exc: Exception) -> ConfigError:
    where = ", ".join(f"{k}={v}" for k, v in values.items()) or "base"
    return ConfigError(f"grid {grid.origin}: point {index} ({where}): {exc}")


def _resolved_value(settings: Any, path: str, given: Scalar) -> Scalar:
    """The value the settings hold at ``path`` (validated: a float field given 3 holds
    3.0), or ``given`` when they hold none there or no scalar of the same kind."""
    node: Any = getattr(settings, "scenario", settings)
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else getattr(node, part, None)
        if node is None:
            return given
    numeric = (int, float)
    if isinstance(given, bool) or not isinstance(given, numeric) or isinstance(node, bool) or not isinstance(node, numeric):
        return given
    return node


def plan(grid: Grid, inputs: PreparedInputs) -> SweepPlan:
    """Resolve and validate every point (raises ConfigError naming the first bad one).

    Validation covers the settings of each point, the input's fitness for it (policies
    that need prefix rankings on a table input: an error, or a skipped point when the
    grid says ``on_incompatible = "skip"``) and duplicate points. It does not read the
    questions; :func:`check_selection` does, for the points about to run.
    """
    kind = point_kind(grid)
    fingerprint = inputs.fingerprint()
    base = list(grid.base)
    points: list[Point] = []
    seen: dict[str, int] = {}
    for index, combo in enumerate(expand(grid)):
        values = {axis.name: v.value for axis, v in zip(grid.axes, combo, strict=True)}
        groups = [base, *[list(v.overrides) for v in combo]]
        try:
            resolved = kind.resolve(groups)
        except ConfigError as exc:
            raise _fail(grid, index, values, exc) from None
        if resolved.incompatible and grid.on_incompatible == "error":
            raise _fail(
                grid,
                index,
                values,
                ConfigError(f'{resolved.incompatible}; give a data file as input, or set on_incompatible = "skip"'),
            )
        for axis in grid.axes:  # a value axis shows the resolved value, of its field's type (600 → 600.0)
            if axis.path is not None and axis.name in resolved.descriptors:
                values[axis.name] = resolved.descriptors[axis.name]
            elif axis.path is not None:
                values[axis.name] = _resolved_value(resolved.settings, axis.path, values[axis.name])
        key = point_key(grid.kind, fingerprint, resolved.identity)
        if key in seen:
            raise _fail(grid, index, values, ConfigError(f"same settings as point {seen[key]} (key {key})"))
        seen[key] = index
        data = None
        if grid.kind == "analyze":
            spec = grid.input
            data = {"path": str(spec.data_path), "split": spec.split_arg(), "limit": spec.limit}
        job = PointJob(key, grid.kind, resolved.settings, resolved.input_ref, data, grid.output.traces)
        overrides = tuple(pair for group in groups for pair in group)
        points.append(Point(index, key, values, overrides, resolved.descriptors, resolved.identity, job, resolved.incompatible))
    if not any(p.skipped is None for p in points):
        raise ConfigError(f"grid {grid.origin}: every point is skipped ({points[0].skipped})")
    return SweepPlan(grid, inputs, points)


def check_selection(plan: SweepPlan, points: list[Point]) -> None:
    """Fail (ConfigError naming the point) when a simulate point selects no question."""
    if plan.grid.kind != "simulate":
        return
    from streamrag.simulator.question_select import select_for

    for point in points:
        questions = plan.inputs.questions(ref_analysis(point.job.input_ref))
        try:
            select_for(questions, point.job.settings.scenario.selection())
        except EmptySelectionError as exc:
            raise _fail(plan.grid, point.index, point.values, exc) from None


class StudiedQuestions(NamedTuple):
    """A simulate point's prepared data input: its questions and the analysis's files."""

    questions: Any
    study: dict[str, bytes]


def prepared_for(plan: SweepPlan, ref: str) -> Any:
    """The prepared input a job reads: a table frame, or the questions (with the
    analysis's files when a data input was analyzed for them, :class:`StudiedQuestions`)."""
    if ref.startswith("table"):
        return plan.inputs.table(ref_analysis(ref))
    questions = plan.inputs.questions(ref_analysis(ref))
    study = plan.inputs.study(ref_analysis(ref))
    return StudiedQuestions(questions, study) if study else questions
