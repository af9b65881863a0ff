"""Statistics of RQ1, RQ2, RQ4 and gold density on hand-made tables (see stats_tables.py)."""

from __future__ import annotations

import contextlib
import gc
import json
import math
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from stats_tables import HEADER, rows_table, write

from streamrag.analysis.stats import rq as stats
from streamrag.analysis.stats.groups import anchor_spearman, dunn_holm, kruskal_wallis
from streamrag.analysis.table import read_table
from streamrag.base.errors import ConfigError


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return read_table(write(tmp_path_factory.mktemp("t")))


@pytest.fixture(scope="module")
def summary(table):
    return stats.summarize(table, params={"n_resamples": 200})


def _cell(grid, L, d, th):
    (cell,) = [c for c in grid if (c["L_ms"], c["delta_wps"], c["theta"]) == (L, d, th)]
    return cell


def _walk(obj):
    """Every leaf of a JSON-like tree."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            assert isinstance(k, str)
            yield from _walk(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk(v)
    else:
        yield obj


# --------------------------------------------------------------------------- RQ1


def test_rq1_counts(summary):
    r = summary["rq1"]
    assert summary["n_questions"] == 8 and summary["n_skipped"] == 1
    assert summary["skip_reasons"] == {"empty query": 1}
    assert r["n_questions"] == 8
    assert (r["n_groundable"], r["share_groundable"]) == (6, 0.75)  # q1–q6
    assert (r["n_retrieved_gold"], r["share_retrieved_gold"]) == (5, 0.625)  # q1–q5
    assert (r["n_t_suf_1"], r["share_t_suf_1"]) == (2, 0.4)  # q1, q4 of 5 retrieved-gold
    # V = 0,1,0,2,0,0,1,0: mean 4/8; V > 0 for q2, q4, q7
    assert r["volatility"] == {"n": 8, "mean": 0.5, "n_positive": 3, "share_positive": 0.375}


def test_rq1_phi_sc(summary):
    d = summary["rq1"]["phi_sc"]
    # sorted: .5 .5 .5 .5 .5 .75 1 1 (ties); mean 5.25/8; median (x[3]+x[4])/2;
    # numpy linear quartiles: q1 at position 7·0.25 = 1.75 → .5, q3 at 5.25 → .75 + .25·(1 − .75)
    assert d["n"] == 8
    assert d["mean"] == pytest.approx(0.65625)
    assert (d["median"], d["q1"], d["q3"]) == (0.5, 0.5, pytest.approx(0.8125))
    # g1 = m3 / m2^1.5 with deviations −0.15625 (×5), 0.09375, 0.34375 (×2)
    m2 = (5 * 0.15625**2 + 0.09375**2 + 2 * 0.34375**2) / 8  # 0.0458984375
    m3 = (-5 * 0.15625**3 + 0.09375**3 + 2 * 0.34375**3) / 8  # 0.00787353515625
    assert d["skewness"] == pytest.approx(m3 / m2**1.5)
    assert d["skewness"] == pytest.approx(0.8007, abs=1e-4)
    counts = [0] * 20
    counts[10], counts[15], counts[19] = 5, 1, 2  # 0.5 → bin 10, 0.75 → 15, 1.0 → last (closed) bin
    assert d["histogram"]["counts"] == counts
    assert d["histogram"]["edges"] == [k / 20 for k in range(21)]


def test_rq1_phi_suf_over_retrieved_gold_only(summary):
    d = summary["rq1"]["phi_suf"]
    # q1–q5: .1 .2 .5 .2 .5 → sorted .1 .2 .2 .5 .5; undefined t_suf (q6–q8) excluded
    assert d["n"] == 5
    assert d["mean"] == pytest.approx(0.3)
    assert (d["median"], d["q1"], d["q3"]) == (0.2, 0.2, 0.5)
    assert sum(d["histogram"]["counts"]) == 5
    assert [d["histogram"]["counts"][k] for k in (2, 4, 10)] == [1, 2, 2]


def test_describe_undefined_is_none():
    empty = stats.describe([])
    assert {k: empty[k] for k in ("n", "mean", "median", "q1", "q3", "skewness")} == {
        "n": 0, "mean": None, "median": None, "q1": None, "q3": None, "skewness": None,
    }  # fmt: skip
    assert empty["histogram"]["counts"] == [0] * 20
    assert stats.describe([0.3])["skewness"] is None  # n < 2
    assert stats.describe([0.3, 0.3, 0.3])["skewness"] is None  # constant sample


# --------------------------------------------------------------------------- RQ2


def test_rq2_boundary_and_decomposition(table):
    # n − t* = 9, 8, 2, 4, 4 (retrieved-gold, t* = t_suf) | 3, 1, 6 (fallback, t* = t_sc)
    # L = 1000, δ = 2: residual = (n − t*)·500 ms; H = min(1000, residual)
    #   = 1000, 1000, 1000, 1000, 1000 | 1000, 500, 1000
    # θ = 1.0: q3 has H == θ·L exactly → streamable; only q7 (H = 500) is not.
    c = stats.streamable_cell(table, L_ms=1000, delta_wps=2, theta=1.0, G_ms=590)
    assert (c["n"], c["n_streamable"], c["streamable_fraction"]) == (8, 7, 0.875)
    assert c["retrieved_gold"] == {"n": 5, "n_streamable": 5, "streamable_fraction": 1.0}
    assert c["fallback"] == {"n": 3, "n_streamable": 2, "streamable_fraction": pytest.approx(2 / 3)}
    assert c["H_ms"]["mean"] == 937.5  # (7·1000 + 500) / 8
    # H_G = min(G + L = 1590, residual): 1590 ×5 (q1,q2,q4,q5,q8), 1000 (q3), 1500 (q6), 500 (q7)
    assert c["H_G_ms"]["mean"] == pytest.approx((5 * 1590 + 1000 + 1500 + 500) / 8)
    # H' = H + min(G, r): every residual ≥ 590 except q7 (500)
    assert c["H_prime_ms"]["mean"] == pytest.approx((7500 + 7 * 590 + 500) / 8)
    # θ = 0.5: q7's H = 500 == θ·L → streamable too
    assert stats.streamable_cell(table, L_ms=1000, delta_wps=2, theta=0.5, G_ms=590)["n_streamable"] == 8


def test_rq2_point_and_grid(summary, table):
    rq2 = summary["rq2"]
    p = rq2["point"]
    assert (p["L_ms"], p["delta_wps"], p["theta"]) == (600.0, 3.0, 0.8)
    # δ = 3: residual = (n − t*)/3 s → only q7 (333 ms) is below θ·L = 480 ms
    assert (p["n_streamable"], p["n"]) == (7, 8)
    grid = rq2["grid"]
    assert len(grid) == 36
    assert [(c["L_ms"], c["delta_wps"], c["theta"]) for c in grid[:4]] == [
        (100.0, 2.0, 0.5), (100.0, 2.0, 0.8), (100.0, 2.0, 1.0), (100.0, 3.0, 0.5),
    ]  # fmt: skip
    # L = 1000, δ = 4, θ = 0.8: residual = (n − t*)·250 ms = 2250, 2000, 500, 1000, 1000 | 750, 250, 1500
    # streamable (H ≥ 800): q1, q2, q4, q5 of retrieved-gold; q8 of fallback
    c = _cell(grid, 1000.0, 4.0, 0.8)
    assert (c["n_streamable"], c["streamable_fraction"]) == (5, 0.625)
    assert c["retrieved_gold"] == {"n": 5, "n_streamable": 4, "streamable_fraction": 0.8}
    assert c["fallback"]["n_streamable"] == 1
    assert c["H_ms"]["mean"] == 812.5  # (4·1000 + 500 + 750 + 250 + 1000) / 8
    assert _cell(grid, 1000.0, 2.0, 1.0) == stats.streamable_cell(table, L_ms=1000, delta_wps=2, theta=1.0, G_ms=590)


def test_rq2_matches_scalar_metrics(table):
    from streamrag.analysis import metrics

    q = table[table["skip_reason"].isna()]
    for L, d, th in [(300, 2, 0.8), (600, 4, 1.0), (100, 3, 0.5)]:
        expected = sum(
            metrics.streamable(
                metrics.H(int(r.n_words), metrics.t_star(int(r.t_sc), None if pd.isna(r.t_suf) else int(r.t_suf)), L, d),
                L,
                th,
            )
            for r in q.itertuples()
        )
        assert stats.streamable_cell(table, L_ms=L, delta_wps=d, theta=th, G_ms=590)["n_streamable"] == expected


# --------------------------------------------------------------------------- RQ4


def test_rq4_groups_with_ties(summary):
    qt = summary["rq4"]["question_type"]
    # retrieved-gold only: simple .1 .2 .5, comparison .2 .5 (set, multi-hop have none)
    assert list(qt["groups"]) == ["comparison", "simple"]
    assert (qt["n"], qt["n_unlabeled"]) == (5, 0)
    s, c = qt["groups"]["simple"], qt["groups"]["comparison"]
    assert (s["n"], s["median"]) == (3, 0.2) and s["mean"] == pytest.approx(0.8 / 3)
    assert (c["n"], c["median"], c["mean"]) == (2, 0.35, 0.35)
    for g in (s, c):
        lo, hi = g["median_ci95"]
        assert 0.1 <= lo <= g["median"] <= hi <= 0.5
    kw = qt["kruskal_wallis_all"]
    # ranks: .1 → 1, .2 → 2.5 (tie), .5 → 4.5 (tie); R_simple = 8, R_comparison = 7, n = 5
    # H0 = 12/30·(64/3 + 49/2) − 18 = 1/3; tie correction 1 − (6 + 6)/(125 − 5) = 0.9 → H = 10/27
    assert kw["H"] == pytest.approx(10 / 27)
    ref = scipy.stats.kruskal([0.1, 0.2, 0.5], [0.2, 0.5])
    assert (kw["H"], kw["p"]) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue))
    assert (kw["df"], kw["n"], kw["n_groups"]) == (1, 5, 2)
    assert kw["epsilon2"] == pytest.approx(10 / 27 / 4)  # H/(n − 1), the anchor's
    assert kw["epsilon2_adjusted"] == pytest.approx((10 / 27 - 1) / 3)  # (H − k + 1)/(n − k): below 0, no effect
    assert qt["kruskal_wallis_min_n"] is None  # no group has n ≥ 10
    assert kw["dunn_holm"]["min_pair"]["a"] == "comparison" and len(kw["dunn_holm"]["pairs"]) == 1


def test_kruskal_wallis_by_hand_without_ties():
    # phi = t/10 for t = 1..6: A = {1, 3}, B = {2, 5, 6}, C = {4} (a one-member group).
    # Ranks = t; R_A = 4, R_B = 13, R_C = 4; n = 6.
    # H = 12/(6·7)·(4²/2 + 13²/3 + 4²/1) − 3·7 = (2/7)(241/3) − 21 = 41/21
    groups = {"A": np.array([0.1, 0.3]), "B": np.array([0.2, 0.5, 0.6]), "C": np.array([0.4])}
    kw = kruskal_wallis(groups)
    assert kw["H"] == pytest.approx(41 / 21)
    assert kw["df"] == 2
    assert kw["p"] == pytest.approx(math.exp(-41 / 42))  # χ²(2) survival = e^(−H/2)
    assert kw["epsilon2"] == pytest.approx(41 / 21 / 5)
    assert kw["epsilon2_adjusted"] == pytest.approx((41 / 21 - 2) / 3)
    assert list(kw) == ["groups", "n_groups", "n", "H", "df", "p", "epsilon2", "epsilon2_adjusted", "dunn_holm"]
    # Dunn: z = (R̄_i − R̄_j)/sqrt(n(n+1)/12 · (1/n_i + 1/n_j)), mean ranks A 2, B 13/3, C 4
    z = {
        ("A", "B"): (2 - 13 / 3) / math.sqrt(3.5 * (1 / 2 + 1 / 3)),
        ("A", "C"): (2 - 4) / math.sqrt(3.5 * (1 / 2 + 1)),
        ("B", "C"): (13 / 3 - 4) / math.sqrt(3.5 * (1 / 3 + 1)),
    }
    p = {k: 2 * scipy.stats.norm.sf(abs(v)) for k, v in z.items()}  # 0.172, 0.383, 0.877
    # Holm: smallest ×3, next ×2, largest ×1, made monotone
    holm = {("A", "B"): 3 * p["A", "B"], ("A", "C"): 2 * p["A", "C"], ("B", "C"): p["B", "C"]}
    pairs = kw["dunn_holm"]["pairs"]
    assert [(r["a"], r["b"]) for r in pairs] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert [r["p_adj"] for r in pairs] == pytest.approx([holm[k] for k in holm])
    assert kw["dunn_holm"]["min_pair"] == pairs[0]


def test_kruskal_undefined():
    assert kruskal_wallis({"A": np.array([0.2, 0.4])}) is None  # one group
    assert kruskal_wallis({"A": np.array([0.2, 0.4]), "B": np.array([])}) is None  # one non-empty group
    assert kruskal_wallis({"A": np.array([0.5, 0.5]), "B": np.array([0.5])}) is None  # all identical


def test_rq4_identical_and_one_member_groups(tmp_path):
    # every φ_suf = 0.5: Kruskal–Wallis undefined; CI of a constant group = [0.5, 0.5];
    # one-member group: no CI
    rows = [("a", "x", 4, 2, 4), ("b", "x", 4, 2, 4), ("c", "y", 2, 1, 2), ("d", "z", 6, 3, 6), ("e", "z", 4, None, 1)]
    s = stats.summarize(read_table(write(tmp_path, rows_table(rows))), params={"n_resamples": 100})
    qt = s["rq4"]["question_type"]
    assert qt["kruskal_wallis_all"] is None and qt["kruskal_wallis_min_n"] is None
    assert qt["groups"]["x"]["median_ci95"] == [0.5, 0.5]
    assert qt["groups"]["y"] == {"n": 1, "mean": 0.5, "median": 0.5, "median_ci95": None}
    assert qt["groups"]["z"]["n"] == 1  # "e" is not retrieved-gold


def test_rq4_min_group_n(tmp_path):
    # X: 10 questions, Y: 10, Z: 1 → "all" has 3 groups, "min_n" only X and Y
    rows = [(f"x{i}", "X", 20, 1 + i, 20) for i in range(10)]
    rows += [(f"y{i}", "Y", 20, 5 + i, 20) for i in range(10)]
    rows += [("z0", "Z", 20, 20, 20)]
    s = stats.summarize(read_table(write(tmp_path, rows_table(rows))), params={"n_resamples": 100})
    qt = s["rq4"]["question_type"]
    x = [(1 + i) / 20 for i in range(10)]
    y = [(5 + i) / 20 for i in range(10)]
    all_, large = qt["kruskal_wallis_all"], qt["kruskal_wallis_min_n"]
    assert (all_["n_groups"], all_["df"], large["n_groups"], large["df"]) == (3, 2, 2, 1)
    assert large["groups"] == ["X", "Y"] and large["min_group_n"] == 10
    assert all_["H"] == pytest.approx(scipy.stats.kruskal(x, y, [1.0]).statistic)
    assert large["H"] == pytest.approx(scipy.stats.kruskal(x, y).statistic)
    assert large["epsilon2"] == pytest.approx(large["H"] / 19)
    assert large["epsilon2_adjusted"] == pytest.approx((large["H"] - 1) / 18)
    assert all_["epsilon2_adjusted"] == pytest.approx((all_["H"] - 2) / 18)
    assert len(all_["dunn_holm"]["pairs"]) == 3
    ps = [r["p_adj"] for r in all_["dunn_holm"]["pairs"]]
    assert ps == sorted(ps)


def test_rq4_other_groupings(summary):
    sod = summary["rq4"]["static_or_dynamic"]
    # retrieved-gold: static q1 q2 q4 q5 (.1 .2 .2 .5), real-time q3 (.5)
    assert {g: v["n"] for g, v in sod["groups"].items()} == {"real-time": 1, "static": 4}
    assert sod["groups"]["static"]["median"] == pytest.approx(0.2)
    dom = summary["rq4"]["domain"]
    assert {g: v["n"] for g, v in dom["groups"].items()} == {"finance": 2, "movie": 1, "music": 2}


def test_anchor_spearman(summary, table):
    t = summary["rq4"]["spearman_t_anchor_t_suf"]
    # retrieved-gold with t_anchor: t_anchor 1 3 2 2 4 vs t_suf 1 2 2 1 4
    # ranks 1 4 2.5 2.5 5 vs 1.5 3.5 3.5 1.5 5 → ρ = 8 / sqrt(9.5 · 9)
    assert t["n"] == 5
    assert t["rho"] == pytest.approx(8 / math.sqrt(9.5 * 9))
    assert t["p"] == pytest.approx(scipy.stats.spearmanr([1, 3, 2, 2, 4], [1, 2, 2, 1, 4]).pvalue)
    # phi_anchor .1 .3 .5 .4 .5 vs phi_suf .1 .2 .5 .2 .5 → ranks 1 2 4.5 3 4.5 vs 1 2.5 4.5 2.5 4.5
    assert summary["rq4"]["spearman_phi_anchor_phi_suf"]["rho"] == pytest.approx(9 / math.sqrt(9.5 * 9))
    # absent column or fewer than 3 pairs → None
    none = {"spearman_t_anchor_t_suf": None, "spearman_phi_anchor_phi_suf": None}
    assert anchor_spearman(table.drop(columns="t_anchor")) == none
    few = table.assign(t_anchor=pd.array([1, 3] + [pd.NA] * 7, dtype="Int64"))
    assert anchor_spearman(few) == none


# --------------------------------------------------------------------------- gold density


def test_gold_density(summary):
    g = summary["gold_density"]
    assert g["density_cap"] == 0.05
    assert g["retrieved_gold"] == {
        "n": 5, "mean_phi_suf": pytest.approx(0.3), "median_phi_suf": 0.2, "n_t_suf_1": 2, "share_t_suf_1": 0.4,
    }  # fmt: skip
    # density ≤ 0.05: q1 (.02), q3 (.04), q5 (.05, the boundary) → φ_suf .1 .5 .5
    sg = g["specifically_grounded"]
    assert (sg["n"], sg["median_phi_suf"], sg["n_t_suf_1"]) == (3, 0.5, 1)
    assert sg["share_t_suf_1"] == pytest.approx(1 / 3)
    assert g["n_density_undefined"] == 0


# --------------------------------------------------------------------------- summary


def test_summary_is_json_ready(summary):
    assert list(summary) == [
        "parameters", "n_questions", "n_skipped", "skip_reasons", "no_overlap", "chunk_cap", "rq1", "rq2", "rq4", "gold_density",
        "anchor",
        "entity_position",
        "grounding_precision",
        "additions",
    ]  # fmt: skip
    for leaf in _walk(summary):
        assert leaf is None or type(leaf) in (str, int, float, bool), (leaf, type(leaf))
        assert not (isinstance(leaf, float) and not math.isfinite(leaf))
    json.dumps(summary, allow_nan=False)
    p = summary["parameters"]
    assert (p["L_ms"], p["delta_wps"], p["theta"], p["G_ms"], p["density_cap"]) == (600.0, 3.0, 0.8, 590.0, 0.05)
    assert (p["n_resamples"], p["seed"]) == (200, 0)


def test_kruskal_adjusted_epsilon2_undefined_with_one_value_per_group():
    kw = kruskal_wallis({"A": np.array([0.1]), "B": np.array([0.2]), "C": np.array([0.3])})
    assert kw["epsilon2"] == pytest.approx(kw["H"] / 2) and kw["epsilon2_adjusted"] is None  # n − k = 0


def test_additions_name_results_the_anchor_did_not_report():
    # design §4: the anchor ran Kruskal–Wallis over all types and over types with n ≥ 10,
    # Dunn–Holm over all types only, by question type only, with epsilon2 = H/(n − 1)
    from streamrag.data.generated.synthetic_table import generate_stabilization_table

    summary = stats.summarize(generate_stabilization_table(600, seed=0), params={"n_resamples": 50})
    assert summary["rq4"]["question_type"]["kruskal_wallis_min_n"] is not None
    names = [a["name"] for a in summary["additions"]]
    assert "rq4.question_type.kruskal_wallis_min_n.dunn_holm" in names
    assert "rq4.question_type.kruskal_wallis_all.dunn_holm" not in names
    assert not any(n.endswith((".epsilon2", "kruskal_wallis_all", "kruskal_wallis_min_n")) for n in names)
    assert {"rq4.domain", "rq4.static_or_dynamic", "rq4.question_type.kruskal_wallis_min_n.epsilon2_adjusted"} <= set(names)
    assert all(set(a) == {"name", "note"} and a["note"] for a in summary["additions"])
    for name in names:  # every name is a key of the summary (inside a list: of its first item)
        node = summary
        for part in name.split("."):
            node = node[0] if isinstance(node, list) else node
            assert part in node, name
            node = node[part]


def test_default_bootstrap_is_the_papers_10000():
    assert stats.DEFAULT_PARAMS["n_resamples"] == 10_000 == stats.resolve_params({})["n_resamples"]


def test_empty_table_is_all_undefined(tmp_path):
    s = stats.summarize(read_table(write(tmp_path, HEADER + "\n")), params={})
    assert s["n_questions"] == 0
    assert s["rq1"]["share_groundable"] is None and s["rq1"]["phi_sc"]["mean"] is None
    assert s["rq2"]["point"]["streamable_fraction"] is None and s["rq2"]["point"]["H_ms"]["mean"] is None
    assert s["rq4"]["question_type"]["groups"] == {} and s["rq4"]["question_type"]["kruskal_wallis_all"] is None
    assert s["gold_density"]["specifically_grounded"]["median_phi_suf"] is None
    json.dumps(s, allow_nan=False)


def test_deterministic_and_seeded(table):
    a = stats.summarize(table, params={"n_resamples": 200, "seed": 1})
    assert a == stats.summarize(table, params={"n_resamples": 200, "seed": 1})


def test_plain_frame_without_optional_columns(table):
    # a frame built elsewhere: numpy dtypes, NaN for undefined, no skip_reason / t_anchor
    q = table[table["skip_reason"].isna()].drop(columns=["skip_reason", "t_anchor"])
    plain = q.astype({"t_suf": float, "retrieved_gold": bool, "groundable": bool, "n_words": int, "t_sc": int})
    s = stats.summarize(plain, params={"n_resamples": 50})
    assert s["rq1"]["phi_suf"]["mean"] == pytest.approx(0.3)
    assert s["rq2"]["point"]["n_streamable"] == 7
    assert s["rq4"]["spearman_t_anchor_t_suf"] is None


@pytest.mark.parametrize(
    "params",
    [{"L_ms": 0}, {"delta_wps": -3}, {"theta": float("nan")}, {"n_resamples": 0}, {"seed": -1}, {"density_cap": 2},
     {"n_resamples": 1.5}, {"speed": 1}],
)  # fmt: skip
def test_bad_params(table, params):
    with pytest.raises(ConfigError):
        stats.summarize(table, params=params)


def test_public_api():
    import inspect

    from streamrag.analysis import plots, table
    from streamrag.analysis.stats import report

    assert str(inspect.signature(stats.summarize)) == "(df: 'pd.DataFrame', *, params: 'Mapping[str, Any]') -> 'dict[str, Any]'"
    assert list(inspect.signature(table.read_table).parameters) == ["path"]
    assert list(inspect.signature(table.write_table).parameters) == ["df", "path", "lead"]
    assert list(inspect.signature(plots.plot_streamable_vs_L).parameters) == ["rq2_grid_or_df", "theta", "ax"]
    assert list(inspect.signature(report.write_figures).parameters) == ["df", "summary", "out_dir", "suffix"]
    assert report.FIGURES == ("phi_histograms.png", "phi_suf_by_type.png", "streamable_vs_L.png")


def test_anchor_shaped_decomposition(tmp_path):
    # The anchor's split at L = 600, δ = 3, θ = 0.8: 278 of 292 retrieved-gold and 735 of
    # 1079 fallback questions streamable → 1013/1371 = 73.9 %, 95.2 %, 68.1 %.
    # n = 10: t* = 1 leaves 3 s of input (H = 600 ≥ 480); t* = 10 leaves none (H = 0).
    rows = [(f"r{i}", "simple", 10, 1 if i < 278 else 10, 5) for i in range(292)]
    rows += [(f"f{i}", "simple", 10, None, 1 if i < 735 else 10) for i in range(1079)]
    c = stats.streamable_cell(read_table(write(tmp_path, rows_table(rows))), L_ms=600, delta_wps=3, theta=0.8, G_ms=590)
    assert (c["n_streamable"], c["n"]) == (1013, 1371)
    assert [round(100 * x, 1) for x in (c["streamable_fraction"], c["retrieved_gold"]["streamable_fraction"],
                                        c["fallback"]["streamable_fraction"])] == [73.9, 95.2, 68.1]  # fmt: skip


def test_streamable_plot_from_grid(tmp_path, summary):
    from streamrag.analysis.plots import plot_streamable_vs_L
    from streamrag.base.figures import save_figure

    path = save_figure(plot_streamable_vs_L(summary["rq2"]["grid"], theta=0.5), tmp_path / "s.png")
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(ConfigError, match=r"theta 0\.7 is not in the grid"):
        plot_streamable_vs_L(summary["rq2"]["grid"], theta=0.7)


def test_anchor_comparison_by_hand() -> None:
    from streamrag.analysis.stats.groups import anchor_comparison

    df = pd.DataFrame(
        {
            "question_type": ["A", "A", "B", "B", "B"],
            "n_words": [10, 10, 10, 10, 10],
            "retrieved_gold": [True, True, True, True, False],
            "t_suf": [1, 3, 2, 6, None],
            "t_anchor": [1, 2, 2, 5, 4],
            "skip_reason": ["", "", "", "", ""],
        }
    )
    out = anchor_comparison(df)
    assert out["n"] == 4  # the fifth question is not retrieved-gold
    anchor = out["t_anchor"]
    assert anchor["mae_t_suf"] == 0.5  # |1-1| + |2-3| + |2-2| + |5-6| = 2, over 4
    # leave-one-out type medians: A → 3, 1; B → 6, 2: errors 2, 2, 4, 4
    assert anchor["mae_t_suf_type_baseline"] == 3.0 == out["question_type"]["mae_t_suf"]
    # ranks x = [1, 2.5, 2.5, 4], y = [1, 3, 2, 4]: rho = 4.5 / sqrt(4.5 * 5)
    assert anchor["spearman_rho"] == pytest.approx(4.5 / math.sqrt(22.5), abs=1e-12)
    # phi_suf = [.1, .3, .2, .6]: between-type SS 0.04 over total SS 0.14
    assert out["question_type"]["eta2_phi_suf"] == pytest.approx(0.04 / 0.14, abs=1e-12)
    assert "t_pivot" not in out


@contextlib.contextmanager
def _heap_frozen() -> Iterator[None]:
    """Run the oracle with the objects that already exist frozen out of the collector.

    statsmodels' Holm step (``multipletests``) calls ``gc.collect()`` on every call: a full
    collection walks every object the test process holds (the whole suite's imports and
    fixtures, tenths of a second under xdist), once per example. Frozen, that collection
    walks only the call's own objects; nothing the oracle computes depends on it, and
    ``unfreeze`` hands everything back to the collector's oldest generation.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 6) | st.floats(0, 50, allow_nan=False), min_size=2, max_size=15), min_size=2, max_size=5))
def test_dunn_holm_equals_scikit_posthocs(samples) -> None:
    # The anchor ran scikit-posthocs; ours must give its numbers (ties included).
    posthocs = pytest.importorskip("scikit_posthocs", reason="the reference implementation (dev extra)")
    names = [f"g{i}" for i in range(len(samples))]
    groups = {n: np.array(v, dtype=float) for n, v in zip(names, samples, strict=True)}
    values = np.concatenate(list(groups.values()))
    assume(not np.all(values == values[0]))
    frame = pd.DataFrame({"value": values, "group": np.repeat(names, [len(v) for v in samples])})
    with _heap_frozen():
        reference = posthocs.posthoc_dunn(frame, val_col="value", group_col="group", p_adjust="holm")
    got = dunn_holm(groups)
    for pair in got["pairs"]:
        assert pair["p_adj"] == pytest.approx(float(reference.loc[pair["a"], pair["b"]]), rel=1e-9, abs=1e-15)


def test_paper_bootstrap_draws_one_stream_in_order_of_first_appearance() -> None:
    """``paper``: one generator seeded ``seed`` per grouping, its groups in the order they
    first appear (the anchor's stats.py); ``per-group``: a group's interval does not move
    when another group is left out."""
    from streamrag.analysis.stats import inference
    from streamrag.analysis.stats.groups import group_stats

    rng = np.random.default_rng(3)
    types = ["zeta"] * 6 + ["alpha"] * 9 + ["mid"] * 7
    df = pd.DataFrame(
        {"question_type": types, "retrieved_gold": True, "phi_suf": np.round(rng.random(len(types)), 4), "skip_reason": ""}
    )
    paper = group_stats(df, "question_type", n_resamples=300, seed=5, min_group_n=10)["groups"]
    shared = np.random.default_rng(5)
    for name in ("zeta", "alpha", "mid"):  # file order, not name order
        x = df.loc[df.question_type == name, "phi_suf"].to_numpy()
        assert paper[name]["median_ci95"] == list(inference.bootstrap_median_ci(x, n_resamples=300, rng=shared))
    assert list(paper) == ["alpha", "mid", "zeta"]  # reported by name

    def per_group(frame: pd.DataFrame) -> dict:
        return group_stats(frame, "question_type", n_resamples=300, seed=5, min_group_n=10, streams="per-group")["groups"]

    assert per_group(df)["mid"] == per_group(df[df.question_type != "zeta"])["mid"]
    assert stats.resolve_params({"bootstrap_streams": "per-group"})["bootstrap_streams"] == "per-group"
    with pytest.raises(ConfigError, match="bootstrap_streams"):
        stats.resolve_params({"bootstrap_streams": "scipy"})


def test_paper_bootstrap_reproduces_the_anchors_published_intervals(tmp_path) -> None:
    """The anchor's results/rq4_stats.json from its results/stab_k3.csv: 16 of 16 bounds,
    to the table's rounding (it bootstrapped φ rounded to 4 decimals; ``read_table`` takes
    the exact t_suf / n_words). Per-group draws miss some bounds by whole sample steps."""
    import subprocess

    from conftest import ANCHOR_REPO

    if not ANCHOR_REPO.is_dir():
        pytest.skip(f"the anchor study's repository is not at {ANCHOR_REPO} (set STREAMRAG_ANCHOR_REPO)")

    def show(name: str) -> bytes:
        return subprocess.run(["git", "-C", str(ANCHOR_REPO), "show", f"HEAD:{name}"], capture_output=True, check=True).stdout

    (tmp_path / "stab_k3.csv").write_bytes(show("results/stab_k3.csv"))
    published = json.loads(show("results/rq4_stats.json"))["bootstrap_median_ci"]
    table = read_table(tmp_path / "stab_k3.csv")

    def missed(streams: str) -> int:
        groups = stats.summarize(table, params={"bootstrap_streams": streams})["rq4"]["question_type"]["groups"]
        assert set(groups) == set(published)
        ours = [b for g in sorted(groups) for b in groups[g]["median_ci95"]]
        theirs = [b for g in sorted(published) for b in published[g]["ci95"]]
        return sum(abs(a - b) > 1e-4 for a, b in zip(ours, theirs, strict=True))

    assert missed("paper") == 0
    assert missed("per-group") >= 1
