"""``streamrag frontier``: every policy over its knob on one harness, read as operating points."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from streamrag.commands._common import add_reference_option, apply_reference

if TYPE_CHECKING:
    from streamrag.sweep.resumable import PointDone

HELP = "every trigger policy over its knob on one harness: operating points, frontier, offline optimum"

EPILOG = """\
examples:
  streamrag generate T.csv --table --questions 1371 --seed 0
  streamrag frontier --input table:T.csv --out runs/frontier --jobs 2
  streamrag frontier my_frontier.toml --out runs/mine --resume
  streamrag frontier --input demo --set latency.profile=mine.toml --set input.delta_wps=2.5 --out runs/mine

GRID (default: the built-in `frontier` grid) is a simulate grid with a variants axis
`policy` whose entries are policies and whose list-valued key is each policy's knob.
The sweep runs into --out as `streamrag sweep` does (resumable, points/KEY/); then the
frontier step writes, in --out/frontier/: frontier.csv (one row per point: saved ms,
extra calls, mis-fire and net-negative rates, each with a bootstrap CI; on_frontier;
optimum_saved_ms, pct_of_optimal, regret_ms), operating_points.csv (per policy: at
budgets of 0.25/0.5/1/2 extra calls per question, and at savings of 300/600 ms),
optimum.csv (each question's offline optimum), leaderboard.md, frontier.pdf/.svg.
--set KEY=VALUE goes into the grid's [base] for every point (a file it names is relative
to the current folder); the run folder's grid.toml holds the grid as run.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "frontier", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "grid", nargs="?", default="frontier", metavar="GRID", help="frontier grid TOML or built-in name (default frontier)"
    )
    p.add_argument("--out", required=True, metavar="DIR", help="run folder (the sweep's, and frontier/ inside it)")
    p.add_argument("--input", metavar="SOURCE", help="replace the grid's input (table:PATH, data:PATH, demo, generated:N)")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="worker processes for the sweep and the optimum (default 1)")
    p.add_argument("--resume", action="store_true", help="continue the sweep in DIR: finished points are not recomputed")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="B", help="bootstrap resamples over questions (default 1000)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the bootstrap resamples (default 0)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        dest="overrides",
        metavar="KEY=VALUE",
        help="a scenario setting for every point, over the grid's [base] (repeatable)",
    )
    add_reference_option(p)
    p.add_argument("--scheduler", metavar="ADDRESS", help="run points on this Dask distributed scheduler (tcp://host:port)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from streamrag.base.errors import ConfigError
    from streamrag.base.progress import task_progress
    from streamrag.sweep.executors import check_parallelism
    from streamrag.sweep.frontier.leaderboard import write_frontier
    from streamrag.sweep.frontier.operating import check_frontier_grid, compute_frontier
    from streamrag.sweep.grid import load_grid
    from streamrag.sweep.resumable import run_sweep

    check_parallelism(args.jobs, args.scheduler)
    apply_reference(args)
    if args.bootstrap < 1:
        raise ConfigError(f"--bootstrap: must be ≥ 1, got {args.bootstrap}")
    grid = load_grid(args.grid, input=args.input, sets=args.overrides)
    check_frontier_grid(grid)
    # The sweep's own figures would repeat the frontier's: it draws its own.
    grid = grid.model_copy(update={"output": grid.output.model_copy(update={"figures": False})})
    if grid.input.kind == "data":
        from streamrag.commands.sweep import _cache

        cache = _cache()
    else:
        cache = None
    command = ["streamrag", "frontier", args.grid, "--out", args.out, "--jobs", str(args.jobs)]
    if args.input:
        command += ["--input", args.input]
    if args.bootstrap != 1000 or args.seed != 0:
        command += ["--bootstrap", str(args.bootstrap), "--seed", str(args.seed)]
    for item in args.overrides:
        command += ["--set", item]
    if args.scheduler:
        command += ["--scheduler", args.scheduler]
    if args.resume:
        command.append("--resume")
    with task_progress(f"frontier {grid.name}: points", None) as update:
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
            cache=cache,
            on_point=on_point,
            command=command,
        )
    n = sum(1 for e in result.plan.inputs.questions().entries) if grid.input.trace_driven else None
    try:
        with task_progress("frontier: offline optimum", n, unit="items") as progress:
            done = [0]

            def on_optimum(k: int) -> None:
                done[0] += k
                if progress is not None:
                    progress(done[0])

            frontier = compute_frontier(result, n_boot=args.bootstrap, seed=args.seed, jobs=args.jobs, on_optimum=on_optimum)
        files = write_frontier(Path(args.out) / "frontier", frontier, title=grid.description or grid.name)
    except KeyboardInterrupt as exc:  # the sweep is complete; the frontier step is not (or just landed)
        import shlex

        from streamrag.base.atomic import Landed
        from streamrag.base.system.signals import Interrupted

        if isinstance(exc, Landed):
            raise Interrupted(f"the sweep and {Path(args.out) / 'frontier'}/ are complete (written as the signal came)") from None
        again = shlex.join([*command, *([] if args.resume else ["--resume"])])
        raise Interrupted(
            f"the sweep in {args.out}/ is complete, {Path(args.out) / 'frontier'}/ was not written (nor changed); "
            f"draw it with: {again} (no point is recomputed)"
        ) from None
    for skipped in result.plan.skipped:
        print(f"skipped point {skipped.describe()}: {skipped.skipped}", file=sys.stderr)
    print(
        f"frontier {grid.name}: {len(result.plan.runnable)} point(s) ({len(result.computed)} computed, "
        f"{len(result.reused)} reused), {frontier.points['policy'].nunique()} policies; wrote " + ", ".join(str(f) for f in files)
    )
    return 0
