"""``streamrag sweep``: run a grid of analysis or simulation points (resumable, parallel)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streamrag.data.chunk_cache import ChunkCache
    from streamrag.sweep.resumable import PointDone

HELP = "run a grid of settings (sweep table, figures), in parallel or on Dask, resumable"

EPILOG = """\
examples:
  streamrag sweep paper_rq2 --out runs/rq2                      # built-in grid, its default input
  streamrag sweep paper_rq2 --input table:stabilization.csv --out runs/rq2-mine
  streamrag sweep sim/grids/triggers.toml --out runs/triggers --jobs 2
  streamrag sweep triggers --out runs/triggers --resume         # finish an interrupted sweep
  streamrag sweep triggers --out runs/triggers --scheduler tcp://10.0.0.5:8786

Inputs: table:PATH (stabilization table), data:PATH (CRAG file, full mode), demo,
generated:N[:seed=S] (synthetic table calibrated to the anchor study).
Outputs in --out: sweep.csv and sweep.parquet (one row per point), figures/,
points/KEY/ (each point's files), manifest.json (written last).
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("grid", metavar="GRID", help="grid TOML file, or a built-in grid name (every one: streamrag list grids)")
    p.add_argument("--out", required=True, metavar="DIR", help="run folder")
    p.add_argument("--resume", action="store_true", help="continue the sweep in DIR: finished points are not recomputed")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="worker processes on this machine (default 1)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run points on this Dask distributed scheduler (tcp://host:port)")
    p.add_argument("--input", metavar="SOURCE", help="replace the grid's input (table:PATH, data:PATH, demo, generated:N)")
    p.set_defaults(run=run)


def _command(args: argparse.Namespace) -> list[str]:
    cmd = ["streamrag", "sweep", args.grid, "--out", args.out, "--jobs", str(args.jobs)]
    if args.resume:
        cmd.append("--resume")
    if args.scheduler:
        cmd += ["--scheduler", args.scheduler]
    if args.input:
        cmd += ["--input", args.input]
    return cmd


def run(args: argparse.Namespace) -> int:
    from collections import Counter

    from streamrag.base.figures import FORMATS
    from streamrag.base.progress import task_progress
    from streamrag.commands._logging import say
    from streamrag.sweep.executors import check_parallelism
    from streamrag.sweep.grid import load_grid
    from streamrag.sweep.resumable import run_sweep

    check_parallelism(args.jobs, args.scheduler)
    grid = load_grid(args.grid, input=args.input)

    with task_progress(f"sweep {grid.name}: points", None) as update:
        on_point = None
        if update is not None:

            def on_point(event: PointDone) -> None:
                update(event.n_done, event.n_pending)

        result = run_sweep(
            grid,
            args.out,
            resume=args.resume,
            jobs=args.jobs,
            scheduler=args.scheduler,
            cache=None if grid.input.trace_driven else _cache(),
            on_point=on_point,
            command=_command(args),
        )
    if "reflector_model" in result.table.columns:
        for model in sorted({str(m) for m in result.table["reflector_model"].dropna()}):
            say(f"reflector: {model}", event="reflector", model=model)
    skipped = Counter(p.skipped for p in result.plan.skipped)
    for reason, n in skipped.items():
        say(f"skipped {n} point(s): {reason}", event="points skipped", n_points=n, reason=reason)
    print(
        f"sweep {grid.name}: {len(result.plan.runnable)} point(s), {len(result.computed)} computed, "
        f"{len(result.reused)} reused, {len(result.plan.skipped)} skipped, in {result.wall_s:.1f} s; "
        f"wrote {result.out}/sweep.csv, sweep.parquet, {sum(1 for f in result.files if f.suffix in FORMATS)} figure(s)"
    )
    return 0


def _cache() -> ChunkCache:
    """The default chunk cache (data inputs are chunked once, then read from it)."""
    from streamrag.data.chunk_cache import ChunkCache, default_cache_dir

    return ChunkCache(default_cache_dir())
