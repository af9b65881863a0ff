"""The hostile catalogue, part 2 (issue 33): evidence bound to its table, strict types,
paths relative to the file naming them, and silent meanings made loud.

Every case ends in one of two ways: a clear one-line error (exit 1, file, line, field and
what to do) or — where the run is legitimate but suspicious — a run that completes with a
warning line; never a traceback, never a silently wrong result. The cases that fix a
defect failed on the code before the fix (said per test).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _inputs import files_under, one_error_line, record, run_cli, write_jsonl
from _scenariokeys import BASE, LEAVES

from streamrag.base.errors import ConfigError
from streamrag.simulator.scenario import load_scenario

pytestmark = pytest.mark.hostile


def _summary(run: Path) -> dict[str, Any]:
    return json.loads((run / "summary.json").read_text(encoding="utf-8"))


def _results(run: Path) -> pd.DataFrame:
    return pd.read_csv(run / "results.csv")


def _simulate(capsys, table: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(["simulate", "--table", table, "--scenario", "paper_rq3", "--out", out, *extra], capsys)


# --- evidence bound to its table ---------------------------------------------------------


def test_two_generated_tables_in_one_folder_keep_their_own_evidence(tmp_path, capsys) -> None:
    # Before: both wrote prefixes.parquet; A's replay then stopped ("no prefixes for
    # question 'synthetic-0-0000000'") or, ids overlapping, read B's evidence.
    a, b = tmp_path / "A.csv", tmp_path / "B.csv"
    assert run_cli(["generate", a, "--table", "--questions", "40", "--seed", "0"], capsys)[0] == 0
    assert run_cli(["generate", b, "--table", "--questions", "60", "--seed", "1"], capsys)[0] == 0
    assert (tmp_path / "A.prefixes.parquet").is_file() and (tmp_path / "B.prefixes.parquet").is_file()
    assert not (tmp_path / "prefixes.parquet").exists()
    code, _, err = _simulate(capsys, a, tmp_path / "ra")
    assert code == 0, err
    assert _summary(tmp_path / "ra")["reflector_model"] == "heuristic on per-prefix evidence"
    # The same as naming A's evidence explicitly: it is the one found.
    assert _simulate(capsys, a, tmp_path / "rx", "--evidence", str(tmp_path / "A.prefixes.parquet"))[0] == 0
    assert (tmp_path / "ra" / "results.csv").read_bytes() == (tmp_path / "rx" / "results.csv").read_bytes()


def test_same_ids_other_content_is_refused_not_replayed(tmp_path, capsys) -> None:
    # Two tables whose ids overlap (same seed, other size): before, the 40-row table was
    # replayed silently against the 80-row table's prefixes.parquet.
    a, b = tmp_path / "A.csv", tmp_path / "B.csv"
    assert run_cli(["generate", a, "--table", "--questions", "40", "--seed", "0"], capsys)[0] == 0
    assert run_cli(["generate", b, "--table", "--questions", "80", "--seed", "0"], capsys)[0] == 0
    (tmp_path / "B.prefixes.parquet").rename(tmp_path / "prefixes.parquet")  # the old layout, B's content
    (tmp_path / "A.prefixes.parquet").unlink()
    code, _, err = _simulate(capsys, a, tmp_path / "o")
    assert code == 1
    line = one_error_line(err)
    assert line.startswith(f"{tmp_path / 'prefixes.parquet'}: the per-prefix evidence of another table than {a}")
    assert "--no-evidence" in line and files_under(tmp_path / "o") == []


def test_a_table_edited_after_its_evidence_is_refused(tmp_path, capsys) -> None:
    table = tmp_path / "T.csv"
    assert run_cli(["generate", table, "--table", "--questions", "30"], capsys)[0] == 0
    rows = table.read_text().splitlines()
    table.write_text("\n".join(rows[:-1]) + "\n")  # one question fewer: another table
    code, _, err = _simulate(capsys, table, tmp_path / "o")
    assert code == 1 and "T.prefixes.parquet: the per-prefix evidence of another table than" in one_error_line(err)
    # Given explicitly, it is checked question by question — and every question is in it.
    assert _simulate(capsys, table, tmp_path / "o2", "--evidence", str(tmp_path / "T.prefixes.parquet"))[0] == 0
    assert _simulate(capsys, table, tmp_path / "o3", "--no-evidence")[0] == 0


def test_old_layout_evidence_without_a_digest_is_still_read_when_it_matches(tmp_path, capsys) -> None:
    import pyarrow.parquet as pq

    table = tmp_path / "T.csv"
    assert run_cli(["generate", table, "--table", "--questions", "30"], capsys)[0] == 0
    named = tmp_path / "T.prefixes.parquet"
    pq.write_table(pq.read_table(named).replace_schema_metadata({}), tmp_path / "prefixes.parquet")  # no digest
    assert _simulate(capsys, table, tmp_path / "new")[0] == 0
    named.unlink()
    assert _simulate(capsys, table, tmp_path / "old")[0] == 0
    assert _summary(tmp_path / "old")["reflector_model"] == "heuristic on per-prefix evidence"
    assert (tmp_path / "old" / "results.csv").read_bytes() == (tmp_path / "new" / "results.csv").read_bytes()


def test_old_layout_evidence_of_other_questions_says_so(tmp_path, capsys) -> None:
    import pyarrow.parquet as pq

    a, b = tmp_path / "A.csv", tmp_path / "B.csv"
    assert run_cli(["generate", a, "--table", "--questions", "20", "--seed", "3"], capsys)[0] == 0
    assert run_cli(["generate", b, "--table", "--questions", "20", "--seed", "4"], capsys)[0] == 0
    pq.write_table(pq.read_table(tmp_path / "B.prefixes.parquet").replace_schema_metadata({}), tmp_path / "prefixes.parquet")
    (tmp_path / "A.prefixes.parquet").unlink()
    code, _, err = _simulate(capsys, a, tmp_path / "o")
    assert code == 1
    line = one_error_line(err)
    assert "prefixes.parquet: no prefixes for question 'synthetic-3-0000000' of the table" in line and "--no-evidence" in line


def test_sweep_over_a_table_finds_its_named_evidence(tmp_path) -> None:
    from streamrag.cli import main
    from streamrag.sweep.inputs import PreparedInputs, parse_input

    table = tmp_path / "T.csv"
    assert main(["generate", str(table), "--table", "--questions", "12"]) == 0
    spec = parse_input(f"table:{table}", base_dir=tmp_path)
    assert spec.has_evidence
    assert PreparedInputs(spec).questions().evidence_source == "per-prefix evidence"


# --- strict types: a boolean is never a number --------------------------------------------


def _value_at(model: Any, path: str) -> Any:
    for part in path.split("."):
        model = model.get(part) if isinstance(model, dict) else getattr(model, part)
    return model


@pytest.mark.parametrize(("path", "select"), LEAVES, ids=[".".join((p, *s)) for p, s in LEAVES])
def test_true_is_kept_as_true_or_refused_never_a_number(path: str, select: tuple[str, ...]) -> None:
    # Before: every int and float leaf took `true` as 1 (`trigger.words = true` ran
    # every word) and `false` as 0.
    try:
        rs = load_scenario(BASE, [*select, f"{path}=true"])
    except ConfigError as exc:
        message = str(exc)
    else:
        message = ""
    if message:
        assert message.startswith(f"scenario {BASE}: "), message
        return
    value = _value_at(rs.scenario, path)
    assert value is True, value  # a boolean setting (data.entity_predictor)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[trigger]\nkind = "interval"\nwords = true\n', "trigger.words"),
        ("[latency]\nL_ms = false\n", "latency.L_ms"),
        ("[data]\nk = true\n", "data.k"),
        ('[input]\nkind = "uniform"\ndelta_wps = true\n', "input.delta_wps"),
        ("[select]\nlimit = true\n", "select.limit"),
        ('[latency.stages.L]\nkind = "constant"\nms = true\n', "latency.stages.L.ms"),
        ('[resources.tool]\nkind = "servers"\nservers = true\n', "resources.tool.servers"),
    ],
)
def test_a_boolean_in_a_scenario_file_is_one_line_naming_the_key(tmp_path, capsys, text: str, key: str) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text('name = "s"\n' + text, encoding="utf-8")
    assert run_cli(["generate", tmp_path / "T.csv", "--table", "--questions", "5"], capsys)[0] == 0
    code, _, err = _simulate(capsys, tmp_path / "T.csv", tmp_path / "o", "--scenario", str(scenario))
    assert code == 1
    assert one_error_line(err).startswith(f"scenario {scenario}: {key}: Input should be a number, not a boolean (got ")


def test_a_boolean_on_a_grid_axis_is_refused(tmp_path, capsys) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text('name = "g"\nkind = "simulate"\ninput = "generated:10:seed=1"\nscenario = "paper_rq3"\n'
                    '[axes]\n"trigger.words" = [3, true]\n', encoding="utf-8")  # fmt: skip
    code, _, err = run_cli(["sweep", grid, "--out", tmp_path / "o"], capsys)
    assert code == 1
    line = one_error_line(err)
    assert "trigger.words: Input should be a number, not a boolean (got True)" in line


def test_a_boolean_in_a_latency_profile_is_refused(tmp_path, capsys) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text('name = "p"\n[stages.L]\nkind = "constant"\nms = true\n', encoding="utf-8")
    assert run_cli(["generate", tmp_path / "T.csv", "--table", "--questions", "5"], capsys)[0] == 0
    code, _, err = _simulate(capsys, tmp_path / "T.csv", tmp_path / "o", "--set", f"latency.profile={profile}",
                             "--set", "latency.L_ms=600")  # fmt: skip
    assert code == 1 and "not a boolean" in one_error_line(err)


def test_a_boolean_split_in_a_crag_record_is_refused(tmp_path, capsys) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), record(1, split=True)])
    code, _, err = run_cli(["analyze", data, "--out", tmp_path / "o", "--no-cache", "--jobs", "1"], capsys)
    assert code == 1 and one_error_line(err).startswith(f"{data}:2: field 'split': ")


def _read(kind: str, path: Path) -> object:
    if kind == "hypotheses":
        from streamrag.data.human.hypotheses_file import read_hypotheses

        return read_hypotheses(path)
    if kind == "timings":
        from streamrag.engine.timings import read_word_timings

        return read_word_timings(path)
    if kind == "durations":
        from streamrag.calibration.measurements import read_measurements

        return read_measurements(path)
    if kind == "arrivals":
        from streamrag.simulator.load.workload import read_arrival_file

        return read_arrival_file(path)
    from streamrag.analysis.table import read_table_records

    return read_table_records(path)


TABLE_HEAD = "interaction_id,domain,question_type,static_or_dynamic,n_words,n_passages,groundable,retrieved_gold,t_sc,phi_sc,t_suf,phi_suf,volatility\n"


@pytest.mark.parametrize(
    ("kind", "name", "text", "message"),
    [
        ("hypotheses", "h.jsonl", json.dumps({"interaction_id": "q0", "hypotheses": [{"t_ms": True, "text": "who"}]}),
         "h.jsonl:1: field 'hypotheses[0].t_ms': expected a finite number of ms ≥ 0, got True"),
        ("timings", "w.jsonl", json.dumps({"interaction_id": "q0", "words": [{"word": "who", "start_ms": True, "end_ms": 200}]}),
         "w.jsonl:1: field 'words[0].start_ms': expected a finite number of ms, got True"),
        ("durations", "m.jsonl", json.dumps({"stage": "L", "duration_ms": True}),
         "m.jsonl:1: field 'duration_ms': expected a number of ms, got bool True"),
        ("arrivals", "a.txt", "0\ntrue\n", "a.txt:2: arrival_s: 'true' is not a time in seconds ≥ 0"),
        ("table", "t.csv", TABLE_HEAD + "a,finance,simple,static,True,5,True,True,3,0.5,2,0.3333,1",
         "t.csv:2: column 'n_words': 'True' is not an integer"),
    ],
    ids=["hypotheses-t_ms", "timings-start_ms", "durations-json", "arrivals", "table-n_words"],
)  # fmt: skip
def test_a_boolean_in_a_data_file_is_refused_with_its_line(tmp_path, kind: str, name: str, text: str, message: str) -> None:
    from streamrag.base.errors import InputError

    path = tmp_path / name
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        _read(kind, path)
    assert str(caught.value) == f"{tmp_path}/{message}"


# --- calibration: absurd values and mixed units ---------------------------------------------


def _durations(path: Path, values: list[float | str]) -> Path:
    path.write_text("stage,duration_ms\n" + "".join(f"L,{v}\n" for v in values), encoding="utf-8")
    return path


@pytest.mark.parametrize("value", ["1e308", "1.7976931348623157e308", "86400001", "1e12"])
def test_a_duration_beyond_a_day_is_one_line_not_a_traceback(tmp_path, capsys, value: str) -> None:
    # Before: 1e308 ms went into the fits and scipy's root finder raised on NaN.
    m = _durations(tmp_path / "m.csv", [500 + i for i in range(40)] + [value] * 5)
    code, _, err = run_cli(["calibrate", m, "--out", tmp_path / "o" / "p.toml"], capsys)
    assert code == 1
    assert one_error_line(err) == (
        f"{m}:42: field 'duration_ms': {value!r} ms is more than a day (86,400,000 ms): no stage latency; check the unit (milliseconds)"
    )
    assert files_under(tmp_path / "o") == []


def test_a_duration_beyond_a_day_in_json_lines_is_refused(tmp_path, capsys) -> None:
    m = tmp_path / "m.jsonl"
    m.write_text("".join(json.dumps({"stage": "L", "duration_ms": v}) + "\n" for v in [500.0] * 30 + [1e308]))
    code, _, err = run_cli(["calibrate", m, "--out", tmp_path / "p.toml"], capsys)
    assert code == 1 and one_error_line(err).startswith(f"{m}:31: field 'duration_ms': 1e+308 ms is more than a day")


def test_a_mix_of_seconds_and_milliseconds_is_fitted_with_a_warning(tmp_path, capsys) -> None:
    # Before: fitted as one distribution without a hint.
    values = [0.4 + 0.01 * i for i in range(30)] + [400 + 7 * i for i in range(30)]
    m = _durations(tmp_path / "m.csv", values)
    out = tmp_path / "p.toml"
    code, _, err = run_cli(["calibrate", m, "--out", out], capsys)
    assert code == 0
    warning = [line for line in err.splitlines() if "a mix of seconds and milliseconds?" in line]
    assert len(warning) == 1 and warning[0].startswith("streamrag: warning: stage 'L': the durations form two groups")
    assert "30 of 0.4–0.69 ms, 30 of 400–603 ms" in warning[0]
    assert "a mix of seconds and milliseconds?" in tomllib.loads(out.read_text())["provenance"]["stages"]["L"]["warning"]


@pytest.mark.parametrize(
    "values",
    [
        [400 + 7 * i for i in range(60)],  # one group
        [40 + i for i in range(30)] + [2000 + 10 * i for i in range(30)],  # a 45× gap: a cache hit and a miss
        [0.5] * 2 + [500 + i for i in range(58)],  # two stray values are not a group
    ],
    ids=["one-group", "45x-gap", "two-strays"],
)
def test_no_unit_warning_without_two_groups_far_apart(tmp_path, capsys, values) -> None:
    m = _durations(tmp_path / "m.csv", values)
    assert run_cli(["calibrate", m, "--out", tmp_path / "p.toml"], capsys)[0] == 0
    assert "a mix of seconds" not in capsys.readouterr().err


# --- BEIR: a repeated query id stops the run ------------------------------------------------


def _beir(folder: Path, queries: str) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "d0", "text": "acme robotics boston"}\n{"_id": "d1", "text": "pizza"}\n')
    (folder / "queries.jsonl").write_text(queries)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t1\n")
    return folder


@pytest.mark.parametrize(
    ("queries", "line"),
    [
        ('{"_id": "q1", "text": "acme robotics"}\n{"_id": "q1", "text": "pizza"}\n', 2),
        (
            '{"_id": "q9", "text": "x"}\n{"_id": "q1", "text": "acme"}\n{"_id": "q9", "text": "y"}\n',
            3,
        ),  # not judged, still one per id
    ],
    ids=["judged", "unjudged"],
)
def test_a_repeated_beir_query_id_is_one_line(tmp_path, capsys, queries: str, line: int) -> None:
    # Before: the second q1 was dropped silently (the README says duplicates stop every command).
    folder = _beir(tmp_path / "b", queries)
    first = 1
    code, _, err = run_cli(["analyze", "--scope", "global", "--corpus", folder, "--out", tmp_path / "o", "--no-figures",
                            "--index-dir", tmp_path / "i"], capsys)  # fmt: skip
    assert code == 1
    qid = "q1" if line == 2 else "q9"
    assert one_error_line(err) == (
        f"{folder / 'queries.jsonl'}:{line}: field '_id': query id {qid!r} repeats line {first} (one query per id)"
    )


# --- ASR hypotheses: one meaning per column, and an unrelated transcript ----------------------


def _hyp(qid: str, *texts: str) -> dict[str, Any]:
    return {"interaction_id": qid, "hypotheses": [{"t_ms": 400.0 * (i + 1), "text": t} for i, t in enumerate(texts)]}


NINE = "who founded acme robotics in boston and when exactly"


def test_one_recorded_hypothesis_of_nine_words_keeps_n_words_and_replays(tmp_path, capsys) -> None:
    # n_words counts the question's words, n_hypotheses the input events (fixed on main);
    # before this change the table it wrote could not be read back: phi_sc = 1/1 was
    # checked against t_sc/n_words = 1/9.
    data = write_jsonl(tmp_path / "d.jsonl", [record(0, query=NINE)])
    write_jsonl(tmp_path / "h.jsonl", [_hyp("q0", NINE)])
    out = tmp_path / "an"
    argv = ["analyze", data, "--asr-hypotheses", tmp_path / "h.jsonl", "--out", out, "--no-cache", "--jobs", "1", "--no-figures"]
    assert run_cli(argv, capsys)[0] == 0
    row = pd.read_csv(out / "stabilization.csv").iloc[0]
    assert (row["n_words"], row["n_hypotheses"], row["t_sc"], row["phi_sc"]) == (9, 1, 1, 1.0)
    code, _, err = _simulate(capsys, out / "stabilization.csv", tmp_path / "run")
    assert code == 0, err
    assert int(_results(tmp_path / "run")["n_words"].iloc[0]) in (1, 9)
    assert run_cli(["stats", out / "stabilization.csv", "--out", tmp_path / "st"], capsys)[0] == 0


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("phi_sc", "0.5", "column 'phi_sc': 0.5 is inconsistent with t_sc/n_hypotheses = 1/1 = 1"),
        ("t_sc", "2", "column 't_sc': 2 is outside 1..n_hypotheses = 1..1"),
        ("n_hypotheses", "0", "column 'n_hypotheses': 0 is not a positive count of hypotheses"),
    ],
)
def test_an_asr_table_is_checked_against_its_hypotheses(tmp_path, capsys, column: str, value: str, message: str) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", [record(0, query=NINE)])
    write_jsonl(tmp_path / "h.jsonl", [_hyp("q0", NINE)])
    out = tmp_path / "an"
    argv = ["analyze", data, "--asr-hypotheses", tmp_path / "h.jsonl", "--out", out, "--no-cache", "--jobs", "1", "--no-figures"]
    assert run_cli(argv, capsys)[0] == 0
    frame = pd.read_csv(out / "stabilization.csv", dtype=str, keep_default_na=False)
    frame.loc[0, column] = value
    bad = tmp_path / "bad.csv"
    frame.to_csv(bad, index=False)
    code, _, err = run_cli(["stats", bad, "--out", tmp_path / "st"], capsys)
    assert code == 1 and one_error_line(err).startswith(f"{bad}:2: {message}")


@pytest.mark.parametrize(
    ("final", "warned"),
    [("pizza recipes for dinner", True), ("", True), ("who founded acme robots in boston", False), (NINE, False)],
    ids=["unrelated", "empty-words", "one-word-misheard", "exact"],
)
def test_a_final_transcript_unrelated_to_the_question_is_warned(tmp_path, capsys, final: str, warned: bool) -> None:
    # Before: accepted without a word.
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), record(1, query=NINE)])
    hyps = [_hyp("q0", "who founded", "who founded acme robotics in boston"), _hyp("q1", "who", final or "um")]
    write_jsonl(tmp_path / "h.jsonl", hyps)
    argv = ["analyze", data, "--asr-hypotheses", tmp_path / "h.jsonl", "--out", tmp_path / "an", "--no-cache", "--jobs", "1",
            "--no-figures"]  # fmt: skip
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    lines = [line for line in err.splitlines() if "is it this question's transcript?" in line]
    assert len(lines) == (1 if warned else 0), err
    if warned:
        assert "question 'q1': its final hypothesis shares" in lines[0] and "'q0'" not in lines[0]


# --- what a table replay records ----------------------------------------------------------


def test_a_table_replay_records_the_tables_split_not_the_scenarios(tmp_path, capsys) -> None:
    # Before: summary.json said data.split = 0 (the scenario's) for a table of split 1.
    data = write_jsonl(tmp_path / "d.jsonl", [record(0, split=1), record(1, split=1), record(2, split=0)])
    out = tmp_path / "an"
    assert run_cli(["analyze", data, "--split", "1", "--out", out, "--no-cache", "--jobs", "1", "--no-figures"], capsys)[0] == 0
    assert _simulate(capsys, out / "stabilization.csv", tmp_path / "run")[0] == 0
    assert _summary(tmp_path / "run")["parameters"]["scenario"]["data"]["split"] == 1
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["scenario"]["scenario"]["data"]["split"] == 1
    # A generated table has no split: none is claimed.
    assert run_cli(["generate", tmp_path / "G.csv", "--table", "--questions", "10"], capsys)[0] == 0
    assert _simulate(capsys, tmp_path / "G.csv", tmp_path / "g")[0] == 0
    assert _summary(tmp_path / "g")["parameters"]["scenario"]["data"]["split"] is None


# --- paths relative to the file that names them -------------------------------------------


def test_a_relative_arrivals_path_resolves_against_the_scenario_file(tmp_path, capsys, monkeypatch) -> None:
    # Before: `load.arrivals.path = "arrivals.txt"` was read from the working folder while
    # `latency.profile` was read beside the scenario.
    folder = tmp_path / "scenarios"
    folder.mkdir()
    (folder / "arrivals.txt").write_text("0\n0.5\n1.0\n1.5\n", encoding="utf-8")
    scenario = folder / "s.toml"
    scenario.write_text('name = "s"\n[latency]\nL_ms = 600\n[select]\npopulation = "all"\n'
                        '[resources.tool]\nkind = "servers"\nservers = 2\n'
                        '[load]\nreference_sessions = 0\n[load.arrivals]\nkind = "file"\npath = "arrivals.txt"\n',
                        encoding="utf-8")  # fmt: skip
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    rs = load_scenario(str(scenario))
    assert rs.scenario.load is not None and rs.scenario.load.arrivals.path == str(folder / "arrivals.txt")  # type: ignore[union-attr]
    # --set stays relative to the working folder, as every --set path.
    (elsewhere / "mine.txt").write_text("0\n1\n", encoding="utf-8")
    rs = load_scenario(str(scenario), ["load.arrivals.path=mine.txt"])
    assert rs.scenario.load.arrivals.path == str(elsewhere / "mine.txt")  # type: ignore[union-attr]


def test_a_relative_hypotheses_path_resolves_against_the_scenario_file(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    scenario = folder / "s.toml"
    scenario.write_text('name = "s"\n[data.asr]\nkind = "file"\npath = "h.jsonl"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert load_scenario(str(scenario)).scenario.data.asr.path == str(folder / "h.jsonl")  # type: ignore[union-attr]


# --- simulate DATA and its chunk cache --------------------------------------------------


def test_simulate_data_writes_the_cache_it_is_given_and_none_with_no_cache(tmp_path, capsys, monkeypatch) -> None:
    # Before: simulate DATA took no --cache and always wrote the default cache.
    default = tmp_path / "default-cache"
    monkeypatch.setenv("STREAMRAG_CACHE", str(default))
    data = write_jsonl(tmp_path / "d.jsonl", [record(0), record(1)])
    cache = tmp_path / "mine"
    argv = ["simulate", data, "--scenario", "paper_rq3", "--set", "select.population=all"]
    assert run_cli([*argv, "--out", tmp_path / "a", "--cache", cache], capsys)[0] == 0
    assert files_under(cache) and not default.exists()
    assert run_cli([*argv, "--out", tmp_path / "b", "--no-cache"], capsys)[0] == 0
    assert not default.exists()
    assert (tmp_path / "a" / "results.csv").read_bytes() == (tmp_path / "b" / "results.csv").read_bytes()
    code, _, err = run_cli(["simulate", "--table", tmp_path / "x.csv", "--scenario", "paper_rq3", "--out", tmp_path / "c",
                            "--no-cache"], capsys)  # fmt: skip
    assert (
        code == 1
        and one_error_line(err) == "--cache and --no-cache apply to DATA (the chunk cache); a table replay reads no pages"
    )
