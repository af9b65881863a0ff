"""The files of an advice and its console table.

``--out`` holds ``advice.html`` (the answer and the rows on one page), ``advice.json`` (the situation with every default, what each G/F end
assumes, the rows, the recommendation and its answer in words, how to reproduce each
number), ``advice.csv`` and ``advice.parquet`` (the rows, :data:`COLUMNS`),
``scenario.toml`` (the recommended policy: ``Speculator(tool, "OUT/scenario.toml")``),
``load_scenario.toml`` (the same with the stated load: ``streamrag predict`` and
``streamrag simulate`` take it), ``latency/`` (each end's profile) and ``runs/END/`` (each
end's frontier sweep, with ``frontier/leaderboard.md``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamrag.base.atomic import write_bytes_atomic, write_text_atomic

from .load import write_scenarios
from .page import write_page
from .recommend import NONE

if TYPE_CHECKING:
    from .result import Advice
    from .sweep_end import EndRun


def _ci(name: str, stat: str = "") -> list[str]:
    """A statistic and its CI: the frontier's names (``saved_ms.mean``, ``saved_ms.ci_low``)
    with ``stat``, the statistic's own otherwise (``answer_ms_difference.median.ci_low``)."""
    head = f"{name}.{stat}" if stat else name
    base = name if stat else head
    return [head, f"{base}.ci_low", f"{base}.ci_high"]


def _crossing(name: str) -> list[str]:
    stats = ("offered_load", "low", "high", "turns_per_s", "turns_per_s_low", "turns_per_s_high")
    return [f"break_even.{name}.{s}" for s in stats]


COLUMNS: tuple[str, ...] = (
    "end", "questions", "policy", "label", "knob", "knob_value", "trigger", "needs", "runs_on", "not_deployable", "no_point",
    "verdict", "n_questions",
    "baseline_ms.median", "streaming_ms.median", *_ci("answer_ms_difference.median"),
    "baseline_ms.p90", "streaming_ms.p90", *_ci("answer_ms_difference.p90"),
    "calls_fired.mean", *_ci("extra_calls", "mean"), *_ci("saved_ms", "mean"), *_ci("misfire", "rate"),
    *_ci("negative", "rate"),
    "unsafe_per_1000_turns", "endpoint.extra_llm_calls_per_turn", "endpoint.extra_llm_share",
    "endpoint.false_cutoffs_per_100_turns", "endpoint.eager_restarts_per_100_turns",
    "pct_of_optimal",
    *_crossing("median_saved"), *_crossing("p90"), "turns_per_s_per_offered_load",
    "at_load.turns_per_s", "at_load.offered_load", "at_load.llm_offered_load", "at_load.source", "at_load.answer_ms_difference.median",
    "at_load.answer_ms_difference.p90", "at_load.saved_ms.median", "at_load.baseline_ms.median",
    "at_load.streaming_ms.median", "at_load.streaming_tool_utilization", "at_load.calls_fired.mean", "key",
)  # fmt: skip
"""``advice.csv``'s columns: the names simulate, the frontier, load runs and predict use
(``baseline_ms.median`` is the p50 user's baseline answer latency, ``answer_ms_difference.p90``
the p90 user's gain, ``saved_ms.mean`` the mean per-question saving, ``negative.rate`` the
share of turns slower than the baseline; ``unsafe_per_1000_turns`` with a mutating tool,
``endpoint.*`` with an endpointer: its extra compute and its cut-offs)."""


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        return _clean(value.item())
    return value


def _predict_input(source: str) -> str:
    """What ``streamrag predict`` takes for the situation's input."""
    if source == "demo":
        return "demo"
    if source.startswith("table:") or source.endswith(".csv"):
        return f"--table {source.removeprefix('table:')}"
    if source.startswith("generated"):
        parts = source.split(":")
        seed = parts[2].removeprefix("seed=") if len(parts) > 2 else "0"
        return f"--table T.csv   (after: streamrag generate T.csv --table --questions {parts[1]} --seed {seed})"
    return source.removeprefix("data:")


def reproduce(advice: Advice, out: Path) -> dict[str, str]:
    """The commands that recompute the numbers of a row."""
    overrides = "--set trigger.kind=KIND --set trigger.KNOB=VALUE (a row's trigger)"
    return {
        "frontier": f"streamrag frontier {out}/runs/END/grid.toml --out DIR --seed {advice.situation.seed}",
        "predict": f"streamrag predict {_predict_input(advice.situation.inputs[0])} --scenario {out}/load_scenario.toml"
        + ("" if advice.situation.llm_workers is None else " --set resources.llm.kind=unlimited"),
        "simulate_at_load": f"streamrag simulate ... --scenario {out}/load_scenario.toml --out DIR",
        "other_rows": f"the same with {overrides}",
    }


def advice_json(advice: Advice, out: Path) -> dict[str, Any]:
    frame = advice.rows.reindex(columns=list(COLUMNS))
    rows = frame.to_dict(orient="records")
    return _clean(
        {
            "situation": advice.situation.stated(),
            "assumptions": {
                "llm": (
                    "unlimited (the load model queues the tool only)"
                    if advice.situation.llm_workers is None
                    else f"{advice.situation.llm_workers} workers in the load simulation; predict's break-even "
                    "queues the tool only (the LLM unlimited)"
                ),
                "ends": advice.ends,
                "point": "per policy, its point saving most (mean saved_ms) with mean extra_calls ≤ max_extra_calls",
                "p50_p90_user": "quantiles of each arm's answer latency; answer_ms_difference = baseline − streaming at a quantile",
                "at_load": "a load simulation at the stated turns/s (its answer_ms_difference); break_even: predict's",
            },
            "answer": advice.answer,
            "recommendation": advice.recommendation,
            "rows": rows,
            "reproduce": reproduce(advice, out),
        }
    )


def write_advice(out: Path, advice: Advice, runs: Sequence[EndRun]) -> list[Path]:
    """Every file (module docstring); returns their paths."""
    from streamrag.sweep.frontier.leaderboard import write_frontier

    files: list[Path] = []
    for run in runs:
        write_frontier(run.folder / "frontier", run.frontier, title=f"advise, {run.end.assumes}")
        files.append(run.folder / "frontier" / "leaderboard.md")
    frame = advice.rows.reindex(columns=list(COLUMNS))
    csv_path, parquet_path, json_path = out / "advice.csv", out / "advice.parquet", out / "advice.json"
    write_text_atomic(csv_path, frame.to_csv(index=False))
    import io

    buffer = io.BytesIO()
    frame.astype({c: "string" for c in frame.columns if frame[c].dtype == object}).to_parquet(buffer, index=False)
    write_bytes_atomic(parquet_path, buffer.getvalue())
    data = advice_json(advice, out)
    write_text_atomic(json_path, json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    files += [json_path, csv_path, parquet_path, write_page(out / "advice.html", data)]
    files += _scenario_files(out, advice, runs)
    return files


def _scenario_files(out: Path, advice: Advice, runs: Sequence[EndRun]) -> list[Path]:
    """``scenario.toml`` and ``load_scenario.toml`` of the recommended policy at the first
    end (the baseline's trigger, ``none``, when nothing is recommended)."""
    from streamrag.simulator.scenario import scenario_from_dict

    from .load import scenario_tables

    rec = advice.recommendation
    run = runs[0]
    rows = advice.rows
    if rec["policy"] != NONE:
        first = (rows["policy"] == rec["policy"]) & (rows["end"] == run.end.name) & (rows["questions"] == run.question_set)
        key = str(rows[first]["key"].iloc[0])
        rs = run.settings(key)
        what = f"the recommended policy, {rows[first]['label'].iloc[0]}"
    else:
        any_key = next(p.key for p in run.result.plan.runnable)
        tables = scenario_tables(run.settings(any_key))
        tables["trigger"] = {"kind": "none"}
        rs = scenario_from_dict(tables)
        what = "no speculation (nothing is recommended): the baseline's trigger"
    header = (
        f"# streamrag advise: {what}; G/F: {run.end.assumes}.\n"
        "# In an agent: streamrag.Speculator(tool, 'scenario.toml') (a path to this file).\n"
        "# load_scenario.toml adds the stated load: streamrag predict / simulate take it.\n"
    )
    return list(write_scenarios(rs, advice.situation, out, header, f"streamrag advise: {what}; {run.end.assumes}"))


def _num(value: Any, fmt: str = "{:.0f}") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return fmt.format(value)


def console_text(advice: Advice) -> str:
    """The table a deployer reads: one line per end × policy, then the answer."""
    head = (
        f"{'end':<10} {'policy':<18} {'p50 base→stream ms':>19} {'p50 gain [95% CI]':>20} {'p90 gain':>8} "
        f"{'extra':>5} {'misfire':>7} {'slower':>6} {'break-even turns/s':>22} {'p50 gain@load':>13}  runs on      verdict"
    )
    lines = [head]
    sets = advice.situation.inputs
    records = advice.rows.to_dict(orient="records")
    if len(sets) > 1:  # the question set by its number in the situation's list
        records = [{**r, "end": f"{sets.index(r['questions']) + 1}-{r['end']}"} for r in records]
    for r in records:
        if r.get("no_point"):
            lines.append(f"{r['end']:<10} {r['policy']:<18} {'':>19} {'':>20} {'':>8} {'':>5} {'':>7} {'':>6} {'':>22} {'':>13}"
                         f"  {r['runs_on']:<12} {r['verdict']}")  # fmt: skip
            continue
        users = f"{_num(r['baseline_ms.median'])}→{_num(r['streaming_ms.median'])}"
        gain = (
            f"{_num(r['answer_ms_difference.median'])} [{_num(r['answer_ms_difference.median.ci_low'])}, "
            f"{_num(r['answer_ms_difference.median.ci_high'])}]"
        )
        be = r.get("break_even.median_saved.turns_per_s")
        band = (
            f"{_num(be, '{:.2f}')} [{_num(r['break_even.median_saved.turns_per_s_low'], '{:.2f}')}, "
            f"{_num(r['break_even.median_saved.turns_per_s_high'], '{:.2f}')}]"
            if be is not None and not (isinstance(be, float) and math.isnan(be))
            else "not predicted"
            if r.get("break_even.source")
            else "none below ρ 0.99"
        )
        lines.append(
            f"{r['end']:<10} {r['label']!s:<18} {users:>19} {gain:>20} {_num(r['answer_ms_difference.p90']):>8} "
            f"{_num(r['extra_calls.mean'], '{:.2f}'):>5} {_num(100 * r['misfire.rate'], '{:.1f}%'):>7} "
            f"{_num(100 * r['negative.rate'], '{:.0f}%'):>6} {band:>22} {_num(r.get('at_load.answer_ms_difference.median')):>13}"
            f"  {r['runs_on']:<12} {r['verdict'] or 'eligible'}"
        )
    sit = advice.situation
    lines.append("")
    lines.append(
        f"load: {sit.turns_per_s:g} turns/s on {sit.tool_workers} tool workers; budget ≤ {sit.max_extra_calls:g} extra calls "
        f"per turn; ranker: {sit.ranker}; gains: baseline − streaming answer latency of the p50/p90 user (ms)"
    )
    lines.append(f"users' words: {sit.user_input}")
    if len(sets) > 1:
        lines.append("question sets: " + "; ".join(f"{i} = {q}" for i, q in enumerate(sets, start=1)))
    for end in advice.ends:
        lines.append(f"end {end['end']}: {end['assumes']}; L: {end['tool']}")
    lines.append(advice.answer)
    for policy, why in advice.recommendation["why_others_lost"].items():
        lines.append(f"  {policy}: {why}")
    return "\n".join(lines)
