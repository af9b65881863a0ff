"""``streamrag live``: the pipeline on the real clock, with a real tool, as you type or
as a question replays (standard-library imports only at top level)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

HELP = "run the streaming pipeline live: real words, a real tool, the wall clock"

EPILOG = """\
examples:
  streamrag live --out runs/live                                   # type questions (Enter ends a turn)
  streamrag live --transcript turn.jsonl --out runs/live           # {"word": ..., "t_ms": ...} per line
  streamrag serve demo --port 8750 --latency-ms 30 &
  streamrag live --replay 32 --url http://127.0.0.1:8750/search --out runs/replay \\
      --set input.delta_wps=10 --set latency.G_ms=20 --set latency.F_ms=40
  streamrag live --llm-url http://127.0.0.1:8000/v1 --llm-model qwen2.5-7b-instruct --out runs/llm

The scenario's trigger, thread cap, reflector rules, cadence (replays), G and F apply;
the tool call L is real: --url (a retrieval endpoint, JSON in and out) or BM25 in
process over --corpus, optionally delayed by --latency-ms or a profile's L. The
heuristic reflector re-scores results with BM25 over --corpus, so the endpoint must
serve that corpus (chunk ids are positions in it). Outputs as simulate's (trace.jsonl,
results.csv, summary.json, manifest.json); streamrag trace reads them. --replay N also
simulates the same questions replaying each call's measured G, L and F (the twin) and
writes replay.csv and replay.json (per question |delta saved|, overheads, and the part
of delta that the timers' lateness and the event loop's handoffs explain).

Query generation G is the scenario's delay unless --llm-url is given (off by default):
then each call first asks an OpenAI-compatible endpoint, POST URL/chat/completions
(temperature 0), to turn the words heard into a short search query, and the tool
searches that query. The API key is read from the environment variable --llm-key-env
(default OPENAI_API_KEY; no key, no Authorization header). The query and G's duration
are recorded (gen_query events); an error or timeout is one line and a gen_error event,
and the call searches the prefix words instead.

--spans FILE writes the run's OpenTelemetry spans (extra otel; docs/telemetry.md): per
turn the turn, each call with its outcome, and the G, L and F stages on the instants of
trace.jsonl. OTLP JSON, or Jaeger's JSON with --spans-format jaeger; streamrag calibrate
reads either back:
  streamrag calibrate FILE --span speculate.generate_query=G \
      --span 'execute_tool bm25=L' --span speculate.respond=F --out live.toml
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("live", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = p.add_mutually_exclusive_group()
    source.add_argument(
        "--replay", type=int, metavar="N", help="replay the first N questions of --data at the scenario's cadence"
    )
    source.add_argument("--transcript", metavar="FILE", help="a timestamped transcript: JSON lines {word, t_ms}")
    p.add_argument("--data", default="demo", metavar="DATA", help="--replay's questions: demo (default) or a CRAG file")
    p.add_argument(
        "--corpus",
        default="demo",
        metavar="CORPUS",
        help="the corpus of the in-process tool and of the reflector's BM25 (default demo)",
    )
    p.add_argument("--url", metavar="URL", help="call this retrieval endpoint instead of BM25 in process")
    p.add_argument("--timeout-ms", dest="timeout_ms", type=float, default=2000.0, metavar="MS", help="--url: per-call timeout")
    p.add_argument("--concurrency", type=int, default=8, metavar="N", help="--url: calls in flight at most (default 8)")
    llm = p.add_argument_group("query generation by an LLM (off by default)")
    llm.add_argument("--llm-url", metavar="URL", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    llm.add_argument("--llm-model", metavar="NAME", help="--llm-url: the model to ask")
    llm.add_argument("--llm-key-env", metavar="VAR", help="--llm-url: variable holding the API key (default OPENAI_API_KEY)")
    llm.add_argument(
        "--llm-timeout-ms", type=float, default=5000.0, metavar="MS", help="--llm-url: timeout of a call (default 5000)"
    )
    llm.add_argument("--llm-concurrency", type=int, default=4, metavar="N", help="--llm-url: calls in flight at most (default 4)")
    llm.add_argument("--llm-max-tokens", type=int, default=32, metavar="N", help="--llm-url: max_tokens of a reply (default 32)")
    delay = p.add_mutually_exclusive_group()
    delay.add_argument("--latency-ms", dest="latency_ms", type=float, metavar="X", help="add X ms to every tool call")
    delay.add_argument("--latency-profile", dest="latency_profile", metavar="PROFILE", help="add a delay drawn from PROFILE's L")
    p.add_argument("--scenario", default="paper_rq3", metavar="NAME_OR_TOML", help="scenario (default paper_rq3)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="override a scenario field")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument(
        "--spans",
        metavar="FILE",
        help="also write the run's OpenTelemetry spans to FILE (extra otel; streamrag calibrate reads them back)",
    )
    p.add_argument(
        "--spans-format",
        dest="spans_format",
        choices=("otlp", "jaeger"),
        help="--spans: OTLP JSON (default) or Jaeger's JSON (its UI's download)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from streamrag.base.errors import ConfigError
    from streamrag.engine.loop import run_real

    if args.replay is not None and args.replay < 1:
        raise ConfigError(f"--replay: must be ≥ 1, got {args.replay}")
    if args.llm_url is not None and not args.llm_model:
        raise ConfigError("--llm-url: give the model too (--llm-model NAME)")
    if args.llm_url is None and (args.llm_model or args.llm_key_env):
        raise ConfigError("--llm-model and --llm-key-env need --llm-url (the endpoint to ask)")
    if args.spans_format is not None and args.spans is None:
        raise ConfigError("--spans-format applies to --spans (the file the run's spans are written to)")
    overrides = list(args.overrides)
    if args.replay is not None:  # the served corpus is one pool: judge and simulate in global scope
        overrides += ["data.scope=global", "data.split=all", "select.population=all", f"select.limit={args.replay}"]
    from streamrag.simulator.scenario import load_scenario

    rs = load_scenario(args.scenario, overrides)
    command = ["streamrag", "live", *sys.argv[2:]] if len(sys.argv) > 1 and sys.argv[1] == "live" else ["streamrag", "live"]
    restore = _cbreak() if args.replay is None and args.transcript is None else None
    writers: list[Any] = []  # the run's writer, once its folder exists
    try:
        return run_real(lambda clock: _main(clock, args, rs, command, writers))
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the summary says so
        from streamrag.base.system.signals import interrupt_name

        for writer in writers:
            writer.interrupted(interrupt_name())
        raise
    finally:
        if restore is not None:
            restore()


def _cbreak() -> Any:
    """Keys reach the program as typed (not at Enter) when stdin is a terminal."""
    if not sys.stdin.isatty():
        return None
    import termios
    import tty

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setcbreak(fd)
    return lambda: termios.tcsetattr(fd, termios.TCSADRAIN, saved)


async def _main(clock: Any, args: argparse.Namespace, rs: Any, command: list[str], writers: list[Any]) -> int:
    from collections.abc import AsyncIterator

    from rich.console import Console

    from streamrag.live.backends import BM25Tool, HttpTool
    from streamrag.live.display import LiveDisplay
    from streamrag.live.live_run import RunWriter, run_live
    from streamrag.live.session import Turn
    from streamrag.live.words import TypedWords, read_transcript
    from streamrag.pipeline.tools import DelayedTool, Tool

    judge = BM25Tool.from_corpus(args.corpus, clock)
    tool: Tool = (
        judge if args.url is None else HttpTool(args.url, clock, timeout_ms=args.timeout_ms, concurrency=args.concurrency)
    )
    if args.latency_ms is not None or args.latency_profile is not None:
        tool = DelayedTool(tool, _delay_model(args), clock, _delay_rng(rs))
    console = Console(highlight=False, soft_wrap=True)
    # the global --quiet (errors only) also drops the event lines: only each turn's outcome
    display = None if getattr(args, "quiet", False) else LiveDisplay(console)
    mode = "replay" if args.replay is not None else "transcript" if args.transcript else "typed"
    model = f"heuristic on live results (BM25 of {args.corpus})"
    generator = _generator(args, clock)  # bad LLM options stop here, before the run's trace file is opened
    http = getattr(tool, "inner", tool)
    if isinstance(http, HttpTool):
        try:  # a dead endpoint stops here, before any folder exists (every turn would fail)
            await http.check_reachable()
        except BaseException:
            await http.aclose()
            raise
    transcript = read_transcript(args.transcript) if args.transcript else None  # a bad file stops here, before the folder
    spans = _spans(args)  # no SDK, or an unwritable file: stops here too
    writer = RunWriter(args.out, rs, model, command=command, input_mode=f"live-{mode}")
    writers.append(writer)
    questions: list[Any] = []

    async def turns() -> AsyncIterator[Turn]:
        if args.replay is not None:
            for turn in _replay_turns(args, rs, questions):
                yield turn
        elif transcript is not None:
            yield Turn("transcript-1", transcript)
        else:
            if sys.stdin.isatty():
                console.print("type a question; Enter ends the turn, Ctrl-D ends the run")
            i = 0
            async for typed in TypedWords.turns(sys.stdin.fileno()):
                i += 1
                yield Turn(f"typed-{i}", typed)

    try:
        tracer = None if spans is None else spans.tracer
        rows = await run_live(clock, turns(), tool, judge, rs, writer, display, generator=generator, tracer=tracer)
    finally:
        writer.close()
        if spans is not None:  # the finished turns' spans, whatever stopped the run
            _write_spans(args, spans)
        inner = getattr(tool, "inner", tool)
        if isinstance(inner, HttpTool):
            await inner.aclose()
        if generator is not None:
            await generator.aclose()
    saved = [r.saved_ms for r in rows if r.saved_ms is not None]
    mean = f"mean saved {sum(saved) / len(saved):.1f} ms" if saved else "no answered turn"
    print(f"live: {len(rows)} turn(s), {mean}; wrote {args.out}/")
    if args.replay is not None and saved:
        _versus_simulation(args, rs, questions, rows)
        if generator is not None:
            print("note: G was an LLM call here; the simulation keeps the scenario's G and searches the prefix words")
    return 0


def _spans(args: argparse.Namespace) -> Any:
    """The --spans collector (None without --spans)."""
    if args.spans is None:
        return None
    from streamrag.base.system.outputs import check_out_file
    from streamrag.live.span_tracer import SpanCollector

    check_out_file(args.spans, option="--spans")
    return SpanCollector()


def _write_spans(args: argparse.Namespace, spans: Any) -> None:
    import json

    from streamrag.base.atomic import write_bytes_atomic

    doc = spans.document(args.spans_format or "otlp")
    write_bytes_atomic(args.spans, (json.dumps(doc) + "\n").encode())


def _generator(args: argparse.Namespace, clock: Any) -> Any:
    """The query LLM of --llm-url (None: G stays a delay)."""
    if args.llm_url is None:
        return None
    from streamrag.live.llm import DEFAULT_KEY_ENV, ChatQueryGenerator

    return ChatQueryGenerator(
        args.llm_url,
        args.llm_model,
        clock,
        key_env=args.llm_key_env or DEFAULT_KEY_ENV,
        key_required=args.llm_key_env is not None,
        timeout_ms=args.llm_timeout_ms,
        concurrency=args.llm_concurrency,
        max_tokens=args.llm_max_tokens,
    )


def _delay_model(args: argparse.Namespace) -> Any:
    from streamrag.base.errors import ConfigError
    from streamrag.commands._common import check_latency_ms
    from streamrag.engine.latency import ConstantLatency
    from streamrag.engine.profiles import load_profile

    if args.latency_ms is not None:
        return ConstantLatency(ms=check_latency_ms(args.latency_ms), source="--latency-ms")
    profile = load_profile(args.latency_profile)
    if "L" not in profile.stages:
        raise ConfigError(f"--latency-profile: {args.latency_profile!r} has no stage L")
    return profile.stages["L"]


def _delay_rng(rs: Any) -> Any:
    import numpy as np

    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([rs.scenario.seed, 12])))


def _replay_turns(args: argparse.Namespace, rs: Any, questions: list[Any]) -> list[Any]:
    """The first N questions of --data as turns (and, in ``questions``, as the simulator sees them)."""
    from streamrag.analysis.entry import open_source
    from streamrag.data.selection import Selection
    from streamrag.live.fidelity import replay_turns
    from streamrag.simulator.question_select import load_selected

    data = _data_path(args.data)
    qs = load_selected(rs.scenario, data=data)
    questions.extend(qs.questions)
    queries = {q.interaction_id: q.record.query for q in open_source(data, selection=Selection(split=None)).questions}
    return replay_turns(questions, queries, rs)


def _data_path(data: str) -> Any:
    if data == "demo":
        from streamrag.data.demo import demo_path

        return demo_path()
    return data


def _versus_simulation(args: argparse.Namespace, rs: Any, questions: list[Any], live_rows: list[Any]) -> None:
    """Simulate the replayed questions replaying the measured durations (the twin); compare."""
    from pathlib import Path

    from streamrag.engine.trace import read_trace
    from streamrag.live.fidelity import Twins, compare, fitted, measured_L_ms, write_comparison
    from streamrag.live.twin import run_twin, timer_lateness_us, turn_measures
    from streamrag.simulator.replay.planning import plan_question
    from streamrag.simulator.run_output import manifest_json, write_run
    from streamrag.simulator.simulate import simulate

    out = Path(args.out)
    events = [e.model_dump() for e in read_trace(out / "trace.jsonl")]
    measured = measured_L_ms(events)
    measures = turn_measures(events)
    rs_fit, fit = fitted(rs, measured)
    done = {r.interaction_id for r in live_rows}
    replayed = [q for q in questions if q.interaction_id in done]
    twin = run_twin(replayed, rs_fit, measures)
    twins = Twins(
        twin={r.interaction_id: r for r in twin.rows},
        live_words={r.interaction_id: r for r in run_twin(replayed, rs_fit, measures, live_words=True).rows},
        fitted={r.interaction_id: r for r in simulate(replayed, rs_fit).rows},
    )
    lateness = {q.interaction_id: timer_lateness_us(plan_question(q, rs), measures[q.interaction_id]) for q in replayed}
    manifest = manifest_json(
        rs_fit,
        twin.reflector_model,
        input_path=str(_data_path(args.data)),
        input_mode="data",
        command=["streamrag", "live", "--replay"],
        jobs=1,
        n_questions=len(twin.rows),
    )
    write_run(out / "simulated", twin, rs_fit, manifest=manifest)
    comparison = compare(live_rows, twins, lateness, measures, measured, fit)
    write_comparison(out, comparison)
    s = comparison.summary
    late = s["timer_lateness_ms"]["word"]
    print(
        f"twin (each call's measured G, L, F replayed; {len(measured)} tool calls, median {s['measured_L_ms']['median']:.1f} ms): "
        f"mean delta saved {s['delta_saved_ms']['mean']:+.1f} ms, |delta| mean {s['abs_delta_saved_ms']['mean']:.1f} ms, "
        f"p90 {s['abs_delta_saved_ms']['p90']:.1f} ms (L drawn from the fit instead: p90 {s['abs_fitted_delta_saved_ms']['p90']:.1f} ms); "
        f"same decision {s['same_decision']['n']}/{s['n_questions']}; attributed: word timers "
        f"{s['words_delta_ms']['mean']:+.2f} ms (words late by {late['median']:.2f} ms median), event loop "
        f"{s['loop_delta_ms']['mean']:+.2f} ms (handoffs streaming {s['handoff_streaming_ms']['median']:.2f} ms, of which the "
        f"reflector's look {s['reflector_ms']['median']:.2f} ms, baseline {s['handoff_baseline_ms']['median']:.2f} ms median; "
        f"unexplained {s['residual_ms']['mean']:+.2f} ms); wrote {out}/replay.csv"
    )
