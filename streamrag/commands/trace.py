"""``streamrag trace``: show one question's simulated timeline."""

from __future__ import annotations

import argparse

HELP = "show one question's simulated timeline (terminal; --png image; --perfetto JSON)"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("trace", help=HELP, description=HELP)
    p.add_argument("run_dir", metavar="RUN_DIR", help="the --out folder of 'streamrag simulate'")
    p.add_argument("question_id", metavar="QUESTION_ID", help="interaction_id of the question")
    p.add_argument("--png", metavar="PATH", help="also write a Gantt-like PNG")
    p.add_argument("--perfetto", metavar="PATH", help="also write Chrome/Perfetto trace-event JSON (ui.perfetto.dev)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from streamrag.simulator import traceview

    events = traceview.load_question(args.run_dir, args.question_id)
    traceview.render_terminal(events)
    if args.png:
        print(f"wrote {traceview.write_png(events, args.png)}")
    if args.perfetto:
        print(f"wrote {traceview.write_perfetto(events, args.perfetto)}")
    return 0
