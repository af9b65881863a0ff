"""The researcher's path: a retriever of one's own (a short class in a file), compared with
BM25 and dense on one's questions in one command — a simulate sweep over
``data.retriever`` whose points keep their analysis (RQ1, RQ2, RQ4: ``analysis.json`` and
``stabilization.csv``, what ``analyze`` writes) beside the simulation (RQ3: saving vs H),
one row per retriever in ``sweep.csv`` and figures that label the retriever."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from _inputs import OVERLAP

from streamrag.analysis.summary_model import check_summary
from streamrag.cli import main

GRID = """\
name = "mine"
kind = "simulate"
input = "demo"
scenario = "paper_rq3"

[base]
"latency.L_ms" = 2000
"reflector.threshold" = "calibrated"

[axes]
"data.retriever" = [{retrievers}]
"""


def test_one_sweep_compares_my_retriever_with_bm25_on_rq1_to_rq4(tmp_path: Path) -> None:
    _compare(tmp_path, ["bm25", "overlap.py:WordOverlap"])


@pytest.mark.slow
def test_one_sweep_compares_my_retriever_with_bm25_and_dense_on_rq1_to_rq4(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers", reason="the dense extra is not installed (pip install -e '.[dense]')")
    _compare(tmp_path, ["bm25", "dense", "overlap.py:WordOverlap"])  # embedding the demo's chunks: a minute of CPU


def _compare(tmp_path: Path, retrievers: list[str]) -> None:
    (tmp_path / "overlap.py").write_text(OVERLAP, encoding="utf-8")
    assert len(OVERLAP.splitlines()) <= 30
    grid = tmp_path / "mine.toml"
    grid.write_text(GRID.format(retrievers=", ".join(f'"{r}"' for r in retrievers)), encoding="utf-8")
    with contextlib.chdir(tmp_path), contextlib.redirect_stdout(io.StringIO()):
        assert main(["--quiet", "sweep", "mine.toml", "--out", "out"]) == 0
    table = pd.read_csv(tmp_path / "out" / "sweep.csv")
    assert table["retriever"].tolist() == retrievers
    for column in (
        "saved_ms.mean",
        "spearman_H_saved.rho",
        "misfire.rate",  # RQ3
        "analysis.n_retrieved_gold",
        "analysis.phi_suf.median",
        "analysis.streamable_fraction",
    ):  # RQ1, RQ4
        assert table[column].notna().all(), column
    assert table["analysis.n_questions"].eq(32).all()  # the demo set, analyzed once per retriever
    # each retriever judged by its own calibrated threshold, named where the point's reflector is
    assert table["reflector_model"].str.contains(r"threshold calibrated \S+ \(accepts \d+/32 final top-1").all()
    assert table["rules.preset"].eq("custom").all()
    for key in table["key"]:
        point = tmp_path / "out" / "points" / key
        summary = check_summary(json.loads((point / "analysis.json").read_text(encoding="utf-8")))
        assert set(summary) >= {"rq1", "rq2", "rq4"}
        rows = pd.read_csv(point / "stabilization.csv")
        assert len(rows) == 32 and int(rows["retrieved_gold"].sum()) == summary["rq1"]["n_retrieved_gold"]
    # the retrievers rank differently: their analyses differ
    assert table["analysis.share_t_suf_1"].nunique() > 1
    figures = sorted(p.name for p in (tmp_path / "out" / "figures").iterdir())
    assert "saved_vs_H_scatter.png" in figures


def test_a_table_input_keeps_no_analysis_it_did_not_run(tmp_path: Path) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text('kind = "simulate"\ninput = "generated:30"\nscenario = "paper_rq3"\n\n[axes]\n"latency.L_ms" = [600]\n')
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--quiet", "sweep", str(grid), "--out", str(tmp_path / "o")]) == 0
    (point,) = (tmp_path / "o" / "points").iterdir()
    assert not (point / "analysis.json").exists()
    assert not any(c.startswith("analysis.") for c in pd.read_csv(tmp_path / "o" / "sweep.csv").columns)
