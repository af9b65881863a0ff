"""``streamrag advise``: state your situation once; get one row per policy and a recommendation."""

from __future__ import annotations

import argparse

from streamrag.commands._common import add_reference_option, apply_reference

HELP = "should your agent fire its tool before the user finishes? one row per policy and a recommendation"

EPILOG = """\
examples:
  streamrag advise --tool-p50-ms 800 --tool-p90-ms 2000 --words-per-s 2.5 --input generated:1371 \\
      --turns-per-s 2 --tool-workers 4 --max-extra-calls 1 --out runs/advice --jobs 2
  streamrag advise --situation mine.toml --out runs/advice      (the same keys, in TOML)
  streamrag advise --measurements timings.csv --G-ms 400/700 --F-ms 900 --turns-per-s 2 --tool-workers 4 --out runs/a

Latencies: the tool's p50/p90 (a log-normal through both) or --measurements (fitted as
`streamrag calibrate` fits it). --G-ms / --F-ms (query generation, answer generation):
MS (constant) or P50/P90 (log-normal); when not given, advise answers at both ends of the
built-in profiles (paper-rq3: constants; arora2025: log-normal) and says whether the
answer changes. Policies that read a ranking of every word prefix (learned) run twice:
*_tool ranks each prefix with a search on the tool (each search counted in the extra
calls and the load, the trigger looking at a word when its search is back) and *_local
with a local index (--local-rank-ms per word). --ranker tool (default): the agent has
only the tool, so the *_local policies are not recommended; --ranker local: it has one.

How users' words arrive: at --words-per-s, uniform (default); --typed DIR, typed as the
participants of a keystroke-log folder typed; --hypotheses H.jsonl, spoken through your
recognizer (its partial hypotheses; `streamrag speak` makes one offline); --stt-revisions P,
spoken through a recognizer whose partials revise (the revision model). Each applies to
question sets the run analyzes (demo, data:PATH).

Writes in --out: advice.html (one page), advice.json, advice.csv, advice.parquet (one row per G/F end x policy:
the p50 and p90 user's answer latency and gain, extra calls, mis-fire and slower-turn
rates with 95% CIs, predict's break-even in turns/s and offered load, the load
simulation's gain at the stated rate), scenario.toml (the recommended policy, for
streamrag.Speculator), load_scenario.toml (with the stated load, for predict/simulate),
runs/END/ (each end's frontier sweep and leaderboard).
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("advise", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--situation", metavar="FILE.toml", help="the situation's keys in TOML (flags given win)")
    p.add_argument("--tool-p50-ms", dest="tool_p50_ms", type=float, metavar="MS", help="the tool's median latency (ms)")
    p.add_argument("--tool-p90-ms", dest="tool_p90_ms", type=float, metavar="MS", help="the tool's 90th percentile (ms)")
    p.add_argument("--measurements", metavar="FILE", help="measured durations (as calibrate reads them) instead of p50/p90")
    p.add_argument("--G-ms", dest="G_ms", metavar="MS", help="query generation latency: MS or P50/P90 (default: a range)")
    p.add_argument("--F-ms", dest="F_ms", metavar="MS", help="answer generation latency: MS or P50/P90 (default: a range)")
    p.add_argument("--words-per-s", dest="words_per_s", type=float, metavar="WPS", help="users' words per second (2.5)")
    p.add_argument(
        "--input",
        action="append",
        metavar="SOURCE",
        help="questions: demo (default), generated:N, table:PATH, data:PATH; repeat it to check the answer on several sets",
    )
    p.add_argument("--typed", metavar="DIR", help="users type: keystroke logs (136M Keystrokes format) they type like")
    p.add_argument("--hypotheses", metavar="H.jsonl", help="users speak: your recognizer's partial hypotheses per question")
    p.add_argument(
        "--stt-revisions", dest="stt_revisions", type=float, metavar="P", help="users speak through an STT revising with P"
    )
    p.add_argument("--turns-per-s", dest="turns_per_s", type=float, metavar="X", help="arrival rate of turns at peak")
    p.add_argument("--tool-workers", dest="tool_workers", type=int, metavar="N", help="the tool's servers")
    p.add_argument(
        "--llm-workers", dest="llm_workers", type=int, metavar="N", help="the LLM's servers in the load simulation (unlimited)"
    )
    p.add_argument(
        "--max-extra-calls", dest="max_extra_calls", type=float, metavar="N", help="budget: extra tool calls per turn (1)"
    )
    p.add_argument(
        "--ranker", choices=("tool", "local"), help="what ranks each word prefix: only the tool (default), a local index"
    )
    p.add_argument(
        "--local-rank-ms", dest="local_rank_ms", type=float, metavar="MS", help="a local index's time per word ranked (0)"
    )
    p.add_argument("--seed", type=int, metavar="S", help="latency draws' and bootstrap's seed (0)")
    p.add_argument(
        "--load-sessions", dest="load_sessions", type=int, metavar="N", help="sessions of the load simulation (3000; 0: none)"
    )
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (reruns reuse its finished points)")
    p.add_argument(
        "--set",
        action="append",
        default=None,
        dest="settings",
        metavar="KEY=VALUE",
        help="a scenario setting for every simulated point (repeatable; the situation file's key: settings)",
    )
    add_reference_option(p)
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="worker processes for the frontier sweeps (default 1)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run the frontier sweeps on this Dask scheduler (tcp://host:port)")
    p.set_defaults(run=run)


FLAGS = (
    "tool_p50_ms",
    "tool_p90_ms",
    "measurements",
    "G_ms",
    "F_ms",
    "words_per_s",
    "typed",
    "hypotheses",
    "stt_revisions",
    "input",
    "turns_per_s",
    "tool_workers",
    "llm_workers",
    "max_extra_calls",
    "ranker",
    "local_rank_ms",
    "settings",
    "seed",
    "load_sessions",
)


def run(args: argparse.Namespace) -> int:
    from streamrag.advice.output import console_text
    from streamrag.advice.run import advise
    from streamrag.advice.situation import parse_ms, read_situation
    from streamrag.base.errors import ConfigError
    from streamrag.base.progress import task_progress

    apply_reference(args, dest="settings")
    flags = {name: getattr(args, name) for name in FLAGS}
    for name in ("G_ms", "F_ms"):
        if flags[name] is not None:
            try:
                flags[name] = parse_ms(flags[name])
            except ValueError as exc:
                raise ConfigError(f"--{name.replace('_', '-')}: {exc}") from None
    situation = read_situation(args.situation, flags)
    with task_progress("advise: policies", None) as update:
        advice = advise(situation, args.out, jobs=args.jobs, scheduler=args.scheduler, on_progress=update)
    print(console_text(advice))
    print("wrote " + ", ".join(str(f) for f in advice.files))
    return 0
