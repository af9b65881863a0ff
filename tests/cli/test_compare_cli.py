"""`streamrag compare RUN_DIR PUBLISHED.csv --out DIR` through `main([...])`.

The run: the hand-made table of stats_tables.py simulated with paper_rq3 on all
questions — q1–q8 replayed (saved 1190, 1190, 333.333, 666.667, 666.667, 1000, 333.333,
1190 ms), q9 not (empty query).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from stats_tables import write

from streamrag.cli import main
from streamrag.simulator.compare.published import ORACLE_NOTE

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# q1–q6 matched, q9 in the run but not replayed, "ghost" only here; q7, q8 only in the run.
# q3 measured a negative saving; q5's n_words disagrees (9 vs 8); q4 gives no t_star.
PUBLISHED = """\
interaction_id,measured_saved_ms,H_predicted_ms,question_type,n_words,t_star
q1,1000,590,simple,10,1
q2,1300.5,590,simple,10,2
q3,-50,400,simple,4,2
q4,700,590,comparison,5,
q5,600,300,comparison,9,4
q6,1100,590,set,6,3
q9,800,590,simple,3,1
ghost,500,590,simple,7,2
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("run")
    table = write(folder)
    argv = ["simulate", "--table", str(table), "--scenario", "paper_rq3", "--set", "select.population=all"]
    assert main([*argv, "--out", str(folder / "run")]) == 0
    return folder / "run"


def _published(tmp_path: Path, text: str = PUBLISHED) -> Path:
    path = tmp_path / "pub.csv"
    path.write_text(text, encoding="utf-8")
    return path


def _simulated(run_dir: Path, ids: list[str], column: str) -> np.ndarray:
    import pandas as pd

    res = pd.read_csv(run_dir / "results.csv", dtype={"interaction_id": str}).set_index("interaction_id")
    return res.loc[ids, column].to_numpy(dtype=float)


def test_compare_writes_json_figure_and_summary(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    out = tmp_path / "out"
    assert main(["compare", str(run_dir), str(_published(tmp_path)), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert sorted(p.name for p in out.iterdir()) == ["comparison.json", "comparison.png", "h_vs_saved.png"]  # no temporary files
    assert (out / "comparison.png").read_bytes().startswith(PNG_SIGNATURE)
    assert (out / "h_vs_saved.png").read_bytes().startswith(PNG_SIGNATURE)
    c = json.loads((out / "comparison.json").read_text(encoding="utf-8"))

    ids = ["q1", "q2", "q3", "q4", "q5", "q6"]
    measured = np.array([1000, 1300.5, -50, 700, 600, 1100], dtype=float)
    h_published = np.array([590, 590, 400, 590, 300, 590], dtype=float)
    saved, h = _simulated(run_dir, ids, "saved_ms"), _simulated(run_dir, ids, "H_ms")
    assert saved.tolist() == [1190.0, 1190.0, 333.333, 666.667, 666.667, 1000.0]

    assert c["n_matched"] == 6
    assert c["ids"] == {"only_in_run": ["q7", "q8"], "only_in_published": ["q9", "ghost"], "not_replayed": ["q9"]}
    assert c["run"] == {"dir": str(run_dir), "input_mode": "table", "scenario": "paper_rq3", "n_replayed": 8,
                        "reflector_model": "oracle reflector (t ≥ t*): no per-prefix evidence",
                        "n_not_replayed": 1}  # fmt: skip
    assert c["published"]["n_questions"] == 8
    assert c["measured_saved_ms"]["mean"] == pytest.approx(measured.mean())
    assert c["measured_saved_ms"]["median"] == 850.0
    assert c["saved_ms"]["mean"] == pytest.approx(saved.mean()) and c["saved_ms"]["median"] == pytest.approx(833.3335)
    assert c["H_predicted_ms"]["mean"] == pytest.approx(h_published.mean()) and c["H_ms"]["mean"] == pytest.approx(h.mean())
    delta = np.abs(saved - measured)  # 190, 110.5, 383.333, 33.333, 66.667, 100
    assert c["abs_delta_saved_ms"]["mean"] == pytest.approx(883.833 / 6)
    assert c["abs_delta_saved_ms"]["p90"] == pytest.approx(np.quantile(delta, 0.9))
    pearson, spearman = scipy.stats.pearsonr(saved, measured), scipy.stats.spearmanr(saved, measured)
    assert c["pearson_saved_measured"] == {"r": pytest.approx(pearson.statistic), "p": pytest.approx(pearson.pvalue), "n": 6}
    assert c["spearman_saved_measured"]["rho"] == pytest.approx(spearman.statistic)
    assert c["spearman_saved_measured"]["n"] == 6
    published_rho = scipy.stats.spearmanr(h_published, measured).statistic
    assert c["spearman_H_predicted_measured_saved"]["rho"] == pytest.approx(published_rho)
    assert c["spearman_H_saved"] == {"rho": None, "p": None, "n": 6}  # H = 600 for all six: undefined, not 0
    assert c["agreement"]["n_words"] == {"n": 6, "n_agree": 5, "rate": 5 / 6, "disagree_ids": ["q5"]}
    assert c["agreement"]["t_star"] == {"n": 5, "n_agree": 5, "rate": 1.0, "disagree_ids": []}  # q4: not given
    assert c["notes"] == [ORACLE_NOTE]  # a bare table: the oracle reflector ran
    hs = c["h_vs_saved"]
    assert hs["L_ms"] == 600.0
    # published: every H below L = 600, so the tail is all six; simulated: H = L for all, no tail
    assert hs["published"]["spearman"]["rho"] == pytest.approx(published_rho)
    assert hs["published"]["n_unsaturated"] == 6
    assert hs["published"]["spearman_unsaturated"]["rho"] == pytest.approx(published_rho)
    assert hs["simulated"]["n_unsaturated"] == 0
    assert hs["simulated"]["spearman_unsaturated"] == {"rho": None, "p": None, "n": 0}

    lines = captured.out.splitlines()
    assert lines[0].startswith("6 question(s) matched; 2 only in the run, 2 only in ") and "(1 of them not replayed)" in lines[0]
    assert "measured mean 775.1 median 850.0 | simulated mean 841.1 median 833.3" in captured.out
    assert "agree on n_words 5/6, t_star 5/5" in captured.out
    assert "rho(H, saved) simulated all 6: n/a; unsaturated (H < 600 ms) 0: rho n/a" in captured.out
    assert lines[-1] == f"wrote {out / 'comparison.json'}, {out / 'comparison.png'} and {out / 'h_vs_saved.png'}"
    assert len(lines) <= 12


def test_without_optional_columns_agreement_is_null(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "interaction_id,measured_saved_ms,H_predicted_ms\nq1,1000,590\nq2,900,590\n"
    assert main(["compare", str(run_dir), str(_published(tmp_path, text)), "--out", str(tmp_path / "out")]) == 0
    c = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    assert c["agreement"] == {"n_words": None, "t_star": None}
    assert c["pearson_saved_measured"] == {"r": None, "p": None, "n": 2}  # fewer than 3 pairs: undefined
    assert "agree on" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (PUBLISHED.replace(",H_predicted_ms,", ","), "pub.csv:1: missing column 'H_predicted_ms'"),
        (PUBLISHED.replace("q3,-50,", "q3,abc,"), "pub.csv:4: column 'measured_saved_ms': 'abc' is not a number"),
        (PUBLISHED.replace("q3,-50,400,", "q3,-50,,"), "pub.csv:4: column 'H_predicted_ms': empty, but a value is required"),
        (PUBLISHED.replace("q4,700,590,comparison,5,", "q4,700,590,comparison,5.5,"),
         "pub.csv:5: column 'n_words': '5.5' is not an integer"),
        (PUBLISHED.replace("q2,", "q1,"), "pub.csv:3: column 'interaction_id': 'q1' repeats line 2"),
        (PUBLISHED.replace("q2,1300.5,", "q2,nan,"), "pub.csv:3: column 'measured_saved_ms': 'nan' is not a finite number"),
        ("interaction_id,measured_saved_ms,H_predicted_ms\nx1,1,2\n", "pub.csv: no interaction_id in common"),
        (PUBLISHED.replace("q3,-50,400,", "q3,-50,1e40,"), "pub.csv:4: column 'H_predicted_ms': 1e40 ms is beyond a day"),
        (PUBLISHED.replace("q3,-50,400,", "q3,-50,-400,"), "pub.csv:4: column 'H_predicted_ms': -400 is negative"),
        (PUBLISHED.replace("q5,600,300,comparison,9,4", "q5,600,300,comparison,9,-1"), "pub.csv:6: column 't_star': -1 is not a positive"),
    ],
)  # fmt: skip
def test_bad_published_file_is_one_line_exit_1(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    capsys.readouterr()
    path = _published(tmp_path, text)
    assert main(["compare", str(run_dir), str(path), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("streamrag: error: ") and f"{tmp_path / message}" in err
    assert not (tmp_path / "out").exists()  # nothing written


def test_bad_run_folder_is_one_line_exit_1(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    published = _published(tmp_path)
    out = tmp_path / "out"
    assert main(["compare", str(tmp_path / "absent"), str(published), "--out", str(out)]) == 1
    assert f"{tmp_path / 'absent'}: no such folder" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["compare", str(empty), str(published), "--out", str(out)]) == 1
    assert f"{empty / 'results.csv'}: no such file" in capsys.readouterr().err
    assert main(["compare", str(run_dir), str(tmp_path / "absent.csv"), "--out", str(out)]) == 1
    assert capsys.readouterr().err == f"streamrag: error: {tmp_path / 'absent.csv'}: no such file\n"
    # a replayed row with a non-numeric saving, and a repeated id
    broken = tmp_path / "broken"
    broken.mkdir()
    results = (run_dir / "results.csv").read_text(encoding="utf-8").splitlines()
    fields = results[1].split(",")
    fields[results[0].split(",").index("saved_ms")] = "x"
    broken_rows = [results[0], ",".join(fields), *results[2:]]
    (broken / "results.csv").write_text("\n".join(broken_rows) + "\n", encoding="utf-8")
    assert main(["compare", str(broken), str(published), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"{broken / 'results.csv'}:2: column 'saved_ms': 'x' is not a number" in err
    (broken / "results.csv").write_text("\n".join([*results, results[1]]) + "\n", encoding="utf-8")
    assert main(["compare", str(broken), str(published), "--out", str(out)]) == 1
    assert f"{broken / 'results.csv'}:11: column 'interaction_id': 'q1' repeats line 2" in capsys.readouterr().err
    assert not out.exists()


def test_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "run"]) == 2
    assert main(["compare", "--help"]) == 0
    assert "measured_saved_ms" in capsys.readouterr().out
