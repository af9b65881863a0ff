"""``streamrag simulate`` and ``streamrag trace`` through ``main([...])``."""

from __future__ import annotations

import csv
import json

import pytest
from _simhelpers import small_table

from streamrag.analysis.table import write_table
from streamrag.cli import main
from streamrag.engine.trace import read_trace
from streamrag.simulator.results import RESULT_COLUMNS


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("table") / "stabilization.csv"
    df = small_table(120, seed=1)
    df["skip_reason"] = ""
    df.loc[5, "skip_reason"] = "empty query"  # a skipped row is counted, not simulated
    write_table(df, path)
    return path


def _run(tmp_path, table, *extra, name="run"):
    out = tmp_path / name
    code = main(["simulate", "--table", str(table), "--scenario", "paper_rq3", "--out", str(out), *extra])
    return code, out


def test_simulate_table_writes_the_four_outputs(tmp_path, table, capsys):
    code, out = _run(tmp_path, table)
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "results.csv", "summary.json", "trace.jsonl"]
    with open(out / "results.csv", newline="") as fh:
        all_rows = list(csv.DictReader(fh))
    assert tuple(all_rows[0]) == RESULT_COLUMNS
    # one row per input question, in input order; the ones not replayed say why
    assert [r["interaction_id"] for r in all_rows] == [f"t-{i:04d}" for i in range(120)]
    assert all_rows[5]["skip_reason"] == "empty query" and all_rows[5]["saved_ms"] == ""
    rows = [r for r in all_rows if not r["skip_reason"]]
    reasons = {r["skip_reason"] for r in all_rows if r["skip_reason"]}
    assert reasons == {"empty query", "not retrieved-gold (select.population = retrieved_gold)"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_questions"] == len(rows) > 0
    assert summary["selection"]["skipped_in_input"] == 1
    assert summary["selection"]["not_retrieved_gold"] + len(rows) + 1 == 120
    # one name per metric: the results.csv column, then the statistic
    assert {"rho", "p", "n"} == set(summary["spearman_H_saved"]) == set(summary["spearman_H_G_saved"])
    assert {"mean", "median", "p10", "p90", "min", "max"} == set(summary["saved_ms"]) == set(summary["calls_fired"])
    assert set(summary["misfire"]) == set(summary["negative"]) == {"n", "rate"}
    saved = [float(r["saved_ms"]) for r in rows]
    assert summary["saved_ms"]["mean"] == pytest.approx(sum(saved) / len(saved))
    assert summary["negative"]["n"] == sum(s < 0 for s in saved) == sum(r["negative"] == "True" for r in rows)
    assert summary["parameters"]["scenario"]["name"] == "paper_rq3"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed"] == 0 and manifest["input"]["mode"] == "table"
    assert len(manifest["input"]["sha256"]) == 64
    assert manifest["command"][:2] == ["streamrag", "simulate"] and "created" in manifest
    assert manifest["scenario"]["latency_stages"]["L"] == {"kind": "constant", "ms": 600.0, "source": "scenario latency.L_ms"}
    trace_ids = {e.qid for e in read_trace(out / "trace.jsonl")}
    assert trace_ids == {r["interaction_id"] for r in rows}
    assert "simulated" in capsys.readouterr().out


def test_same_seed_same_bytes_and_jobs_do_not_matter(tmp_path, table):
    _, a = _run(tmp_path, table, "--set", "select.population=all", name="a")
    _, b = _run(tmp_path, table, "--set", "select.population=all", "--jobs", "2", name="b")
    for name in ("results.csv", "trace.jsonl", "summary.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_set_L_1000_and_seed(tmp_path, table):
    code, out = _run(tmp_path, table, "--set", "latency.L_ms=1000", "--seed", "5")
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["parameters"]["latency_stages"]["L"]["ms"] == 1000
    assert summary["parameters"]["scenario"]["seed"] == 5
    assert summary["H_ms"]["max"] <= 1000


def test_ids_file_selects_questions(tmp_path, table):
    ids = tmp_path / "ids.txt"
    ids.write_text("# two questions\nt-0003\nt-0007  # a comment\n")
    code, out = _run(tmp_path, table, "--ids", str(ids), "--set", "select.population=all")
    assert code == 0
    with open(out / "results.csv", newline="") as fh:
        assert [r["interaction_id"] for r in csv.DictReader(fh)] == ["t-0003", "t-0007"]
    ids.write_text("t-0003\nt-0003\n")
    assert (
        main(["simulate", "--table", str(table), "--scenario", "paper_rq3", "--out", str(tmp_path / "y"), "--ids", str(ids)]) == 1
    )
    ids.write_text("nope\n")
    assert (
        main(["simulate", "--table", str(table), "--scenario", "paper_rq3", "--out", str(tmp_path / "x"), "--ids", str(ids)]) == 1
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--scenario", "nope"], "neither a TOML file nor a built-in scenario"),
        (["--scenario", "paper_rq3", "--set", "trigger.words=0"], "trigger.words"),
        (["--scenario", "paper_rq3", "--set", "trigger.kind=stable"], "needs per-prefix evidence"),
        (["--scenario", "paper_rq3", "--jobs", "0"], "--jobs"),
    ],
)
def test_bad_scenario_exits_1_with_one_stderr_line(tmp_path, table, capsys, args, needle):
    code = main(["simulate", "--table", str(table), "--out", str(tmp_path / "o"), *args])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("streamrag: error: ") and needle in err


def test_missing_table_and_no_input(tmp_path, capsys):
    assert main(["simulate", "--table", str(tmp_path / "none.csv"), "--scenario", "paper_rq3", "--out", str(tmp_path / "o")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["simulate", "--scenario", "paper_rq3", "--out", str(tmp_path / "o")]) == 1
    assert "exactly one input" in capsys.readouterr().err


def test_trace_command_terminal_png_perfetto(tmp_path, table, capsys):
    _, out = _run(tmp_path, table)
    with open(out / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    qid = next(r["interaction_id"] for r in rows if not r["skip_reason"])
    skipped = next(r["interaction_id"] for r in rows if r["skip_reason"])
    capsys.readouterr()
    assert main(["trace", str(out), skipped]) == 1
    assert "was not replayed in this run (not retrieved-gold" in capsys.readouterr().err
    png, pf = tmp_path / "q.png", tmp_path / "q.json"
    assert main(["trace", str(out), qid, "--png", str(png), "--perfetto", str(pf)]) == 0
    shown = capsys.readouterr().out
    for word in (qid, "saved", "word", "fire", "decision", "answer_ready", "reflector"):
        assert word in shown
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    doc = json.loads(pf.read_text())
    phases = {e["ph"] for e in doc["traceEvents"]}
    assert {"X", "i", "M"} <= phases
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert all(isinstance(e["ts"], int) and e["dur"] >= 0 for e in spans)
    assert {"query generation", "tool call", "response"} <= {e["name"] for e in spans}


def test_trace_unknown_question_is_one_line(tmp_path, table, capsys):
    _, out = _run(tmp_path, table)
    capsys.readouterr()
    assert main(["trace", str(out), "no-such-id"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no question 'no-such-id'" in err
    assert main(["trace", str(tmp_path), "x"]) == 1
    assert "no trace.jsonl" in capsys.readouterr().err


def test_simulate_data_full_mode(tmp_path, crag_sample):
    out = tmp_path / "full"
    code = main(["simulate", str(crag_sample), "--scenario", "paper_rq3", "--set", "select.population=all",
                 "--set", "data.split=all", "--out", str(out)])  # fmt: skip
    assert code == 0
    with open(out / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 10 and not any(r["skip_reason"] for r in rows)
    # full mode judges real results: the heuristic reflector's checks carry scores
    checks = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines() if '"kind":"check"' in line]
    assert checks and all(c["score"] is not None and c["coverage"] is not None for c in checks)
