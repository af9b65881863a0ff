"""ASR partial hypotheses through the analyzer, the simulator, table replays and sweeps."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from streamrag.cli import main
from streamrag.data.demo import demo_path

DEMO = str(demo_path())


def _analyze(out: Path, *extra: str) -> tuple[pd.DataFrame, dict]:
    assert main(["analyze", DEMO, "--out", str(out), "--no-figures", *extra]) == 0
    table = pd.read_csv(out / "stabilization.csv", dtype=str, keep_default_na=False)
    return table, json.loads((out / "summary.json").read_text())


def _simulate(out: Path, *sets: str, table: Path | None = None) -> tuple[bytes, pd.DataFrame, dict]:
    source = ["--table", str(table)] if table is not None else [DEMO]
    args = ["simulate", *source, "--scenario", "paper_rq3", "--set", "select.population=all", "--out", str(out)]
    for s in sets:
        args += ["--set", s]
    assert main(args) == 0
    results = pd.read_csv(out / "results.csv", dtype=str, keep_default_na=False)
    return (out / "trace.jsonl").read_bytes(), results, json.loads((out / "summary.json").read_text())


def test_no_revisions_give_exactly_the_word_prefix_analysis(tmp_path: Path) -> None:
    base, base_summary = _analyze(tmp_path / "base")
    asr, asr_summary = _analyze(tmp_path / "asr", "--asr-revisions", "0")
    assert asr[base.columns].equals(base)  # every column of today's table, value for value
    assert (tmp_path / "base" / "prefixes.parquet").read_bytes() != b""
    for key in ("rq1", "rq2", "rq4", "robustness"):
        assert asr_summary[key] == base_summary[key], key
    analyzed = asr[asr["skip_reason"] == ""]
    # hypothesis t arrives with word t at t/δ (δ = 2.5 w/s by default)
    assert (analyzed["t_sc_ms"].astype(float) == analyzed["t_sc"].astype(int) / 2.5 * 1000).all()
    assert (analyzed["revised_share"].astype(float) == 0).all()


def test_revisions_delay_stabilization_and_are_reported_in_time(tmp_path: Path) -> None:
    base, _ = _analyze(tmp_path / "base", "--asr-revisions", "0")
    revised, summary = _analyze(tmp_path / "p5", "--asr-revisions", "0.5", "--asr-window", "3")
    rows = revised[revised["skip_reason"] == ""]
    assert rows["revised_share"].astype(float).mean() > 0.3
    assert summary["asr"]["n_revisions"]["mean"] > 1
    # a revision only ever hides words the prefix had: t_sc is never earlier on average
    assert rows["t_sc"].astype(int).mean() >= base[base["skip_reason"] == ""]["t_sc"].astype(int).mean()
    assert summary["parameters"]["analysis"]["asr"]["p"] == 0.5


def test_the_simulator_fires_on_hypotheses_and_counts_calls_on_revised_ones(tmp_path: Path) -> None:
    plain_trace, plain, _ = _simulate(tmp_path / "plain")
    zero_trace, zero, zero_summary = _simulate(tmp_path / "zero", "data.asr.p=0")
    assert zero_trace == plain_trace  # p = 0: the same run, event for event
    assert zero[plain.columns].equals(plain)
    assert (zero["calls_on_revised"] == "0").all() and zero_summary["calls_on_revised_share"] == 0.0
    trace, revised, summary = _simulate(tmp_path / "p5", "data.asr.p=0.5", "data.asr.r=3")
    assert trace != plain_trace
    assert summary["calls_on_revised_share"] > 0.2
    on_revised = revised["calls_on_revised"].astype(int)
    assert (on_revised <= revised["calls_fired"].astype(int)).all()
    assert "calls_on_revised" not in plain.columns  # word prefixes keep today's columns


def test_a_table_replay_with_hypothesis_evidence_equals_full_mode(tmp_path: Path) -> None:
    _analyze(tmp_path / "an", "--asr-revisions", "0.4", "--asr-window", "2", "--asr-seed", "7")
    table = tmp_path / "an" / "stabilization.csv"
    assert "revised" in pd.read_parquet(tmp_path / "an" / "prefixes.parquet").columns
    replay_trace, replay, _ = _simulate(tmp_path / "replay", table=table)
    full_trace, full, _ = _simulate(tmp_path / "full", "data.asr.p=0.4", "data.asr.r=2", "data.asr.seed=7")
    assert replay_trace == full_trace
    assert replay.equals(full)


def test_an_asr_sweep_writes_revision_columns_and_its_figure(tmp_path: Path) -> None:
    grid = tmp_path / "asr.toml"
    grid.write_text(
        textwrap.dedent(
            """
            name = "asr-small"
            kind = "simulate"
            input = "demo"
            scenario = "paper_rq3"
            [base]
            "select.population" = "all"
            [axes]
            "data.asr.p" = [0.0, 0.5]
            "data.asr.r" = [1, 3]
            """
        ),
        encoding="utf-8",
    )
    assert main(["sweep", str(grid), "--out", str(tmp_path / "run")]) == 0
    table = pd.read_csv(tmp_path / "run" / "sweep.csv")
    assert sorted(table["p"].tolist()) == [0.0, 0.0, 0.5, 0.5]
    assert (table[table["p"] == 0.0]["calls_on_revised_share"] == 0).all()
    assert (table[table["p"] == 0.5]["calls_on_revised_share"] > 0).all()
    assert (tmp_path / "run" / "figures" / "revisions.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("flag", [["--asr-revisions", "2"], ["--asr-revisions", "x"], ["--asr-window", "0"]])
def test_bad_revision_parameters_are_usage_errors(tmp_path: Path, flag: list[str], capsys) -> None:
    assert main(["analyze", DEMO, "--out", str(tmp_path / "o"), *flag]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert flag[0] in err[-1] and "Traceback" not in "\n".join(err)
    assert not (tmp_path / "o").exists()


def test_asr_needs_the_bm25_retriever(tmp_path: Path, capsys) -> None:
    code = main(["simulate", DEMO, "--scenario", "paper_rq3", "--set", "data.retriever=dense", "--set", "data.asr.p=0.2",
                 "--out", str(tmp_path / "o")])  # fmt: skip
    assert code != 0
    assert "BM25 only" in capsys.readouterr().err


def _demo_questions() -> list[dict]:
    return [json.loads(line) for line in Path(DEMO).read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_hypotheses(path: Path, make) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for record in _demo_questions():
            words = record["query"].split()
            fh.write(json.dumps({"interaction_id": record["interaction_id"], "hypotheses": make(words)}) + "\n")
    return path


def test_recorded_prefixes_at_the_cadences_times_replay_like_the_word_prefixes(tmp_path: Path) -> None:
    # paper_rq3 reads at 3 words/s: word t arrives at t/3 s
    hyps = _write_hypotheses(
        tmp_path / "h.jsonl", lambda w: [{"t_ms": (t + 1) / 3 * 1000, "text": " ".join(w[: t + 1])} for t in range(len(w))]
    )
    plain_trace, plain, _ = _simulate(tmp_path / "plain")
    trace, recorded, _ = _simulate(tmp_path / "rec", "data.asr.kind=file", f"data.asr.path={hyps}")
    assert trace == plain_trace
    assert recorded[plain.columns].equals(plain)


def test_recorded_hypotheses_arrive_at_their_times_and_may_rewrite_words(tmp_path: Path) -> None:
    def make(words: list[str]) -> list[dict]:
        out = [{"t_ms": 250.0 * (t + 1), "text": " ".join(words[: t + 1])} for t in range(len(words))]
        if len(words) > 2:  # the second hypothesis mishears the first word; the third fixes it
            out[1]["text"] = " ".join(["zzzz", *words[1:2]])
        return out

    hyps = _write_hypotheses(tmp_path / "h.jsonl", make)
    table, summary = _analyze(tmp_path / "an", "--asr-hypotheses", str(hyps))
    rows = table[table["skip_reason"] == ""]
    assert (rows["t_sc_ms"].astype(float) == rows["t_sc"].astype(int) * 250.0).all()
    assert (rows["t_anchor"] == "").all()  # word positions do not apply to recorded hypotheses
    assert summary["asr"]["revised_share"]["mean"] > 0
    replay_trace, replay, _ = _simulate(tmp_path / "replay", table=tmp_path / "an" / "stabilization.csv")
    full_trace, full, _ = _simulate(tmp_path / "full", "data.asr.kind=file", f"data.asr.path={hyps}")
    assert replay_trace == full_trace and replay.equals(full)
    first = [json.loads(line) for line in full_trace.splitlines() if b'"kind":"word"' in line][:3]
    assert [e["t_us"] for e in first] == [250_000, 500_000, 750_000]
    assert (full["calls_on_revised"].astype(int) >= 0).all()


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ({"hypotheses": [{"t_ms": 1, "text": "a"}]}, "interaction_id"),
        ({"interaction_id": "x"}, "hypotheses"),
        ({"interaction_id": "x", "hypotheses": []}, "hypotheses"),
        ({"interaction_id": "x", "hypotheses": [{"text": "a"}]}, "hypotheses[0].t_ms"),
        ({"interaction_id": "x", "hypotheses": [{"t_ms": -1, "text": "a"}]}, "hypotheses[0].t_ms"),
        ({"interaction_id": "x", "hypotheses": [{"t_ms": 5, "text": "a"}, {"t_ms": 4, "text": "a b"}]}, "hypotheses[1].t_ms"),
        ({"interaction_id": "x", "hypotheses": [{"t_ms": 5, "text": "  "}]}, "hypotheses[0].text"),
        ({"interaction_id": "x", "hypotheses": [{"t_ms": 5}]}, "hypotheses[0].text"),
    ],
)
def test_a_bad_hypotheses_file_is_one_line_naming_file_line_and_field(tmp_path: Path, line: dict, field: str, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"interaction_id": "ok", "hypotheses": [{"t_ms": 1, "text": "a"}]}\n' + json.dumps(line) + "\n")
    assert main(["analyze", DEMO, "--out", str(tmp_path / "o"), "--asr-hypotheses", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{bad}:2" in err[0] and field in err[0], err


def test_a_question_missing_from_the_hypotheses_file_is_an_error(tmp_path: Path, capsys) -> None:
    hyps = tmp_path / "h.jsonl"
    hyps.write_text('{"interaction_id": "someone-else", "hypotheses": [{"t_ms": 1, "text": "a"}]}\n')
    assert main(["analyze", DEMO, "--out", str(tmp_path / "o"), "--asr-hypotheses", str(hyps)]) == 1
    assert "no hypotheses for question" in capsys.readouterr().err


@pytest.mark.parametrize("given", [["--asr-revisions", "0.2"], ["--typed", "KEYS"], ["--asr-hypotheses", "H"]])
def test_hypotheses_in_global_scope_are_refused_not_ignored(tmp_path: Path, given: list[str], capsys) -> None:
    # Global scope ranks each question's own words: it analyzed word prefixes and wrote a
    # table without hypothesis columns, as if --typed had been honoured.
    hyps = _write_hypotheses(tmp_path / "h.jsonl", lambda w: [{"t_ms": 100.0, "text": " ".join(w)}])
    keystrokes = Path(__file__).resolve().parents[3] / "shared" / "data" / "keystrokes"
    if given[1] == "KEYS" and not keystrokes.is_dir():
        pytest.skip(f"keystroke logs not found at {keystrokes}")
    arg = {"KEYS": str(keystrokes), "H": str(hyps)}.get(given[1], given[1])
    rc = main(["analyze", DEMO, "--scope", "global", "--out", str(tmp_path / "o"), "--no-figures", given[0], arg])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "ranked in per-question scope only" in err[0]
    assert not (tmp_path / "o" / "stabilization.csv").exists()
