"""The ``timings`` cadence: real word times per question, exact to the µs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from _simhelpers import compact, replay, small_table, table_q

from streamrag.analysis.table import write_table
from streamrag.base.errors import ConfigError, DataFileError, RecordError
from streamrag.cli import main
from streamrag.engine.cadence import TimingsCadence
from streamrag.engine.timings import read_word_timings
from streamrag.engine.trace import read_trace
from streamrag.simulator.scenario import load_scenario, scenario_from_dict
from streamrag.sweep import load_grid, plan
from streamrag.sweep.inputs import PreparedInputs


def _words(*spans: tuple[float, float]) -> list[dict]:
    return [{"word": f"w{i + 1}", "start_ms": s, "end_ms": e} for i, (s, e) in enumerate(spans)]


def _timings(path: Path, questions: dict[str, list[dict]]) -> Path:
    path.write_text("".join(json.dumps({"interaction_id": q, "words": w}) + "\n" for q, w in questions.items()), encoding="utf-8")
    return path


# Recorded 1 s into the audio; the first word starts at 1000 ms: that is time 0.
Q1 = _words((1000.0, 1350.0), (1380.0, 1600.5), (1650.0, 2100.0), (2150.0, 2500.25))


def test_a_word_arrives_at_its_end_counted_from_the_first_words_start(tmp_path):
    # q2: each instant is rounded to the µs on its own (0.4 µs → 0, 1.6 µs → 2), then subtracted
    path = _timings(tmp_path / "w.jsonl", {"q1": Q1, "q2": _words((0.0004, 0.0004), (0.0008, 0.0016))})
    timings = read_word_timings(path)
    assert timings.offsets_us == {"q1": (350_000, 600_500, 1_100_000, 1_500_250), "q2": (0, 2)}
    cadence = TimingsCadence(path=str(path), delta_wps=2.5)
    assert cadence.word_times_us(4, question_id="q1").tolist() == [350_000, 600_500, 1_100_000, 1_500_250]
    assert not cadence.needs_rng and len(cadence.sha256) == 64


def test_exact_timeline_on_real_word_times(tmp_path):
    # n = 4, t* = t_suf = 2, interval trigger every 2 words, G = 100, L = 300, F = 500 ms.
    # words at 0.350000, 0.600500, 1.100000, 1.500250 s; E = 1.500250 s
    # call 1 on prefix 2: fired 0.600500, G until 0.700500, L until 1.000500 (t = 2 ≥ t*)
    # call 2 on prefix 4 at word 4 (held: the reflector looks first); the baseline fires
    #   at E; the reflector uses call 1 and cancels call 2 unstarted; response 1.500250 → 2.000250
    # baseline: 1.500250 → G 1.600250 → L 1.900250 → F 2.400250; saved = 400 ms = G + L
    path = _timings(tmp_path / "w.jsonl", {"q1": Q1})
    rs = scenario_from_dict({
        "input": {"kind": "timings", "path": str(path), "delta_wps": 2.5},
        "trigger": {"kind": "interval", "words": 2},
        "pipeline": {"max_threads": 4},
        "latency": {"profile": "paper-rq3", "G_ms": 100, "L_ms": 300, "F_ms": 500},
    })  # fmt: skip
    events = replay(table_q("q1", n=4, t_sc=4, t_suf=2), rs)
    assert compact(events) == [
        (350_000, "word", 1),
        (600_500, "word", 2),
        (600_500, "fire", "streaming", 1, 2, "trigger"),
        (600_500, "thread_start", "streaming", 1),
        (700_500, "gen_done", "streaming", 1),
        (1_000_500, "tool_done", "streaming", 1, 2, None),
        (1_100_000, "word", 3),
        (1_500_250, "word", 4),
        (1_500_250, "input_end", 4),
        (1_500_250, "fire", "streaming", 2, 4, "trigger"),
        (1_500_250, "fire", "baseline", 1, 4, "baseline"),
        (1_500_250, "thread_start", "baseline", 1),
        (1_500_250, "reflect", (1,), (2,)),
        (1_500_250, "check", 1, 2, True, None, None),
        (1_500_250, "decision", "speculative", 1, 2),
        (1_500_250, "cancel", "streaming", 2, "unstarted"),
        (1_500_250, "respond", "streaming", 1, 2),
        (1_600_250, "gen_done", "baseline", 1),
        (1_900_250, "tool_done", "baseline", 1, 4, None),
        (1_900_250, "respond", "baseline", 1, 4),
        (2_000_250, "answer_ready", "streaming"),
        (2_400_250, "answer_ready", "baseline"),
    ]


def test_end_of_turn_delay_follows_the_last_real_word(tmp_path):
    path = _timings(tmp_path / "w.jsonl", {"q1": Q1})
    rs = scenario_from_dict({
        "input": {"kind": "timings", "path": str(path), "delta_wps": 2.5, "end_of_turn_ms": 200},
        "trigger": {"kind": "none"},
        "latency": {"profile": "paper-rq3", "G_ms": 100, "L_ms": 300, "F_ms": 500},
    })  # fmt: skip
    events = replay(table_q("q1", n=4, t_sc=4), rs)
    assert [(e["t_us"], e["kind"]) for e in events if e["kind"] in ("input_end", "answer_ready")] == [
        (1_500_250, "input_end"), (2_600_250, "answer_ready"), (2_600_250, "answer_ready"),
    ]  # fmt: skip


def test_a_missing_question_or_another_word_count_names_the_file_and_the_id(tmp_path):
    path = _timings(tmp_path / "w.jsonl", {"q1": Q1})
    cadence = TimingsCadence(path=str(path), delta_wps=2.5)
    with pytest.raises(ConfigError, match=rf"input\.path: {path}: no word timings for question 'q9'"):
        cadence.word_times_us(4, question_id="q9")
    with pytest.raises(ConfigError, match=rf"input\.path: {path}: question 'q1' has 4 timed words, but the question has 5 words"):
        cadence.word_times_us(5, question_id="q1")


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([{"words": Q1}], "w.jsonl:1: field 'interaction_id': missing"),
        ([{"interaction_id": "a", "words": Q1}, {"interaction_id": "a", "words": Q1}],
         "w.jsonl:2: field 'interaction_id': 'a' is timed twice (first on line 1)"),
        ([{"interaction_id": "a", "words": []}], "w.jsonl:1: field 'words': expected a non-empty list"),
        ([{"interaction_id": "a", "words": _words((100.0, 90.0))}],
         "w.jsonl:1: field 'words[0].end_ms': 90 is before the word's start_ms 100"),
        ([{"interaction_id": "a", "words": _words((0.0, 500.0), (100.0, 400.0))}],
         "w.jsonl:1: field 'words[1].end_ms': 400 is before words[0].end_ms 500 (words go in spoken order)"),
        ([{"interaction_id": "a", "words": [{"word": "x", "start_ms": "0", "end_ms": 5}]}],
         "w.jsonl:1: field 'words[0].start_ms': expected a finite number of ms, got '0'"),
        ([{"interaction_id": "a", "words": [{"start_ms": 0, "end_ms": 5}]}], "w.jsonl:1: field 'words[0].word': missing"),
    ],
)  # fmt: skip
def test_a_bad_timings_file_is_one_record_error_naming_line_and_field(tmp_path, lines, expected):
    path = tmp_path / "w.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    with pytest.raises(RecordError) as exc:
        read_word_timings(path)
    assert str(exc.value).startswith(f"{tmp_path}/{expected}"), str(exc.value)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(DataFileError, match="no word timings"):
        read_word_timings(empty)


@pytest.fixture
def study(tmp_path) -> Path:
    """A table of 6 questions and word timings for each, in one folder."""
    df = small_table(6, seed=3)
    write_table(df, tmp_path / "t.csv")
    questions = {
        row.interaction_id: _words(*[(500.0 + 400 * i, 800.0 + 400 * i) for i in range(int(row.n_words))])
        for row in df.itertuples()
    }
    _timings(tmp_path / "words.jsonl", questions)
    (tmp_path / "s.toml").write_text(
        textwrap.dedent("""
            [input]
            kind = "timings"
            path = "words.jsonl"   # relative to this file
            delta_wps = 2.5
            [trigger]
            kind = "every_word"
        """),
        encoding="utf-8",
    )
    return tmp_path


def test_simulate_cli_replays_the_real_times(study, tmp_path_factory, monkeypatch, capsys):
    out = tmp_path_factory.mktemp("run")
    monkeypatch.chdir(out)  # the scenario's path is relative to the scenario file, not here
    assert main(["simulate", "--table", str(study / "t.csv"), "--scenario", str(study / "s.toml"), "--out", str(out)]) == 0
    events = [e.model_dump() for e in read_trace(out / "trace.jsonl")]
    words = [e["t_us"] for e in events if e["qid"] == "t-0000" and e["kind"] == "word"]
    assert words[:3] == [300_000, 700_000, 1_100_000]  # end of word i − start of word 1
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["scenario"]["scenario"]["input"]["path"] == str(study / "words.jsonl")
    # the timings travel with the scenario to worker processes: same bytes
    two = out / "two"
    assert (
        main(["simulate", "--table", str(study / "t.csv"), "--scenario", str(study / "s.toml"), "--out", str(two), "--jobs", "2"])
        == 0
    )
    assert (two / "trace.jsonl").read_bytes() == (out / "trace.jsonl").read_bytes()


def test_simulate_cli_stops_on_a_question_without_timings(study, tmp_path, capsys):
    lines = (study / "words.jsonl").read_text().splitlines()
    (study / "words.jsonl").write_text("\n".join(lines[1:]) + "\n")  # drop t-0000
    assert (
        main(["simulate", "--table", str(study / "t.csv"), "--scenario", str(study / "s.toml"), "--out", str(tmp_path / "o")])
        == 1
    )
    err = capsys.readouterr().err
    assert err == f"streamrag: error: input.path: {study / 'words.jsonl'}: no word timings for question 't-0000'\n"
    (study / "words.jsonl").write_text(lines[0].replace('"end_ms": 800.0', '"end_ms": -1') + "\n")
    assert (
        main(["simulate", "--table", str(study / "t.csv"), "--scenario", str(study / "s.toml"), "--out", str(tmp_path / "o")])
        == 1
    )
    err = capsys.readouterr().err
    assert err == f"streamrag: error: {study / 'words.jsonl'}:1: field 'words[0].end_ms': -1 is before the word's start_ms 500\n"


def test_set_the_timings_cadence_and_sweep_keys_follow_the_file(study, monkeypatch):
    monkeypatch.chdir(study)
    rs = load_scenario("paper_rq3", ["input.kind=timings", "input.path=words.jsonl", "input.delta_wps=2.5"])
    assert rs.scenario.input.path == str(study / "words.jsonl") and rs.delta_wps == 2.5
    with pytest.raises(ConfigError, match=r"input\.delta_wps: Field required"):
        load_scenario("paper_rq3", ["input.kind=timings", "input.path=words.jsonl"])
    grid_text = 'kind = "simulate"\ninput = "t.csv"\nscenario = "s.toml"\n[axes]\n"latency.L_ms" = [300, 600]\n'
    (study / "g.toml").write_text(grid_text, encoding="utf-8")

    def keys() -> list[str]:
        grid = load_grid(study / "g.toml")
        return [p.key for p in plan(grid, PreparedInputs(grid.input)).points]

    before = keys()
    text = (study / "words.jsonl").read_text()
    (study / "words.jsonl").write_text(text.replace('"end_ms": 800.0', '"end_ms": 810.0'))
    after = keys()
    assert len(set(before)) == 2 and not set(before) & set(after)
