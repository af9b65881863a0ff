"""Question plans drawn once per plan settings and question, and kept exactly.

A plan reads of its scenario only :class:`PlanSettings`; the cache keys plans by them. So each
field of it, changed, changes the key (a field added without a change here fails the first
test), and what a plan does not read (trigger, reflector, caps, selection) leaves the key
alone. A cached plan is the plan drawn anew, and a sweep through the cache gives the bytes of
one without it, drawing each question once per plan settings.
"""

from __future__ import annotations

import textwrap
from dataclasses import astuple

import pytest
from _simhelpers import table_q

from streamrag.simulator.replay import planning
from streamrag.simulator.replay.planning import PlanCache, PlanSettings, plan_question, plan_settings, settings_key
from streamrag.simulator.scenario import load_scenario

BASE = "frontier"  # log-normal G, L, F drawn per call: every stage's draws depend on the seed
RANKED = ["trigger.kind=stable", "trigger.words=2"]  # a trigger reading rankings: pipeline.ranking applies

CHANGES: dict[str, list[list[str]]] = {
    "seed": [["seed=7"]],
    "cadence": [
        ["input.delta_wps=2.5"],
        ["input.kind=jittered", "input.delta_wps=3", "input.cv=0.4"],
        ["input.end_of_turn_ms=300"],
    ],
    "stages": [["latency.profile=paper-rq3"], ["latency.L_ms=900"], ["latency.G_ms=100"], ["latency.F_ms=700"]],
    "ranking": [[*RANKED, "pipeline.ranking=tool"]],
    "local_rank_us": [[*RANKED, "pipeline.ranking=local", "pipeline.local_rank_ms=5"]],
    "endpoint": [["input.end_of_turn_ms=0", "endpoint.kind=silence", "endpoint.silence_ms=400"]],
    "speech": [["data.asr.kind=file", "data.asr.path=H.jsonl"]],
}
"""Per field of :class:`PlanSettings`, overrides of :data:`BASE` that change it."""

POLICY_ONLY: list[list[str]] = [
    ["trigger.kind=interval", "trigger.seconds=1"],
    ["trigger.kind=hedge", "trigger.quantile=0.1"],
    ["trigger.kind=learned", "trigger.model=frontier", "trigger.tau=0.3"],
    ["trigger.kind=every_word"],
    ["reflector.kind=gold"],
    ["reflector.min_coverage=0.6"],
    ["pipeline.max_threads=2"],
    ["pipeline.capped_fire=drop"],
    ["select.population=retrieved_gold"],
    [*RANKED, "pipeline.ranking=tool", "pipeline.max_threads=1"],  # against the same ranking: below
    ["tool.effects=mutating"],
    ["data.asr.p=0.2"],  # the revision model changes the questions' words, not what a plan reads
]
"""Overrides of :data:`BASE` that change what is replayed on a plan, never the plan."""


def test_every_plan_setting_is_changed_here():
    assert set(CHANGES) == set(PlanSettings._fields)


@pytest.mark.parametrize(("field", "overrides"), [(f, o) for f, changes in CHANGES.items() for o in changes], ids=str)
def test_a_changed_plan_setting_changes_the_key(field, overrides):
    base, changed = plan_settings(load_scenario(BASE)), plan_settings(load_scenario(BASE, overrides))
    assert getattr(changed, field) != getattr(base, field)
    assert settings_key(changed) != settings_key(base)


@pytest.mark.parametrize("overrides", POLICY_ONLY, ids=" ".join)
def test_a_policy_setting_leaves_the_key_alone(overrides):
    ranking = [o for o in overrides if o.startswith("pipeline.ranking")]
    base, changed = load_scenario(BASE, [*RANKED, *ranking]), load_scenario(BASE, overrides)
    assert changed.scenario != base.scenario
    assert settings_key(plan_settings(changed)) == settings_key(plan_settings(base))


def _fields(plan):
    """A plan's draws (its question aside)."""
    return astuple(plan)[1:]


QUESTIONS = [table_q(f"q{i:02d}", n=2 + i % 9, t_sc=1 + i % 2) for i in range(30)]


def test_a_cached_plan_is_the_plan_drawn_anew_and_drawn_once():
    cache = PlanCache()
    interval = cache.planner(load_scenario(BASE))
    first = [interval(q) for q in QUESTIONS]
    stable = cache.planner(load_scenario(BASE, ["trigger.kind=stable", "trigger.words=2"]))
    for q, plan in zip(QUESTIONS, first, strict=True):
        again = stable(q)
        assert again.question is q and again.g_us is plan.g_us and again.word_us is plan.word_us  # kept, not redrawn
        assert _fields(again) == _fields(plan_question(q, load_scenario(BASE)))
    slower = cache.planner(load_scenario(BASE, ["latency.L_ms=900"]))
    for q, plan in zip(QUESTIONS, first, strict=True):
        other = slower(q)
        assert other.l_us is not plan.l_us
        assert _fields(other) == _fields(plan_question(q, load_scenario(BASE, ["latency.L_ms=900"])))
    assert {_fields(slower(q)) for q in QUESTIONS} != {_fields(p) for p in first}


def test_the_cache_keeps_the_settings_used_last():
    cache = PlanCache(max_settings=2)
    q = QUESTIONS[3]
    kept = cache.planner(load_scenario(BASE))(q)
    cache.planner(load_scenario(BASE, ["seed=1"]))(q)
    assert cache.planner(load_scenario(BASE, ["trigger.kind=none"]))(q).g_us is kept.g_us
    cache.planner(load_scenario(BASE, ["seed=2"]))(q)  # the third settings: seed=1's go
    assert cache.planner(load_scenario(BASE))(q).g_us is kept.g_us
    redrawn = cache.planner(load_scenario(BASE, ["seed=1"]))(q)
    assert _fields(redrawn) == _fields(plan_question(q, load_scenario(BASE, ["seed=1"])))


GRID = """
    name = "plans"
    kind = "simulate"
    input = "generated:40:seed=5"
    scenario = "frontier"
    [output]
    traces = true
    [axes]
    "latency.L_ms" = [600, 900]
    [axes.policy]
    none = { "trigger.kind" = "none" }
    interval = { "trigger.kind" = "interval", "trigger.words" = [2, 4] }
    stable = { "trigger.kind" = "stable", "trigger.words" = 2 }
"""


def test_a_sweep_draws_each_plan_once_per_plan_settings_with_the_bytes_of_fresh_draws(tmp_path, monkeypatch):
    from streamrag.sweep import SerialExecutor, load_grid, run_sweep
    from streamrag.sweep.points import prepared_for
    from streamrag.sweep.work import execute_point

    drawn: list[str] = []
    draw = planning._draw

    def counted(settings, key, *rest):
        drawn.append(key)
        return draw(settings, key, *rest)

    monkeypatch.setattr(planning, "_draw", counted)
    path = tmp_path / "grid.toml"
    path.write_text(textwrap.dedent(GRID), encoding="utf-8")
    result = run_sweep(load_grid(path), tmp_path / "out", executor=SerialExecutor())
    points = result.plan.runnable
    assert len(points) == 8
    assert len(drawn) == 2 * 40  # per L, each question once, not once per point
    for point in points:  # each point computed alone, its plans drawn anew
        fresh = execute_point(point.job, prepared_for(result.plan, point.job.input_ref))
        for name, data in fresh.files.items():
            assert (tmp_path / "out" / "points" / point.key / name).read_bytes() == data, (point.describe(), name)
    assert len(drawn) == 2 * 40 + 8 * 2 * 40  # alone: once for the rows, once for the trace


def test_the_draw_is_given_the_plan_settings_not_the_scenario():
    import inspect

    for draw in (planning._draw, planning._end_of_turn):
        annotations = [str(p.annotation) for p in inspect.signature(draw).parameters.values()]
        assert annotations[0] == "PlanSettings"
        assert not any("Scenario" in a for a in annotations), draw.__name__


def test_the_kept_draws_are_a_plans_fields_after_its_question():
    from dataclasses import fields

    from streamrag.pipeline.plan import QuestionPlan

    assert planning._Draws._fields == tuple(f.name for f in fields(QuestionPlan))[1:]
