"""``streamrag simulate``: replay questions through the speculative pipeline (design §5, §7)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from streamrag.commands._common import add_reference_option, apply_reference, open_cache, require_inputs, scenario_demo

HELP = "simulate speculative tool calls in virtual time (results.csv, summary.json, trace.jsonl)"

EPILOG = """\
examples:
  streamrag simulate --table stabilization.csv --scenario paper_rq3 --out runs/rq3
  streamrag simulate --table t.csv --scenario paper_rq3 --set latency.L_ms=1000 --out runs/rq3-L1000
  streamrag simulate DATA.jsonl.bz2 --scenario my.toml --out runs/x --jobs 2

--table replays a stabilization table. With its per-prefix evidence (prefixes.parquet,
written by analyze beside stabilization.csv, found there or given with --evidence) the
replay equals full mode; without it only t* is known and an oracle reflector runs (a
call on prefix t is sufficient iff t >= t*), which every output says. DATA runs the
analyzer (full mode).
Built-in scenarios: paper_rq3, oracle_bound.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "data",
        nargs="?",
        metavar="DATA",
        help="CRAG-style JSONL (.jsonl, .jsonl.bz2, .jsonl.zst) to analyze and simulate (full mode), demo (the "
        "built-in demo set, every split), or a corpus folder (BEIR, or the CRAG data folder) for --set data.scope=global",
    )
    p.add_argument("--table", metavar="TABLE.csv", help="stabilization table (§7) to simulate trace-driven")
    p.add_argument(
        "--evidence",
        metavar="PREFIXES.parquet",
        help="per-prefix evidence of --table (default: prefixes.parquet beside the table, if present)",
    )
    p.add_argument(
        "--no-evidence",
        action="store_true",
        help="ignore the table's per-prefix evidence: replay with the oracle reflector (t >= t*)",
    )
    p.add_argument("--scenario", required=True, metavar="NAME_OR_TOML", help="built-in scenario name or a TOML file")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario field by dotted path, e.g. latency.L_ms=1000 (repeatable)",
    )
    add_reference_option(p)
    p.add_argument("--force", action="store_true", help="replace the files of an earlier run in --out (refused otherwise)")
    p.add_argument("--ids", metavar="FILE", help="simulate only these question ids (one per line)")
    p.add_argument(
        "--cache", type=Path, metavar="DIR", help="DATA: chunk cache folder (default $STREAMRAG_CACHE or ~/.cache/streamrag)"
    )
    p.add_argument("--no-cache", action="store_true", help="DATA: neither read nor write the chunk cache")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="worker processes (default 1)")
    p.add_argument("--seed", type=int, default=None, metavar="S", help="override the scenario's seed")
    p.add_argument(
        "--engine",
        action="store_true",
        help="replay on the event engine even where the closed form applies (the reference it is checked against)",
    )
    p.add_argument(
        "--retriever",
        default=None,
        metavar="KIND|TARGET",
        help="prefix ranking for DATA (same as --set data.retriever=...): a kind (dense = all-MiniLM-L6-v2 "
        "cosine, judged by reflector.cosine_threshold, default 0.4) or your own class, path/to/file.py:Class "
        "or package.module:Class (docs/retrievers.md)",
    )
    p.set_defaults(run=run)


def _command(args: argparse.Namespace) -> list[str]:
    cmd = ["streamrag", "simulate"]
    if args.data:
        cmd.append(args.data)
    if args.table:
        cmd += ["--table", args.table]
    if args.evidence:
        cmd += ["--evidence", args.evidence]
    if args.no_evidence:
        cmd.append("--no-evidence")
    cmd += ["--scenario", args.scenario, "--out", args.out]
    for o in args.overrides:
        cmd += ["--set", o]
    if args.ids:
        cmd += ["--ids", args.ids]
    if args.cache:
        cmd += ["--cache", str(args.cache)]
    if args.no_cache:
        cmd.append("--no-cache")
    if args.force:
        cmd.append("--force")
    cmd += ["--jobs", str(args.jobs)]
    if args.seed is not None:
        cmd += ["--seed", str(args.seed)]
    if args.retriever is not None:
        cmd += ["--retriever", args.retriever]
    if args.engine:
        cmd.append("--engine")
    return cmd


def run(args: argparse.Namespace) -> int:
    from streamrag.base.errors import ConfigError

    if (args.data is None) == (args.table is None):
        raise ConfigError("give exactly one input: DATA (a CRAG file) or --table TABLE.csv")
    apply_reference(args)
    if args.jobs < 1:
        raise ConfigError(f"--jobs: must be ≥ 1, got {args.jobs}")
    if (args.evidence or args.no_evidence) and not args.table:
        raise ConfigError("--evidence and --no-evidence apply to --table")
    if args.evidence and args.no_evidence:
        raise ConfigError("give --evidence or --no-evidence, not both")
    if (args.cache or args.no_cache) and args.table:
        raise ConfigError("--cache and --no-cache apply to DATA (the chunk cache); a table replay reads no pages")
    if args.cache and args.no_cache:
        raise ConfigError("give --cache or --no-cache, not both")
    if args.retriever is not None and args.table:
        raise ConfigError("--retriever applies to DATA (full mode); a table (--table) already holds each question's t*")
    scenario_demo(args)
    require_inputs(args.data, args.table)  # before the imports below: a typo costs milliseconds

    from streamrag.base.system.outputs import check_out_dir

    check_out_dir(args.out, refuse_nonempty=None if args.force else "pass --force to replace that run, or choose another folder")
    from streamrag.commands._common import Written

    written = Written(args.out)
    try:
        return _run(args, written)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: the outputs land together or not at all
        raise written.interrupted(exc) from None


def _run(args: argparse.Namespace, written: Any) -> int:
    from streamrag.base.progress import advancing, task_progress
    from streamrag.base.system.outputs import made_folder
    from streamrag.data.selection import read_ids
    from streamrag.simulator.question_select import load_selected
    from streamrag.simulator.run_output import manifest_json, write_run
    from streamrag.simulator.scenario import load_scenario
    from streamrag.simulator.simulate import recorded_for_table, simulate

    overrides = [*args.overrides, *([f"data.retriever={args.retriever}"] if args.retriever else [])]
    rs = load_scenario(args.scenario, overrides, seed=args.seed)
    from streamrag.simulator.applies import refuse_inapplicable

    refuse_inapplicable(rs, "table" if args.table else "data")  # a setting this run would not read
    if rs.scenario.load is not None:  # refused before the (slow) input is read: sizes, warm-up, arrival files
        from streamrag.commands._logging import say
        from streamrag.simulator.load.checks import check_load

        for warning in check_load(rs).warnings:
            say(f"streamrag: warning: {warning}", level="warning", event="load warning")
    ids = read_ids(args.ids) if args.ids else None
    if args.table and rs.scenario.load is None:
        return _run_table(args, rs, ids, written)
    # The chunk cache is only for DATA: a table replay need not import the chunker.
    cache = None if args.table else open_cache(args)
    evidence = False if args.no_evidence else args.evidence
    qs = load_selected(rs.scenario, data=args.data, table=args.table, evidence=evidence, ids=ids, cache=cache, jobs=args.jobs)
    mode, input_path = ("table", args.table) if args.table else ("data", args.data)
    recorded = recorded_for_table(rs, args.table) if args.table else rs  # the table's split, not the scenario's
    n_selected = qs.counts["selected"]

    if rs.scenario.load is not None:
        return _run_load(args, rs, qs, mode, input_path, recorded, written)
    with task_progress("simulating", n_selected) as update:
        result = simulate(qs, rs, jobs=args.jobs, on_progress=advancing(update), engine=args.engine)

    manifest = manifest_json(
        recorded,
        result.reflector_model,
        input_path=input_path,
        input_mode=mode,
        command=_command(args),
        jobs=args.jobs,
        n_questions=n_selected,
        replay=result.replay,
    )
    with made_folder(args.out) as out:
        write_run(out, result, recorded, manifest=manifest, counts=qs.counts)
    written.done = True
    from streamrag.simulator.run_output import ResultColumns

    _print_simulated(rs, result.reflector_model, len(result.rows), ResultColumns.of(result.rows), out)
    return 0


def _run_table(args: argparse.Namespace, rs: Any, ids: Any, written: Any) -> int:
    """A table replay, streamed (:mod:`streamrag.simulator.table_run`): the table read row
    by row, its evidence question by question, the outputs written as questions are replayed."""
    from streamrag.base.progress import advancing, task_progress
    from streamrag.simulator.run_output import manifest_json
    from streamrag.simulator.simulate import recorded_for_table
    from streamrag.simulator.table_run import simulate_table

    recorded = recorded_for_table(rs, args.table)  # the table's split, not the scenario's

    def manifest(model: str, replay: str, n_selected: int) -> bytes:
        return manifest_json(
            recorded,
            model,
            input_path=args.table,
            input_mode="table",
            command=_command(args),
            jobs=args.jobs,
            n_questions=n_selected,
            replay=replay,
        )

    with task_progress("simulating", _data_lines(args.table)) as update:
        run = simulate_table(
            args.table,
            rs,
            args.out,
            recorded=recorded,
            manifest=manifest,
            evidence=False if args.no_evidence else args.evidence,
            ids=ids,
            jobs=args.jobs,
            engine=args.engine,
            on_progress=advancing(update),
        )
    written.done = True
    _print_simulated(rs, run.reflector_model, run.columns.n, run.columns, Path(args.out))
    return 0


def _data_lines(path: str) -> int:
    """About how many rows a table has (its lines but the header), for the progress bar."""
    lines = 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            lines += block.count(b"\n")
    return max(1, lines - 1)


def _print_simulated(rs: Any, model: str, n: int, columns: Any, out: Path) -> None:
    """The console line of a run: its means over the ``n`` replayed rows (``columns``: their
    :class:`~streamrag.simulator.run_output.ResultColumns`)."""
    rules = rs.rules()
    print(
        f"simulated {n} question(s) [{rs.scenario.name}; {model}; rules {rules['preset']}"
        f"{' (' + ', '.join(rules['differs_from_paper']) + ')' if rules['differs_from_paper'] else ''}]: "
        f"mean saved {columns.mean('saved_ms'):.1f} ms (mean H {columns.mean('H_ms'):.1f} ms), "
        f"{columns.hits('negative')} negative; wrote {out}/"
    )


def _run_load(args: argparse.Namespace, rs: Any, qs: Any, mode: str, input_path: str, recorded: Any, written: Any) -> int:
    """``[load]``: sessions sharing the resources (:mod:`streamrag.simulator.load.run`);
    ``recorded``: the scenario the outputs record (:func:`recorded_for_table`)."""

    from streamrag.base.progress import advancing, task_progress
    from streamrag.base.system.outputs import made_folder
    from streamrag.simulator.load.checks import n_sessions
    from streamrag.simulator.load.output import check_outputs_fit, write_load_run
    from streamrag.simulator.load.run import run_load
    from streamrag.simulator.replay.closed_form import ENGINE
    from streamrag.simulator.run_output import manifest_json, parameters
    from streamrag.simulator.simulate import reflector_model_of

    out = Path(args.out)
    model = reflector_model_of(qs.entries, rs, qs.evidence_source)
    manifest = manifest_json(
        recorded,
        model,
        input_path=input_path,
        input_mode=mode,
        command=_command(args),
        jobs=1,
        n_questions=len(qs.questions),
        replay=ENGINE,  # shared capacity: no closed form
    )
    params = {**parameters(recorded), "population": qs.counts}
    check_outputs_fit(qs.questions, rs, out)  # before the folder is made: every file the run writes
    with made_folder(out), task_progress("sessions", 2 * n_sessions(rs)) as update:
        advance = advancing(update)
        on_session = None if advance is None else lambda: advance(1)
        with run_load(qs.questions, rs, trace_dir=out, reflector_model=model, on_session=on_session) as run:
            write_load_run(out, run, parameters=params, manifest=manifest)
    written.done = True
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    s, b = summary["streaming"]["answer_ms"], summary["baseline"]["answer_ms"]
    if not summary["sessions"]["counted"]:
        from streamrag.commands._logging import say

        warmup_s = rs.scenario.load.warmup_s if rs.scenario.load is not None else 0.0
        say(
            f"streamrag: warning: no session was counted: all {summary['sessions']['n']} arrived within the "
            f"{warmup_s:g} s warm-up; lower load.warmup_s or raise load.arrivals.n_sessions",
            level="warning",
            event="no session counted",
            warmup_s=warmup_s,
        )

    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:.0f}"

    print(
        f"load [{rs.scenario.name}; {model}]: {summary['sessions']['n']} sessions ({summary['sessions']['counted']} counted); "
        f"answer p50 streaming {ms(s['median'])} ms vs baseline {ms(b['median'])} ms, p90 {ms(s['p90'])} vs {ms(b['p90'])} ms; "
        f"wrote {out}/"
    )
    return 0
