"""Run a sweep into a resumable folder.

Layout of ``OUT/``::

    grid.toml                the grid file as given (provenance)
    plan.json                every point: index, key, axis values, skipped reason
    points/KEY/point.json    the point's overrides and resolved settings
    points/KEY/...           its outputs: results.csv + summary.json (simulate; and
                             trace.jsonl with [output] traces = true), cell.json
                             (streamable), stabilization.csv + summary.json (analyze)
    points/KEY/metrics.json  its row of metrics
    points/KEY/done.json     written last and atomically: the point is finished
    sweep.csv, sweep.parquet the sweep table (:mod:`streamrag.sweep.table`)
    break_even.csv           a load sweep's break-even loads (:mod:`streamrag.sweep.break_even`)
    figures/*.png            (:mod:`streamrag.sweep.figures`; ``--figure-format``'s suffix)
    manifest.json            written last and atomically: the sweep is complete —
                             unless it says ``"interrupted": true`` (and the signal):
                             then the points it lists as computed or reused are
                             finished, the ``pending`` ones not, and ``--resume``
                             finishes the sweep

A point is finished iff its ``done.json`` names its key and the files it lists exist
with the sizes it records. ``resume=True`` skips finished points; anything else in a
point folder is rewritten. Because folders are named by key, a grid extended with new
values resumes into the same folder and computes only the new points; a folder holding
a point this grid does not have (another grid, or values removed) is refused. Without
``resume`` an existing non-empty folder is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamrag.base.atomic import write_bytes_atomic
from streamrag.base.errors import ConfigError
from streamrag.base.system.outputs import check_out_dir
from streamrag.sweep.executors import Executor, SerialExecutor, make_executor
from streamrag.sweep.grid import Grid, load_grid
from streamrag.sweep.inputs import PreparedInputs
from streamrag.sweep.points import FORMAT, Point, SweepPlan, check_selection, plan, prepared_for
from streamrag.sweep.work import PointOutput

DONE = "done.json"
MANIFEST = "manifest.json"


def _json(data: Any) -> bytes:
    return (json.dumps(data, indent=2, allow_nan=False, ensure_ascii=False) + "\n").encode("utf-8")


def point_dir(out: Path, key: str) -> Path:
    return out / "points" / key


def is_done(out: Path, key: str) -> bool:
    """The point's ``done.json`` exists, names ``key``, and its files are all there."""
    folder = point_dir(out, key)
    try:
        done = json.loads((folder / DONE).read_text(encoding="utf-8"))
        return done["key"] == key and all((folder / name).stat().st_size == meta["bytes"] for name, meta in done["files"].items())
    except (OSError, ValueError, KeyError, TypeError):
        return False


@dataclass(frozen=True, slots=True)
class PointDone:
    """Progress event: one more point finished in this run."""

    point: Point
    wall_s: float
    n_done: int
    n_pending: int


@dataclass(slots=True)
class SweepResult:
    """What :func:`run_sweep` did."""

    out: Path
    plan: SweepPlan
    computed: list[str] = field(default_factory=list)
    """Keys computed by this run, in completion order."""
    reused: list[str] = field(default_factory=list)
    """Keys found finished (``resume``)."""
    table: Any = None
    """The sweep table (pandas DataFrame)."""
    files: list[Path] = field(default_factory=list)
    wall_s: float = 0.0


def _write_point(out: Path, point: Point, output: PointOutput) -> None:
    folder = point_dir(out, point.key)
    folder.mkdir(parents=True, exist_ok=True)
    files = dict(output.files)
    files["metrics.json"] = _json(output.metrics)
    for name, data in files.items():
        write_bytes_atomic(folder / name, data)
    done = {
        "key": point.key,
        "files": {name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()} for name, data in files.items()},
        "wall_s": output.wall_s,
    }
    write_bytes_atomic(folder / DONE, _json(done))  # last: the point counts as finished only now


def _point_json(point: Point) -> bytes:
    return _json(
        {
            "index": point.index,
            "key": point.key,
            "values": point.values,
            "overrides": [list(o) for o in point.overrides],
            "settings": point.identity,
            "descriptors": point.descriptors,
        }
    )


def _check_same_grid(out: Path, swept: SweepPlan) -> None:
    """Resume only into a folder whose points are all points of this grid.

    Point folders are named by key, so the rule compares keys: a grid that adds values to
    an axis keeps every old key (and resumes, computing the new points); another base,
    scenario, input or kind, or a grid with values removed, would leave folders this grid
    does not own beside its own, and the folder would no longer say what one grid gave.
    """
    points = out / "points"
    found = sorted(p.name for p in points.iterdir() if p.is_dir()) if points.is_dir() else []
    ours = {p.key for p in swept.points}
    foreign = [key for key in found if key not in ours]
    if foreign:
        raise ConfigError(
            f"--out {out}: made by another grid: {len(found)} point folder(s) here, {len(foreign)} of them not "
            f"points of {swept.grid.name!r} (e.g. points/{foreign[0]}); resume with the grid that made it, or one "
            "that adds values to its axes"
        )


def _plan_json(p: SweepPlan) -> bytes:
    g = p.grid
    return _json(
        {
            "grid": g.name,
            "kind": g.kind,
            "input": g.input.source,
            "axes": [a.name for a in g.axes],
            "points": [{"index": x.index, "key": x.key, "values": x.values, "skipped": x.skipped} for x in p.points],
        }
    )


def _read_metrics(out: Path, key: str) -> dict[str, Any]:
    return json.loads((point_dir(out, key) / "metrics.json").read_text(encoding="utf-8"))


def _executor_info(executor: Executor) -> dict[str, Any]:
    info: dict[str, Any] = {"name": executor.name}
    for attr in ("jobs", "address", "workers"):
        if hasattr(executor, attr):
            info[attr] = getattr(executor, attr)
    return info


def _manifest(
    result: SweepResult,
    executor: dict[str, Any],
    wall_s: dict[str, float],
    command: list[str] | None,
    interrupted: str | None = None,
) -> bytes:
    import platform

    from streamrag.base.formats import FIELD, FORMAT_VERSION
    from streamrag.base.version import __version__
    from streamrag.engine.clock import wall_clock_iso
    from streamrag.sweep.run_files import SweepManifest

    p, g = result.plan, result.plan.grid
    computed, reused = set(result.computed), set(result.reused)
    points = []
    for x in p.points:
        status = "skipped" if x.skipped else "computed" if x.key in computed else "reused" if x.key in reused else "pending"
        entry: dict[str, Any] = {"index": x.index, "key": x.key, "values": x.values, "status": status}
        if x.skipped:
            entry["reason"] = x.skipped
        if x.key in wall_s:
            entry["wall_s"] = wall_s[x.key]
        points.append(entry)
    spec = g.input
    table = result.table
    models = (
        sorted({str(m) for m in table["reflector_model"].dropna()})
        if table is not None and "reflector_model" in table.columns
        else []
    )
    data = {
        FIELD: FORMAT_VERSION,
        "streamrag_version": __version__,
        "format": FORMAT,
        "reflector_models": models,
        "grid": {
            "origin": g.origin,
            "name": g.name,
            "description": g.description,
            "kind": g.kind,
            "on_incompatible": g.on_incompatible,
            "sha256": hashlib.sha256(g.text.encode("utf-8")).hexdigest(),
        },
        "input": {
            "source": spec.source,
            "kind": spec.kind,
            "path": spec.path,
            "split": spec.split,
            "limit": spec.limit,
            "fingerprint": p.inputs.fingerprint(),
        },
        "executor": executor,
        "n_points": len(p.points),
        "n_computed": len(computed),
        "n_reused": len(reused),
        "n_skipped": len(p.skipped),
        "points": points,
        "outputs": [str(f.relative_to(result.out)) for f in result.files],
        "command": command,
        "python": platform.python_version(),
        "wall_s": result.wall_s,
        "created": wall_clock_iso(),
        **({} if interrupted is None else {"interrupted": True, "signal": interrupted}),
    }
    SweepManifest.model_validate(data)
    return _json(data)


def run_sweep(
    grid: Grid | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    resume: bool = False,
    jobs: int = 1,
    scheduler: str | None = None,
    executor: Executor | None = None,
    cache: Any = None,
    on_point: Callable[[PointDone], None] | None = None,
    command: list[str] | None = None,
) -> SweepResult:
    """Validate every point, then compute the unfinished ones into ``out_dir``.

    ``executor`` overrides the choice made by ``jobs`` / ``scheduler`` (see
    :func:`~streamrag.sweep.executors.make_executor`). Streamable points are arithmetic
    and always computed in this process. ``cache`` is the chunk cache used when a data
    input is analyzed. ``on_point`` is called after each point's folder is complete.
    """
    from streamrag.engine.clock import RealClock

    clock = RealClock()
    if not isinstance(grid, Grid):
        grid = load_grid(grid)
    out = Path(out_dir)
    check_out_dir(out, refuse_nonempty=None if resume else "pass --resume to continue that sweep, or choose another folder")
    from streamrag.base.system.signals import Interrupted

    unchanged = f"{out}/ was not changed; rerun the same command"
    try:  # preparing the input (analyzing a data file) can take long: an interrupt leaves the folder as it was
        swept = plan(grid, PreparedInputs(grid.input, cache=cache, jobs=jobs))
        if resume:
            _check_same_grid(out, swept)
        result = SweepResult(out, swept)
        result.reused = [p.key for p in swept.runnable if resume and is_done(out, p.key)]
        pending = [p for p in swept.runnable if p.key not in set(result.reused)]
        check_selection(swept, pending)
        if grid.kind == "streamable":
            executor = SerialExecutor()  # arithmetic on a table: shipping it to workers would cost more
        elif executor is None:
            executor = make_executor(jobs=jobs, scheduler=scheduler)
        shared = {ref: prepared_for(swept, ref) for ref in sorted({p.job.input_ref for p in pending if p.job.input_ref})}
    except KeyboardInterrupt:
        raise Interrupted(unchanged) from None

    wall_s: dict[str, float] = {}
    executor_info: dict[str, Any] = {"name": executor.name}
    started = False
    try:
        with executor:
            executor_info = _executor_info(executor)  # while connected: a Dask cluster's worker count
            out.mkdir(parents=True, exist_ok=True)
            (out / MANIFEST).unlink(missing_ok=True)  # a manifest means "complete"; this run is not yet
            started = True
            write_bytes_atomic(out / "grid.toml", grid.text.encode("utf-8"))
            write_bytes_atomic(out / "plan.json", _plan_json(swept))
            by_key = {p.key: p for p in pending}
            for p in pending:
                point_dir(out, p.key).mkdir(parents=True, exist_ok=True)
                write_bytes_atomic(point_dir(out, p.key) / "point.json", _point_json(p))
            # closing(): if writing or on_point fails, the executor stops its queued points now.
            with contextlib.closing(executor.run([p.job for p in pending], shared)) as outputs:
                for output in outputs:
                    point = by_key[output.key]
                    _write_point(out, point, output)
                    result.computed.append(point.key)
                    wall_s[point.key] = output.wall_s
                    if on_point is not None:
                        on_point(PointDone(point, output.wall_s, len(result.computed), len(pending)))
        result.files = _write_outputs(out, swept, grid, result)
        result.wall_s = clock.now_us() / 1e6
        write_bytes_atomic(out / MANIFEST, _manifest(result, executor_info, wall_s, command))
    except KeyboardInterrupt as exc:
        if not started:  # nothing of this run is in the folder yet
            raise Interrupted(unchanged) from None
        from streamrag.base.atomic import Landed

        if isinstance(exc, Landed):  # the table and figures are in place
            result.files = [out / t.relative_to(out.absolute()) for t in exc.targets]
        _mark_interrupted(result, executor_info, wall_s, command, clock.now_us() / 1e6)
    return result


def _write_outputs(out: Path, swept: SweepPlan, grid: Grid, result: SweepResult) -> list[Path]:
    """The sweep table, break-even loads and figures, from the finished points (they
    appear together: an interrupt leaves none of them half-updated)."""
    from streamrag.base.atomic import together
    from streamrag.sweep.break_even import write_break_even
    from streamrag.sweep.table import build_table, write_table

    metrics = {p.key: _read_metrics(out, p.key) for p in swept.runnable}
    result.table = build_table(swept.runnable, metrics, grid.axes)
    with together():
        files = write_table(result.table, out)
        files += write_break_even(out, result.table)
        if grid.output.figures:
            from streamrag.sweep.figures import write_figures

            files += write_figures(out, result.table, grid)
    return files


def _mark_interrupted(
    result: SweepResult, executor_info: dict[str, Any], wall_s: dict[str, float], command: list[str] | None, now_s: float
) -> None:
    """Write the manifest of an interrupted sweep (``"interrupted": true``, the signal,
    each point's status) and raise :class:`~streamrag.base.system.signals.Interrupted` saying
    how far it got and how to finish it."""
    import shlex

    from streamrag.base.system.signals import Interrupted, held, interrupt_name

    result.wall_s = now_s
    with held(deliver=False):  # a second signal does not cut the mark in two
        write_bytes_atomic(result.out / MANIFEST, _manifest(result, executor_info, wall_s, command, interrupt_name()))
    runnable = len(result.plan.runnable)
    finished = len(result.computed) + len(result.reused)
    again = [*command, *([] if "--resume" in command else ["--resume"])] if command else None
    how = f"finish it with: {shlex.join(again)}" if again else "finish it with run_sweep(..., resume=True)"
    raise Interrupted(
        f"{finished} of {runnable} point(s) finished in {result.out}/ (manifest.json says interrupted); {how}"
    ) from None
