"""Sweep figures show every setting the grid varied: each value is named in a legend or a
title, every computed point is drawn, and a figure that holds a setting at one value
says which values it left out. Checked on the matplotlib objects, not on pixels."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from streamrag.sweep import read_sweep, run_sweep
from streamrag.sweep.figures import plot_pareto, plot_saved_vs_bounds, plot_saved_vs_H_scatter, sweep_figures
from streamrag.sweep.figures.encoding import layout, reference_rows, setting_columns, varied

RETRIEVERS = """
    kind = "simulate"
    input = "demo"
    scenario = "paper_rq3"
    [base]
    "select.population" = "all"
    [output]
    figures = false
    [axes]
    "data.retriever" = ["bm25", "rank_bm25"]
    "latency.L_ms" = [300, 600, 1000, 2500]
    [axes.trigger]
    interval_3w = { "trigger.kind" = "interval", "trigger.words" = 3 }
    every_word = { "trigger.kind" = "every_word" }
    oracle = { "trigger.kind" = "oracle" }
"""

CADENCES = """
    kind = "simulate"
    input = "generated:12:seed=2"
    scenario = "paper_rq3"
    [base]
    "select.population" = "all"
    [output]
    figures = false
    [axes]
    "latency.L_ms" = [300, 600, 1000]
    "input.delta_wps" = [2.0, 3.0, 4.0]
    [axes.trigger]
    interval_3w = { "trigger.kind" = "interval", "trigger.words" = 3 }
    every_word = { "trigger.kind" = "every_word" }
"""


def _sweep(folder: Path, name: str, text: str) -> tuple[Path, pd.DataFrame]:
    grid = folder / f"{name}.toml"
    grid.write_text(textwrap.dedent(text), encoding="utf-8")
    run_sweep(grid, folder / name)
    return folder / name, read_sweep(folder / name)


@pytest.fixture(scope="module")
def retrievers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """retriever × L × trigger on the demo set (full mode: each retriever ranks the prefixes)."""
    return _sweep(tmp_path_factory.mktemp("varied"), "retrievers", RETRIEVERS)


@pytest.fixture(scope="module")
def cadences(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """L × δ × trigger: more L × δ panels than a pareto figure holds."""
    return _sweep(tmp_path_factory.mktemp("varied"), "cadences", CADENCES)


def _texts(fig: Any) -> str:
    """Every legend entry and title of ``fig``, one per line."""
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]
    found = [t.get_text() for leg in legends for t in leg.get_texts()]
    found += [ax.get_title() for ax in fig.axes if ax.get_visible()]
    found.append(fig._suptitle.get_text() if fig._suptitle is not None else "")
    return "\n".join(found)


def _n_drawn(fig: Any, xlabel: str | None = None) -> int:
    """Grid points drawn (the markers of gid ``points``), on the axes of ``xlabel`` if given."""
    return sum(
        len(c.get_offsets())
        for ax in fig.axes
        if ax.get_visible() and (xlabel is None or ax.get_xlabel() == xlabel)
        for c in ax.collections
        if c.get_gid() == "points"
    )


def test_the_settings_of_a_sweep_table_are_its_axes_and_descriptors(retrievers) -> None:
    _, table = retrievers
    settings = setting_columns(table)
    assert settings[:3] == ["retriever", "L_ms", "trigger"] and "saved_ms.mean" not in settings and "key" not in settings
    # trigger_kind follows trigger: not a setting of its own to show
    assert varied(table) == ["retriever", "L_ms", "trigger"]


def test_saved_vs_bounds_and_pareto_name_every_value_and_draw_every_point(retrievers) -> None:
    _, table = retrievers
    for fig, n_drawn in (
        (plot_saved_vs_bounds(table), lambda f: _n_drawn(f, "mean H (ms)")),
        (plot_pareto(table), _n_drawn),
    ):
        text = _texts(fig)
        for value in ("retriever = bm25", "retriever = rank_bm25"):
            assert value in text, (value, text)
        for L in (300, 600, 1000, 2500):
            assert f"L = {L} ms" in text, (L, text)
        for trigger in ("interval_3w", "every_word", "oracle (bound)"):
            assert trigger in text.splitlines(), trigger
        assert n_drawn(fig) == len(table) == 24
        assert "left out" not in text  # nothing held: every point is drawn


def test_points_of_two_retrievers_are_drawn_apart(retrievers) -> None:
    _, table = retrievers
    fig = plot_pareto(table)
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible() and ax.get_xlabel()]
    assert len(titles) == 8 and len(set(titles)) == 8  # a panel per (L, retriever)
    for ax in fig.axes:
        if not ax.get_visible() or not ax.get_xlabel():
            continue
        L, retriever = ax.get_title().split(", ")
        mine = table[(table["L_ms"] == float(L.split()[2])) & (table["retriever"] == retriever.split(" = ")[1])]
        drawn = {tuple(xy) for c in ax.collections if c.get_gid() == "points" for xy in c.get_offsets().tolist()}
        assert drawn == set(zip(mine["wasted_calls.mean"], mine["saved_ms.mean"], strict=True))


def test_the_scatter_names_what_it_leaves_out(retrievers) -> None:
    run, table = retrievers
    fig = plot_saved_vs_H_scatter(run, table)
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_xlabel()]
    titles = [ax.get_title() for ax in panels]
    assert len(panels) == 4 and all(f"L = {L} ms" in t for L, t in zip((300, 600, 1000, 2500), titles, strict=True))
    assert all("retriever = bm25" in t and "interval_3w" in t for t in titles)  # each panel names its point
    note = fig._suptitle.get_text()
    assert "retriever = bm25 (left out: rank_bm25)" in note and "trigger = interval_3w (left out: every_word, oracle)" in note
    lay = layout(table, facets=("L_ms",), max_panels=4)
    assert lay.n_drawn == 4 and lay.note in note


def test_a_setting_that_does_not_fit_is_held_and_named(cadences) -> None:
    run, table = cadences
    fig = plot_pareto(table)
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_xlabel()]
    assert len(panels) == 3  # L × δ = 9 panels would not fit in 8: δ is held at 3 w/s
    text = _texts(fig)
    assert "drawn at δ = 3 w/s (left out: 2, 4 w/s)" in text
    assert _n_drawn(fig) == len(reference_rows(table, keep=("L_ms", "trigger"))) == (table["delta_wps"] == 3.0).sum() == 6
    # saved_vs_bounds: L by shape, δ by row: every point
    fig = plot_saved_vs_bounds(table)
    assert _n_drawn(fig, "mean H (ms)") == len(table) == 18
    assert all(f"δ = {d:g} w/s" in _texts(fig) for d in (2, 3, 4))
    assert [stem for stem, _ in sweep_figures(run, table, "simulate")] == ["saved_vs_bounds", "pareto", "saved_vs_H_scatter"]


def test_other_figures_name_their_extra_settings() -> None:
    from streamrag.sweep.figures import plot_analysis_arms, plot_load, plot_revisions

    arms = pd.DataFrame(
        [{"retriever": r, "chunk_words": c, "k": k, "grounding": "exact", "share_retrieved_gold": 0.5, "phi_suf.mean": 0.2}
         for r in ("bm25", "dense") for c in (100, 200) for k in (1, 3)]
    )  # fmt: skip
    fig = plot_analysis_arms(arms)
    assert len(fig.axes[0].patches) == len(arms)  # a bar per point: nothing averaged away
    assert {"bm25, 100", "bm25, 200", "dense, 100", "dense, 200"} <= set(_texts(fig).splitlines())
    revisions = pd.DataFrame(
        [{"p": p, "r": r, "trigger": t, "delta_wps": 3.0, "t_star.mean": 5.0, "saved_ms.mean": 100.0 * p,
          "calls_on_revised_share": p} for t in ("interval_3w", "every_word") for r in (1, 2) for p in (0.0, 0.2)]
    )  # fmt: skip
    fig = plot_revisions(revisions)
    lines = [line for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert len(lines) == 4 and {"r = 1, interval_3w", "r = 2, every_word"} <= set(_texts(fig).splitlines())
    load = pd.DataFrame(
        [{"retriever": r, "offered_load": x, "rate_per_s": x * (1 + (r == "dense")), "seed": 0, "policy": "always",
          **{f"{s}.answer_ms.{q}": 1000.0 * (1 + x) for s in ("streaming", "baseline") for q in ("median", "p90")}}
         for r in ("bm25", "dense") for x in (0.2, 0.5, 0.8)]
    )  # fmt: skip
    title = plot_load(load)._suptitle.get_text()  # the rate follows the load and the retriever: not averaged over
    assert "mean over retriever bm25, dense" in title and "rate_per_s" not in title
