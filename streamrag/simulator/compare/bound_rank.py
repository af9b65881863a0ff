"""Does the bound H rank questions by what they save? (``compare``'s ``h_vs_saved``.)

The anchor study's Fig. 4 (``make_figures.py``) plots, per question, the saving measured
against the saving H predicts, with Spearman ρ(H, saved). At L = 600 ms the bound
*saturates* — the input residual exceeds L, so H = L for 59 of its 60 questions and there
is no spread to rank; it re-ran at L = 1000 ms to break the saturation and reports ρ over
all questions and "within the unsaturated tail": the questions *below the cap*, H < L.

``h_vs_saved`` gives, for the published side (``H_predicted_ms`` against
``measured_saved_ms``) and the simulated side (``H_ms`` against ``saved_ms``), over the
matched questions: ρ over all, and the number of unsaturated questions and ρ over them;
L is the run's tool latency (``manifest.json``: ``scenario.scenario.latency.L_ms``, the
same L as the published run it is compared with). ρ is None with fewer than 3 questions
or a constant side; with L unknown the tail is undefined (``n_unsaturated`` None).
``h_vs_saved.png`` (or ``--figure-format``'s suffix) draws both sides' points, the line
saved = H and, with the run's nominal query-generation latency G known
(:func:`run_G_ms`), saved = H + G: a call fired early overlaps G as well as L.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from streamrag.base.correlation import spearman

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["H_FIGURE", "UNSATURATED_RULE", "h_vs_saved", "h_vs_saved_lines", "plot_h_vs_saved", "run_G_ms", "run_L_ms"]

H_FIGURE = "h_vs_saved.png"
UNSATURATED_RULE = "unsaturated: H < L (below the cap), as the anchor study's L = 1000 ms re-run"


def run_L_ms(run_dir: str | os.PathLike[str]) -> float | None:
    """The run's constant tool latency L (ms) from its manifest, or None when unknown."""
    try:
        manifest = json.loads((Path(run_dir) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    node: Any = manifest
    for key in ("scenario", "scenario", "latency", "L_ms"):
        node = node.get(key) if isinstance(node, dict) else None
    return float(node) if isinstance(node, int | float) and not isinstance(node, bool) else None


def run_G_ms(run_dir: str | os.PathLike[str]) -> float | None:
    """The run's nominal query-generation latency G (ms), from the resolved stages its
    manifest records (``scenario.latency_stages.G``), or None when unknown."""
    from pydantic import ValidationError

    from streamrag.engine.latency import LatencyStages

    try:
        manifest = json.loads((Path(run_dir) / "manifest.json").read_text(encoding="utf-8"))
        return float(LatencyStages.model_validate(manifest["scenario"]["latency_stages"]).G.nominal_ms)
    except (OSError, ValueError, KeyError, TypeError, ValidationError):
        return None


def _side(H: np.ndarray, saved: np.ndarray, L_ms: float | None) -> dict[str, Any]:
    everything = spearman(H, saved)
    out: dict[str, Any] = {"n": int(H.size), "spearman": everything, "n_unsaturated": None, "spearman_unsaturated": None}
    if L_ms is not None:
        tail = np.less(H, L_ms)  # below the cap
        out["n_unsaturated"] = int(tail.sum())
        out["spearman_unsaturated"] = spearman(H[tail], saved[tail])
    return out


def h_vs_saved(
    H_predicted_ms: np.ndarray, measured_saved_ms: np.ndarray, H_ms: np.ndarray, saved_ms: np.ndarray, L_ms: float | None
) -> dict[str, Any]:
    """The ``h_vs_saved`` section of ``comparison.json`` (see the module docstring)."""
    return {
        "L_ms": L_ms,
        "rule": UNSATURATED_RULE,
        "published": _side(H_predicted_ms, measured_saved_ms, L_ms),
        "simulated": _side(H_ms, saved_ms, L_ms),
    }


def _rho(side: dict[str, Any], key: str) -> str:
    r = side.get(key)
    return "n/a" if not r or r.get("rho") is None else f"{r['rho']:+.2f}"


def h_vs_saved_lines(section: dict[str, Any]) -> list[str]:
    """One console line per side: ρ over all and over the unsaturated tail."""
    lines = []
    for name in ("published", "simulated"):
        s = section[name]
        tail = (
            "tail undefined (L unknown)"
            if s["n_unsaturated"] is None
            else (f"unsaturated (H < {section['L_ms']:g} ms) {s['n_unsaturated']}: rho {_rho(s, 'spearman_unsaturated')}")
        )
        lines.append(f"  rho(H, saved) {name:<9} all {s['n']}: {_rho(s, 'spearman')}; {tail}")
    return lines


def plot_h_vs_saved(
    H_predicted_ms: np.ndarray,
    measured_saved_ms: np.ndarray,
    H_ms: np.ndarray,
    saved_ms: np.ndarray,
    section: dict[str, Any],
    *,
    G_ms: float | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Per question, saving against H: published (measured) and simulated, with the
    lines saved = H and (``G_ms`` given) saved = H + G."""
    from streamrag.base.figures import COLUMN_IN, axes_or_new, finish, paper_style

    with paper_style():
        fig, ax = axes_or_new(ax, COLUMN_IN, 3.3)
        for H, saved, name, color, marker in (
            (H_predicted_ms, measured_saved_ms, "published", "tab:orange", "^"),
            (H_ms, saved_ms, "simulated", "tab:blue", "o"),
        ):
            side = section[name]
            ax.scatter(
                H,
                saved,
                s=10,
                marker=marker,
                facecolors="none",
                edgecolors=color,
                linewidths=0.7,
                alpha=0.7,
                label=f"{name}: ρ {_rho(side, 'spearman')}, unsaturated ρ {_rho(side, 'spearman_unsaturated')}",
            )
        high = float(max(np.max(H_predicted_ms), np.max(H_ms), 1.0))
        ax.plot([0, high], [0, high], color="0.35", linestyle="--", linewidth=0.9, label="saved = H")
        if G_ms is not None:
            ax.plot(
                [0, high],
                [G_ms, high + G_ms],
                color="0.35",
                linestyle=":",
                linewidth=0.9,
                label=f"saved = H + G (G = {G_ms:g} ms)",
            )
        if section["L_ms"] is not None:
            ax.axvline(section["L_ms"], color="0.7", linewidth=0.8, label=f"L = {section['L_ms']:g} ms (saturated)")
        ax.axhline(0, color="0.6", linewidth=0.6)
        ax.set_xlabel("H, predicted saving (ms)")
        ax.set_ylabel("saving (ms)")
        ax.set_title(f"Saving against the bound H, per question (n = {section['published']['n']})")
        ax.legend(loc="upper left", fontsize=6.5)
        ax.grid(color="0.92")
        return finish(fig)
