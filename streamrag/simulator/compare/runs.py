"""Two simulation runs compared question by question (``streamrag compare RUN_A RUN_B``).

The runs' ``results.csv`` are joined on ``interaction_id`` over the questions both
replayed (empty ``skip_reason``); per question ``delta_saved_ms = saved_ms_b −
saved_ms_a`` (positive: B saves more). The paired test is the Wilcoxon signed-rank test
on those differences (two-sided; zero differences dropped, as scipy's ``zero_method =
"wilcox"``; undefined — null — when every difference is zero). ``comparison.json``:

``n_matched``, ``ids`` (``only_in_a``, ``only_in_b``, ``not_replayed``), ``saved_ms_a``,
``saved_ms_b``, ``delta_saved_ms`` (``mean, median, p10, p90, min, max``), ``sign``
(``b_more``, ``equal``, ``a_more``), ``wilcoxon`` (``statistic``, ``p``, ``n_nonzero``),
``misfire`` and ``calls_fired`` per side (count; mean), ``runs`` (the two folders).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from streamrag.base.columns import TableKind
from streamrag.base.errors import DataFileError
from streamrag.simulator.results import RESULT_DTYPES, read_results
from streamrag.simulator.run_output import stats

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "RUNS_FIGURE",
    "RUNS_JSON",
    "RUNS_TABLE",
    "RUN_COMPARISON",
    "RunComparison",
    "compare_runs",
    "run_comparison_lines",
    "write_run_comparison",
]

RUNS_JSON = "comparison.json"
RUNS_FIGURE = "comparison.png"
RUNS_TABLE = "per_question.csv"
_KEEP = ("saved_ms", "H_ms", "H_G_ms", "misfire", "calls_fired")

RUN_COMPARISON = TableKind(
    "run_comparison",
    {
        "interaction_id": "str",
        "question_type": "str",
        "delta_saved_ms": "float",
        **{f"{name}_{side}": RESULT_DTYPES[name] for side in ("a", "b") for name in _KEEP},
    },
)
"""``per_question.csv``, declared: each kept column of ``results.csv`` per run, typed as there."""


class RunComparison(NamedTuple):
    table: pd.DataFrame  # one row per matched question
    data: dict[str, Any]  # comparison.json


def _results(run_dir: str | os.PathLike[str]) -> pd.DataFrame:
    from streamrag.base.formats import check_run

    check_run(run_dir)
    path = Path(run_dir) / "results.csv"
    if not path.is_file():
        raise DataFileError(f"{path}: no such file (is {run_dir} the --out folder of 'streamrag simulate'?)")
    table = read_results(path)
    missing = [c for c in ("interaction_id", "saved_ms", "skip_reason") if c not in table.columns]
    if missing:
        raise DataFileError(f"{path}: line 1: {missing[0]}: missing column (a simulate run's results.csv has it)")
    return table


def _wilcoxon(delta: np.ndarray) -> dict[str, Any]:
    nonzero = delta[delta != 0]
    out: dict[str, Any] = {"statistic": None, "p": None, "n_nonzero": int(nonzero.size)}
    if nonzero.size:
        from scipy.stats import wilcoxon

        res = wilcoxon(nonzero, zero_method="wilcox", alternative="two-sided")
        out.update(statistic=float(res.statistic), p=float(res.pvalue))
    return out


def compare_runs(run_a: str | os.PathLike[str], run_b: str | os.PathLike[str]) -> RunComparison:
    """Per-question deltas and the paired test of two simulate runs (see the module docstring)."""
    a, b = _results(run_a), _results(run_b)
    replayed_a, replayed_b = a[a["skip_reason"].isna()], b[b["skip_reason"].isna()]
    ids_a, ids_b = set(a["interaction_id"]), set(b["interaction_id"])
    keep = ["interaction_id", *(["question_type"] if "question_type" in a.columns else [])]
    cols_a = keep + [c for c in _KEEP if c in a.columns]
    cols_b = ["interaction_id", *(c for c in _KEEP if c in b.columns)]
    table = replayed_a[cols_a].merge(replayed_b[cols_b], on="interaction_id", suffixes=("_a", "_b"), how="inner")
    table.insert(len(keep), "delta_saved_ms", table["saved_ms_b"] - table["saved_ms_a"])
    delta = table["delta_saved_ms"].to_numpy(float)
    matched = set(table["interaction_id"])
    data: dict[str, Any] = {
        "runs": {"a": str(run_a), "b": str(run_b)},
        "n_matched": len(table),
        "ids": {
            "only_in_a": sorted(ids_a - ids_b),
            "only_in_b": sorted(ids_b - ids_a),
            "not_replayed": sorted((ids_a & ids_b) - matched),
        },
        "saved_ms_a": stats(table["saved_ms_a"].to_numpy(float)),
        "saved_ms_b": stats(table["saved_ms_b"].to_numpy(float)),
        "delta_saved_ms": stats(delta),
        "sign": {"b_more": int((delta > 0).sum()), "equal": int((delta == 0).sum()), "a_more": int((delta < 0).sum())},
        "wilcoxon": _wilcoxon(delta),
    }
    for col in ("misfire", "calls_fired"):
        if f"{col}_a" in table.columns and f"{col}_b" in table.columns:
            agg = "sum" if col == "misfire" else "mean"
            data[col] = {side: _number(getattr(table[f"{col}_{side}"].astype(float), agg)()) for side in ("a", "b")}
    return RunComparison(table, data)


def _number(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


def plot_run_comparison(comparison: RunComparison, *, fig: Figure | None = None) -> Figure:
    """Per question, B's saving against A's (line y = x), and the differences' histogram."""
    from streamrag.base.figures import PAGE_IN, figure_or_new, finish, paper_style

    t = comparison.table
    x, y = t["saved_ms_a"].to_numpy(float), t["saved_ms_b"].to_numpy(float)
    with paper_style():
        fig = figure_or_new(fig, PAGE_IN, 2.8)
        left, right = fig.subplots(1, 2)
        left.scatter(x, y, s=8, alpha=0.6, color="tab:blue", linewidths=0)
        both = np.concatenate([x, y, [0.0]])
        lims = (float(both.min()), float(both.max()) or 1.0)
        left.plot(lims, lims, color="0.4", linestyle="--", linewidth=1, label="B = A")
        left.set_xlabel("saved (ms), run A")
        left.set_ylabel("saved (ms), run B")
        left.legend(loc="upper left")
        left.grid(color="0.92")
        delta = t["delta_saved_ms"].to_numpy(float)
        if delta.size:
            right.hist(delta, bins=min(40, max(5, delta.size // 5)), color="tab:purple", alpha=0.8)
        right.axvline(0, color="0.3", linewidth=0.8)
        w = comparison.data["wilcoxon"]
        p = "undefined" if w["p"] is None else f"{w['p']:.3g}"
        right.set_title(f"B − A, n = {len(t)}; Wilcoxon p = {p}")
        right.set_xlabel("delta saved (ms)")
        right.set_ylabel("questions")
        right.grid(color="0.92")
        return finish(fig)


def write_run_comparison(comparison: RunComparison, out_dir: str | os.PathLike[str]) -> list[Path]:
    """``comparison.json``, ``per_question.csv`` and ``comparison.png`` (``--figure-format``'s
    suffix) into ``out_dir``, atomically."""
    from streamrag.base.atomic import write_text_atomic
    from streamrag.base.figures import figure_name, save_figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / RUNS_JSON
    write_text_atomic(json_path, json.dumps(comparison.data, indent=2, allow_nan=False) + "\n")
    table_path = out / RUNS_TABLE
    write_text_atomic(table_path, comparison.table.to_csv(index=False))
    figure = save_figure(plot_run_comparison(comparison), out / figure_name(Path(RUNS_FIGURE).stem))
    return [json_path, table_path, figure]


def run_comparison_lines(data: dict[str, Any]) -> list[str]:
    """The console summary of a run comparison."""
    d, w, sign = data["delta_saved_ms"], data["wilcoxon"], data["sign"]

    def f(x: float | None, spec: str = ".1f") -> str:
        return "n/a" if x is None else format(x, spec)

    return [
        f"{data['n_matched']} question(s) replayed by both; {len(data['ids']['only_in_a'])} only in A, "
        f"{len(data['ids']['only_in_b'])} only in B, {len(data['ids']['not_replayed'])} skipped by one",
        f"  saved ms   A mean {f(data['saved_ms_a']['mean'])} | B mean {f(data['saved_ms_b']['mean'])}",
        f"  B − A      mean {f(d['mean'])} median {f(d['median'])} ms; B more on {sign['b_more']}, equal on "
        f"{sign['equal']}, A more on {sign['a_more']}",
        f"  Wilcoxon signed-rank: W = {f(w['statistic'])}, p = {f(w['p'], '.3g')} ({w['n_nonzero']} nonzero differences)",
    ]
