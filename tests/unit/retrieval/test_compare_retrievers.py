"""``analyze --compare-retrievers LIST`` (issue 44): a researcher's 12-line retriever compared
with BM25 and rank_bm25 on the demo set in one command, and with dense when its extra is
installed — each one's statistics, rows, reflector thresholds and a figure naming it; bad
specs refused in one line; ``simulate`` running the calibrated threshold the comparison
records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _inputs import OVERLAP, one_error_line, run_cli

from streamrag.analysis.stats.rq import DEFAULT_PARAMS, summarize
from streamrag.retrieval.dense.minilm import dense_unavailable_reason

MINE = "overlap.py:WordOverlap"
NAMES = ["bm25", "rank_bm25", MINE]
"""The full comparison (fast arms; dense, which embeds every prefix, has its own test below)."""
DENSE = dense_unavailable_reason() is None


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One comparison on the demo set, and the user's retriever analyzed alone."""
    from streamrag.cli import main

    root = tmp_path_factory.mktemp("compare")
    path = root / "overlap.py"
    path.write_text(OVERLAP, encoding="utf-8")
    assert len(OVERLAP.splitlines()) == 12
    specs = f"bm25,rank_bm25,{path}:WordOverlap"
    assert main(["analyze", "demo", "--compare-retrievers", specs, "--out", str(root / "cmp"), "-q"]) == 0
    assert main(["analyze", "demo", "--retriever", f"{path}:WordOverlap", "--out", str(root / "mine"), "-q", "--no-figures"]) == 0
    return {
        "root": root,
        "file": path,
        "summary": json.loads((root / "cmp" / "summary.json").read_text(encoding="utf-8")),
        "alone": json.loads((root / "mine" / "summary.json").read_text(encoding="utf-8")),
        "rows": pd.read_csv(root / "cmp" / "retrievers.csv", dtype={"interaction_id": str}),
    }


def test_each_retriever_gets_its_statistics_under_a_stable_name(compared: dict[str, Any]) -> None:
    summary, rows = compared["summary"], compared["rows"]
    section = summary["retrievers"]
    assert section["retrievers"] == list(section["arms"]) == NAMES
    mine = section["arms"][MINE]["retriever"]
    assert mine["kind"] == "python" and mine["target"] == f"{compared['file']}:WordOverlap" and len(mine["sha256"]) == 64
    assert list(rows["retriever"].drop_duplicates()) == NAMES and len(rows) == 32 * len(NAMES)
    params = {k: summary["parameters"][k] for k in DEFAULT_PARAMS}
    for name in NAMES:
        arm = section["arms"][name]
        again = summarize(rows[rows["retriever"] == name].drop(columns="retriever"), params=params)
        for rq in ("rq1", "rq2", "rq4"):  # the rows in retrievers.csv give the arm's statistics back
            assert arm[rq] == again[rq], (name, rq)
    for rq in ("rq1", "rq2", "rq4"):  # an arm is the analysis of that retriever alone
        assert section["arms"]["bm25"][rq] == summary[rq]
        assert section["arms"][MINE][rq] == compared["alone"][rq]
    n_pairs = len(NAMES) * (len(NAMES) - 1) // 2
    assert [(p["a"], p["b"]) for p in section["pairs"]][:1] == [("bm25", NAMES[1])] and len(section["pairs"]) == n_pairs


def test_the_calibrated_thresholds_follow_the_rule(compared: dict[str, Any]) -> None:
    section, rows = compared["summary"]["retrievers"], compared["rows"]
    reference = rows.loc[rows["retriever"] == "bm25", "top1_final_score"].to_numpy()  # BM25's own final top-1 score
    c = int((reference >= 2.0).sum())
    assert section["reference"]["threshold"] == 2.0
    for name in NAMES:
        _obeys_the_rule(section, rows, name, c)


def _obeys_the_rule(section: dict[str, Any], rows: pd.DataFrame, name: str, c: int) -> None:
    """The arm's thresholds recomputed from its rows: τ = its c-th highest final-query top-1
    score (the anchor's 2.0 for BM25 itself); the fixed rule's value by its scale."""
    arm = section["arms"][name]["reflector"]
    own = rows[rows["retriever"] == name]
    s = own["top1_final_score"].to_numpy()
    tau = 2.0 if name == "bm25" else float(np.sort(s)[::-1][c - 1]) if c else float(np.nextafter(s.max(), np.inf))
    cal = arm["calibrated"]
    assert (cal["threshold"], cal["n_reference_accepted"], cal["n_questions"]) == (tau, c, len(own)), name
    assert cal["n_accepted"] == int((s >= tau).sum()) == int(own["accepted_calibrated"].sum())
    fixed = 0.4 if name == "dense" else 2.0  # the anchor's value for the arm's scale
    assert arm["scale"] == ("cosine" if name == "dense" else "bm25") and arm["fixed"]["threshold"] == fixed
    assert arm["fixed"]["n_accepted"] == int((s >= fixed).sum()) == int(own["accepted_fixed"].sum())


def test_the_figure_names_every_retriever(compared: dict[str, Any]) -> None:
    from streamrag.analysis.plots import plot_retrievers

    assert (compared["root"] / "cmp" / "retrievers.png").stat().st_size > 0
    fig = plot_retrievers(compared["rows"])
    legend = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert [text.split(" (")[0] for text in legend] == NAMES
    assert all(name in fig._suptitle.get_text() for name in NAMES)  # type: ignore[union-attr]


def test_simulate_runs_the_threshold_the_comparison_records(
    compared: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arm = compared["summary"]["retrievers"]["arms"][MINE]["reflector"]["calibrated"]
    out = tmp_path / "sim"
    argv = ["simulate", "demo", "--scenario", "paper_rq3", "--retriever", f"{compared['file']}:WordOverlap",
            "--set", "select.population=all", "--set", "reflector.threshold=calibrated", "--out", out]  # fmt: skip
    code, printed, _ = run_cli(argv, capsys)
    assert code == 0
    said = f"threshold calibrated {arm['threshold']:.6g} (accepts {arm['n_accepted']}/32 final top-1, as BM25 ≥ 2 does "
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert said in summary["reflector_model"] and said in printed and manifest["reflector_model"] == summary["reflector_model"]
    assert summary["rules"]["differs_from_paper"] == ["reflector.threshold"]
    assert summary["parameters"]["scenario"]["reflector"]["threshold"] == "calibrated"


@pytest.mark.skipif(not DENSE, reason=str(dense_unavailable_reason()))
def test_dense_is_compared_too_and_alone_the_flag_means_bm25_and_dense(compared: dict[str, Any], tmp_path: Path) -> None:
    """The real model (the ``dense`` extra) on the first questions of the demo set (it embeds every prefix)."""
    from streamrag.cli import main

    names = ["bm25", "dense", MINE]
    mine = f"{compared['file']}:WordOverlap"
    argv = ["analyze", "demo", "--compare-retrievers", f"bm25,dense,{mine}", "--limit", "4", "--out", str(tmp_path / "d"), "-q"]
    assert main(argv) == 0
    section = json.loads((tmp_path / "d" / "summary.json").read_text())["retrievers"]
    rows = pd.read_csv(tmp_path / "d" / "retrievers.csv", dtype={"interaction_id": str})
    assert section["retrievers"] == names and section["arms"]["dense"]["rq1"]["n_questions"] == 4
    c = int((rows.loc[rows["retriever"] == "bm25", "top1_final_score"] >= 2.0).sum())
    for name in names:
        _obeys_the_rule(section, rows, name, c)
    from streamrag.analysis.plots import plot_retrievers

    fig = plot_retrievers(rows)
    assert [t.get_text().split(" (")[0] for leg in fig.legends for t in leg.get_texts()] == names
    argv = ["analyze", "demo", "--retriever", mine, "--compare-retrievers", "--limit", "3", "--no-figures", "--out", str(tmp_path / "a"), "-q"]  # fmt: skip
    assert main(argv) == 0
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["retrievers"]["retrievers"] == [MINE, "bm25", "dense"]


BOOM = """\
class Boom:
    def __init__(self, chunks):
        self.n = len(chunks)

    def score(self, query):
        if len(query.split()) > 2:
            raise RuntimeError("no long queries")
        return [0.0] * self.n
"""


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("bm25,nope", "--compare-retrievers: Input tag 'nope'"),
        ("bm25,,overlap.py:WordOverlap", "give retrievers separated by commas, none empty"),
        ("overlap.py:Nothing", "overlap.py:Nothing: overlap.py has no class Nothing"),
        ("missing.py:WordOverlap", "missing.py: no such file"),
        ("streamrag.retrieval.bm25:BM25Index", "streamrag's retrievers are kinds"),
        ("overlap.py:WordOverlap,overlap.py:WordOverlap", "names overlap.py:WordOverlap twice"),
        ("bm25", "name a retriever besides bm25"),
        ("boom.py:Boom", "boom.py:Boom: score('"),
    ],
)
def test_a_bad_spec_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, spec: str, says: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "overlap.py").write_text(OVERLAP, encoding="utf-8")
    (tmp_path / "boom.py").write_text(BOOM, encoding="utf-8")
    code, _, err = run_cli(["analyze", "demo", "--compare-retrievers", spec, "--out", tmp_path / "a", "--no-figures"], capsys)
    assert code == 1 and says in one_error_line(err)
    assert not (tmp_path / "a" / "summary.json").exists()


def test_where_a_comparison_does_not_apply_it_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        "per-question scope": ["--scope", "global"],
        "compare_retrievers ranks word prefixes": ["--asr-revisions", "0.2"],
    }
    for says, extra in cases.items():
        argv = ["analyze", "demo", "--compare-retrievers", "bm25,rank_bm25", *extra, "--out", tmp_path / "a", "--no-figures"]
        code, _, err = run_cli(argv, capsys)
        assert code == 1 and says in one_error_line(err)
