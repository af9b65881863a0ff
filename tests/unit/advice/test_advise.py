"""``streamrag advise``: one situation in, one row per policy and a recommendation out.

Its numbers are the individual commands' at the same settings (the frontier's points and
operating points, simulate's users, ``predict``'s break-even), its scenario file runs in
the Speculator, it reports the G/F range when G and F are not given, and it refuses to
recommend a policy that needs per-prefix rankings the user's tool cannot give.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path

import pandas as pd
import pytest
from _inputs import one_error_line, run_cli

import streamrag
from streamrag.base.errors import ConfigError
from streamrag.cli import main

SITUATION = ["--tool-p50-ms", "800", "--tool-p90-ms", "2000", "--turns-per-s", "2", "--tool-workers", "4"]
FAST = ["--load-sessions", "300"]  # the load simulation's sessions: fewer than the default, same code
POLICIES = [
    "interval_words",
    "interval_seconds",
    "replace",
    "stable",
    "hedge",
    "every_word",
    "learned_tool",
    "learned_local",
    "learned_rearm_tool",
    "learned_rearm_local",
]
"""The built-in frontier grid's policies less the null (``none``) and the bound (``oracle``),
each learned one twice: its rankings searches on the tool, or a local index's."""
RANKING_POLICIES = {"replace", "stable", *(p for p in POLICIES if p.startswith("learned"))}
GIVEN = {"tool_p50_ms": 800, "tool_p90_ms": 2000, "G_ms": 590, "F_ms": 2520, "turns_per_s": 2, "tool_workers": 4}
"""A situation with G and F given (one end)."""


def _main(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["--quiet", *argv])
    return code, out.getvalue()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """advise on the demo set, G and F not given (so a range), only the tool to rank with."""
    out = tmp_path_factory.mktemp("advise") / "demo"
    code, stdout = _main(["advise", *SITUATION, *FAST, "--input", "demo", "--out", str(out)])
    assert code == 0
    return out, stdout


def _advice(out: Path) -> dict:
    return json.loads((out / "advice.json").read_text(encoding="utf-8"))


def test_advise_on_the_demo_set_writes_one_row_per_policy_and_end(demo: tuple[Path, str]) -> None:
    out, stdout = demo
    for name in ("advice.html", "advice.json", "advice.csv", "advice.parquet", "scenario.toml", "load_scenario.toml"):
        assert (out / name).is_file(), name
    rows = pd.read_csv(out / "advice.csv")
    assert pd.read_parquet(out / "advice.parquet").shape == rows.shape
    for end in ("paper-rq3", "arora2025"):
        assert rows[rows["end"] == end]["policy"].tolist() == POLICIES
    data = _advice(out)
    assert data["situation"]["words_per_s"] == 2.5 and data["situation"]["max_extra_calls"] == 1.0  # defaults echoed
    assert data["answer"] in stdout and "extra tool calls per turn" in data["answer"]
    assert "<script>" in (out / "advice.html").read_text(encoding="utf-8")  # the report's one self-contained page
    with_point = rows[rows["no_point"].isna()]
    assert (with_point["extra_calls.mean"] <= 1.0).all()
    assert (
        with_point["answer_ms_difference.median"] == with_point["baseline_ms.median"] - with_point["streaming_ms.median"]
    ).all()
    assert rows[rows["policy"] == "every_word"]["no_point"].str.startswith("no point within ≤ 1 extra calls").all()


def test_the_GF_range_is_reported_when_G_and_F_are_not_given(demo: tuple[Path, str]) -> None:
    out, stdout = demo
    data = _advice(out)
    ends = data["assumptions"]["ends"]
    assert [e["end"] for e in ends] == ["paper-rq3", "arora2025"]
    assert all("not given" in e["assumes"] for e in ends)
    assert "constant 590 ms" in ends[0]["assumes"] and "log-normal p50 590 / p90 850 ms" in ends[1]["assumes"]
    rec = data["recommendation"]
    assert isinstance(rec["holds_across_G_F_range"], bool) and set(rec["picks_by_end"]) == {"paper-rq3", "arora2025"}
    assert "G/F range" in data["answer"] and "end arora2025: G and F not given" in stdout


def test_with_only_the_tool_a_ranking_per_word_is_a_search_charged_and_a_local_index_is_refused(demo: tuple[Path, str]) -> None:
    data = _advice(demo[0])
    rec = data["recommendation"]
    assert rec["policy"] not in RANKING_POLICIES
    for row in data["rows"]:
        if row["policy"].endswith("_local"):
            assert row["runs_on"] == "local index" and "local index, 0 ms per word" in row["needs"]
            assert "--ranker tool" in row["not_deployable"] and "_tool twin" in row["verdict"]
        elif row["policy"].endswith("_tool"):  # deployable with only the tool: its searches are counted
            assert row["runs_on"] == "tool" and row["not_deployable"] == ""
            assert "search per word on the tool, counted" in row["needs"]
            cheapest = float(row["no_point"].split("makes ")[1].rstrip(")"))
            assert cheapest > 5  # a search per word: the demo's questions have about ten words
        elif row["policy"] in ("stable", "replace"):
            assert row["runs_on"] == "replay only" and row["not_deployable"]
        else:
            assert row["runs_on"] == "tool" and row["not_deployable"] == "" and row["needs"] == ""
    assert "_tool twin" in rec["why_others_lost"]["learned_local"]
    assert "no point within" in rec["why_others_lost"]["learned_tool"]


def test_a_row_equals_the_frontier_and_predict_at_the_same_point(demo: tuple[Path, str], tmp_path: Path, capsys) -> None:
    out, _ = demo
    data = _advice(out)
    run = out / "runs" / "paper-rq3"
    again = tmp_path / "frontier"
    assert run_cli(["frontier", run / "grid.toml", "--out", again, "--seed", "0"], capsys)[0] == 0
    points = pd.read_csv(again / "frontier" / "frontier.csv").set_index("label")
    operating = pd.read_csv(again / "frontier" / "operating_points.csv")
    rows = [r for r in data["rows"] if r["end"] == "paper-rq3" and r["no_point"] == ""]
    assert rows
    for row in rows:
        point = points.loc[row["label"]]
        for name in ("extra_calls", "saved_ms"):
            for stat in ("mean", "ci_low", "ci_high"):
                assert row[f"{name}.{stat}"] == point[f"{name}.{stat}"], (row["label"], name, stat)
        for name in ("misfire", "negative"):
            for stat in ("rate", "ci_low", "ci_high"):
                assert row[f"{name}.{stat}"] == point[f"{name}.{stat}"], (row["label"], name, stat)
        # the budget of 1 extra call is one of the frontier's: its operating point is the row's point
        op = operating[(operating["policy"] == row["policy"]) & (operating["at"] == "budget") & (operating["level"] == 1.0)]
        assert op["label"].tolist() == [row["label"]] and op["saved_ms.mean"].tolist() == [row["saved_ms.mean"]]
        summary = json.loads((again / "points" / row["key"] / "summary.json").read_text(encoding="utf-8"))  # same key
        assert (row["baseline_ms.median"], row["streaming_ms.p90"]) == (
            summary["baseline_ms"]["median"],
            summary["streaming_ms"]["p90"],
        )
    rec = next(r for r in rows if r["policy"] == data["recommendation"]["policy"])
    predicted = tmp_path / "predict.json"
    assert run_cli(["predict", "demo", "--scenario", out / "load_scenario.toml", "--out", predicted], capsys)[0] == 0
    crossings = json.loads(predicted.read_text(encoding="utf-8"))["break_even"]["crossings"]
    for name in ("median_saved", "p90"):
        for stat, theirs in (("offered_load", "offered_load"), ("low", "low"), ("high", "high"), ("turns_per_s", "turns_per_s")):
            assert rec[f"break_even.{name}.{stat}"] == crossings[name][theirs], (name, stat)
        assert rec[f"break_even.{name}.turns_per_s_high"] == crossings[name]["turns_per_s_high"]


def test_the_scenario_file_runs_the_recommended_policy_in_the_speculator(demo: tuple[Path, str]) -> None:
    from streamrag.engine.clock import RealClock
    from streamrag.live.backends import BM25Tool

    out, _ = demo
    data = _advice(out)
    row = next(r for r in data["rows"] if r["end"] == "paper-rq3" and r["policy"] == data["recommendation"]["policy"])
    point = json.loads((out / "runs" / "paper-rq3" / "points" / row["key"] / "point.json").read_text(encoding="utf-8"))
    chunks = ["Madrid is the capital of Spain and its largest city.", "Paris is the capital of France.",
              "Rome is the capital of Italy.", "The Nile flows through Egypt."]  # fmt: skip
    clock = RealClock()
    words = ["what", "is", "the", "capital", "city", "of", "spain", "and", "its", "largest", "city"]

    async def turn():
        async with streamrag.Speculator(BM25Tool(chunks, clock), str(out / "scenario.toml"), clock=clock) as spec:
            for i in range(1, len(words) + 1):
                spec.hear(" ".join(words[:i]))
                await asyncio.sleep(0.01)
            return spec, await spec.resolve(), list(spec.events)

    spec, answer, events = asyncio.run(turn())
    trigger = spec.rs.scenario.trigger.model_dump(mode="json", exclude_none=True)
    measured = {k: v for k, v in point["settings"]["scenario"]["trigger"].items() if v is not None}
    assert trigger == measured  # the policy the row measured
    assert answer.value.top[0] == 0 and answer.query.split()[: answer.prefix_t] == words[: answer.prefix_t]
    assert any(e["kind"] == "fire" for e in events)


def test_a_relative_out_folder_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by running docs/deployer.md's command: a relative --out named each end's latency
    profile relative to the grid's folder, a path under the out folder twice."""
    monkeypatch.chdir(tmp_path)
    situation = {"tool_p50_ms": 800, "tool_p90_ms": 2000, "G_ms": 590, "F_ms": 2520, "input": "generated:20"}
    advice = streamrag.advise({**situation, "turns_per_s": 2, "tool_workers": 4, "load_sessions": 0}, "runs/advice")
    assert advice.rows["policy"].tolist() == POLICIES and (tmp_path / "runs" / "advice" / "advice.json").is_file()


def test_given_G_and_F_one_end_on_a_generated_input_and_a_local_index_allows_learned(tmp_path: Path) -> None:
    situation = {
        "tool_p50_ms": 800,
        "tool_p90_ms": 2000,
        "G_ms": 590,
        "F_ms": [2520, 3250],
        "input": "generated:60",
        "turns_per_s": 2,
        "tool_workers": 4,
        "ranker": "local",
        "load_sessions": 0,
    }
    advice = streamrag.advise(situation, tmp_path / "gen")
    assert isinstance(advice.rows, pd.DataFrame) and advice.rows["policy"].tolist() == POLICIES
    assert advice.rows["end"].unique().tolist() == ["given"] and advice.ends[0]["assumes"] == "G and F as given"
    assert advice.recommendation["holds_across_G_F_range"] is None and "G/F range" not in advice.answer
    learned = advice.rows[advice.rows["policy"] == "learned_local"].iloc[0]
    assert learned["runs_on"] == "local index" and learned["not_deployable"] == ""
    assert advice.rows["at_load.source"].dropna().eq("not simulated (load_sessions = 0)").all()
    data = _advice(tmp_path / "gen")
    assert data["situation"]["G_ms"] == 590.0 and data["situation"]["F_ms"] == [2520.0, 3250.0]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--turns-per-s", "2", "--tool-workers", "4"], "tool_p50_ms and tool_p90_ms, or measurements"),
        (["--tool-p50-ms", "800", "--tool-p90-ms", "500", "--turns-per-s", "2", "--tool-workers", "4"], "greater than"),
        ([*SITUATION, "--G-ms", "abc"], "--G-ms"),
        ([*SITUATION, "--F-ms", "900/300"], "F_ms"),
        ([*SITUATION, "--input", "nope:x"], "unknown input"),
        ([*SITUATION, "--jobs", "0"], "--jobs"),
        ([*SITUATION, "--words-per-s", "nan"], "words_per_s"),
        ([*SITUATION, "--measurements", "missing.csv", "--tool-p50-ms", "1"], "not both"),
        (["--measurements", "missing.csv", "--turns-per-s", "2", "--tool-workers", "4"], "missing.csv"),
        ([*SITUATION, "--typed", "k", "--stt-revisions", "0.2"], "typed and stt_revisions: give one way"),
        ([*SITUATION, "--input", "generated:20", "--stt-revisions", "0.2"], "generated:20 was analyzed already"),
        ([*SITUATION, "--stt-revisions", "1.5"], "stt_revisions"),
    ],
)
def test_bad_input_is_one_error_line(argv: list[str], says: str, tmp_path: Path, capsys) -> None:
    code, _out, err = run_cli(["advise", *argv, "--out", tmp_path / "a"], capsys)
    assert code == 1 and says in one_error_line(err)


@pytest.mark.parametrize(
    "value", ["nan", "inf", "-1", "1e308", "true", '"abc"', "[]", "{}", '"' + "x" * 2000 + '"', "[" * 3000 + "]" * 3000]
)
def test_a_hostile_situation_file_is_one_error_line_naming_it(value: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / "s.toml"
    path.write_text(f"tool_p50_ms = 800\ntool_p90_ms = 2000\ntool_workers = 4\nturns_per_s = {value}\n", encoding="utf-8")
    code, _out, err = run_cli(["advise", "--situation", path, "--out", tmp_path / "a"], capsys)
    assert code == 1 and "s.toml" in one_error_line(err)
    for damaged in (b"\xff\xfe", b"tool_p50_ms = ", b"", b"tool_p50_ms = 800\ntool_p50_ms = 900\n"):
        path.write_bytes(damaged)
        code, _out, err = run_cli(["advise", "--situation", path, "--out", tmp_path / "a"], capsys)
        assert code == 1 and "s.toml" in one_error_line(err)


def _row(end: str, policy: str, gain: float, extra: float, verdict: str = "", questions: str = "demo") -> dict:
    return {"end": end, "questions": questions, "policy": policy, "label": policy, "answer_ms_difference.median": gain, "extra_calls.mean": extra,
            "verdict": verdict}  # fmt: skip


def test_the_recommendation_is_the_best_worst_case_and_a_tie_goes_to_fewer_calls() -> None:
    from streamrag.advice.recommend import recommend

    ends = [("demo", "low"), ("demo", "high")]
    rows = [
        _row("low", "a", 1400, 0.5), _row("high", "a", 1200, 0.5),  # best at 'low', worst case 1200
        _row("low", "b", 1300, 0.9), _row("high", "b", 1300, 0.9),  # worst case 1300: recommended
        _row("low", "c", 1300, 0.2), _row("high", "c", 1350, 0.95),  # ties b's worst case, more calls at 'high'
        _row("low", "d", 2000, 0.1, "needs a local index"), _row("high", "d", 2000, 0.1, "needs a local index"),
    ]  # fmt: skip
    rec = recommend(rows, ends)
    assert rec["policy"] == "b" and rec["picks_by_end"] == {"low": "a", "high": "c"}
    assert rec["holds_across_G_F_range"] is False
    assert rec["why_others_lost"] == {
        "a": "its worst-case p50 user's gain, 1200 ms, is below b's 1300 ms",
        "c": "ties b's worst-case p50 user's gain (1300 ms) with 0.95 extra calls per turn against 0.90",
        "d": "needs a local index",
    }
    nothing = recommend([_row("low", "a", 5, 0.1, "stops gaining below the stated load")], [("demo", "low")])
    assert nothing["policy"] == "none" and not nothing["fire_before_the_user_finishes"]
    assert nothing["holds_across_G_F_range"] is None


def test_measurements_are_fitted_as_calibrate_fits_them_and_their_G_counts_as_given(tmp_path: Path, capsys) -> None:
    import numpy as np

    from streamrag.engine.profiles import load_profile

    rng = np.random.default_rng(1)
    lines = ["stage,duration_ms"] + [f"L,{x:.1f}" for x in rng.lognormal(6.68, 0.7, 200)]
    lines += [f"G,{x:.1f}" for x in rng.lognormal(6.0, 0.3, 200)]
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "a"
    argv = ["advise", "--measurements", tmp_path / "m.csv", "--turns-per-s", "2", "--tool-workers", "4", "--F-ms", "900"]
    code, _out, _err = run_cli([*argv, "--input", "generated:30", "--load-sessions", "0", "--out", out], capsys)
    assert code == 0
    data = _advice(out)
    assert data["assumptions"]["ends"] == [
        {"end": "given", "assumes": "G and F as given", "tool": f"fitted to {tmp_path / 'm.csv'}"}
    ]
    measured, used = load_profile(str(out / "latency" / "measured.toml")), load_profile(str(out / "latency" / "given.toml"))
    assert used.stages["L"] == measured.stages["L"] and used.stages["G"] == measured.stages["G"]
    assert used.stages["F"].nominal_ms == 900.0


def test_several_question_sets_are_each_a_case_and_the_answer_says_whether_it_holds_on_every_one(tmp_path: Path) -> None:
    situation = {**GIVEN, "input": ["demo", "generated:60"], "load_sessions": 0}
    advice = streamrag.advise(situation, tmp_path / "two")
    rows = advice.rows
    assert rows["questions"].unique().tolist() == ["demo", "generated:60"]
    assert rows.groupby("questions")["policy"].apply(list).tolist() == [POLICIES, POLICIES]
    rec = advice.recommendation
    assert set(rec["picks_by_question_set"]) == {"demo", "generated:60"}
    assert rec["holds_across_question_sets"] == all(p == rec["policy"] for p in rec["picks_by_question_set"].values())
    assert set(rec["picks_by_end"]) == {"demo · given", "generated:60 · given"}
    if rec["policy"] != "none":  # the worst case over both sets
        mine = rows[rows["policy"] == rec["policy"]]
        assert rec["worst_case_p50_gain_ms"] == mine["answer_ms_difference.median"].min()
    assert ("It holds on every question set." in advice.answer) == rec["holds_across_question_sets"]
    assert (tmp_path / "two" / "runs" / "1-given" / "grid.toml").is_file()
    assert 'input = "generated:60:seed=0"' in (tmp_path / "two" / "runs" / "2-given" / "grid.toml").read_text(encoding="utf-8")
    with pytest.raises(ConfigError, match="input: give one question set or a list of different ones"):
        streamrag.advise({**situation, "input": ["demo", "demo"]}, tmp_path / "same")


def test_over_question_sets_the_worst_case_decides_and_each_sets_own_pick_is_reported() -> None:
    from streamrag.advice.recommend import recommend

    cases = [("demo", "given"), ("mine", "given")]
    rows = [
        _row("given", "a", 1500, 0.3), _row("given", "a", 900, 0.3, questions="mine"),  # best on demo only
        _row("given", "b", 1200, 0.5), _row("given", "b", 1100, 0.5, questions="mine"),  # best worst case
    ]  # fmt: skip
    rec = recommend(rows, cases)
    assert rec["policy"] == "b" and rec["picks_by_question_set"] == {"demo": "a", "mine": "b"}
    assert rec["holds_across_question_sets"] is False and rec["holds_across_G_F_range"] is None
    assert rec["picks_by_end"] == {"demo · given": "a", "mine · given": "b"}


def test_llm_workers_queue_the_llm_in_the_load_simulation_and_predict_says_it_queues_the_tool_only(tmp_path: Path) -> None:
    situation = {**GIVEN, "input": "demo", "load_sessions": 300}
    few = streamrag.advise({**situation, "llm_workers": 2}, tmp_path / "few")
    row = few.rows[few.rows["policy"] == "interval_words"].iloc[0]
    assert row["at_load.llm_offered_load"] == pytest.approx(2 * (0.590 + 2.520) / 2)  # λ·(G + F)/c
    assert "the LLM workers' offered load is 3.11 ≥ 1" in row["verdict"]
    assert pd.isna(row.get("at_load.answer_ms_difference.median"))
    many = streamrag.advise({**situation, "llm_workers": 12}, tmp_path / "many")
    row = many.rows[many.rows["policy"] == "interval_words"].iloc[0]
    assert row["at_load.llm_offered_load"] == pytest.approx(2 * 3.110 / 12) and row["at_load.answer_ms_difference.median"] > 0
    scenario = (tmp_path / "many" / "load_scenario.toml").read_text(encoding="utf-8")
    assert '[resources.llm]\nkind = "servers"\nservers = 12' in scenario
    data = json.loads((tmp_path / "many" / "advice.json").read_text(encoding="utf-8"))
    assert "predict's break-even queues the tool only" in data["assumptions"]["llm"]
    assert data["reproduce"]["predict"].endswith("--set resources.llm.kind=unlimited")
    unlimited = streamrag.advise(situation, tmp_path / "unlimited")  # the break-even is predict's, LLM or not
    assert row["break_even.median_saved.turns_per_s"] == unlimited.rows.iloc[0]["break_even.median_saved.turns_per_s"]


def test_a_mutating_tools_unsafe_executions_per_1000_turns_sit_beside_each_policys_saving(tmp_path: Path) -> None:
    situation = {**GIVEN, "input": "generated:30", "load_sessions": 0}
    rows = {}
    for policy in ("deferral", "speculative"):
        settings = ["tool.effects=mutating", f"tool.mutating_policy={policy}"]
        advice = streamrag.advise({**situation, "settings": settings}, tmp_path / policy)
        placed = advice.rows[advice.rows["no_point"] == ""]
        rows[policy] = placed.set_index("policy")
        assert placed["unsafe_per_1000_turns"].notna().all()
        written = pd.read_csv(tmp_path / policy / "advice.csv")
        assert written["unsafe_per_1000_turns"].notna().sum() == len(placed)
    assert (rows["deferral"]["unsafe_per_1000_turns"] == 0).all()  # held for the confirmed turn: never unsafe
    assert (rows["speculative"]["unsafe_per_1000_turns"] > 0).any()  # unguarded: calls run on partial questions


def _spoken_file(path: Path) -> Path:
    """Hypotheses for every demo question: each word heard 400 ms after the one before,
    the third word first misheard (a revision)."""
    from streamrag.data.demo import demo_path

    lines = []
    for line in demo_path().read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        words = q["query"].split()
        shown = [" ".join(words[: j + 1]) for j in range(len(words))]
        if len(words) > 3:
            shown.insert(2, " ".join([*words[:2], "misheard"]))
        hyps = [{"t_ms": 400 * (j + 1), "text": text} for j, text in enumerate(shown)]
        lines.append(json.dumps({"interaction_id": q["interaction_id"], "hypotheses": hyps}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_users_who_speak_through_a_recognizer_are_a_situation_key_and_the_live_scenario_leaves_it_out(tmp_path: Path) -> None:
    spoken = _spoken_file(tmp_path / "h.jsonl")
    situation = {**GIVEN, "input": "demo", "hypotheses": str(spoken), "load_sessions": 0}
    advice = streamrag.advise(situation, tmp_path / "spoken")
    plain = streamrag.advise({**GIVEN, "input": "demo", "load_sessions": 0}, tmp_path / "plain")
    data = _advice(tmp_path / "spoken")
    assert data["situation"]["hypotheses"] == str(spoken)
    point = next(iter((tmp_path / "spoken" / "runs" / "given" / "points").iterdir()))
    asr = json.loads((point / "point.json").read_text(encoding="utf-8"))["settings"]["scenario"]["data"]["asr"]
    assert asr["kind"] == "file"  # every point replayed the recorded hypotheses (the file named by its content)
    fired = {
        name: pd.read_csv(tmp_path / name / "runs" / "given" / "sweep.csv").set_index("trigger_kind")["calls_fired.mean"]
        for name in ("spoken", "plain")
    }
    assert fired["spoken"]["every_word"] > fired["plain"]["every_word"]  # a call per hypothesis: revisions are events too
    assert "calls_on_revised.mean" in pd.read_csv(tmp_path / "spoken" / "runs" / "given" / "sweep.csv").columns
    assert advice.rows.shape == plain.rows.shape
    assert "[data.asr]" not in (tmp_path / "spoken" / "scenario.toml").read_text(encoding="utf-8")  # live: the STT's
    assert "[data.asr]" in (tmp_path / "spoken" / "load_scenario.toml").read_text(encoding="utf-8")
