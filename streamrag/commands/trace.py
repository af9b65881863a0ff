"""``streamrag trace``: show one question's simulated timeline, or write a whole run's."""

from __future__ import annotations

import argparse

HELP = "show one question's simulated timeline (terminal; --png image; --perfetto JSON), or a run's (--all, --misfires)"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "trace",
        help=HELP,
        description=f"{HELP[0].upper()}{HELP[1:]}. With --all or --misfires, --perfetto writes one file with a process "
        "per question (named by id and, when the run's CRAG input is still there, its text).",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="the --out folder of 'streamrag simulate'")
    p.add_argument("question_id", metavar="QUESTION_ID", nargs="?", help="interaction_id of the question")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="every question of the run (with --perfetto)")
    which.add_argument("--misfires", action="store_true", help="the run's mis-fires (with --perfetto)")
    p.add_argument(
        "--png",
        "--figure",
        dest="png",
        metavar="PATH",
        help="also write a Gantt-like figure; the extension picks the format (.png, .pdf, .svg)",
    )
    p.add_argument("--perfetto", metavar="PATH", help="also write Chrome/Perfetto trace-event JSON (ui.perfetto.dev)")
    p.add_argument(
        "--no-text",
        action="store_true",
        help="do not read the run's CRAG input for the question text (a full CRAG file takes minutes to decode)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """The files first, then the terminal view: ``trace … | head`` still writes them."""
    from pathlib import Path

    from streamrag.base.errors import ConfigError
    from streamrag.base.figures import figure_format
    from streamrag.base.system.outputs import check_out_file
    from streamrag.simulator.views import gantt, perfetto, runtrace, terminal_view, traceview

    if args.all or args.misfires:
        if args.question_id or args.png or not args.perfetto:
            raise ConfigError("--all and --misfires write one --perfetto file; give --perfetto PATH and no QUESTION_ID or --png")
        return _run_many(args)
    if not args.question_id:
        raise ConfigError("give a QUESTION_ID, or --all / --misfires with --perfetto PATH")
    if args.png:
        figure_format(args.png)  # an unknown extension is refused before any work

    def write_figure(events: list[dict[str, object]], path: Path) -> Path:
        return gantt.write_figure(events, path, dpi=args.dpi)

    def write_perfetto(events: list[dict[str, object]], path: Path) -> Path:
        found = {} if args.no_text else runtrace.question_texts(args.run_dir, [args.question_id])
        text = found.get(args.question_id)
        name = runtrace.process_name(args.question_id, text)
        return perfetto.write_perfetto(events, path, name=name, words=None if text is None else text.split())

    files = [(args.png, "--png", write_figure), (args.perfetto, "--perfetto", write_perfetto)]
    wanted = [(check_out_file(path, option=option), write) for path, option, write in files if path]
    events = traceview.load_question(args.run_dir, args.question_id)
    written: list[Path] = []
    for path, write in wanted:
        path.parent.mkdir(parents=True, exist_ok=True)
        written.append(write(events, path))
    terminal_view.render_terminal(events)
    for path in written:
        print(f"wrote {path}")
    return 0


def _run_many(args: argparse.Namespace) -> int:
    from streamrag.base.system.outputs import check_out_file
    from streamrag.simulator.views import runtrace

    out = check_out_file(args.perfetto, option="--perfetto")
    events = runtrace.run_events(args.run_dir)
    ids = runtrace.misfire_ids(args.run_dir) if args.misfires else list(events)
    if not ids:
        print(f"{args.run_dir}: no {'mis-fire' if args.misfires else 'question'} to trace; nothing written")
        return 0
    texts = {} if args.no_text else runtrace.question_texts(args.run_dir, ids)
    out.parent.mkdir(parents=True, exist_ok=True)
    runtrace.write_run_perfetto(runtrace.run_perfetto(events, ids, texts), out)
    named = f", {len(texts)} with their text" if texts else " (no question text: the run's input is not a CRAG file at hand)"
    print(f"wrote {out}: {len(ids)} question(s) as one process each{named}")
    return 0
