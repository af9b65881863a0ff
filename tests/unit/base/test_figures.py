"""Figures for a paper: every public plot function fits both columns (≤ 7 in) with tick
labels ≥ 7 pt, draws onto a given axes or figure and returns it (matplotlib's
convention), labels its reference lines; ``--figure-format`` picks every command's format."""

from __future__ import annotations

import inspect
import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from stats_tables import write

from streamrag import plots
from streamrag.base import figures
from streamrag.cli import main
from streamrag.data.demo import demo_path
from streamrag.data.generated.records import generate_stabilization_table
from streamrag.sweep import read_sweep, run_sweep

MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF", "svg": b"<?xml"}

SIM_GRID = """
    name = "figs"
    kind = "simulate"
    input = "generated:30:seed=2"
    scenario = "paper_rq3"
    [base]
    "select.population" = "all"
    [output]
    figures = false
    [axes]
    "latency.L_ms" = [300, 600, 1000]
    [axes.trigger]
    interval_3w = { "trigger.kind" = "interval", "trigger.words" = 3 }
    every_word = { "trigger.kind" = "every_word" }
    oracle = { "trigger.kind" = "oracle" }
    none = { "trigger.kind" = "none" }
"""

FRONTIER_GRID = """
    kind = "simulate"
    input = "generated:12:seed=2"
    scenario = "frontier"
    [axes.policy]
    none = { "trigger.kind" = "none" }
    interval_words = { "trigger.kind" = "interval", "trigger.words" = [2, 4] }
    oracle = { "trigger.kind" = "oracle" }
"""

PUBLISHED = """\
interaction_id,measured_saved_ms,H_predicted_ms
q1,1000,590
q2,1300.5,590
q3,-50,400
q4,700,590
q5,600,300
q6,1100,590
"""


@pytest.fixture(autouse=True)
def _default_format():
    figures.FORMAT = None  # main() sets it; a test that calls main leaves it as the next expects
    yield
    figures.FORMAT = None


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Small inputs of every plot function: a simulate sweep (triggers × L), an RQ2
    sweep, a stabilization table, a simulated run (traced), a compared run, a frontier."""
    folder = tmp_path_factory.mktemp("figs")
    grid = folder / "sim.toml"
    grid.write_text(textwrap.dedent(SIM_GRID), encoding="utf-8")
    sim = run_sweep(grid, folder / "sim").table
    table = generate_stabilization_table(80, seed=3)
    csv = folder / "stabilization.csv"
    table.to_csv(csv, index=False)
    assert main(["sweep", "paper_rq2", "--input", f"table:{csv}", "--out", str(folder / "rq2"), "-q"]) == 0
    run = folder / "run"
    small = write(folder)
    assert main(["simulate", "--table", str(small), "--scenario", "paper_rq3", "--set", "select.population=all",
                 "--out", str(run), "-q"]) == 0  # fmt: skip
    published = folder / "pub.csv"
    published.write_text(PUBLISHED, encoding="utf-8")
    frontier = folder / "frontier.toml"
    frontier.write_text(textwrap.dedent(FRONTIER_GRID), encoding="utf-8")
    assert main(["frontier", str(frontier), "--out", str(folder / "fr"), "--bootstrap", "20", "-q"]) == 0
    return {
        "folder": folder,
        "sim_dir": folder / "sim",
        "sim": sim,
        "rq2": read_sweep(folder / "rq2"),
        "table": table,
        "run": run,
        "published": published,
        "frontier": pd.read_csv(folder / "fr" / "frontier" / "frontier.csv"),
    }


def _load_table() -> pd.DataFrame:
    rows = []
    for seed in (0, 1):
        for load in (0.2, 0.4, 0.6, 0.8):
            diff = 500.0 * (0.5 + 0.05 * seed - load)
            row = {"offered_load": load, "seed": seed, "policy": "always", "saved_ms.median": diff,
                   "answer_ms_difference.p90": diff - 50, "answer_ms_difference.p99": diff - 80,
                   "baseline.resources.tool.utilization": 0.9 * load}  # fmt: skip
            for system, base in (("streaming", 900.0), ("baseline", 1200.0)):
                row[f"{system}.answer_ms.median"] = base * (1 + 2 * load)
                row[f"{system}.answer_ms.p90"] = base * (1.5 + 3 * load)
            rows.append(row)
    return pd.DataFrame(rows)


def _revisions_table() -> pd.DataFrame:
    return pd.DataFrame(
        [{"p": p, "r": r, "delta_wps": 3.0, "t_star.mean": 5 + 10 * p * r, "saved_ms.mean": 1200 - 800 * p,
          "calls_on_revised_share": p / r} for r in (1, 2) for p in (0.0, 0.2, 0.4)]
    )  # fmt: skip


def _comparison(work: dict[str, Any]) -> Any:
    from streamrag.simulator.compare.published import compare_run

    return compare_run(work["run"], work["published"])


def _draw(name: str, work: dict[str, Any], tmp_path: Path, target: Any = None) -> Any:
    """Call plot function ``name`` on small data; ``target`` is passed as its ``ax=`` or ``fig=``."""
    fn = getattr(plots, name)
    kw = {} if target is None else {("ax" if "ax" in inspect.signature(fn).parameters else "fig"): target}
    sim, rq2, table = work["sim"], work["rq2"], work["table"]
    if name == "plot_phi_histograms":
        return fn(table, **kw)
    if name == "plot_phi_suf_by_type":
        return fn(table, **kw)
    if name == "plot_streamable_vs_L":
        return fn(table, theta=0.8, **kw)
    if name == "plot_retrievers":  # the table as two retrievers' rows (retrievers.csv's shape)
        both = pd.concat([table.assign(retriever="bm25"), table.assign(retriever="overlap.py:WordOverlap")])
        return fn(both, delta_wps=3.0, theta=0.8, **kw)
    if name in ("plot_pareto", "plot_saved_vs_bounds"):
        return fn(sim, **kw)
    if name == "plot_saved_vs_H_scatter":
        return fn(work["sim_dir"], sim, **kw)
    if name == "plot_streamable_heatmaps":
        return fn(rq2, **kw)
    if name == "plot_analysis_arms":
        arms = pd.DataFrame(
            [{"retriever": r, "k": k, "grounding": "exact", "share_retrieved_gold": 0.5 + k / 100, "phi_suf.mean": 0.2}
             for r in ("bm25", "dense") for k in (1, 3, 5)]
        )  # fmt: skip
        return fn(arms, **kw)
    if name == "plot_load":
        return fn(_load_table(), **kw)
    if name == "plot_revisions":
        return fn(_revisions_table(), **kw)
    if name == "plot_frontier":
        return fn(work["frontier"], **kw)
    if name == "plot_comparison":
        return fn(_comparison(work), **kw)
    if name == "plot_h_vs_saved":
        c = _comparison(work)
        return fn(c.H_predicted_ms, c.measured_saved_ms, c.H_ms, c.saved_ms, c.data["h_vs_saved"], G_ms=c.G_ms, **kw)
    if name == "plot_run_comparison":
        from streamrag.simulator.compare.runs import compare_runs

        return fn(compare_runs(work["run"], work["run"]), **kw)
    if name == "plot_trace":
        from streamrag.simulator.views import traceview

        return fn(traceview.load_question(work["run"], "q1"), **kw)
    if name == "plot_fits":
        from streamrag.calibration.fit import fit_stage
        from streamrag.calibration.measurements import read_measurements

        rng = np.random.default_rng(11)
        rows = [("G", v) for v in rng.lognormal(np.log(590), 0.3, 60)] + [("L", v) for v in rng.gamma(3.0, 200.0, 60)]
        rows += [("F", 2520.0)] * 25
        csv = tmp_path / "m.csv"
        csv.write_text("stage,duration_ms\n" + "".join(f"{s},{v:.3f}\n" for s, v in rows), encoding="utf-8")
        meas = read_measurements(csv)
        fits = [fit_stage(s.stage, s.durations_ms, origin=str(csv)) for s in meas.stages.values()]
        return fn(meas, fits, **kw)
    if name == "plot_saved":
        rng = np.random.default_rng(0)
        bound = list(rng.uniform(0, 1200, 40))
        return fn([b * 0.8 for b in bound], bound, [i % 7 == 0 for i in range(40)], **kw)
    raise AssertionError(f"{name}: a public plot function this test does not draw; add it")


PLOT_FUNCTIONS = [n for n in plots.__all__ if n.startswith("plot_")]


def test_the_public_plot_module_is_pinned():
    assert sorted(plots.__all__) == [
        "COLUMN_IN",
        "PAGE_IN",
        "plot_analysis_arms",
        "plot_comparison",
        "plot_fits",
        "plot_frontier",
        "plot_h_vs_saved",
        "plot_load",
        "plot_pareto",
        "plot_phi_histograms",
        "plot_phi_suf_by_type",
        "plot_retrievers",
        "plot_revisions",
        "plot_run_comparison",
        "plot_saved",
        "plot_saved_vs_H_scatter",
        "plot_saved_vs_bounds",
        "plot_streamable_heatmaps",
        "plot_streamable_vs_L",
        "plot_trace",
        "reference_rows",
        "save_figure",
    ]
    for name in PLOT_FUNCTIONS:  # matplotlib's convention: data, then keyword-only ax= or fig=
        params = inspect.signature(getattr(plots, name)).parameters
        target = [p for p in ("ax", "fig") if p in params]
        assert len(target) == 1 and params[target[0]].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert params[target[0]].default is None and "path" not in params, name


@pytest.mark.parametrize("name", PLOT_FUNCTIONS)
def test_every_figure_fits_a_paper_page_and_its_ticks_stay_legible(name, work, tmp_path):
    from matplotlib.figure import Figure

    fig = _draw(name, work, tmp_path)
    assert isinstance(fig, Figure)
    width_in = fig.get_size_inches()[0]
    assert width_in <= figures.PAGE_IN + 1e-9, f"{name}: {width_in:.2f} in wide"
    fig.canvas.draw()  # ticks exist once drawn
    sizes = [
        label.get_fontsize()
        for ax in fig.axes
        if ax.get_visible()
        for label in (*ax.get_xticklabels(), *ax.get_yticklabels())
        if label.get_visible() and label.get_text()
    ]
    assert sizes and min(sizes) >= 7.0, f"{name}: tick labels of {min(sizes)} pt"
    texts = [t.get_fontsize() for t in fig.findobj(lambda a: hasattr(a, "get_fontsize") and getattr(a, "get_text", lambda: "")())]
    assert min(texts) >= 5.5, f"{name}: text of {min(texts)} pt"
    path = figures.save_figure(fig, tmp_path / f"{name}.svg")
    assert path.read_bytes().startswith(MAGIC["svg"])


READ_DPI = 200
"""Pixels per inch of a figure as read in print: a PNG of one column is 3.5 × 200 px wide."""


@pytest.mark.parametrize("name", PLOT_FUNCTIONS)
def test_each_figure_kind_as_read_at_one_column_width(name, work, tmp_path):
    """Each figure as a PNG of one column (3.5 in at 200 px/in): a two-column figure
    shrunk to half, as a reader sees it placed in one column. Kept as an artifact when
    ``STREAMRAG_ARTIFACTS`` names a folder."""
    fig = _draw(name, work, tmp_path)
    width_in, height_in = fig.get_size_inches()
    path = figures.save_figure(fig, tmp_path / f"{name.removeprefix('plot_')}.png", dpi=READ_DPI * figures.COLUMN_IN / width_in)
    from matplotlib.image import imread

    pixels = imread(path)
    assert pixels.shape[1] == round(figures.COLUMN_IN * READ_DPI), (name, pixels.shape)
    assert abs(pixels.shape[0] - height_in * READ_DPI * figures.COLUMN_IN / width_in) <= 1
    if artifacts := os.environ.get("STREAMRAG_ARTIFACTS"):
        folder = Path(artifacts) / "figures-3.5in"
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, folder / path.name)


@pytest.mark.parametrize("name", PLOT_FUNCTIONS)
def test_a_given_axes_or_figure_is_drawn_on_and_returned(name, work, tmp_path):
    fig = figures.agg_figure(6.0, 4.0)
    if "ax" in inspect.signature(getattr(plots, name)).parameters:
        ax = fig.add_subplot(1, 2, 2)
        assert _draw(name, work, tmp_path, target=ax) is fig
        assert ax.has_data() or ax.get_images() or ax.texts, f"{name}: nothing drawn on the given axes"
        assert fig.axes[0] is ax
    else:
        assert _draw(name, work, tmp_path, target=fig) is fig
        assert any(ax.has_data() or ax.get_images() for ax in fig.axes), f"{name}: nothing drawn on the given figure"
    assert tuple(fig.get_size_inches()) == (6.0, 4.0)  # the caller's figure keeps its size


def _legend(fig: Any) -> list[str]:
    names = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    return names + [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]


def test_saved_vs_H_draws_and_names_both_h_and_h_plus_g(work, tmp_path):
    sim = work["sim"]
    G = float(sim["G_ms"].iloc[0])
    for name in ("plot_saved_vs_bounds", "plot_saved_vs_H_scatter"):
        fig = _draw(name, work, tmp_path)
        labels = _legend(fig)
        assert "saved = H" in labels and f"saved = H + G (G = {G:g} ms)" in labels, (name, labels)
        ax = fig.axes[0]
        lines = {line.get_label(): line.get_xydata() for line in ax.get_lines()}
        h, hg = lines["saved = H"], lines[f"saved = H + G (G = {G:g} ms)"]
        assert np.allclose(h[:, 1], h[:, 0]) and np.allclose(hg[:, 1], hg[:, 0] + G), name
    c = _comparison(work)
    assert c.G_ms == G  # the run's nominal G, from its manifest
    labels = _legend(_draw("plot_h_vs_saved", work, tmp_path))
    assert "saved = H" in labels and f"saved = H + G (G = {G:g} ms)" in labels


def _points(ax: Any) -> dict[str, Any]:
    """The axes' grid-point markers by label (the sweep figures give them the gid ``points``)."""
    return {c.get_label(): c for c in ax.collections if c.get_gid() == "points"}


def test_triggers_by_colour_L_by_shape_and_the_oracle_bound_on_top(work, tmp_path):
    fig = _draw("plot_saved_vs_bounds", work, tmp_path)
    ax = fig.axes[0]
    points = _points(ax)
    triggers, Ls = ("interval_3w", "every_word", "oracle (bound)", "none"), ("L = 300 ms", "L = 600 ms", "L = 1000 ms")
    assert set(points) == {f"{t}, {L}" for t in triggers for L in Ls}, set(points)
    oracle = {name: c for name, c in points.items() if name.startswith("oracle")}
    others = {name: c for name, c in points.items() if name not in oracle}
    assert all(o.get_zorder() > c.get_zorder() for o in oracle.values() for c in others.values())
    assert all(c.get_facecolor().size == 0 or c.get_facecolor()[0][3] == 0 for c in others.values())  # open
    assert all(c.get_facecolor()[0][3] == 1 for c in oracle.values())  # the bound filled

    def shape(c: Any) -> tuple:
        return tuple(map(tuple, c.get_paths()[0].vertices.round(3)))

    for L in Ls:  # one shape per L, whatever the trigger; one colour per trigger, whatever L
        assert len({shape(c) for name, c in points.items() if name.endswith(L)}) == 1
    assert len({shape(points[f"none, {L}"]) for L in Ls}) == len(Ls)
    for t in triggers:
        assert len({tuple(points[f"{t}, {L}"].get_edgecolor()[0]) for L in Ls}) == 1
    assert set(_legend(fig)) >= {*triggers, *Ls}
    pareto = _draw("plot_pareto", work, tmp_path)
    visible = [a for a in pareto.axes if a.get_visible() and a.get_xlabel()]
    assert len(visible) == 3 and len({round(a.get_position().y0, 3) for a in visible}) == 2  # 3 panels in 2 rows
    assert "oracle (bound)" in _legend(pareto) and "Pareto front (filled markers)" in _legend(pareto)
    shapes = {name: shape(c) for name, c in _points(visible[0]).items()}
    assert len(set(shapes.values())) == len(shapes) == 4  # in the pareto, a marker per trigger


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.suffix in figures.FORMATS)


@pytest.mark.parametrize("fmt", ["pdf", "svg"])
def test_figure_format_sets_every_figure_a_command_names(fmt, work, tmp_path, capsys):
    folder = work["folder"]
    table = folder / "stabilization.csv"
    assert main(["--figure-format", fmt, "stats", str(table), "--out", str(tmp_path / "stats"), "-q"]) == 0
    assert _names(tmp_path / "stats") == [f"phi_histograms.{fmt}", f"phi_suf_by_type.{fmt}", f"streamable_vs_L.{fmt}"]
    analyze = [
        "analyze",
        str(demo_path()),
        "--split",
        "all",
        "--limit",
        "20",
        "--out",
        str(tmp_path / "an"),
        "-q",
        "--figure-format",
        fmt,
    ]
    assert main(analyze) == 0
    assert _names(tmp_path / "an") == [f"phi_histograms.{fmt}", f"phi_suf_by_type.{fmt}", f"streamable_vs_L.{fmt}"]
    grid = folder / "sim.toml"
    sweep = tmp_path / "sweep"
    text = grid.read_text(encoding="utf-8").replace("figures = false", "figures = true").replace("300, 600, 1000", "600")
    (tmp_path / "g.toml").write_text(text, encoding="utf-8")
    assert main(["sweep", str(tmp_path / "g.toml"), "--out", str(sweep), "--figure-format", fmt, "-q"]) == 0
    assert _names(sweep / "figures") == sorted(f"{n}.{fmt}" for n in ("pareto", "saved_vs_bounds", "saved_vs_H_scatter"))
    compared = tmp_path / "cmp"
    assert main(["compare", str(work["run"]), str(work["published"]), "--out", str(compared), "--figure-format", fmt]) == 0
    said = capsys.readouterr().out.splitlines()[-1]
    assert said == f"wrote {compared / 'comparison.json'}, {compared / f'comparison.{fmt}'} and {compared / f'h_vs_saved.{fmt}'}"
    assert _names(compared) == [f"comparison.{fmt}", f"h_vs_saved.{fmt}"]
    runs = tmp_path / "runs"
    assert main(["compare", str(work["run"]), str(work["run"]), "--out", str(runs), "--figure-format", fmt]) == 0
    assert _names(runs) == [f"comparison.{fmt}"]
    for path in [*(tmp_path / "stats").iterdir(), *(sweep / "figures").iterdir(), *compared.iterdir(), *runs.iterdir()]:
        if path.suffix in figures.FORMATS:
            assert path.read_bytes().startswith(MAGIC[fmt]), path
    assert not [p for p in (sweep / "figures").iterdir() if p.suffix == ".png"]


def test_without_the_flag_names_stay_png_and_an_explicit_path_keeps_its_extension(work, tmp_path):
    folder = work["folder"]
    assert main(["stats", str(folder / "stabilization.csv"), "--out", str(tmp_path / "stats"), "-q"]) == 0
    assert _names(tmp_path / "stats") == ["phi_histograms.png", "phi_suf_by_type.png", "streamable_vs_L.png"]
    assert (tmp_path / "stats" / "phi_histograms.png").read_bytes().startswith(MAGIC["png"])
    trace = ["trace", str(work["run"]), "q1", "--figure", str(tmp_path / "t.pdf"), "--figure-format", "svg"]
    assert main(trace) == 0
    assert (tmp_path / "t.pdf").read_bytes().startswith(MAGIC["pdf"])


def test_the_frontier_writes_pdf_and_svg_by_default_and_only_the_format_asked(work, tmp_path):
    folder = work["folder"]
    assert sorted(p.name for p in (folder / "fr" / "frontier").glob("frontier.*") if p.suffix != ".csv") == [
        "frontier.pdf",
        "frontier.svg",
    ]
    out = tmp_path / "fr"
    argv = ["frontier", str(folder / "frontier.toml"), "--out", str(out), "--bootstrap", "20", "-q", "--figure-format", "png"]
    assert main(argv) == 0
    written = sorted(p.name for p in (out / "frontier").glob("frontier.*") if p.suffix != ".csv")
    assert written == ["frontier.png"] and (out / "frontier" / "frontier.png").read_bytes().startswith(MAGIC["png"])


def test_calibrate_and_demo_name_their_figure_by_the_format(tmp_path):
    rng = np.random.default_rng(3)
    rows = "".join(f"L,{v:.3f}\n" for v in rng.gamma(3.0, 200.0, 40))
    (tmp_path / "m.csv").write_text("stage,duration_ms\n" + rows, encoding="utf-8")
    out = tmp_path / "mine.toml"
    assert main(["calibrate", str(tmp_path / "m.csv"), "--out", str(out), "--figure-format", "svg", "-q"]) == 0
    assert out.with_suffix(".svg").read_bytes().startswith(MAGIC["svg"]) and not out.with_suffix(".png").exists()
