"""``streamrag trace``: show one question's simulated timeline."""

from __future__ import annotations

import argparse

HELP = "show one question's simulated timeline (terminal; --png image; --perfetto JSON)"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("trace", help=HELP, description=HELP)
    p.add_argument("run_dir", metavar="RUN_DIR", help="the --out folder of 'streamrag simulate'")
    p.add_argument("question_id", metavar="QUESTION_ID", help="interaction_id of the question")
    p.add_argument(
        "--png",
        "--figure",
        dest="png",
        metavar="PATH",
        help="also write a Gantt-like figure; the extension picks the format (.png, .pdf, .svg)",
    )
    p.add_argument("--perfetto", metavar="PATH", help="also write Chrome/Perfetto trace-event JSON (ui.perfetto.dev)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """The files first, then the terminal view: ``trace … | head`` still writes them."""
    from pathlib import Path

    from streamrag.base.figures import figure_format
    from streamrag.base.outputs import check_out_file
    from streamrag.simulator import traceview

    if args.png:
        figure_format(args.png)  # an unknown extension is refused before any work

    def write_figure(events: list[dict[str, object]], path: Path) -> Path:
        return traceview.write_figure(events, path, dpi=args.dpi)

    files = [(args.png, "--png", write_figure), (args.perfetto, "--perfetto", traceview.write_perfetto)]
    wanted = [(check_out_file(path, option=option), write) for path, option, write in files if path]
    events = traceview.load_question(args.run_dir, args.question_id)
    written: list[Path] = []
    for path, write in wanted:
        path.parent.mkdir(parents=True, exist_ok=True)
        written.append(write(events, path))
    traceview.render_terminal(events)
    for path in written:
        print(f"wrote {path}")
    return 0
