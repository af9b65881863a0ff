"""Rankings that cost something (``pipeline.ranking``): a search per word on the tool, or a
local index's time, charged to the trigger's timing, the calls, the load and the frontier."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _simhelpers import const_scenario, full_q, replay

from streamrag.base.errors import ConfigError
from streamrag.cli import main
from streamrag.pipeline.arm import ArmMachine, ArmRules
from streamrag.pipeline.calls import Call
from streamrag.simulator.results import tally_result
from streamrag.speculate.scenario_check import check_scenario

STABLE = {"kind": "stable", "words": 1}


class _Looks:
    """A trigger that records when it is asked about a word and never fires."""

    kills_in_flight = False
    tick_us = None

    def __init__(self) -> None:
        self.looked: list[int] = []

    def on_word(self, t: int) -> bool:
        self.looked.append(t)
        return False

    def on_tick(self, heard: int) -> bool:
        return False

    def fired(self, t: int) -> None:
        pass


class _Driver:
    def __init__(self) -> None:
        self.ranking: list[int] = []
        self.withdrawn: list[int] = []

    def rank(self, t: int) -> None:
        self.ranking.append(t)

    def unrank(self, t: int) -> None:
        self.withdrawn.append(t)

    def start(self, call: Call) -> None:  # pragma: no cover - the trigger never fires
        raise AssertionError("no call expected")

    stop = answer = start

    def fail(self) -> None:  # pragma: no cover
        raise AssertionError("no failure expected")


class _Words:
    n_words = 4


def _machine(ranking: str) -> tuple[ArmMachine, _Looks, _Driver]:
    trigger, driver = _Looks(), _Driver()
    machine = ArmMachine(
        _Words(),
        trigger,
        None,
        ArmRules(ranking=ranking),
        driver,
        None,
        end_of_turn_us=0,
        tracing=False,  # type: ignore[arg-type]
    )
    return machine, trigger, driver


def test_the_trigger_looks_at_a_word_when_its_ranking_is_in_and_in_the_order_of_the_words() -> None:
    machine, trigger, driver = _machine("tool")
    for t in (1, 2, 3):
        machine.word(t, t * 500)
    assert driver.ranking == [1, 2, 3] and trigger.looked == []  # asked only when a ranking is in
    machine.ranked(2, 1_100)  # word 2's search is back before word 1's: it waits
    assert trigger.looked == []
    machine.ranked(1, 1_400)
    assert trigger.looked == [1, 2]
    machine.ranked(3, 1_600, ok=False)  # lost to a full queue: never looked at
    machine.word(4, 2_000)
    machine.reflect()  # the turn ends with word 4's search out: withdrawn, never looked at
    assert trigger.looked == [1, 2] and driver.withdrawn == [4] and machine.n_ranked == 4


def test_free_rankings_are_the_anchors_the_trigger_looks_at_each_word_as_heard() -> None:
    machine, trigger, driver = _machine("free")
    for t in (1, 2, 3):
        machine.word(t, t * 500)
    assert trigger.looked == [1, 2, 3] and driver.ranking == [] and machine.n_ranked == 0


def _question():
    return full_q(
        "q", [[0, 1], [2, 1], [2, 1], [2, 1], [2, 1], [2, 1], [2, 1], [2, 1]], gold={2}, scores={2: 9.0}, coverage={2: 1.0}
    )


def _fires(events: list[dict[str, Any]]) -> list[tuple[int, int]]:
    return [(e["t_us"], e["prefix_t"]) for e in events if e["kind"] == "fire" and e["arm"] == "streaming"]


@pytest.mark.parametrize(("ranking", "delay_ms"), [("tool", 300), ("local", 40)])
def test_a_priced_ranking_delays_each_fire_by_its_time_and_is_counted(ranking: str, delay_ms: int) -> None:
    q = _question()
    free = replay(q, const_scenario(L=300, trigger=STABLE))
    extra = ["pipeline.local_rank_ms=40"] if ranking == "local" else []
    rs = const_scenario(L=300, trigger=STABLE, extra=[f"pipeline.ranking={ranking}", *extra])
    priced = replay(q, rs)
    (at, prefix), *_ = _fires(free)
    assert _fires(priced)[0] == (at + delay_ms * 1000, prefix)  # same prefix, its ranking's time later
    ranks = [e for e in priced if e["kind"] in ("rank", "rank_done")]
    assert sum(e["kind"] == "rank" for e in ranks) == q.n_words
    outcomes = [e["outcome"] for e in ranks if e["kind"] == "rank_done"]
    assert outcomes[-1] == "cancelled" and set(outcomes[:-1]) == {"in"}  # the last word's: out at turn end
    from streamrag.simulator.replay.fold import fold_trace

    row = tally_result(fold_trace(priced), "q", n_words=q.n_words, t_star=q.t_star, L_ms=300, G_ms=100, delta_wps=2.0)
    assert row.rankings == q.n_words
    assert row.ranking_busy_ms == pytest.approx(delay_ms * (q.n_words - 1))  # the last one withdrawn at once
    assert (
        tally_result(fold_trace(free), "q", n_words=q.n_words, t_star=q.t_star, L_ms=300, G_ms=100, delta_wps=2.0).rankings
        is None
    )


@pytest.mark.parametrize(
    ("sets", "says"),
    [
        (["pipeline.ranking=tool"], "trigger 'interval' reads none"),
        (["trigger.kind=stable", "pipeline.local_rank_ms=5"], "applies to ranking = 'local' only"),
        (["trigger.kind=stable", "pipeline.ranking=cloud"], "pipeline.ranking"),
    ],
)
def test_a_ranking_price_that_does_not_apply_is_refused(sets: list[str], says: str) -> None:
    from streamrag.simulator.scenario import load_scenario

    with pytest.raises(ConfigError, match=says):
        load_scenario("paper_rq3", sets)


@pytest.mark.parametrize("ranking", ["tool", "local"])
def test_the_speculator_refuses_a_price_its_ranker_pays_for_real(ranking: str) -> None:
    from streamrag.simulator.scenario import load_scenario

    extra = ["pipeline.local_rank_ms=3"] if ranking == "local" else []
    rs = load_scenario("paper_rq3", ["trigger.kind=stable", f"pipeline.ranking={ranking}", *extra])
    with pytest.raises(ConfigError, match=r"pipeline\.ranking: .* real cost"):
        check_scenario(rs, known=True)


def _run(argv: list[str]) -> int:
    return main(["--quiet", *argv])


def test_simulate_writes_the_rankings_and_predict_agrees_on_a_local_index_and_refuses_the_tool(tmp_path: Path, capsys) -> None:
    sets = ["--set", "trigger.kind=stable", "--set", "pipeline.ranking=local", "--set", "pipeline.local_rank_ms=30"]
    assert _run(["simulate", "demo", "--scenario", "paper_rq3", *sets, "--out", str(tmp_path / "s")]) == 0
    summary = json.loads((tmp_path / "s" / "summary.json").read_text(encoding="utf-8"))
    results = pd.read_csv(tmp_path / "s" / "results.csv")
    replayed = results[results["skip_reason"].isna()]
    assert (replayed["rankings"] == replayed["n_words"]).all()
    assert summary["rankings"]["mean"] == pytest.approx(replayed["n_words"].mean())
    assert summary["rules"]["settings"]["pipeline.ranking"] == "local" and summary["rules"]["preset"] == "custom"
    capsys.readouterr()
    assert _run(["predict", "demo", "--scenario", "paper_rq3", *sets]) == 0
    predicted = capsys.readouterr().out
    assert f"predicted mean saved {summary['saved_ms']['mean']:.1f}" in predicted  # constant latencies: exact
    tool = ["--set", "trigger.kind=stable", "--set", "pipeline.ranking=tool"]
    assert _run(["predict", "demo", "--scenario", "paper_rq3", *tool]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pipeline.ranking: 'tool' does not apply to predict" in err[0]


def test_a_search_per_word_loads_the_tool_in_a_load_run(tmp_path: Path) -> None:
    util, answer = {}, {}
    for ranking in ("free", "tool"):
        out = tmp_path / ranking
        sets = ["--set", "trigger.kind=stable", "--set", f"pipeline.ranking={ranking}", "--set", "load.arrivals.n_sessions=300"]
        assert _run(["simulate", "demo", "--scenario", "load", *sets, "--out", str(out)]) == 0
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        util[ranking] = summary["streaming"]["resources"]["tool"]["utilization"]
        answer[ranking] = summary["streaming"]["answer_ms"]["median"]
        stages = {json.loads(line).get("stage") for line in (out / "trace.jsonl").read_text(encoding="utf-8").splitlines()[1:]}
        assert ("R" in stages) == (ranking == "tool")
    # about ten searches per turn beside one or two calls: the tool saturates, the answers wait
    assert util["tool"] > 1.8 * util["free"] and answer["tool"] > answer["free"] + 1000


def test_the_frontier_counts_a_search_per_word_as_extra_calls(tmp_path: Path) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(
        'name = "g"\nkind = "simulate"\ninput = "demo"\nscenario = "frontier"\n\n[axes.policy]\n'
        'none = { "trigger.kind" = "none" }\n'
        'learned = { "trigger.kind" = "learned", "trigger.model" = "frontier", "trigger.tau" = [0.3] }\n'
        'learned_tool = { "trigger.kind" = "learned", "trigger.model" = "frontier", "trigger.tau" = [0.3], '
        '"pipeline.ranking" = "tool" }\n',
        encoding="utf-8",
    )
    assert _run(["frontier", str(grid), "--out", str(tmp_path / "f")]) == 0
    points = pd.read_csv(tmp_path / "f" / "frontier" / "frontier.csv").set_index("label")
    from streamrag.sweep.table import read_point_results

    sweep = pd.read_csv(tmp_path / "f" / "sweep.csv").set_index("policy")
    assert sweep.loc["learned_tool=0.3", "rankings.mean"] > 5 and pd.isna(sweep.loc["learned=0.3", "rankings.mean"])
    for label, searches in (("learned=0.3", False), ("learned_tool=0.3", True)):
        df = read_point_results(tmp_path / "f", sweep.loc[label, "key"])
        df = df[df["skip_reason"].isna() | (df["skip_reason"] == "")]
        calls = df["calls_fired"] + (df["rankings"] if searches else 0)
        assert points.loc[label, "extra_calls.mean"] == pytest.approx((calls - 1).mean())
    assert points.loc["learned_tool=0.3", "extra_calls.mean"] > points.loc["learned=0.3", "extra_calls.mean"] + 5


def test_a_priced_rankings_trace_draws_a_lane_per_ranking(tmp_path: Path, capsys) -> None:
    sets = ["--set", "trigger.kind=stable", "--set", "pipeline.ranking=tool"]
    assert _run(["simulate", "demo", "--scenario", "paper_rq3", *sets, "--out", str(tmp_path / "s")]) == 0
    qid = pd.read_csv(tmp_path / "s" / "results.csv").dropna(subset=["rankings"])["interaction_id"].iloc[0]
    perfetto, png = tmp_path / "p.json", tmp_path / "p.png"
    assert main(["trace", str(tmp_path / "s"), qid, "--perfetto", str(perfetto), "--png", str(png)]) == 0
    assert "ranking 1" in capsys.readouterr().out and png.stat().st_size > 0
    names = {e.get("name") for e in json.loads(perfetto.read_text(encoding="utf-8"))["traceEvents"]}
    assert "ranking" in names


def test_a_search_per_word_counts_among_the_tool_calls_a_local_ranking_does_not() -> None:
    for ranking, tool_calls in (("tool", 3), ("local", 0), ("free", 0)):
        machine, _, _ = _machine(ranking)
        for t in (1, 2, 3):
            machine.word(t, t * 500)
        assert (machine.n_fired, machine.n_tool_calls) == (0, tool_calls), ranking
