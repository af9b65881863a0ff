"""``predict`` made whole (issue 44): refires counted as the simulator counts them, the p90
user's break-even beside the median's, load as turns/s beside utilization, and the
timeline cache that makes it fast giving exactly the timelines replayed directly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from streamrag.cli import main
from streamrag.simulator.predict.load import predict_break_even
from streamrag.simulator.predict.saving import predict_population, timeline
from streamrag.simulator.predict.timelines import TimelineCache
from streamrag.simulator.scenario import load_scenario
from streamrag.sweep.inputs import PreparedInputs, parse_input


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("whole") / "gen.csv"
    assert main(["generate", str(path), "--questions", "150", "--table", "--seed", "1"]) == 0
    return path


@pytest.fixture(scope="module")
def generated():
    return PreparedInputs(parse_input("generated:120:seed=3", base_dir=Path.cwd())).questions().questions


@pytest.mark.parametrize("profile", ["paper-rq3", "arora2025"])
def test_the_cache_gives_the_timelines_replayed_directly(generated, profile) -> None:
    rs = load_scenario("load", [f"latency.profile={profile}"])
    cache = TimelineCache(generated, rs)
    durations = [1190.0, 1190.0004, 1333.333, 1523.0, 2000.0, 2190.0, 2666.667, 3333.0, 4800.0, 9000.0, 60_000.0]
    for x in [*durations, *durations[::-1]]:  # the second pass answers from the cache
        got = cache.at(x)
        for q, line in zip(generated, got, strict=True):
            assert line.key == timeline(q, rs, x).key, (q.interaction_id, x)
    assert cache.n_replayed < 2 * len(durations) * len(generated) / 3


@pytest.mark.parametrize("source", ["demo", "table"])
def test_calls_fired_count_refires_as_the_simulator_does(tmp_path, table, source) -> None:
    args = ["--table", str(table)] if source == "table" else ["demo"]
    for profile, tolerance in (("paper-rq3", 1e-9), ("arora2025", 0.15)):
        sets = [a for s in ("select.population=all", f"latency.profile={profile}") for a in ("--set", s)]
        out, pred = tmp_path / f"sim-{profile}", tmp_path / f"pred-{profile}.json"
        assert main(["simulate", *args, "--scenario", "paper_rq3", *sets, "--out", str(out), "-q"]) == 0
        assert main(["predict", *args, "--scenario", "paper_rq3", *sets, "--out", str(pred)]) == 0
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        data = json.loads(pred.read_text(encoding="utf-8"))
        assert data["calls_fired"]["mean"] == pytest.approx(summary["calls_fired"]["mean"], abs=tolerance), profile
        if profile == "paper-rq3":  # constant latencies: the p50/p90 user's latencies are exact too
            for arm in ("baseline_ms", "streaming_ms"):
                for stat in ("median", "p90"):
                    assert np.isclose(data[arm][stat], summary[arm][stat], atol=0.02), (arm, stat)


def test_a_misfire_counts_its_refire_and_a_held_call_counts_only_if_it_starts(generated) -> None:
    rs = load_scenario("load", ["latency.profile=paper-rq3"])
    pop = predict_population(generated, rs)
    for p, line in zip(pop.questions, pop.lines, strict=True):
        if not p.hit:
            assert p.calls_fired == len(line.fired_t) + 1
        else:
            assert (~line.held).sum() <= p.calls_fired <= len(line.fired_t)


def test_the_p90_user_stops_gaining_no_later_than_the_median(generated) -> None:
    for profile in ("paper-rq3", "arora2025"):
        rs = load_scenario("load", [f"latency.profile={profile}"])
        pred = predict_break_even(generated, rs)
        assert set(pred.crossings) == {"median_saved", "p90"}
        median, p90 = pred.crossings["median_saved"], pred.crossings["p90"]
        assert median.break_even is not None and p90.break_even is not None
        assert p90.break_even <= median.break_even
        assert set(p90.by_waits) == {"independent", "shared"}
        assert (pred.break_even, pred.by_waits) == (median.break_even, median.by_waits)


def test_turns_per_s_is_the_offered_load_times_servers_over_mean_service(tmp_path, table) -> None:
    out = tmp_path / "pred.json"
    assert (
        main(["predict", "--table", str(table), "--scenario", "load", "--set", "resources.tool.servers=8", "--out", str(out)])
        == 0
    )
    data = json.loads(out.read_text(encoding="utf-8"))
    be = data["break_even"]
    per_load = 8 / 0.600  # 8 servers, L = 600 ms
    assert be["turns_per_s_per_offered_load"] == pytest.approx(per_load)
    for name, crossing in be["crossings"].items():
        for suffix, key in (("", "offered_load"), ("_low", "low"), ("_high", "high")):
            assert crossing["turns_per_s" + suffix] == pytest.approx(crossing[key] * per_load), name
    assert be["crossings"]["p90"]["difference"] == "answer_ms_difference.p90"
    assert be["crossings"]["median_saved"]["difference"] == "saved_ms.median"
    assert be["offered_load"] == be["crossings"]["median_saved"]["offered_load"]
    assert set(data["answer_ms_difference"]) == {"median", "p90"} and "mean" in data["calls_fired"]


def test_the_summary_line_names_each_statistic_and_shows_turns_per_s(capsys, table) -> None:
    assert main(["predict", "--table", str(table), "--scenario", "load"]) == 0
    line = capsys.readouterr().out
    assert "refires included" in line and "p50 / p90 user's gain" in line
    assert "median paired difference" in line and "p90 user" in line and line.count("turns/s") == 2
