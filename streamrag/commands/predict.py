"""``streamrag predict``: the analytic predictor's one-line answer (no replay).

Mean saved ms per question with its error band (:mod:`streamrag.simulator.predict.saving`); for
a scenario with ``[load]``, also the break-even offered load with its band
(:mod:`streamrag.simulator.predict.load`). ``--out FILE.json`` keeps the numbers.
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


def prediction_json(pop: Any, load: Any, rs: Any, counts: dict[str, int]) -> dict[str, Any]:
    """What ``--out`` writes: the population prediction, its parts, and the load answer."""
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
        "calls_fired_mean": pop.calls_fired_mean,
    }
    if load is not None:
        data["break_even"] = {
            "offered_load": load.break_even,
            "low": load.low,
            "high": load.high,
            "by_waits": load.by_waits,
            "crossing": "median per-session paired difference, baseline − streaming",
        }
    return data


def _fmt(value: float | None) -> str:
    return "not below 0.99" if value is None else f"{value:.3f}"


def run(args: argparse.Namespace) -> int:
    from streamrag.base.errors import ConfigError

    if (args.data is None) == (args.table is None):
        raise ConfigError("give exactly one input: DATA (a CRAG file) or --table TABLE.csv")
    if args.evidence and not args.table:
        raise ConfigError("--evidence applies to --table")
    scenario_demo(args)
    require_inputs(args.data, args.table)

    from streamrag.simulator.applies import refuse_inapplicable
    from streamrag.simulator.predict.saving import predict_population
    from streamrag.simulator.questions import load_selected
    from streamrag.simulator.scenario import load_scenario

    rs = load_scenario(args.scenario, args.overrides)
    refuse_inapplicable(rs, "table" if args.table else "data")
    qs = load_selected(rs.scenario, data=args.data, table=args.table, evidence=args.evidence, ids=None, cache=None, jobs=1)
    pop = predict_population(qs.questions, rs)
    load = None
    line = (
        f"predicted mean saved {pop.saved_ms:.1f} ± {pop.band_ms:.1f} ms per question over {pop.n_questions} question(s) "
        f"[{rs.scenario.name}; hit rate {pop.hit_rate:.1%}, {pop.calls_fired_mean:.2f} calls fired]"
    )
    if rs.scenario.load is not None:
        from streamrag.simulator.predict.load import predict_break_even

        load = predict_break_even(qs.questions, rs)
        line += f"; break-even offered load {_fmt(load.break_even)} [{_fmt(load.low)}, {_fmt(load.high)}]"
    if args.out:
        from streamrag.base.atomic import write_text_atomic

        write_text_atomic(args.out, json.dumps(prediction_json(pop, load, rs, qs.counts), indent=2, allow_nan=False) + "\n")
    print(line)
    return 0
