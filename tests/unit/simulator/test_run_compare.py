"""Two runs compared question by question: the join, the deltas, the paired test."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamrag.base.errors import StreamragError
from streamrag.simulator.compare.runs import compare_runs

HEAD = "interaction_id,saved_ms,H_ms,misfire,calls_fired,question_type,skip_reason\n"


def _run(folder: Path, rows: list[str]) -> Path:
    folder.mkdir()
    (folder / "results.csv").write_text(HEAD + "".join(r + "\n" for r in rows), encoding="utf-8")
    return folder


def test_deltas_signs_and_the_exact_wilcoxon_p(tmp_path: Path) -> None:
    # 6 questions both replayed: B saves 10..60 ms less on five, the same on one.
    a = _run(tmp_path / "a", [f"q{i},{1000 + i},600,False,2,simple," for i in range(6)] + ["qa,5,600,False,1,simple,"])
    b_rows = [f"q{i},{1000 + i - 10 * i},600,{i == 5},3,simple," for i in range(6)]
    b = _run(tmp_path / "b", [*b_rows, "qb,1,600,False,1,simple,", "q9,1,600,False,1,simple,"])
    (a / "results.csv").write_text((a / "results.csv").read_text() + "q9,,,,,simple,not retrieved-gold\n")
    c = compare_runs(a, b)
    assert c.table["interaction_id"].tolist() == [f"q{i}" for i in range(6)]
    assert c.table["delta_saved_ms"].tolist() == [0.0, -10.0, -20.0, -30.0, -40.0, -50.0]
    d = c.data
    assert d["ids"] == {"only_in_a": ["qa"], "only_in_b": ["qb"], "not_replayed": ["q9"]}
    assert d["sign"] == {"b_more": 0, "equal": 1, "a_more": 5}
    # All five nonzero differences negative: W = 0 and the exact two-sided p is 2 / 2^5.
    assert d["wilcoxon"] == {"statistic": 0.0, "p": pytest.approx(2 / 2**5), "n_nonzero": 5}
    assert d["misfire"] == {"a": 0.0, "b": 1.0} and d["calls_fired"] == {"a": 2.0, "b": 3.0}


def test_identical_runs_have_no_test_and_a_folder_without_results_is_named(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", ["q0,5,600,False,1,simple,", "q1,7,600,False,1,simple,"])
    assert compare_runs(a, a).data["wilcoxon"] == {"statistic": None, "p": None, "n_nonzero": 0}
    (tmp_path / "empty").mkdir()
    with pytest.raises(StreamragError, match=r"empty/results.csv: no such file"):
        compare_runs(a, tmp_path / "empty")
