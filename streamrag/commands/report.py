"""``streamrag report RUN_DIR``: a run folder as one self-contained HTML page."""

from __future__ import annotations

import argparse

HELP = "write one self-contained HTML page of a run (analysis, simulation, sweep or load) that opens offline"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help=HELP,
        description=f"{HELP[0].upper()}{HELP[1:]}: settings and provenance, summary tables, figures (SVG), a "
        "sortable and filterable per-question table and, for runs with a trace, every question's timeline "
        "(mis-fires first) and the whole run's Perfetto file beside the page.",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run folder (the --out of analyze, simulate or sweep)")
    p.add_argument("--out", metavar="FILE.html", help="the page (default: RUN_DIR/report.html)")
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
    from streamrag.base.outputs import check_out_file
    from streamrag.report.build import write_report

    if args.max_timelines is not None and args.max_timelines < 0:
        raise ConfigError(f"--max-timelines: {args.max_timelines} is negative")
    out = None if args.out is None else check_out_file(args.out, option="--out")
    report = write_report(args.run_dir, out, max_timelines=args.max_timelines, texts=not args.no_text)
    size_kb = report.html.stat().st_size / 1024
    print(f"wrote {report.html} ({size_kb:.0f} KiB: {report.n_rows} rows, {report.n_timelines} timelines)")
    if report.perfetto is not None:
        print(f"wrote {report.perfetto} (the whole run for ui.perfetto.dev)")
    return 0
