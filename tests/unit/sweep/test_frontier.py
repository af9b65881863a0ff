"""The frontier: hedge trigger, policy families in grids, operating points, same bytes per seed."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _simhelpers import compact, replay, table_q

from streamrag.base.columns import declared_dtypes
from streamrag.base.errors import ConfigError
from streamrag.cli import main
from streamrag.pipeline.hedge import HedgeTriggerConfig, expected_remaining_ms
from streamrag.report.build import write_report
from streamrag.simulator.scenario import load_scenario
from streamrag.sweep import load_grid
from streamrag.sweep.frontier.operating import _best_under_budget, _cheapest_reaching, _envelope, bootstrap_weights
from streamrag.sweep.frontier.tables import FRONTIER_POINTS, OPERATING_POINTS, OPTIMA, read_frontier

# --- hedge ---------------------------------------------------------------------------


def test_expected_remaining_input_from_a_length_prior() -> None:
    # Lengths 2 (×1) and 4 (×1), 500 ms a word: at t = 1 both remain, E[n − 1] = (1 + 3)/2
    # words; at t = 3 only n = 4 does, 1 word; past 4, nothing.
    assert expected_remaining_ms({2: 1, 4: 1}, 5, 500.0) == [1000.0, 500.0, 500.0, 0.0, 0.0]


def test_the_hedge_fires_at_the_last_word_expected_to_hide_the_quantile() -> None:
    hedge = HedgeTriggerConfig(lengths={2: 1, 4: 1}, threshold_ms=600.0, word_interval_ms=500.0)
    # R = 1000, 500, 500, 0: R(1) ≥ 600 > R(2) → word 1 only.
    assert hedge.fire_words(4) == frozenset({1})
    assert HedgeTriggerConfig(lengths={2: 1, 4: 1}, threshold_ms=400.0, word_interval_ms=500.0).fire_words(4) == {3}
    assert HedgeTriggerConfig(lengths={2: 1, 4: 1}, threshold_ms=2000.0, word_interval_ms=500.0).fire_words(4) == set()
    with pytest.raises(ConfigError, match="unresolved"):
        HedgeTriggerConfig().fire_words(4)
    with pytest.raises(ConfigError, match=r"trigger\.lengths"):
        HedgeTriggerConfig(lengths={0: 3}, threshold_ms=1.0, word_interval_ms=1.0).fire_words(4)


def test_the_scenario_resolves_the_hedge_from_its_latency_and_cadence() -> None:
    rs = load_scenario("frontier", ["trigger.kind=hedge", "trigger.quantile=0.5"])
    hedge = rs.scenario.trigger
    assert isinstance(hedge, HedgeTriggerConfig)
    assert hedge.threshold_ms == pytest.approx(2780.0)  # arora2025's L median
    assert hedge.word_interval_ms == pytest.approx(1000 / 3)
    assert hedge.lengths is not None and sum(hedge.lengths.values()) == 2706  # CRAG's histogram
    lower = load_scenario("frontier", ["trigger.kind=hedge", "trigger.quantile=0.1"]).scenario.trigger
    assert lower.threshold_ms < hedge.threshold_ms  # type: ignore[union-attr]


def test_a_hedge_call_in_the_pipeline_fires_on_its_word() -> None:
    rs = load_scenario("paper_rq3", ["trigger.kind=hedge", "trigger.threshold_ms=600", "trigger.lengths={4 = 1}"])
    # One length, 4 words, δ = 3: R = 1000, 667, 333, 0 ms → fires at word 2 (667 ≥ 600 > 333).
    events = compact(replay(table_q("h", n=4, t_suf=2), rs))
    fires = [e for e in events if e[1] == "fire"]
    assert fires[0][:2] == (666667, "fire") and fires[0][4] == 2


# --- grid families -------------------------------------------------------------------


def _grid(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "f.toml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_a_variant_with_a_list_is_a_family_of_points(tmp_path: Path) -> None:
    grid = load_grid(_grid(tmp_path, """
        kind = "simulate"
        input = "generated:10"
        [axes.policy]
        none = { "trigger.kind" = "none" }
        stable = { "trigger.kind" = "stable", "trigger.words" = [1, 3] }
    """))  # fmt: skip
    (axis,) = grid.axes
    assert [(v.label, v.family, v.knob, v.overrides) for v in axis.values] == [
        ("none", None, None, (("trigger.kind", "none"),)),
        ("stable=1", "stable", "trigger.words", (("trigger.kind", "stable"), ("trigger.words", 1))),
        ("stable=3", "stable", "trigger.words", (("trigger.kind", "stable"), ("trigger.words", 3))),
    ]
    with pytest.raises(ConfigError, match="a family varies one key"):
        load_grid(_grid(tmp_path, """
            kind = "simulate"
            input = "generated:10"
            [axes.policy]
            x = { "trigger.kind" = "interval", "trigger.words" = [1, 2], "latency.L_ms" = [1, 2] }
        """))  # fmt: skip


def test_the_builtin_frontier_grid_has_ten_policies_with_the_shipped_learned_model() -> None:
    (axis,) = load_grid("frontier").axes
    families = {v.family or v.label for v in axis.values}
    assert families == {"none", "interval_words", "interval_seconds", "replace", "stable", "hedge", "every_word", "oracle",
                        "learned", "learned_rearm"}  # fmt: skip
    learned = [dict(v.overrides) for v in axis.values if v.family in ("learned", "learned_rearm")]
    assert {o["trigger.model"] for o in learned} == {"frontier"}  # the shipped model, by name: no file to bring
    assert sorted({o["trigger.tau"] for o in learned}) == [0.3, 0.45, 0.6, 0.75]


# --- operating points ----------------------------------------------------------------


def test_operating_points_pick_the_best_point_within_the_budget() -> None:
    extra = np.array([[0.0, 0.2, 0.6, 1.5, 0.1]])
    saved = np.array([[0.0, 500.0, 900.0, 1200.0, 700.0]])
    policy_a = np.array([True, True, True, True, False])
    assert _best_under_budget(extra, saved, policy_a, 0.25)[0] == 1
    assert _best_under_budget(extra, saved, policy_a, 1.0)[0] == 2
    assert _best_under_budget(extra, saved, policy_a, 2.0)[0] == 3
    assert _best_under_budget(extra, saved, ~policy_a, 0.05)[0] == -1  # nothing that cheap
    assert _cheapest_reaching(extra, saved, policy_a, 600.0)[0] == 2
    assert _cheapest_reaching(extra, saved, policy_a, 5000.0)[0] == -1
    on = _envelope(extra[0], saved[0], np.ones(5, dtype=bool))
    assert on.tolist() == [True, False, True, True, True]  # (0.2, 500) is dominated by (0.1, 700)


def test_bootstrap_weights_are_seeded_resamples() -> None:
    w = bootstrap_weights(50, 20, seed=3)
    assert w.shape == (20, 50) and (w.sum(axis=1) == 50).all()
    assert (w == bootstrap_weights(50, 20, seed=3)).all() and not (w == bootstrap_weights(50, 20, seed=4)).all()


def test_frontier_command_writes_the_same_bytes_for_the_same_seed(tmp_path: Path) -> None:
    grid = _grid(tmp_path, """
        kind = "simulate"
        input = "generated:20:seed=2"
        scenario = "frontier"
        [axes.policy]
        none = { "trigger.kind" = "none" }
        interval_words = { "trigger.kind" = "interval", "trigger.words" = [2, 4] }
        stable = { "trigger.kind" = "stable", "trigger.words" = [2] }
        hedge = { "trigger.kind" = "hedge", "trigger.quantile" = [0.1, 0.5] }
        every_word = { "trigger.kind" = "every_word" }
        oracle = { "trigger.kind" = "oracle" }
        learned = { "trigger.kind" = "learned", "trigger.model" = "frontier", "trigger.tau" = [0.45] }
    """)  # fmt: skip
    out = tmp_path / "a"
    names = ["frontier.csv", "operating_points.csv", "optimum.csv", "leaderboard.md", "frontier.pdf", "frontier.svg"]
    first = {}
    for _ in range(2):  # the second run reuses the points (sweeps' own determinism is tested with them)
        assert main(["frontier", str(grid), "--out", str(out), "--bootstrap", "200", "--seed", "7", "--resume"]) == 0
        files = {name: (out / "frontier" / name).read_bytes() for name in names}
        first = first or files
        assert files == first
    outs = [out]
    points = pd.read_csv(outs[0] / "frontier" / "frontier.csv")
    assert len(points) == 9
    assert set(points["policy"]) == {"none", "interval_words", "stable", "hedge", "every_word", "oracle", "learned"}
    none = points[points["policy"] == "none"].iloc[0]
    assert none["saved_ms.mean"] == 0 and none["extra_calls.mean"] == 0 and none["on_frontier"]
    # Nothing beats the offline optimum; the regret is what is left of it.
    assert (points["saved_ms.mean"] <= points["optimum_saved_ms"] + 1e-9).all()
    assert np.allclose(points["regret_ms"], points["optimum_saved_ms"] - points["saved_ms.mean"])
    assert not points[points["policy"] == "oracle"]["on_frontier"].any()
    learned = points[points["policy"] == "learned"].iloc[0]  # scored like every other point
    assert learned["saved_ms.mean"] > 0 and learned["pct_of_optimal"] > 0 and learned["regret_ms"] >= 0
    ops = pd.read_csv(outs[0] / "frontier" / "operating_points.csv")
    assert set(ops["level"][ops["at"] == "budget"]) == {0.25, 0.5, 1.0, 2.0}
    assert "learned" in set(ops["policy"])
    assert "| `learned` |" in (out / "frontier" / "leaderboard.md").read_text(encoding="utf-8")
    assert "<!-- learned (tau) -->" in (out / "frontier" / "frontier.svg").read_text(encoding="utf-8")  # its legend entry
    assert (outs[0] / "frontier" / "frontier.pdf").read_bytes().startswith(b"%PDF")
    # Read back by their declarations: one dtype per column whatever the values.
    tables = read_frontier(out / "frontier")
    for frame, kind in ((tables.points, FRONTIER_POINTS), (tables.operating, OPERATING_POINTS), (tables.optima, OPTIMA)):
        assert declared_dtypes(frame) == kind.dtypes(frame.columns)
    assert tables.points["knob_value"].isna().any() and str(tables.points["knob_value"].dtype) == "float64"
    assert str(tables.optima["optimum_fire_t"].dtype) == "Int64" and str(tables.points["bound"].dtype) == "boolean"
    # The sweep's page shows the frontier's figure (the folder holds PDF and SVG; the page draws SVG),
    # alone: the sweep's own figures would repeat it with a legend entry per point.
    html = write_report(out, tmp_path / "page.html", texts=False).html.read_text(encoding="utf-8")
    assert re.findall(r'<figure><img alt="([^"]*)" src="data:image/svg\+xml;base64,', html) == ["frontier"]
    # ... and its leaderboard: a row per policy, ranked as leaderboard.md ranks them.
    board = re.search(r'<table class="metrics leaderboard">(.*?)</table>', html, re.S).group(1)
    ranked = re.findall(r"<tr><td>(\d+)</td><td><code>([^<]*)</code>", board)
    markdown = re.findall(r"^\| (\d+) \| `([^`]*)`", (out / "frontier" / "leaderboard.md").read_text(encoding="utf-8"), re.M)
    assert ranked == markdown and {p for _, p in ranked} == set(points["policy"]) and len(ranked) == 7
    assert "<th>saved ms @ ≤ 1</th>" in board and "offline optimum" in html


def _many_policies() -> pd.DataFrame:
    """A frontier table of the built-in grid's ten policies (made up numbers)."""
    families = [
        ("none", "none", None, [None]),
        ("interval_words", "interval", "words", [2, 3, 4, 6, 8]),
        ("interval_seconds", "interval", "seconds", [0.5, 1.0, 2.0]),
        ("replace", "replace", "seconds", [0.25, 0.5, 1.0]),
        ("stable", "stable", "words", [1, 2, 3, 4]),
        ("hedge", "hedge", "quantile", [0.05, 0.1, 0.25, 0.5]),
        ("every_word", "every_word", None, [None]),
        ("oracle", "oracle", None, [None]),
        ("learned", "learned", "tau", [0.3, 0.45, 0.6, 0.75]),
        ("learned_rearm", "learned", "tau", [0.3, 0.45, 0.6, 0.75]),
    ]
    rng = np.random.default_rng(0)
    rows = []
    for policy, kind, knob, values in families:
        for value in values:
            extra = 0.0 if policy == "none" else float(rng.uniform(0.04, 6.0))
            rows.append({
                "policy": policy, "knob": knob, "knob_value": value, "label": policy if value is None else f"{policy}={value}",
                "trigger": kind if value is None else f"{kind}({knob}={value})", "n_questions": 100,
                "extra_calls.mean": extra, "saved_ms.mean": 0.0 if policy == "none" else 400.0 * np.log1p(10 * extra),
                "optimum_saved_ms": 3500.0, "bound": policy == "oracle", "on_frontier": False,
            })  # fmt: skip
    return pd.DataFrame(rows)


def test_the_frontier_figure_groups_policies_by_kind_labels_knobs_and_fits_its_legend() -> None:
    from streamrag.sweep.frontier.figure import plot_frontier

    points = _many_policies()
    fig = plot_frontier(points)
    (legend,) = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    bold = [t.get_text() for t in legend.get_texts() if t.get_fontweight() == "bold"]
    assert bold == ["interval", "learned"]  # a heading only where a kind has more than one policy
    i, j = texts.index("interval"), texts.index("learned")
    assert texts[i + 1 : i + 3] == ["interval_words (words)", "interval_seconds (seconds)"]
    assert texts[j + 1 : j + 3] == ["learned (tau)", "learned_rearm (tau)"]
    assert {"none", "stable (words)", "hedge (quantile)", "every_word", "oracle (bound)", "replace (seconds)"} <= set(texts)
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.get_lines() if line.get_gid() == "policy"}
    assert sum(len(line.get_xdata()) for line in lines.values()) == len(points)  # every point drawn
    assert lines["interval_words"].get_color() == lines["interval_seconds"].get_color()  # one colour per kind
    assert lines["interval_words"].get_marker() != lines["interval_seconds"].get_marker()
    knobs = sorted(t.get_text() for t in ax.texts)
    assert knobs == sorted(f"{v:g}" for v in points["knob_value"].dropna())  # each point labelled with its knob value
    fig.canvas.draw()  # nothing cut off: the legend lies inside the figure
    box, page = legend.get_window_extent(), fig.bbox
    assert box.x0 >= page.x0 and box.y0 >= page.y0 and box.x1 <= page.x1 and box.y1 <= page.y1
    assert ax.get_window_extent().height > 100  # and the panel did not collapse under it


def test_a_frontier_knob_takes_numbers_refused_before_anything_runs(tmp_path: Path, capsys) -> None:
    grid = _grid(tmp_path, """
        kind = "simulate"
        input = "generated:10"
        [axes.policy]
        none = { "trigger.kind" = "none" }
        learned = { "trigger.kind" = "learned", "trigger.model" = ["a.json", "b.json"] }
    """)  # fmt: skip
    assert main(["frontier", str(grid), "--out", str(tmp_path / "o")]) == 1
    assert "a frontier's knob is a number" in capsys.readouterr().err and not (tmp_path / "o").exists()


def test_frontier_refuses_a_grid_without_a_policy_axis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grid = _grid(tmp_path, """
        kind = "simulate"
        input = "generated:10"
        [axes]
        "latency.L_ms" = [300, 600]
    """)  # fmt: skip
    assert main(["frontier", str(grid), "--out", str(tmp_path / "o")]) == 1
    assert "variants axis [axes.policy]" in capsys.readouterr().err


def test_a_table_with_its_evidence_runs_the_policies_that_read_rankings(tmp_path: Path) -> None:
    from streamrag.sweep import plan
    from streamrag.sweep.inputs import PreparedInputs

    table = tmp_path / "T.csv"
    assert main(["generate", str(table), "--table", "--questions", "12", "--seed", "1"]) == 0
    grid = load_grid("frontier", input=f"table:{table}")
    swept = plan(grid, PreparedInputs(grid.input))
    assert not swept.skipped and len(swept.runnable) == 30
    (tmp_path / "T.prefixes.parquet").unlink()  # a bare table: only t* is known
    with pytest.raises(ConfigError, match="needs per-prefix evidence"):
        plan(load_grid("frontier", input=f"table:{table}"), PreparedInputs(load_grid("frontier", input=f"table:{table}").input))
