"""``streamrag predict``: the analytic predictor's one-line answer (no replay).

Mean saved ms per question with its error band, the calls fired per question (refires
included) (:mod:`streamrag.simulator.predict.saving`), the p50 and p90 user's gain
(:mod:`streamrag.simulator.predict.users`); for a scenario with ``[load]``, also the
break-even offered load of the median paired difference and of the p90 user, each with
its band and as turns/s (:mod:`streamrag.simulator.predict.load`). ``--out FILE.json``
keeps the numbers.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from streamrag.commands._common import require_inputs, scenario_demo

HELP = "predict saved ms (and the break-even load) analytically, without simulating"

EPILOG = """\
examples:
  streamrag predict --table stabilization.csv --scenario paper_rq3
  streamrag predict --table t.csv --scenario paper_rq3 --set latency.profile=arora2025 --out pred.json
  streamrag predict --table t.csv --scenario load        (also the break-even load)

The table needs its per-prefix evidence (prefixes.parquet beside it, or --evidence) for
the real reflector; without it the oracle rule (t >= t*) is predicted, as simulate does.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "predict", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "data", nargs="?", metavar="DATA", help="CRAG-style JSONL to analyze and predict (full mode), or demo (every split)"
    )
    p.add_argument("--table", metavar="TABLE.csv", help="stabilization table (§7), with its prefixes.parquet")
    p.add_argument("--evidence", metavar="PREFIXES.parquet", help="per-prefix evidence of --table (default: beside it)")
    p.add_argument("--scenario", required=True, metavar="NAME_OR_TOML", help="built-in scenario name or a TOML file")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="override a scenario field")
    p.add_argument("--out", metavar="FILE.json", help="also write the prediction as JSON (atomically)")
    p.set_defaults(run=run)


def prediction_json(pop: Any, load: Any, rs: Any, counts: dict[str, int], users: dict[str, Any]) -> dict[str, Any]:
    """What ``--out`` writes: the population prediction, its parts, the p50/p90 user's answer
    latency and gain (``baseline_ms``, ``streaming_ms``, ``answer_ms_difference``: the names
    of ``simulate``'s summary and load runs), and the load answer."""
    data: dict[str, Any] = {
        "scenario": rs.scenario.name,
        "rules": rs.rules(),
        "population": counts,
        "saved_ms": {
            "mean": pop.saved_ms,
            "band": pop.band_ms,
            "noise_band": pop.noise_ms,
            "structure_band": pop.structure_ms,
        },
        "hit_rate": pop.hit_rate,
        "saved_on_hit_ms": pop.saved_on_hit_ms,
        "misfire_cost_ms": pop.misfire_cost_ms,
        "calls_fired": {"mean": pop.calls_fired_mean, "counts": "tool calls started, refires included, as results.csv"},
        **users,
    }
    if load is not None:
        from streamrag.sweep.break_even import CROSSINGS

        crossings = {}
        for name, c in load.crossings.items():
            record = load.record(name)
            crossings[name] = {
                **{k: record[k] for k in ("offered_load", "low", "high")},
                "by_waits": c.by_waits,
                **{k: v for k, v in record.items() if k.startswith("turns_per_s")},
                "difference": CROSSINGS[name][0],
                "meaning": CROSSINGS[name][1],
            }
        # The median paired difference's keys stay at the top (``break_even.by_waits``).
        data["break_even"] = {
            **{k: v for k, v in crossings["median_saved"].items() if k not in ("difference", "meaning")},
            "crossing": "median per-session paired difference, baseline − streaming",
            "crossings": crossings,
            "turns_per_s_per_offered_load": load.turns_per_s_at_full_load,
        }
    return data


def _fmt(value: float | None) -> str:
    return "not below 0.99" if value is None else f"{value:.3f}"


def _load_text(load: Any, name: str, label: str) -> str:
    c = load.crossings[name]
    if c.break_even is None:
        return f"{label} {_fmt(None)}"
    rates = f"{load.turns_per_s(c.break_even):.2f} [{load.turns_per_s(c.low):.2f}, {load.turns_per_s(c.high):.2f}] turns/s"
    return f"{label} {_fmt(c.break_even)} [{_fmt(c.low)}, {_fmt(c.high)}] = {rates}"


def run(args: argparse.Namespace) -> int:
    from streamrag.base.errors import ConfigError

    if (args.data is None) == (args.table is None):
        raise ConfigError("give exactly one input: DATA (a CRAG file) or --table TABLE.csv")
    if args.evidence and not args.table:
        raise ConfigError("--evidence applies to --table")
    scenario_demo(args)
    require_inputs(args.data, args.table)

    from streamrag.simulator.applies import refuse_inapplicable
    from streamrag.simulator.predict.atoms import stage_atoms
    from streamrag.simulator.predict.saving import call_latency, predict_population
    from streamrag.simulator.predict.timelines import TimelineCache
    from streamrag.simulator.predict.users import LATENCY_ATOMS, Packed, user_latencies
    from streamrag.simulator.question_select import load_selected
    from streamrag.simulator.scenario import load_scenario

    rs = load_scenario(args.scenario, args.overrides)
    refuse_inapplicable(rs, "table" if args.table else "data")
    qs = load_selected(rs.scenario, data=args.data, table=args.table, evidence=args.evidence, ids=None, cache=None, jobs=1)
    timelines = TimelineCache(qs.questions, rs)  # replayed once, shared by the saving and the load model
    pop = predict_population(qs.questions, rs, timelines.at)
    x, f = call_latency(rs, LATENCY_ATOMS), stage_atoms(rs.stages.F, LATENCY_ATOMS)
    users = user_latencies(Packed(pop.lines), x, f, rs.scenario.input.end_of_turn_us / 1000)
    gain = users["answer_ms_difference"]
    load = None
    line = (
        f"predicted mean saved {pop.saved_ms:.1f} ± {pop.band_ms:.1f} ms per question over {pop.n_questions} question(s) "
        f"[{rs.scenario.name}; hit rate {pop.hit_rate:.1%}, {pop.calls_fired_mean:.2f} calls fired, refires included]; "
        f"p50 / p90 user's gain {gain['median']:.1f} / {gain['p90']:.1f} ms"
    )
    if rs.scenario.load is not None:
        from streamrag.simulator.predict.load import predict_break_even

        load = predict_break_even(qs.questions, rs, timelines)
        line += (
            "; break-even offered load: "
            + _load_text(load, "median_saved", "median paired difference")
            + "; "
            + _load_text(load, "p90", "p90 user")
        )
    if args.out:
        from streamrag.base.atomic import write_text_atomic

        data = prediction_json(pop, load, rs, qs.counts, users)
        write_text_atomic(args.out, json.dumps(data, indent=2, allow_nan=False) + "\n")
    print(line)
    return 0
