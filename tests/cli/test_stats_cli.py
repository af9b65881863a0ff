"""`streamrag stats TABLE --out DIR` through `main([...])`."""

from __future__ import annotations

import json

import pytest
from stats_tables import TABLE, write

from streamrag.cli import main

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FIGURES = ("phi_histograms.png", "phi_suf_by_type.png", "streamable_vs_L.png")


def test_stats_writes_summary_and_figures(tmp_path, capsys):
    table = write(tmp_path)
    out = tmp_path / "out" / "nested"  # created if absent
    code = main(["stats", str(table), "--out", str(out), "--L-ms", "1000", "--delta-wps", "4", "--bootstrap", "100"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n_questions"] == 8 and summary["n_skipped"] == 1
    assert summary["parameters"]["table"] == str(table)
    assert summary["parameters"]["L_ms"] == 1000.0 and summary["parameters"]["n_resamples"] == 100
    # L = 1000, δ = 4, θ = 0.8: 5 of 8 streamable (4/5 retrieved-gold, 1/3 fallback; see test_stats)
    point = summary["rq2"]["point"]
    assert (point["n_streamable"], point["retrieved_gold"]["n_streamable"]) == (5, 4)
    for name in FIGURES:
        data = (out / name).read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000, name
    assert sorted(p.name for p in out.iterdir()) == sorted([*FIGURES, "summary.json"])  # no temp files
    lines = captured.out.splitlines()
    assert 3 <= len(lines) <= 10
    assert "8 questions (1 skipped)" in lines[0]
    assert "62.5% (5/8)" in captured.out
    assert "eps2=0.093 (eps2_adj=-0.210)" in captured.out  # simple vs comparison: H = 10/27, n = 5, k = 2
    assert lines[-2].startswith("  additions (not in the anchor study; summary.json 'additions'): Dunn-Holm for n>=10")
    assert captured.err == ""


def test_stats_bootstraps_10000_times_by_default(tmp_path, capsys):
    assert main(["stats", str(write(tmp_path)), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["parameters"]["n_resamples"] == 10_000


def test_stats_is_reproducible(tmp_path, capsys):
    table = write(tmp_path)
    for name in ("a", "b"):
        assert main(["stats", str(table), "--out", str(tmp_path / name), "--bootstrap", "50", "--seed", "7"]) == 0
    capsys.readouterr()
    assert (tmp_path / "a" / "summary.json").read_bytes() == (tmp_path / "b" / "summary.json").read_bytes()


ROW = "q1,finance,simple,static,10,50,True,True,5,0.5,1,0.1,0,0.02,,1"


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        (",1,0.1,", ",abc,0.1,", "t.csv:2: column 't_suf': 'abc' is not an integer"),
        (",1,0.1,", ",,,", "t.csv:2: column 't_suf': empty, but retrieved_gold is True"),
        ("True,True", "True,maybe", "t.csv:2: column 'retrieved_gold': 'maybe' is not a boolean"),
        (",5,0.5,", ",11,1.1,", "t.csv:2: column 't_sc': 11 is outside 1..n_words"),
    ],
)
def test_bad_table_is_one_line_exit_1(tmp_path, capsys, old, new, fragment):
    header = TABLE.splitlines()[0]
    table = write(tmp_path, f"{header}\n{ROW.replace(old, new)}\n")
    assert main(["stats", str(table), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert fragment in err and str(table) in err
    assert not (tmp_path / "out").exists()  # nothing written for a bad table


def test_missing_column_and_missing_file(tmp_path, capsys):
    header = TABLE.splitlines()[0].replace("phi_suf,", "")
    table = write(tmp_path, header + "\n")
    assert main(["stats", str(table), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [f"streamrag: error: {table}:1: missing column 'phi_suf'"]
    assert main(["stats", str(tmp_path / "absent.csv"), "--out", str(tmp_path / "out")]) == 1
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_bad_parameter_and_usage(tmp_path, capsys):
    table = write(tmp_path)
    assert main(["stats", str(table), "--out", str(tmp_path / "out"), "--bootstrap", "0"]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "n_resamples" in err
    assert main(["stats", str(table)]) == 2  # --out is required
    assert main(["stats", "--help"]) == 0
    assert "--density-cap" in capsys.readouterr().out


def test_out_is_a_file(tmp_path, capsys):
    table = write(tmp_path)
    assert main(["stats", str(table), "--out", str(table)]) == 1
    assert len(capsys.readouterr().err.splitlines()) == 1
