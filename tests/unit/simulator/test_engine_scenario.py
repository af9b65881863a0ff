"""Scenarios: built-ins, TOML files, --set overrides, validation errors naming the key."""

from __future__ import annotations

import pytest

from streamrag.base.config.overrides import apply_overrides, parse_override
from streamrag.base.errors import ConfigError
from streamrag.simulator.scenario import load_scenario


def test_paper_rq3_is_the_anchor_setup():
    rs = load_scenario("paper_rq3")
    sc = rs.scenario
    assert (sc.input.kind, sc.input.delta_wps) == ("uniform", 3.0)
    assert (sc.trigger.kind, sc.trigger.words) == ("interval", 3)
    assert sc.pipeline.thread_cap == 4
    assert (sc.reflector.kind, sc.reflector.score_threshold, sc.reflector.min_coverage) == ("heuristic", 2.0, 0.4)
    assert sc.latency.profile == "paper-rq3"
    assert (rs.stages.G.ms, rs.stages.L.ms, rs.stages.F.ms) == (590, 600, 2520)
    assert sc.select.population == "retrieved_gold"


def test_set_overrides_dotted_keys_as_toml_scalars():
    rs = load_scenario("paper_rq3", ["latency.L_ms=1000", "input.delta_wps=2", "select.population=all"], seed=9)
    assert rs.stages.L.ms == 1000 and rs.L_ms == 1000
    assert rs.scenario.input.delta_wps == 2.0
    assert rs.scenario.select.population == "all"
    assert rs.scenario.seed == 9
    assert parse_override('a.b="x y"') == ("a.b", "x y")
    assert parse_override("a=true") == ("a", True)


def test_changing_a_kind_starts_from_that_kinds_defaults():
    rs = load_scenario("paper_rq3", ["trigger.kind=oracle", "reflector.kind=gold"])
    assert rs.scenario.trigger.kind == "oracle" and rs.scenario.reflector.kind == "gold"
    rs = load_scenario("paper_rq3", ["trigger.kind=replace", "trigger.seconds=0.25"])
    assert (rs.scenario.trigger.kind, rs.scenario.trigger.seconds) == ("replace", 0.25)


def test_the_same_kind_keeps_its_section_and_exclusive_fields_replace_each_other():
    # Setting the kind a section already has changes nothing (paper_rq3: interval, words = 3).
    rs = load_scenario("paper_rq3", ["trigger.kind=interval"])
    assert (rs.scenario.trigger.words, rs.scenario.trigger.seconds) == (3, None)
    # words and seconds are exclusive: setting one drops the inherited other.
    rs = load_scenario("paper_rq3", ["trigger.seconds=1.0"])
    assert (rs.scenario.trigger.words, rs.scenario.trigger.seconds) == (None, 1.0)
    rs = load_scenario("paper_rq3", ["trigger.kind=interval", "trigger.seconds=1.0"])
    assert (rs.scenario.trigger.words, rs.scenario.trigger.seconds) == (None, 1.0)
    with pytest.raises(ConfigError, match="exactly one of 'words' and 'seconds'"):
        load_scenario("paper_rq3", ["trigger.kind=every_word", "trigger.kind=interval"])


def test_a_changed_shadowed_field_drops_the_starting_tables_winner_only():
    shadows = {"latency": {"profile": ("L_ms", "stages"), "stages.L": ("L_ms",)}}
    base = {"latency": {"profile": "a", "L_ms": 600, "stages": {"G": {"kind": "constant", "ms": 1}}}}
    apply = lambda *groups: apply_overrides(base, list(groups), shadows=shadows)["latency"]  # noqa: E731
    assert apply([("latency.profile", "b")]) == {"profile": "b"}
    assert apply([("latency.profile", "a")]) == base["latency"]  # the value it has: nothing changes
    assert apply([("latency.stages.L.kind", "gamma")]) == {
        "profile": "a",
        "stages": {**base["latency"]["stages"], "L": {"kind": "gamma"}},
    }
    # what overrides set is kept, in any order and any groups; a new profile keeps their stages only
    for groups in ([[("latency.profile", "b"), ("latency.L_ms", 9)]], [[("latency.L_ms", 9)], [("latency.profile", "b")]]):
        assert apply(*groups) == {"profile": "b", "L_ms": 9}
    out = apply([("latency.stages.F.ms", 2)], [("latency.profile", "b")])
    assert out == {"profile": "b", "stages": {"F": {"ms": 2}}}
    assert base["latency"]["L_ms"] == 600  # the input is not modified


def test_overrides_apply_in_groups_kinds_first():
    base = {"trigger": {"kind": "interval", "words": 3}, "latency": {"L_ms": 600}}
    exclusive = {"trigger": (frozenset({"words", "seconds"}),)}
    # within a group the kind comes first whatever the order given
    out = apply_overrides(base, [[("trigger.seconds", 0.5), ("trigger.kind", "replace")]], exclusive=exclusive)
    assert out["trigger"] == {"kind": "replace", "seconds": 0.5}
    # a later group builds on the earlier one; the input is not modified
    out = apply_overrides(base, [[("trigger.kind", "oracle")], [("trigger.kind", "interval"), ("trigger.words", 2)]])
    assert out["trigger"] == {"kind": "interval", "words": 2} and base["trigger"] == {"kind": "interval", "words": 3}
    with pytest.raises(ConfigError, match=r"latency\.L_ms\.x: latency\.L_ms is a value, not a table"):
        apply_overrides(base, [[("latency.L_ms.x", 1)]])


def test_latency_stage_can_be_replaced_by_any_model(tmp_path):
    stage = ["latency.stages.L.kind=lognormal", "latency.stages.L.p50_ms=600", "latency.stages.L.p90_ms=900"]
    # paper_rq3 sets L_ms = 600, which wins over a stage model in one file (constants come
    # last); an override of the stage drops the scenario's constant, so it takes effect
    assert load_scenario("paper_rq3", stage).stages.L.kind == "lognormal"
    path = tmp_path / "both.toml"
    path.write_text('[latency]\nL_ms = 700\n[latency.stages.L]\nkind = "lognormal"\np50_ms = 600\np90_ms = 900\n')
    assert load_scenario(str(path)).stages.L.ms == 700
    # overrides never drop each other: the constant wins among them too, in any order
    assert load_scenario("paper_rq3", ["latency.L_ms=650", *stage]).stages.L.ms == 650
    path = tmp_path / "s.toml"
    path.write_text('[latency]\nprofile = "paper-rq3"\n')
    rs = load_scenario(str(path), stage)
    assert (rs.stages.L.kind, rs.stages.L.p50_ms, rs.stages.L.p90_ms) == ("lognormal", 600, 900)
    assert rs.L_ms == 600  # nominal = median
    rs = load_scenario("paper_rq3", ["latency.profile=arora2025", "latency.L_ms=1000"])
    assert rs.stages.G.kind == "lognormal" and rs.stages.L.kind == "constant" and rs.stages.L.ms == 1000
    assert rs.G_ms == 590


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["trigger.words=0"], r"trigger\.words: Input should be greater than or equal to 1 \(got 0\)"),
        (["input.delta_wps=-3"], r"input\.delta_wps: Input should be greater than 0"),
        (["latency.L_ms=fast"], r"latency\.L_ms: Input should be a valid number"),
        (["trigger.kind=sometimes"], r"trigger\.kind: Input tag 'sometimes' found using 'kind' does not match"),
        (["pipeline.max_thread=3"], r"pipeline\.max_thread: Extra inputs are not permitted"),
        # union tags are not keys: not resources.tool.servers.servers, latency.stages.L.lognormal.p50_ms
        (["resources.tool.kind=servers", "resources.tool.servers=0"], r"paper_rq3: resources\.tool\.servers: Input should be"),
        (["latency.stages.L.kind=lognormal", "latency.stages.L.p50_ms=x"], r": latency\.stages\.L\.p50_ms: Input should"),
        (["latency.stages.X.kind=constant"], r": latency\.stages\.X: Input should be 'G', 'L' or 'F' \(got 'X'\)"),
        (["latency.profile=nope"], r"latency\.profile: unknown profile 'nope'"),
        (["oops"], r"--set 'oops': expected key=value"),
        (["seed=-1"], r"seed: Input should be greater than or equal to 0"),
    ],
)
def test_bad_values_raise_config_error_naming_the_key(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_scenario("paper_rq3", overrides)


def test_scenario_from_a_toml_file(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\n[trigger]\nkind = "every_word"\n[latency]\nprofile = "arora2025"\n')
    rs = load_scenario(str(path))
    assert rs.scenario.name == "mine" and rs.scenario.trigger.kind == "every_word"
    assert rs.scenario.input.delta_wps == 3.0  # defaults fill the rest
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_scenario(str(bad))
    with pytest.raises(ConfigError, match="no such file"):
        load_scenario(str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match=r"neither a TOML file nor a built-in scenario \(built-in: .*paper_rq3"):
        load_scenario("no_such_scenario")
