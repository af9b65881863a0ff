"""``streamrag report RUN_DIR``: a run folder as one self-contained HTML page;
``streamrag report RUN_A RUN_B``: two simulation runs compared question by question."""

from __future__ import annotations

import argparse
import textwrap

HELP = "write one self-contained HTML page of a run (analysis, simulation, sweep or load) that opens offline"

EPILOG = """\
With a second run folder: one page comparing two simulation runs question by question —
the per-question deltas (B − A), the Wilcoxon test and the mis-fires of 'streamrag compare
RUN_A RUN_B', the settings that differ, and both runs' figures side by side (default
RUN_A/report-vs-NAME_OF_B.html). Runs of different kinds, or with no replayed question in
common, are refused; overlapping question sets are compared on the questions both replayed.

examples:
  streamrag report runs/rq3
  streamrag report runs/rq3 runs/rq3-gold --out heuristic-vs-gold.html
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help=HELP,
        description=textwrap.fill(
            f"{HELP[0].upper()}{HELP[1:]}: settings and provenance, summary tables, figures (SVG), a sortable and "
            "filterable per-question table and, for runs with a trace, every question's timeline (mis-fires first) "
            "and the whole run's Perfetto file beside the page; a frontier run's leaderboard.",
            88,
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run folder (the --out of analyze, simulate or sweep)")
    p.add_argument(
        "run_b", nargs="?", metavar="RUN_B", help="a second simulation run: one page comparing RUN_DIR (A) with it (B)"
    )
    p.add_argument(
        "--out", metavar="FILE.html", help="the page (default: RUN_DIR/report.html; with RUN_B: RUN_DIR/report-vs-NAME_OF_B.html)"
    )
    p.add_argument(
        "--max-timelines",
        type=int,
        metavar="N",
        help="keep the timelines of the first N questions only (mis-fires first; default: all)",
    )
    p.add_argument(
        "--no-text",
        action="store_true",
        help="do not read the run's CRAG input for the question texts (a full CRAG file takes minutes to decode)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from streamrag.base.errors import ConfigError
    from streamrag.base.system.outputs import check_out_file

    if args.max_timelines is not None and args.max_timelines < 0:
        raise ConfigError(f"--max-timelines: {args.max_timelines} is negative")
    out = None if args.out is None else check_out_file(args.out, option="--out")
    if args.run_b is not None:
        if args.max_timelines is not None:
            raise ConfigError("--max-timelines: a page of one run's timelines; the page of two runs draws none")
        from streamrag.report.pair import write_pair_report

        pair = write_pair_report(args.run_dir, args.run_b, out, texts=not args.no_text)
        size_kb = pair.html.stat().st_size / 1024
        print(f"wrote {pair.html} ({size_kb:.0f} KiB: {pair.n_matched} questions compared)")
        return 0
    from streamrag.report.build import write_report

    report = write_report(args.run_dir, out, max_timelines=args.max_timelines, texts=not args.no_text)
    size_kb = report.html.stat().st_size / 1024
    print(f"wrote {report.html} ({size_kb:.0f} KiB: {report.n_rows} rows, {report.n_timelines} timelines)")
    if report.perfetto is not None:
        print(f"wrote {report.perfetto} (the whole run for ui.perfetto.dev)")
    return 0
