"""``streamrag demo``: the main job on the built-in demo set, with a readable summary."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="analyze and simulate the built-in demo set, and show one mis-fire",
        description="Run the analyzer on the built-in demo set (32 CRAG-format questions written "
        "for streamrag), simulate the anchor study's RQ3 pipeline on every question in virtual "
        "time, print a summary and the timeline of one mis-fire. Outputs go to --out.",
    )
    p.add_argument("--out", type=Path, default=Path("streamrag-demo"), metavar="DIR", help="output folder (default: %(default)s)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from streamrag.analysis.console import format_study
    from streamrag.analysis.study import run_study
    from streamrag.base.system.outputs import check_out_dir
    from streamrag.data.demo import demo_path
    from streamrag.data.selection import Selection
    from streamrag.simulator.question_select import select_for
    from streamrag.simulator.questions import questions_from_analyses
    from streamrag.simulator.run_output import manifest_json, write_run
    from streamrag.simulator.scenario import load_scenario
    from streamrag.simulator.simulate import simulate
    from streamrag.simulator.views import traceview
    from streamrag.simulator.views.gantt import write_figure
    from streamrag.simulator.views.terminal_view import render_terminal

    check_out_dir(args.out)
    data = demo_path()
    analysis_dir = args.out / "analysis"
    study = run_study(data, analysis_dir, selection=Selection(split=None), cache=None, jobs=1)
    print(f"streamrag demo: {len(study.analyses)} questions of the built-in demo set, all splits\n")
    print(format_study(study.summary, analysis_dir))

    print(
        "\nsimulated in virtual time on all questions: the anchor's RQ3 pipeline (paper_rq3: delta 3 w/s, "
        "a call every 3 words, <= 4 threads, G 590 ms, L 600 ms, F 2520 ms) with two reflectors:"
    )
    arms = {"heuristic": [], "gold": ["reflector.kind='gold'"]}
    misfire: tuple[Path, str, float] | None = None
    for name, overrides in arms.items():
        rs = load_scenario("paper_rq3", ["select.population=all", *overrides])
        questions = select_for(questions_from_analyses(study.analyses, rs.scenario.data.k), rs.scenario.selection())
        rows = (run := simulate(questions, rs)).rows
        out = args.out / f"simulation-{name}"
        command = ["streamrag", "demo"]
        manifest = manifest_json(
            rs,
            run.reflector_model,
            input_path=str(data),
            input_mode="data",
            command=command,
            jobs=1,
            n_questions=len(rows),
            replay=run.replay,
        )
        write_run(out, run, rs, manifest=manifest, counts=questions.counts)
        n = len(rows)
        missed = [r for r in rows if r.misfire]
        print(
            f"  {name:<9} reflector: mean saved {sum(r.saved_ms or 0.0 for r in rows) / n:6.0f} ms (mean H {sum(r.H_ms or 0.0 for r in rows) / n:.0f} ms), "
            f"{len(missed)} mis-fire(s), {sum(bool(r.negative) for r in rows)} negative, "
            f"{sum(r.calls_fired or 0 for r in rows) / n:.2f} calls fired per question -> {out}/"
        )
        if missed and misfire is None:
            worst = min(missed, key=lambda r: r.saved_ms or 0.0)
            misfire = (out, worst.interaction_id, worst.saved_ms or 0.0)
    from streamrag.report.build import write_report

    pages = [write_report(args.out / f"simulation-{name}").html for name in arms]
    print(f"\none page per run, with every question's timeline (opens offline): {', '.join(map(str, pages))}")
    if misfire is None:
        print("\nno mis-fire in either arm")
        return 0
    run_dir, qid, saved_ms = misfire
    print(
        f"\none mis-fire, {qid} in {run_dir.name} (saved {saved_ms:.0f} ms): no speculative result was sufficient, so the full query was fired again"
    )
    events = traceview.load_question(run_dir, qid)
    render_terminal(events)
    from streamrag.base.figures import figure_name

    png = write_figure(events, args.out / figure_name("misfire"))
    print(f"wrote {png}; any question's timeline: streamrag trace {run_dir} QUESTION_ID")
    return 0
