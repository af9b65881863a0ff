"""Hostile inputs: every one ends in exit 1 and one line naming file, line and field.

Each case writes small crafted files into a fresh folder, runs one command through
``main([...])`` and checks: exit code 1; exactly one stderr line, ``streamrag: error:``
then the expected text (the file, the 1-based line and the field, where the input has
lines and fields); no traceback; no file written under the output folder.
"""

from __future__ import annotations

import bz2
import json
import re
from dataclasses import dataclass, field

import pytest
from _inputs import files_under, one_error_line, record, run_cli

pytestmark = pytest.mark.hostile

TABLE_HEADER = (
    "interaction_id,domain,question_type,static_or_dynamic,n_words,n_passages,groundable,retrieved_gold,"
    "t_sc,phi_sc,t_suf,phi_suf,volatility"
)
GOOD_ROW = "a,finance,simple,static,6,5,True,True,3,0.5,2,0.3333,1"


def _table(*rows: str, header: str = TABLE_HEADER) -> str:
    return "\n".join([header, GOOD_ROW, *rows]) + "\n"


def _jsonl(*records: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


GOOD = record(0)
SCENARIO = 'name = "mine"\n[latency]\nL_ms = 600\n'
GRID = (
    'name = "g"\nkind = "simulate"\ninput = "generated:20:seed=1"\nscenario = "paper_rq3"\n[axes]\n"latency.L_ms" = [300, 600]\n'
)
TIMINGS_WORDS = [{"word": w, "start_ms": 300.0 * i, "end_ms": 300.0 * i + 200} for i, w in enumerate(GOOD["query"].split())]


@dataclass(frozen=True)
class Case:
    """Files to write (name → text or bytes), the command (``{tmp}``: the folder, ``{out}``:
    the output path) and a regex the error line must match in full."""

    files: dict[str, str | bytes]
    argv: list[str]
    expect: str
    marks: tuple[object, ...] = field(default=())


ANALYZE = ["analyze", "{tmp}/d.jsonl", "--out", "{out}", "--no-cache", "--jobs", "1"]
STATS = ["stats", "{tmp}/t.csv", "--out", "{out}"]
SIM_TABLE = ["simulate", "--table", "{tmp}/t.csv", "--scenario", "paper_rq3", "--out", "{out}"]
SIM_DATA = ["simulate", "{tmp}/d.jsonl", "--scenario", "paper_rq3", "--out", "{out}"]
D, T = r"\S*/d\.jsonl", r"\S*/t\.csv"

CASES: dict[str, Case] = {
    # --- CRAG data files (analyze, simulate, ingest) ---------------------------------
    "data-bad-json": Case({"d.jsonl": _jsonl(GOOD, '{"interaction_id": "q1", "query": ')}, ANALYZE,
                          rf"{D}:2: not valid JSON \(.*\)"),
    "data-missing-query": Case({"d.jsonl": _jsonl(GOOD, {"interaction_id": "q1", "split": 0})}, ANALYZE,
                               rf"{D}:2: field 'query': missing"),
    "data-empty-query": Case({"d.jsonl": _jsonl(GOOD, record(1, query="   "))}, ANALYZE, rf"{D}:2: field 'query': empty query"),
    "data-query-number": Case({"d.jsonl": _jsonl(GOOD, record(1, query=42))}, ANALYZE, rf"{D}:2: field 'query': .*string.*"),
    "data-query-too-long": Case({"d.jsonl": _jsonl(GOOD, record(1, query="w " * 10_001))}, ANALYZE,
                                rf"{D}:2: field 'query': 10001 words, more than the 10,000 streamrag takes \(MAX_QUERY_WORDS\)"),
    "data-pages-not-list": Case({"d.jsonl": _jsonl(GOOD, record(1, search_results="page"))}, ANALYZE,
                                rf"{D}:2: field 'search_results': expected a list of pages, got str"),
    "data-page-result-number": Case({"d.jsonl": _jsonl(GOOD, record(1, search_results=[{"page_result": 5}]))}, ANALYZE,
                                    rf"{D}:2: field 'search_results\.0\.page_result': .*string.*"),
    "data-missing-id": Case({"d.jsonl": _jsonl(GOOD, {k: v for k, v in record(1).items() if k != "interaction_id"})},
                            ANALYZE, rf"{D}:2: field 'interaction_id': missing"),
    "data-empty-id": Case({"d.jsonl": _jsonl(GOOD, record(1, interaction_id=""))}, ANALYZE,
                          rf"{D}:2: field 'interaction_id': .*at least 1 character.*"),
    "data-duplicate-id": Case({"d.jsonl": _jsonl(GOOD, record(1), record(0))}, ANALYZE,
                              rf"{D}:3: field 'interaction_id': 'q0' repeats line 1 \(one record per question\)"),
    "data-duplicate-id-simulate": Case({"d.jsonl": _jsonl(GOOD, record(0))}, SIM_DATA,
                                       rf"{D}:2: field 'interaction_id': 'q0' repeats line 1 \(one record per question\)"),
    "data-duplicate-id-ingest": Case({"d.jsonl": _jsonl(GOOD, record(0))}, ["ingest", "{tmp}/d.jsonl", "--no-cache"],
                                     rf"{D}:2: field 'interaction_id': 'q0' repeats line 1 \(one record per question\)"),
    "data-not-utf8": Case({"d.jsonl": _jsonl(GOOD).encode() + json.dumps(record(1)).replace("jane", "jan\xe9").encode("latin-1")
                           + b"\n"}, ANALYZE, rf"{D}:2: not valid UTF-8 \(byte \d+\)"),
    "data-array-not-object": Case({"d.jsonl": _jsonl(GOOD, "[1, 2]")}, ANALYZE, rf"{D}:2: expected a JSON object, got list"),
    "data-answer-object": Case({"d.jsonl": _jsonl(GOOD, record(1, answer={"a": 1}))}, ANALYZE,
                               rf"{D}:2: field 'answer': expected a string or a number, got dict"),
    "data-split-missing": Case({"d.jsonl": _jsonl(GOOD, {k: v for k, v in record(1).items() if k != "split"})}, ANALYZE,
                               rf"{D}:2: field 'split': missing; to read records without one, pass --split all \(a grid: input = \{{source = \"\.\.\.\", split = \"all\"\}}\)"),
    "data-nested-too-deep": Case({"d.jsonl": _jsonl(GOOD, "[" * 100_000 + "]" * 100_000)}, ANALYZE,
                                 rf"{D}:2: not valid JSON \(nested too deeply\)"),
    "data-truncated-bz2": Case({"d.jsonl.bz2": bz2.compress(_jsonl(*(record(i) for i in range(300))).encode())[:-200]},
                               ["analyze", "{tmp}/d.jsonl.bz2", "--out", "{out}", "--no-cache", "--jobs", "1"],
                               r"\S*/d\.jsonl\.bz2: compressed data is truncated or corrupt (after line \d+|before the first line) \(.*\)"),
    "data-missing-file": Case({}, ANALYZE, rf"{D}: no such file"),
    # --- stabilization tables (stats, simulate --table, sweep --input table:) --------
    "table-missing-column": Case({"t.csv": _table(header=TABLE_HEADER.replace(",t_sc", ""))[: 0] +
                                  TABLE_HEADER.replace(",t_sc", "") + "\n"}, STATS, rf"{T}:1: missing column 't_sc'"),
    "table-duplicate-column": Case({"t.csv": TABLE_HEADER + ",t_sc\n"}, STATS, rf"{T}:1: duplicate column 't_sc'"),
    "table-empty-file": Case({"t.csv": ""}, STATS, rf"{T}:1: empty file, expected a header row"),
    "table-t-sc-text": Case({"t.csv": _table("b,music,simple,static,8,5,False,False,x,0.5,,,0")}, STATS,
                            rf"{T}:3: column 't_sc': 'x' is not an integer"),
    "table-phi-inconsistent": Case({"t.csv": _table("b,music,simple,static,8,5,False,False,4,0.9,,,0")}, STATS,
                                   rf"{T}:3: column 'phi_sc': 0\.9 is inconsistent with t_sc/n_words = 4/8 = 0\.5 .*"),
    "table-t-suf-beyond-n": Case({"t.csv": _table("b,music,simple,static,8,5,True,True,4,0.5,9,1.125,0")}, STATS,
                                 rf"{T}:3: column 't_suf': 9 is outside 1\.\.n_words = 1\.\.8"),
    "table-bool-garbage": Case({"t.csv": _table("b,music,simple,static,8,5,maybe,False,4,0.5,,,0")}, STATS,
                               rf"{T}:3: column 'groundable': 'maybe' is not a boolean .*"),
    "table-rg-without-t-suf": Case({"t.csv": _table("b,music,simple,static,8,5,True,True,4,0.5,,,0")}, STATS,
                                   rf"{T}:3: column 't_suf': empty, but retrieved_gold is True .*"),
    "table-duplicate-id": Case({"t.csv": _table(GOOD_ROW)}, STATS,
                               rf"{T}:3: column 'interaction_id': 'a' repeats line 2 \(one row per question\)"),
    "table-short-row": Case({"t.csv": _table("b,music,simple")}, STATS, rf"{T}:3: expected 13 fields as in the header, found 3"),
    "table-absurd-n-words": Case({"t.csv": _table("b,music,simple,static,100000000,5,False,False,1,1e-08,,,0")}, SIM_TABLE,
                                 rf"{T}:3: column 'n_words': 100000000 is more than the 10,000 words streamrag takes .*"),
    "table-zero-n-words": Case({"t.csv": _table("b,music,simple,static,0,5,False,False,1,1,,,0")}, STATS,
                               rf"{T}:3: column 'n_words': 0 is not a positive word count"),
    "table-nan-phi": Case({"t.csv": _table("b,music,simple,static,8,5,False,False,4,nan,,,0")}, STATS,
                          rf"{T}:3: column 'phi_sc': 'nan' is not a finite number .*"),
    "table-negative-volatility": Case({"t.csv": _table("b,music,simple,static,8,5,False,False,4,0.5,,,-1")}, SIM_TABLE,
                                      rf"{T}:3: column 'volatility': -1 is outside 0\.\.n_words-1 = 0\.\.7"),
    "table-not-utf8": Case({"t.csv": _table().encode() + b"b,m\xe9,simple,static,8,5,False,False,4,0.5,,,0\n"}, STATS,
                           rf"{T}:3: not UTF-8 text \(byte \d+\)"),
    "table-bad-via-sweep": Case({"t.csv": _table("b,music,simple,static,8,5,False,False,x,0.5,,,0")},
                                ["sweep", "paper_rq2", "--input", "table:{tmp}/t.csv", "--out", "{out}"],
                                rf"{T}:3: column 't_sc': 'x' is not an integer"),
    # --- scenarios, overrides, grids --------------------------------------------------
    "scenario-toml-syntax": Case({"s.toml": 'name = "x"\n[latency\nL_ms = 600\n'},
                                 ["simulate", "--table", "{tmp}/t.csv", "--scenario", "{tmp}/s.toml", "--out", "{out}"],
                                 r"scenario \S*/s\.toml:2: invalid TOML: Expected ']' at the end of a table declaration \(column 9\)"),
    "scenario-unknown-key": Case({"s.toml": SCENARIO + '[trigger]\nkind = "interval"\nwordz = 3\n', "t.csv": _table()},
                                 ["simulate", "--table", "{tmp}/t.csv", "--scenario", "{tmp}/s.toml", "--out", "{out}"],
                                 r"scenario \S*/s\.toml: trigger\.wordz: Extra inputs are not permitted \(got 3\)"),
    "scenario-negative-latency": Case({"s.toml": 'name = "mine"\n[latency]\nL_ms = -5\n', "t.csv": _table()},
                                      ["simulate", "--table", "{tmp}/t.csv", "--scenario", "{tmp}/s.toml", "--out", "{out}"],
                                      r"scenario \S*/s\.toml: latency\.L_ms: Input should be greater than or equal to 0 \(got -5\)"),
    "override-unknown-key": Case({"t.csv": _table()}, [*SIM_TABLE, "--set", "latency.Lms=5"], r".*latency\.Lms.*"),
    "override-not-a-number": Case({"t.csv": _table()}, [*SIM_TABLE, "--set", "latency.L_ms=fast"], r".*latency\.L_ms.*"),
    "grid-toml-syntax": Case({"g.toml": GRID.replace("[axes]", "[axes")}, ["sweep", "{tmp}/g.toml", "--out", "{out}"],
                             r"grid \S*/g\.toml:5: invalid TOML: Expected ']' at the end of a table declaration \(column 6\)"),
    "grid-unknown-kind": Case({"g.toml": GRID.replace('kind = "simulate"', 'kind = "simulat"')},
                              ["sweep", "{tmp}/g.toml", "--out", "{out}"],
                              r"grid \S*/g\.toml: kind: Input should be 'simulate', 'streamable' or 'analyze' \(got 'simulat'\)"),
    "grid-empty-axis": Case({"g.toml": GRID.replace("[300, 600]", "[]")}, ["sweep", "{tmp}/g.toml", "--out", "{out}"],
                            r"grid \S*/g\.toml: axes\.latency\.L_ms: the list of values is empty"),
    "grid-unknown-setting": Case({"g.toml": GRID.replace('"latency.L_ms"', '"latency.L_mz"')},
                                 ["sweep", "{tmp}/g.toml", "--out", "{out}"], r"grid \S*/g\.toml: point 0 \(L_mz=300\): scenario paper_rq3: latency\.L_mz: Extra inputs are not permitted \(got 300\)"),
    # --- found by the harness (tests/hostile/test_fuzz_surfaces.py) --------------------------
    "scenario-latency-1e308": Case({"s.toml": 'name = "mine"\n[latency]\nL_ms = 1e308\n', "t.csv": _table()},
                                   ["simulate", "--table", "{tmp}/t.csv", "--scenario", "{tmp}/s.toml", "--out", "{out}"],
                                   r"scenario \S*/s\.toml: latency\.L_ms: Input should be less than or equal to 86400000 \(got 1e\+308\)"),
    "override-latency-1e308": Case({"t.csv": _table()}, [*SIM_TABLE, "--set", "latency.L_ms=1e308"],
                                   r".*latency\.L_ms: Input should be less than or equal to 86400000 \(got 1e\+308\)"),
    "grid-nested-too-deep": Case({"g.toml": GRID.replace('"generated:20:seed=1"', "[" * 3000 + "]" * 3000)},
                                 ["sweep", "{tmp}/g.toml", "--out", "{out}"],
                                 r"grid \S*/g\.toml: invalid TOML: arrays or tables nested too deeply"),
    "override-nested-too-deep": Case({"t.csv": _table()}, [*SIM_TABLE, "--set", "latency.L_ms=" + "[" * 3000 + "]" * 3000],
                                     r"--set latency\.L_ms: the value nests arrays or tables too deeply"),
    "table-int-beyond-int64": Case({"t.csv": _table("b,music,simple,static,8," + "1" + "0" * 40 + ",False,False,4,0.5,,,0")},
                                   SIM_TABLE, rf"{T}:3: column 'n_passages': 10{{40}} is beyond the 64-bit integers .*"),
    "transcript-time-1e308": Case({"w.jsonl": _jsonl({"word": "who", "t_ms": 1e308}, {"word": "founded", "t_ms": 1.0})},
                                  ["live", "--transcript", "{tmp}/w.jsonl", "--out", "{out}"],
                                  r"\S*/w\.jsonl:1: field 't_ms': 1e\+308 is more than 600000 ms into the turn \(ms, not µs\?\)"),
    "report-empty-results": Case({"run/results.csv": "", "run/summary.json": "{}"}, ["report", "{tmp}/run", "--out", "{out}/r.html"],
                                 r"\S*/run/results\.csv: cannot read the table: No columns to parse from file"),
    "transcript-nested-too-deep": Case({"w.jsonl": _jsonl({"word": "who", "t_ms": 1.0}, "[" * 100_000 + "]" * 100_000)},
                                       ["live", "--transcript", "{tmp}/w.jsonl", "--out", "{out}"],
                                       r"\S*/w\.jsonl:2: not valid JSON \(nested too deeply\)"),
    "hypotheses-nested-too-deep": Case({"d.jsonl": _jsonl(GOOD), "h.jsonl": _jsonl('{"interaction_id": "q0", "hypotheses": '
                                                                                   + "[" * 100_000 + "]" * 100_000 + "}")},
                                       [*ANALYZE, "--asr-hypotheses", "{tmp}/h.jsonl"],
                                       r"\S*/h\.jsonl:1: not valid JSON \(nested too deeply\)"),
    "override-words-per-second-1e308": Case({"t.csv": _table()}, [*SIM_TABLE, "--set", "input.delta_wps=1e308"],
                                            r".*input\.delta_wps: Input should be less than or equal to 100 \(got 1e\+308\)"),
    # --- id files ---------------------------------------------------------------------
    "ids-listed-twice": Case({"d.jsonl": _jsonl(GOOD, record(1)), "ids.txt": "q0\nq1 # again\nq0\n"},
                             [*ANALYZE, "--ids", "{tmp}/ids.txt"], r"\S*/ids\.txt:3: id 'q0' is listed twice \(first on line 1\)"),
    "ids-empty": Case({"d.jsonl": _jsonl(GOOD), "ids.txt": "# nothing\n\n"}, [*SIM_DATA, "--ids", "{tmp}/ids.txt"],
                      r"\S*/ids\.txt: the id file lists no interaction id"),
    "ids-unknown": Case({"t.csv": _table(), "ids.txt": "a\nzz\n"}, [*SIM_TABLE, "--ids", "{tmp}/ids.txt"],
                        r"\S*/ids\.txt:2: question 'zz' not in \S*/t\.csv"),
    # --- word timings ---------------------------------------------------------------
    "timings-end-before-start": Case(
        {"d.jsonl": _jsonl(GOOD), "w.jsonl": _jsonl({"interaction_id": "q0", "words": [
            {"word": "who", "start_ms": 500.0, "end_ms": 100.0}, *TIMINGS_WORDS[1:]]})},
        [*SIM_DATA, "--set", "select.population=all", "--set", "input.kind=timings", "--set", "input.path={tmp}/w.jsonl",
         "--set", "input.delta_wps=3"],
        r"\S*/w\.jsonl:1: field 'words\[0\]\.end_ms': 100 is before the word's start_ms 500"),
    "timings-duplicate-id": Case(
        {"d.jsonl": _jsonl(GOOD), "w.jsonl": _jsonl({"interaction_id": "q0", "words": TIMINGS_WORDS},
                                                    {"interaction_id": "q0", "words": TIMINGS_WORDS})},
        [*SIM_DATA, "--set", "select.population=all", "--set", "input.kind=timings", "--set", "input.path={tmp}/w.jsonl",
         "--set", "input.delta_wps=3"],
        r"\S*/w\.jsonl:2: field 'interaction_id': .*"),
    # --- calibration measurements and published latency files ------------------------
    "calibration-missing-column": Case({"m.csv": "timestamp,stage\n2025-01-01T00:00:00Z,L\n"},
                                       ["calibrate", "{tmp}/m.csv", "--out", "{out}/p.toml"], r"\S*/m\.csv:1: .*duration_ms.*"),
    "calibration-negative-duration": Case({"m.csv": "timestamp,stage,duration_ms\n2025-01-01T00:00:00Z,L,-3\n"},
                                          ["calibrate", "{tmp}/m.csv", "--out", "{out}/p.toml"],
                                          r"\S*/m\.csv:2: .*duration_ms.*"),
    "calibration-text-duration": Case({"m.csv": "timestamp,stage,duration_ms\n2025-01-01T00:00:00Z,L,slow\n"},
                                      ["calibrate", "{tmp}/m.csv", "--out", "{out}/p.toml"], r"\S*/m\.csv:2: .*duration_ms.*"),
}  # fmt: skip


def test_the_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input_is_one_line_exit_1_and_no_output(tmp_path, capsys, name) -> None:
    case = CASES[name]
    for file_name, content in case.files.items():
        target = tmp_path / file_name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    if "t.csv" not in case.files and any("{tmp}/t.csv" in a for a in case.argv):
        (tmp_path / "t.csv").write_text(_table(), encoding="utf-8")
    out = tmp_path / "out"
    argv = [a.format(tmp=tmp_path, out=out) for a in case.argv]
    code, _, err = run_cli(argv, capsys)
    assert code == 1, err
    line = one_error_line(err)
    assert re.fullmatch(case.expect, line), line
    assert files_under(out) == []
    assert not list(tmp_path.rglob("*.tmp"))  # no temporary file left behind either
