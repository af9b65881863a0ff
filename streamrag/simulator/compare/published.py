"""A simulation run against a published per-question latency file (``streamrag compare``).

The anchor study measured, in wall-clock time, the latency its pipeline saved on each
question it replayed. :func:`compare_run` joins such a file with the ``results.csv`` of a
``streamrag simulate`` run on ``interaction_id`` — replayed questions only — and asks
whether the simulator reproduces the measurement, question by question.

Inputs:

- ``RUN_DIR/results.csv`` (:mod:`streamrag.simulator.results`): ``interaction_id, H_ms,
  saved_ms, skip_reason`` are required (``n_words``, ``t_star`` used when present); a
  row with a non-empty ``skip_reason`` was not replayed and is not joined.
  ``RUN_DIR/manifest.json``, when readable, says whether the run was trace-driven.
- the published file: ``interaction_id, measured_saved_ms, H_predicted_ms`` and,
  optionally, ``question_type, n_words, t_star`` (other columns are ignored).

Metrics follow the naming rule of :mod:`streamrag.simulator.results` (an aggregate is
``NAME.STAT``, nested in JSON; undefined is null, never 0). Per matched question:

========================  =========================================================
``measured_saved_ms``     the published saving (ms)
``saved_ms``              the simulated saving (ms)
``H_predicted_ms``        the published bound H (ms)
``H_ms``                  the simulated run's H (ms)
``abs_delta_saved_ms``    ``|saved_ms − measured_saved_ms|``
========================  =========================================================

each aggregated to ``mean, median, p10, p90, min, max``; correlations over the matched
questions, ``{"r" or "rho", "p", "n"}`` (null when n < 3 or a side is constant):
``pearson_saved_measured`` and ``spearman_saved_measured`` (simulated vs measured
saving), ``spearman_H_predicted_measured_saved`` (the published side's ρ(H, saved)) and
``spearman_H_saved`` (the simulated side's, as in the run's summary but over the matched
questions). ``h_vs_saved``: ρ(H, saved) on each side over all matched questions and over the
unsaturated tail, H < L (:mod:`streamrag.simulator.compare.bound_rank`, figure ``h_vs_saved.png``).
``agreement.n_words`` / ``agreement.t_star``: ``{"n", "n_agree", "rate",
"disagree_ids"}`` over the matched questions where both sides give a value, null when the
file lacks the column.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from streamrag.analysis.csvrows import CsvRow, RowError, parse_float, parse_int, read_rows
from streamrag.base.errors import DataFileError, InputError, TableError
from streamrag.base.validation import MAX_MS
from streamrag.simulator.compare.bound_rank import H_FIGURE, h_vs_saved, h_vs_saved_lines, plot_h_vs_saved, run_G_ms, run_L_ms
from streamrag.simulator.run_output import spearman, stats

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "COMPARISON_FIGURE",
    "COMPARISON_JSON",
    "PUBLISHED_COLUMNS",
    "PUBLISHED_OPTIONAL_COLUMNS",
    "Comparison",
    "compare_run",
    "comparison_lines",
    "plot_comparison",
    "read_published",
    "read_run",
    "write_comparison",
]

PUBLISHED_COLUMNS: tuple[str, ...] = ("interaction_id", "measured_saved_ms", "H_predicted_ms")
"""Required columns of a published per-question latency file."""

PUBLISHED_OPTIONAL_COLUMNS: tuple[str, ...] = ("question_type", "n_words", "t_star")
"""Columns read when present (``n_words`` and ``t_star`` are compared with the run)."""

RUN_COLUMNS: tuple[str, ...] = ("interaction_id", "H_ms", "saved_ms", "skip_reason")
"""Columns of ``results.csv`` the comparison needs."""

COMPARISON_JSON = "comparison.json"
COMPARISON_FIGURE = "comparison.png"

ORACLE_NOTE = (
    "the run used the oracle reflector (a bare stabilization table: a call on prefix t is sufficient "
    "iff t >= t*), which inflates the simulated rho(H, saved) by construction"
)


class _Question(NamedTuple):
    """One question of either side — on the published side ``saved_ms`` is the measured
    saving and ``H_ms`` the predicted H; ``n_words``/``t_star`` None when not given."""

    saved_ms: float
    H_ms: float
    n_words: int | None
    t_star: int | None


def _parse(path: str, row: CsvRow, required: Sequence[str], optional: Sequence[str], ints: Sequence[str]) -> dict[str, Any]:
    """The columns of one row by type (``ints`` integer, the others numbers), or a TableError."""
    out: dict[str, Any] = {}
    try:
        for column in (*required, *optional):
            raw = row.fields.get(column)
            if raw is None:
                out[column] = None
                continue
            value = parse_int(column, raw) if column in ints else parse_float(column, raw)
            if value is None and column in required:
                raise RowError(column, "empty, but a value is required")
            if value is not None and column.endswith("_ms") and abs(value) > MAX_MS:
                raise RowError(column, f"{raw} ms is beyond a day ({MAX_MS:.0f} ms): not a turn's latency")
            if value is not None and column == "H_predicted_ms" and value < 0:
                raise RowError(column, f"{raw} is negative (H, the hideable latency, is ≥ 0)")
            if value is not None and column in ints and value < 1:
                raise RowError(column, f"{raw} is not a positive count (a word count, or a word position from 1)")
            out[column] = value
    except RowError as exc:
        raise TableError(f"{path}:{row.line}: {exc}") from None
    return out


def read_run(run_dir: str | os.PathLike[str]) -> tuple[dict[str, _Question], dict[str, str]]:
    """``RUN_DIR/results.csv``: (replayed questions by id in file order, skip reason by id)."""
    run = Path(run_dir)
    if not run.is_dir():
        raise DataFileError(f"{run}: no such folder (RUN_DIR is the --out folder of 'streamrag simulate')")
    from streamrag.base.formats import check_run

    check_run(run)
    path = run / "results.csv"
    if not path.is_file():
        raise DataFileError(f"{path}: no such file (is {run} the --out folder of 'streamrag simulate'?)")
    _, rows = read_rows(path, RUN_COLUMNS)
    replayed: dict[str, _Question] = {}
    skipped: dict[str, str] = {}
    for row in rows:
        qid, reason = row.fields["interaction_id"], row.fields["skip_reason"]
        if reason:
            skipped[qid] = reason
            continue
        v = _parse(str(path), row, ("saved_ms", "H_ms"), ("n_words", "t_star"), ("n_words", "t_star"))
        replayed[qid] = _Question(v["saved_ms"], v["H_ms"], v["n_words"], v["t_star"])
    return replayed, skipped


def read_published(path: str | os.PathLike[str]) -> tuple[dict[str, _Question], tuple[str, ...]]:
    """A published per-question latency file: (questions by id in file order, the
    optional columns it has)."""
    header, rows = read_rows(path, PUBLISHED_COLUMNS)
    optional = tuple(c for c in PUBLISHED_OPTIONAL_COLUMNS if c in header)
    compared = [c for c in ("n_words", "t_star") if c in optional]
    out: dict[str, _Question] = {}
    for row in rows:
        v = _parse(str(path), row, ("measured_saved_ms", "H_predicted_ms"), compared, compared)
        out[row.fields["interaction_id"]] = _Question(
            v["measured_saved_ms"], v["H_predicted_ms"], v.get("n_words"), v.get("t_star")
        )
    return out, optional


def _run_mode(run_dir: Path) -> tuple[str | None, str | None, str | None]:
    """(input mode, scenario name, reflector model) from ``manifest.json``; None where
    unknown (the manifest only annotates the comparison, so an unreadable one is not an
    error)."""
    try:
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None, None

    def get(*keys: str) -> str | None:
        node: Any = manifest
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        return node if isinstance(node, str) else None

    return get("input", "mode"), get("scenario", "scenario", "name"), get("reflector_model")


def _pearson(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Pearson r and two-sided p (None when undefined: < 3 pairs or a constant side)."""
    from streamrag.base.correlation import pearson

    return pearson(x, y)


def _agreement(column: str, ids: Sequence[str], run: dict[str, _Question], published: dict[str, _Question]) -> dict[str, Any]:
    pairs = [(q, getattr(run[q], column), getattr(published[q], column)) for q in ids]
    given = [(q, a, b) for q, a, b in pairs if a is not None and b is not None]
    disagree = [q for q, a, b in given if a != b]
    n = len(given)
    return {"n": n, "n_agree": n - len(disagree), "rate": (n - len(disagree)) / n if n else None, "disagree_ids": disagree}


class Comparison(NamedTuple):
    """``data`` is ``comparison.json``; the arrays are the matched questions, run order."""

    data: dict[str, Any]
    ids: list[str]
    measured_saved_ms: np.ndarray
    saved_ms: np.ndarray
    H_predicted_ms: np.ndarray | None = None
    H_ms: np.ndarray | None = None
    G_ms: float | None = None
    """The run's nominal query-generation latency (the line saved = H + G), None if unknown."""


def compare_run(run_dir: str | os.PathLike[str], published_path: str | os.PathLike[str]) -> Comparison:
    """Join a run's replayed questions with a published file and compare them.

    Raises :class:`~streamrag.base.errors.InputError` subclasses, one line naming file, line
    and column, on a missing file or column, a non-numeric value or a repeated id, and
    when the two share no replayed question.
    """
    run = Path(run_dir)
    replayed, skipped = read_run(run)
    published, optional = read_published(published_path)
    matched = [q for q in replayed if q in published]
    if not matched:
        raise InputError(
            f"{published_path}: no interaction_id in common with the {len(replayed)} replayed question(s) of "
            f"{run / 'results.csv'}"
        )
    mode, scenario, reflector = _run_mode(run)
    column = {
        "measured_saved_ms": np.array([published[q].saved_ms for q in matched]),
        "saved_ms": np.array([replayed[q].saved_ms for q in matched]),
        "H_predicted_ms": np.array([published[q].H_ms for q in matched]),
        "H_ms": np.array([replayed[q].H_ms for q in matched]),
    }
    column["abs_delta_saved_ms"] = np.abs(column["saved_ms"] - column["measured_saved_ms"])
    data = {
        "run": {
            "dir": str(run),
            "input_mode": mode,
            "scenario": scenario,
            "reflector_model": reflector,
            "n_replayed": len(replayed),
            "n_not_replayed": len(skipped),
        },
        "published": {"path": str(published_path), "n_questions": len(published), "optional_columns": list(optional)},
        "n_matched": len(matched),
        "ids": {
            "only_in_run": [q for q in replayed if q not in published],
            "only_in_published": [q for q in published if q not in replayed],
            "not_replayed": [q for q in published if q in skipped],
        },
        **{name: stats(values) for name, values in column.items()},
        "pearson_saved_measured": _pearson(column["saved_ms"], column["measured_saved_ms"]),
        "spearman_saved_measured": spearman(column["saved_ms"], column["measured_saved_ms"]),
        "spearman_H_predicted_measured_saved": spearman(column["H_predicted_ms"], column["measured_saved_ms"]),
        "spearman_H_saved": spearman(column["H_ms"], column["saved_ms"]),
        "agreement": {
            name: _agreement(name, matched, replayed, published) if name in optional else None for name in ("n_words", "t_star")
        },
        "h_vs_saved": h_vs_saved(
            column["H_predicted_ms"], column["measured_saved_ms"], column["H_ms"], column["saved_ms"], run_L_ms(run)
        ),
        "notes": [ORACLE_NOTE] if reflector is not None and reflector.startswith("oracle") else [],
    }
    return Comparison(
        data, matched, column["measured_saved_ms"], column["saved_ms"], column["H_predicted_ms"], column["H_ms"], run_G_ms(run)
    )


def plot_comparison(comparison: Comparison, *, ax: Axes | None = None) -> Figure:
    """Per question, simulated against measured saving (ms), the line y = x, negative
    savings marked (red: simulated < 0; triangle: measured < 0)."""
    from streamrag.base.figures import COLUMN_IN, paper_style

    with paper_style():
        return _draw_comparison(comparison, ax, COLUMN_IN)


def _draw_comparison(comparison: Comparison, ax: Axes | None, width_in: float) -> Figure:
    from streamrag.base.figures import axes_or_new, finish

    x, y = comparison.measured_saved_ms, comparison.saved_ms
    data = comparison.data
    fig, ax = axes_or_new(ax, width_in, width_in + 0.3)
    sim_neg, meas_neg = y < 0, x < 0
    groups = (
        (~sim_neg & ~meas_neg, "o", "tab:blue", "both ≥ 0"),
        (~sim_neg & meas_neg, "^", "tab:orange", "measured < 0"),
        (sim_neg & ~meas_neg, "o", "tab:red", "simulated < 0"),
        (sim_neg & meas_neg, "^", "tab:red", "both < 0"),
    )
    for mask, marker, color, label in groups:
        if mask.any():
            ax.scatter(
                x[mask], y[mask], s=8, marker=marker, color=color, alpha=0.6, linewidths=0, label=f"{label} ({int(mask.sum())})"
            )
    both = np.concatenate([x, y, [0.0]])
    low, high = float(both.min()), float(both.max())
    pad = 0.05 * max(high - low, 1.0)
    lims = (low - pad, high + pad)
    ax.plot(lims, lims, color="0.4", linestyle="--", linewidth=1, label="simulated = measured")
    ax.axhline(0, color="0.6", linewidth=0.6)
    ax.axvline(0, color="0.6", linewidth=0.6)
    ax.set_xlim(lims)
    ax.set_ylim(lims)
    ax.set_aspect("equal")
    ax.set_xlabel("measured saved (ms, published)")
    ax.set_ylabel("simulated saved (ms, this run)")
    r, rho = data["pearson_saved_measured"]["r"], data["spearman_saved_measured"]["rho"]
    ax.set_title(
        f"Latency saved per question (n = {data['n_matched']})\nPearson r = {_fmt(r, '.2f')}, Spearman ρ = {_fmt(rho, '.2f')}"
    )
    ax.legend(loc="upper left")
    ax.grid(color="0.92")
    return finish(fig)


def write_comparison(comparison: Comparison, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write ``comparison.png`` (``h_vs_saved.png``) and ``comparison.json`` into
    ``out_dir`` (created), atomically; the figures in ``--figure-format``'s format."""
    from streamrag.analysis.stats.report import write_summary
    from streamrag.base.figures import figure_name, save_figure

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = [save_figure(plot_comparison(comparison), out / figure_name(Path(COMPARISON_FIGURE).stem))]
    if comparison.H_predicted_ms is not None and comparison.H_ms is not None:
        drawn = plot_h_vs_saved(
            comparison.H_predicted_ms,
            comparison.measured_saved_ms,
            comparison.H_ms,
            comparison.saved_ms,
            comparison.data["h_vs_saved"],
            G_ms=comparison.G_ms,
        )
        files.append(save_figure(drawn, out / figure_name(Path(H_FIGURE).stem)))
    return [*files, write_summary(comparison.data, out / COMPARISON_JSON)]


def _fmt(x: float | None, spec: str = ".1f") -> str:
    return "n/a" if x is None else format(x, spec)


def comparison_lines(data: dict[str, Any]) -> list[str]:
    """The console summary of a comparison."""
    ids, m, s = data["ids"], data["measured_saved_ms"], data["saved_ms"]
    pr, sr = data["pearson_saved_measured"], data["spearman_saved_measured"]
    delta = data["abs_delta_saved_ms"]
    lines = [
        f"{data['n_matched']} question(s) matched; {len(ids['only_in_run'])} only in the run, "
        f"{len(ids['only_in_published'])} only in {data['published']['path']}"
        + (f" ({len(ids['not_replayed'])} of them not replayed)" if ids["not_replayed"] else ""),
        f"  saved ms     measured mean {_fmt(m['mean'])} median {_fmt(m['median'])} | "
        f"simulated mean {_fmt(s['mean'])} median {_fmt(s['median'])}",
        f"  H ms         published mean {_fmt(data['H_predicted_ms']['mean'])} | simulated mean {_fmt(data['H_ms']['mean'])}",
        f"  per question Pearson r {_fmt(pr['r'], '.3f')} (p {_fmt(pr['p'], '.3g')}), "
        f"Spearman rho {_fmt(sr['rho'], '.3f')} (p {_fmt(sr['p'], '.3g')}), n {pr['n']}; "
        f"|delta saved| mean {_fmt(delta['mean'])} p90 {_fmt(delta['p90'])} ms",
        f"  rho(H, saved) published {_fmt(data['spearman_H_predicted_measured_saved']['rho'], '.3f')} | "
        f"simulated {_fmt(data['spearman_H_saved']['rho'], '.3f')}",
    ]
    agree = [f"{name} {a['n_agree']}/{a['n']}" for name, a in data["agreement"].items() if a is not None]
    if agree:
        lines.append(f"  agree on {', '.join(agree)}")
    lines += h_vs_saved_lines(data["h_vs_saved"])
    lines += [f"  note: {note}" for note in data["notes"]]
    return lines
