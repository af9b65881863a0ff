"""The frontier's reader-facing outputs: a short leaderboard (markdown, and rows a page
renders) and the figure (:mod:`~streamrag.sweep.frontier.figure`).

Files: :func:`write_frontier` (the CSVs of :mod:`~streamrag.sweep.frontier.operating`, then these two).

- :func:`boards` — per group, one row per policy, ranked by its saving at a budget of one
  extra call per question: saved ms at each budget of
  :data:`~streamrag.sweep.frontier.operating.BUDGETS` (knob value and 95% CI), its share of the
  offline optimum, and its mis-fire / net-negative rates at the savings of
  :data:`~streamrag.sweep.frontier.operating.SAVINGS`; the null, the ceiling and the bound
  above. :func:`leaderboard` writes them as markdown; ``streamrag report`` as HTML.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from streamrag.base.figures import save_figure
from streamrag.sweep.frontier.figure import plot_frontier
from streamrag.sweep.frontier.operating import BUDGETS, SAVINGS, Frontier
from streamrag.sweep.frontier.tables import FRONTIER_CSV, OPERATING_CSV, OPTIMUM_CSV, groups

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BOARD_COLUMNS", "Board", "BoardRow", "boards", "leaderboard", "write_frontier"]

BOARD_COLUMNS = (
    "#",
    "policy",
    *(f"saved ms @ ≤ {b:g}" for b in BUDGETS),
    "% of optimum @ ≤ 1",
    *(f"mis-fire / neg. @ ≥ {s:g} ms" for s in SAVINGS),
)
"""The leaderboard's columns."""
_REFERENCES = (("none", "null"), ("every_word", "ceiling"), ("oracle", "bound, knows t*"))


def _missing(value: Any) -> bool:
    import pandas as pd

    return value is None or value is pd.NA or (isinstance(value, float) and not np.isfinite(value))


def _num(value: Any, fmt: str = "{:.0f}") -> str:
    return "–" if _missing(value) else fmt.format(value)


def _ci(row: Any, name: str, fmt: str = "{:.0f}") -> str:
    low, high = row.get(f"{name}.ci_low"), row.get(f"{name}.ci_high")
    if _missing(low) or _missing(high):
        return ""
    return f" [{_num(low, fmt)}, {_num(high, fmt)}]"


def _knob(value: Any) -> str:
    if _missing(value):
        return ""
    return f" ({value:g})" if isinstance(value, int | float) else f" ({value})"


class BoardRow(NamedTuple):
    rank: int
    policy: str
    bound: bool
    cells: list[str]
    """The cells after ``#`` and ``policy`` (:data:`BOARD_COLUMNS`)."""


class Board(NamedTuple):
    """One group's leaderboard."""

    group: dict[str, Any]
    n_questions: int
    optimum_saved_ms: float
    references: list[tuple[str, str, str]]
    """``(policy, role, its numbers)`` of the null, the ceiling and the bound the group has."""
    rows: list[BoardRow]


def boards(points: pd.DataFrame, operating: pd.DataFrame) -> list[Board]:
    """Each group's leaderboard from ``frontier.csv`` and ``operating_points.csv`` (see
    the module docstring)."""
    out = []
    for group, part in groups(points):
        gops = operating
        for name, value in group.items():
            gops = gops[gops[name] == value]
        first = part.iloc[0]
        references = []
        for policy, role in _REFERENCES:
            row = part[part["policy"] == policy]
            if len(row):
                r = row.iloc[0]
                references.append(
                    (
                        policy,
                        role,
                        f"saved {r['saved_ms.mean']:.0f} ms{_ci(r, 'saved_ms')}, {r['extra_calls.mean']:.2f} extra calls, "
                        f"mis-fire {100 * r['misfire.rate']:.1f}%, net-negative {100 * r['negative.rate']:.1f}%",
                    )
                )
        ranked = []
        for policy in dict.fromkeys(part["policy"]):
            mine = gops[gops["policy"] == policy]
            at1 = mine[(mine["at"] == "budget") & (mine["level"] == 1.0)]
            key = at1["saved_ms.mean"].iloc[0] if len(at1) and not _missing(at1["saved_ms.mean"].iloc[0]) else -np.inf
            ranked.append((-key, str(policy), mine))
        ranked.sort(key=lambda x: (x[0], x[1]))
        rows = []
        for rank, (_, policy, mine) in enumerate(ranked, start=1):
            cells = []
            for b in BUDGETS:
                r = mine[(mine["at"] == "budget") & (mine["level"] == b)].iloc[0].to_dict()
                cells.append(_num(r["saved_ms.mean"]) + _knob(r["knob_value"]) + _ci(r, "saved_ms"))
            r1 = mine[(mine["at"] == "budget") & (mine["level"] == 1.0)].iloc[0].to_dict()
            cells.append(_num(r1["pct_of_optimal"], "{:.1f}"))
            for s in SAVINGS:
                r = mine[(mine["at"] == "saving") & (mine["level"] == s)].iloc[0].to_dict()
                if _missing(r["label"]):
                    cells.append("not reached")
                else:
                    cells.append(f"{100 * r['misfire.rate']:.1f}% / {100 * r['negative.rate']:.1f}%{_knob(r['knob_value'])}")
            bound = bool(part[part["policy"] == policy]["bound"].iloc[0])
            rows.append(BoardRow(rank, policy, bound, cells))
        out.append(Board(group, int(first["n_questions"]), float(first["optimum_saved_ms"]), references, rows))
    return out


def leaderboard(frontier: Frontier, *, title: str = "") -> str:
    """The markdown leaderboard (see the module docstring)."""
    lines = [f"# Frontier{': ' + title if title else ''}", ""]
    lines.append(
        f"Operating points per policy; 95% bootstrap CIs over questions ({frontier.n_boot} resamples, seed "
        f"{frontier.seed}); extra calls = tool calls − 1 per question (calls fired, and a search per word ranked where "
        "pipeline.ranking = tool). Ranked by saved ms at ≤ 1 extra call."
    )
    for board in boards(frontier.points, frontier.operating):
        header = ", ".join(f"{k} = {v}" for k, v in board.group.items())
        lines += ["", f"## {header}" if header else "## All points", ""]
        lines.append(
            f"{board.n_questions} questions; offline optimum {board.optimum_saved_ms:.0f} ms saved per "
            "question with no extra call (the best schedule of each question under the same rules and draws)."
        )
        lines += [f"- `{policy}` ({role}): {numbers}" for policy, role, numbers in board.references]
        lines += ["", "| " + " | ".join(BOARD_COLUMNS) + " |", "|" + "---|" * len(BOARD_COLUMNS)]
        for row in board.rows:
            shown = f"`{row.policy}` (bound)" if row.bound else f"`{row.policy}`"
            lines.append(f"| {row.rank} | {shown} | " + " | ".join(row.cells) + " |")
    lines += ["", "Knob values in parentheses; – : no point of the policy within the budget.", ""]
    return "\n".join(lines)


def _csv_bytes(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False, lineterminator="\n", float_format=lambda v: repr(float(v))).encode("utf-8")


def write_frontier(out_dir: str | os.PathLike[str], frontier: Frontier, *, title: str = "") -> list[Path]:
    """Write ``frontier.csv``, ``operating_points.csv``, ``optimum.csv``, ``leaderboard.md``
    and ``frontier.pdf`` / ``frontier.svg`` (only ``frontier.<format>`` with
    ``--figure-format``) into ``out_dir``, all together (an interrupt leaves the folder
    as it was)."""
    from streamrag.base import figures
    from streamrag.base.atomic import together, write_bytes_atomic

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    with together():
        for name, df in ((FRONTIER_CSV, frontier.points), (OPERATING_CSV, frontier.operating), (OPTIMUM_CSV, frontier.optima)):
            write_bytes_atomic(out / name, _csv_bytes(df))
            files.append(out / name)
        write_bytes_atomic(out / "leaderboard.md", leaderboard(frontier, title=title).encode("utf-8"))
        files.append(out / "leaderboard.md")
        for suffix in (figures.FORMAT,) if figures.FORMAT else ("pdf", "svg"):
            files.append(save_figure(plot_frontier(frontier.points), out / f"frontier.{suffix}"))
    return files
