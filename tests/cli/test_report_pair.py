"""``streamrag report RUN_A RUN_B``: one page comparing two simulation runs question by
question, with the numbers ``streamrag compare`` computes; and ``compare``'s mis-fire count."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _inputs import run_cli

from streamrag.report.pair import write_pair_report
from streamrag.simulator.compare.runs import compare_runs, run_comparison_lines


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One generated table replayed three ways (every 3 words; every word; the first 20
    questions only), and another table's questions (none in common)."""
    from streamrag.cli import main

    root = tmp_path_factory.mktemp("pair")
    table, other = root / "T.csv", root / "U.csv"
    assert main(["generate", str(table), "--table", "--questions", "30", "--seed", "0", "-q"]) == 0
    assert main(["generate", str(other), "--table", "--questions", "8", "--seed", "9", "-q"]) == 0
    base = ["simulate", "--scenario", "paper_rq3", "--set", "select.population=all", "-q"]
    for name, source, extra in (
        ("a", table, []),
        ("b", table, ["--set", "trigger.kind=every_word"]),
        ("first20", table, ["--set", "select.limit=20"]),
        ("other", other, []),
    ):
        assert main([*base, "--table", str(source), "--out", str(root / name), *extra]) == 0
    return {name: root / name for name in ("a", "b", "first20", "other")}


def _data(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S).group(1))


def test_the_page_holds_each_questions_delta_and_the_p_value_compare_gives(runs, tmp_path: Path) -> None:
    a, b = runs["a"], runs["b"]
    report = write_pair_report(a, b, tmp_path / "ab.html", texts=False)
    html = report.html.read_text(encoding="utf-8")
    compared = compare_runs(a, b)
    data = _data(html)
    columns, rows = data["table"]["columns"], data["table"]["rows"]
    on_page = {r[columns.index("interaction_id")]: r[columns.index("delta_saved_ms")] for r in rows}
    expected = dict(zip(compared.table["interaction_id"], compared.table["delta_saved_ms"], strict=True))
    assert on_page == expected and report.n_matched == len(expected) == 30
    p = compared.data["wilcoxon"]["p"]
    assert p is not None and data["comparison"]["wilcoxon"]["p"] == p
    assert f"<tr><th>Wilcoxon p (two-sided)</th><td>{p:.4g}</td></tr>" in html
    for line in run_comparison_lines(compared.data):  # compare's own lines, as it prints them
        assert line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in html
    misfire = compared.data["misfire"]
    assert f"<tr><th>mis-fires in B (questions)</th><td>{misfire['b']:.4g}</td></tr>" in html
    # The settings that differ, and the two runs' figures side by side (each run's one figure).
    assert "<th>parameters.scenario.trigger.kind</th><td>interval</td><td>every_word</td>" in html
    pair = re.search(r'<div class="pair">(.*)</div>', html, re.S).group(1)
    assert pair.count("<h3>A: ") == 1 and pair.count("<h3>B: ") == 1 and pair.count("<figure>") == 2
    assert html.count("<figure>") == 3  # and the comparison's own


def test_overlapping_question_sets_are_compared_on_their_intersection(runs, tmp_path: Path, capsys) -> None:
    code, out, _ = run_cli(["report", runs["a"], runs["first20"], "--out", tmp_path / "p.html", "--no-text"], capsys)
    assert code == 0 and "20 questions compared" in out
    html = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert "Compared on the intersection:</strong> the 20 questions both runs replayed; 10 skipped by one run" in html
    assert len(_data(html)["table"]["rows"]) == 20


def test_runs_that_cannot_be_compared_are_refused_in_one_line(runs, tmp_path: Path, capsys) -> None:
    code, _, err = run_cli(["report", runs["a"], runs["other"], "--out", tmp_path / "x.html"], capsys)
    assert code == 1 and "replayed no question in common" in err and "different question sets" in err
    assert err.count("\n") == 1 and not (tmp_path / "x.html").exists()
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "sweep.csv").write_text("point,key\n", encoding="utf-8")
    code, _, err = run_cli(["report", runs["a"], sweep, "--out", tmp_path / "y.html"], capsys)
    assert code == 1 and "is a simulation run and" in err and "a sweep run" in err and err.count("\n") == 1
    code, _, err = run_cli(["report", sweep, sweep, "--out", tmp_path / "z.html"], capsys)
    assert code == 1 and "are sweep runs" in err and err.count("\n") == 1
    code, _, err = run_cli(["report", runs["a"], runs["b"], "--max-timelines", "2"], capsys)
    assert code == 1 and "--max-timelines" in err


def test_the_default_page_is_beside_run_a(runs, capsys) -> None:
    code, out, _ = run_cli(["report", runs["a"], runs["b"], "--no-text"], capsys)
    assert code == 0 and (runs["a"] / "report-vs-b.html").is_file() and "report-vs-b.html" in out
    assert not (runs["a"] / "report.html").exists()  # the one-run page is not touched


HEAD = "interaction_id,saved_ms,H_ms,misfire,calls_fired,question_type,skip_reason\n"


def test_compare_counts_each_runs_misfires(tmp_path: Path, capsys) -> None:
    for name, rows in (
        ("a", [f"q{i},{1000 + i},600,False,2,simple," for i in range(6)]),
        ("b", [f"q{i},{900 + i},600,{i in (1, 4)},3,simple," for i in range(6)]),
    ):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.csv").write_text(HEAD + "".join(r + "\n" for r in rows), encoding="utf-8")
    code, out, _ = run_cli(["compare", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "cmp"], capsys)
    assert code == 0
    assert "  mis-fires  A 0 of 6 | B 2 of 6 questions (speculative calls fired, none sufficient)" in out.splitlines()
    assert "  calls fired per question  A 2.00 | B 3.00" in out.splitlines()
