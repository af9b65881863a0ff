"""Benchmark: the closed-loop ``budget`` policy beside the static ones under a moving load.

Issue 31: hold a stated p90 response budget under a cap on extra calls while the arrival
rate moves. Every policy runs on the **same arrivals and draws** (one scenario, one seed;
only ``[policy]`` changes): ``always``, ``admission`` (the load grid's variant: no
speculation while the tool queue holds ≥ 2), ``stretch`` (gain 2), ``coalesce`` and
``budget`` (:mod:`streamrag.pipeline.budget`), whose budget and cap the scenario states.
The default scenario is ``sim/day.toml``: the paper_rq3 pipeline on 4 tool servers, offered load 0.2 → 0.9 → 0.2 of the baseline's
tool capacity over 4 simulated hours (24 ten-minute Poisson segments). ``--arrivals-file``
replays recorded arrival times instead (``load.arrivals.kind = "file"``): a file of
seconds, or a recorded request log with a ``TIMESTAMP`` column such as Azure's public LLM
inference trace (``AzureLLMInferenceTrace_conv.csv`` of github.com/Azure/AzurePublicDataset,
CC-BY 4.0: 19,366 requests in one hour of 2023-11-16), turned into seconds from its first
request.

Each run is read in 10-minute windows of arrival time (:mod:`streamrag.simulator.load.windows`):
the share of windows whose streaming p90 answer latency stayed ≤ the budget, the extra
calls per session (calls fired − 1) and the mean paired saving. Writes
``benchmarks/out/bench_budget[-TAG].json`` and a figure ``benchmarks/out/bench_budget[-TAG].png``
(per-window p90 over time per policy, the baseline's beside them, the budget line), and
prints a Markdown table.

Usage: ``python benchmarks/bench_budget.py --table gen.csv [--budget-ms B] [--cap C]
[--jobs 2] [--arrivals-file F.csv --tag file --set resources.tool.servers=6]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import OUT_DIR, load_average, save

POLICIES: dict[str, list[str]] = {
    "always": ["policy.kind=always"],
    "admission": ["policy.kind=admission", "policy.max_queue=2", "policy.max_utilization=1.0"],
    "stretch": ["policy.kind=stretch", "policy.gain=2.0"],
    "coalesce": ["policy.kind=coalesce"],
    "budget": [],  # the scenario's own policy, with --budget-ms and --cap
}


def _run(job: tuple[str, str, list[str], str, float, float, float]) -> dict[str, Any]:
    """One policy's run, read in windows (a worker process)."""
    from streamrag.simulator.load.run import run_load
    from streamrag.simulator.load.windows import budget_summary, budget_windows
    from streamrag.simulator.question_select import load_selected
    from streamrag.simulator.scenario import load_scenario

    name, scenario, overrides, table, budget_ms, quantile, window_s = job
    rs = load_scenario(scenario, overrides)
    qs = load_selected(rs.scenario, table=table)
    t0 = time.perf_counter()
    with run_load(qs.questions, rs) as run:  # its per-session columns are spooled until closed
        wall_s = time.perf_counter() - t0
        s, b = run.systems["streaming"].measures, run.systems["baseline"].measures
        windows = budget_windows(s, b, window_s=window_s, budget_ms=budget_ms, quantile=quantile)
        return {
            "policy": name,
            "overrides": overrides,
            "sessions": run.n,
            "wall_s": wall_s,
            "summary": budget_summary(windows, s, b),
            "windows": [w._asdict() for w in windows],
        }


def _arrivals_file(path: Path) -> Path:
    """``path`` itself, or for a request log with a ``TIMESTAMP`` column its arrival times in
    seconds from the first request (``benchmarks/out/NAME.arrivals.csv``)."""
    import pandas as pd

    with path.open(encoding="utf-8") as fh:
        header = fh.readline().split(",")
    if "TIMESTAMP" not in [h.strip() for h in header]:
        return path
    stamps = pd.to_datetime(pd.read_csv(path, usecols=["TIMESTAMP"])["TIMESTAMP"])
    seconds = (stamps - stamps.iloc[0]).dt.total_seconds()
    out = OUT_DIR / f"{path.stem}.arrivals.csv"
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out.write_text("arrival_s\n" + "".join(f"{x:.6f}\n" for x in seconds), encoding="utf-8")
    return out


def _plot(results: list[dict[str, Any]], budget_ms: float, quantile: float, path: Path, title: str) -> Path:
    from streamrag.base.figures import agg_figure, save_figure

    fig = agg_figure(7.0, 3.8)
    ax = fig.add_subplot(1, 1, 1)
    sessions = ax.twinx()  # the moving load, behind the curves: sessions arriving per window
    base = results[0]["windows"]
    width_h = (base[1]["start_s"] - base[0]["start_s"]) / 3600 if len(base) > 1 else 1 / 6
    sessions.bar([w["start_s"] / 3600 for w in base], [w["n"] for w in base], width=width_h, align="edge",
                 color="0.92", zorder=0)  # fmt: skip
    sessions.set_ylabel("sessions arriving per window", color="0.5", fontsize=8)
    ax.set_zorder(sessions.get_zorder() + 1)
    ax.patch.set_visible(False)

    def steps(values: list[float | None]) -> tuple[list[float], list[float]]:
        """Window starts (h) and values, the last window drawn to its end."""
        pairs = [(w["start_s"] / 3600, v / 1000) for w, v in zip(base, values, strict=True) if v is not None]
        xs, ys = [x for x, _ in pairs], [y for _, y in pairs]
        return [*xs, xs[-1] + width_h], [*ys, ys[-1]]

    for r in results:
        held = r["summary"]["share_held"]
        ax.step(*steps([w["quantile_ms"] for w in r["windows"]]), where="post",
                lw=2.2 if r["policy"] == "budget" else 1.2, label=f"{r['policy']} ({100 * held:.0f}% held)")  # fmt: skip
    ax.step(*steps([w["baseline_quantile_ms"] for w in base]), where="post", color="grey", ls="--", lw=1,
            label="no speculation")  # fmt: skip
    ax.axhline(budget_ms / 1000, color="red", lw=1, ls=":", label=f"budget {budget_ms / 1000:g} s")
    ax.set_yscale("log")
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("window start (h of arrival time)")
    ax.set_ylabel(f"p{round(100 * quantile)} answer latency per 10-min window (s)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, ncol=2, loc="upper left")
    return save_figure(fig, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, help="stabilization table (e.g. streamrag generate gen.csv --table)")
    parser.add_argument("--scenario", default="day")
    parser.add_argument("--budget-ms", type=float, help="default: the scenario's policy.budget_ms")
    parser.add_argument("--quantile", type=float, help="default: the scenario's policy.quantile")
    parser.add_argument("--cap", type=float, help="the budget policy's max_extra_calls (default: the scenario's)")
    parser.add_argument("--window-s", type=float, default=600.0)
    parser.add_argument("--arrivals-file", help="replay recorded arrival times (seconds) instead")
    parser.add_argument("--set", action="append", default=[], help="extra scenario override (every policy)")
    parser.add_argument(
        "--budget-set", action="append", default=[], help="override of the budget policy only, e.g. policy.headroom=0.05"
    )
    parser.add_argument("--policies", nargs="*", default=list(POLICIES), help="policies to run (none: only --reuse)")
    parser.add_argument(
        "--reuse", action="append", default=[],
        help="an earlier bench_budget JSON of the same settings (repeatable): its runs of other policies join in",
    )  # fmt: skip
    parser.add_argument("--tag", default="")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    from streamrag.pipeline.budget import BudgetPolicyConfig
    from streamrag.simulator.scenario import load_scenario

    stated = load_scenario(args.scenario).scenario.policy
    if not isinstance(stated, BudgetPolicyConfig):
        parser.error(f'scenario {args.scenario}: its [policy] must be kind = "budget" (it states the budget)')
    args.budget_ms = stated.budget_ms if args.budget_ms is None else args.budget_ms
    args.quantile = stated.quantile if args.quantile is None else args.quantile
    args.cap = stated.max_extra_calls if args.cap is None else args.cap
    common = list(args.set)
    if args.arrivals_file:
        arrivals = _arrivals_file(Path(args.arrivals_file).resolve())
        common += ["load.arrivals.kind=file", f"load.arrivals.path={arrivals}"]
    budget = [
        f"policy.budget_ms={args.budget_ms}", f"policy.quantile={args.quantile}", f"policy.max_extra_calls={args.cap}",
        *args.budget_set,
    ]  # fmt: skip
    jobs = [
        (name, args.scenario, [*common, *(POLICIES[name] or budget)], args.table, args.budget_ms, args.quantile, args.window_s)
        for name in args.policies
    ]
    load_before = load_average()
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(_run, jobs))
    for reused in args.reuse:
        earlier = json.loads(Path(reused).read_text(encoding="utf-8"))
        if (earlier["scenario"], earlier["overrides"], earlier["budget_ms"]) != (args.scenario, common, args.budget_ms):
            parser.error(f"--reuse {reused}: it ran other settings (scenario, overrides or budget)")
        have = {r["policy"] for r in results}
        results += [r for r in earlier["runs"] if r["policy"] not in have]
    results.sort(key=lambda r: list(POLICIES).index(r["policy"]))
    suffix = f"-{args.tag}" if args.tag else ""
    where = f"recorded arrivals {Path(args.arrivals_file).name}" if args.arrivals_file else f"scenario {args.scenario}"
    title = f"{where}, {'; '.join(args.set) or 'as stated'}: the same arrivals under each policy"
    figure = _plot(results, args.budget_ms, args.quantile, OUT_DIR / f"bench_budget{suffix}.png", title)
    out = save(f"bench_budget{suffix}", {
        "scenario": args.scenario, "overrides": common, "budget_ms": args.budget_ms, "quantile": args.quantile,
        "cap": args.cap, "window_s": args.window_s, "wall_s": time.perf_counter() - t0, "jobs": args.jobs,
        "load_average_before": load_before, "figure": str(figure), "runs": results,
    })  # fmt: skip
    print(
        f"| policy | windows held (p{round(100 * args.quantile)} ≤ {args.budget_ms:g} ms) | extra calls / session | mean saved ms | failed |"
    )
    print("|---|---|---|---|---|")
    for r in results:
        s = r["summary"]
        print(f"| {r['policy']} | {s['windows_held']}/{s['windows']} ({100 * s['share_held']:.1f}%) | "
              f"{s['extra_calls_per_session']:.2f} | {s['saved_ms_mean']:,.0f} | {s['failed']} |")  # fmt: skip
    print(f"wrote {out} and {figure}")


if __name__ == "__main__":
    main()
