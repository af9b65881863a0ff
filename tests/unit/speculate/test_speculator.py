"""The public Speculator: partial transcripts with revisions, cancellable calls of any
async tool, pluggable reflectors, shadow mode; run on plain asyncio, as agents do."""

from __future__ import annotations

import ast
import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import streamrag
from streamrag.base.errors import ConfigError, ToolError

ROOT = Path(__file__).resolve().parents[3]
EVERY_WORD = ["trigger.kind=every_word", "pipeline.max_threads=0"]  # no cap: every word fires


def scenario(overrides=EVERY_WORD):
    return streamrag.load_scenario("paper_rq3", overrides)


class Recording:
    """An async tool that sleeps ``delay_s`` and records what was started, finished, cancelled."""

    def __init__(self, delay_s=0.03, fail=None):
        self.delay_s, self.fail = delay_s, fail
        self.started, self.finished, self.cancelled = [], [], []

    async def __call__(self, query):
        self.started.append(query)
        try:
            await asyncio.sleep(self.delay_s)
        except asyncio.CancelledError:
            self.cancelled.append(query)
            raise
        if self.fail is not None and self.fail(query):
            raise RuntimeError(f"backend down for {query!r}")
        self.finished.append(query)
        return {"answer": query.upper()}


def kinds(events, kind):
    return [e for e in events if e["kind"] == kind]


def test_the_agent_loop_example_needs_only_import_streamrag_and_saves_the_call() -> None:
    path = ROOT / "examples" / "agent_loop.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert imported == {"asyncio", "streamrag"} and not any(isinstance(n, ast.ImportFrom) for n in ast.walk(tree))
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and getattr(n.value, "id", "") == "streamrag"}
    assert used <= set(streamrag.__all__)
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 30
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, check=True, env=env, timeout=60).stdout
    assert "result=['Madrid is the capital of Spain.'] speculative=True prefix=6/7" in out
    saved = float(re.search(r"saved_ms=(-?[\d.]+)", out).group(1))
    assert 30 < saved < 80  # the 50 ms call was made while the user was still speaking
    assert "stale=1" in out  # "capitol" was revised: its call was stale


def test_a_revision_cancels_the_stale_call_and_the_new_words_fire_again() -> None:
    tool = Recording(delay_s=0.2)

    async def turn():
        async with streamrag.Speculator(tool, scenario(), reflector="unchanged") as spec:
            spec.hear("book a table in paris")
            await asyncio.sleep(0.02)
            spec.hear("book a table in rome")  # the recognizer changed its mind
            await asyncio.sleep(0.02)
            return await spec.resolve(), spec.report(), list(spec.events)

    resolution, report, events = asyncio.run(turn())
    assert resolution.value == {"answer": "BOOK A TABLE IN ROME"} and resolution.speculative
    assert resolution.arguments == {"query": "book a table in rome"} and resolution.prefix_t == 5
    assert "book a table in paris" in tool.cancelled and "book a table in paris" not in tool.finished
    assert [(e["kept"], e["dropped"]) for e in kinds(events, "revise")] == [(4, 1)]
    revised = [e["call"] for e in kinds(events, "cancel") if e["reason"] == "revised"]
    assert revised == [5] and report.stale == 1 and report.revisions == 1
    assert [e["prefix_t"] for e in kinds(events, "fire")] == [1, 2, 3, 4, 5, 5]  # prefix 5 fired again on "rome"


def test_calls_no_longer_wanted_are_cancelled_once_a_result_is_chosen() -> None:
    tool = Recording(delay_s=0.1)

    async def turn():
        async with streamrag.Speculator(tool, scenario(), reflector=lambda full, call: call.prefix_t >= 2) as spec:
            for text in ["where is", "where is the", "where is the station"]:
                spec.hear(text)
                await asyncio.sleep(0.03)
            answer = await spec.resolve()
            await asyncio.sleep(0.2)  # a cancelled call would have finished by now
            return answer, list(spec.events)

    answer, events = asyncio.run(turn())
    assert answer.speculative and answer.prefix_t == 2 and answer.query == "where is"
    assert sorted(tool.cancelled) == ["where is the", "where is the station"]
    assert {e["reason"] for e in kinds(events, "cancel")} == {"reflector"}
    assert not kinds(events, "tool_done")[2:]  # only the calls on prefixes 1 and 2 ended


def test_nothing_sufficient_calls_the_full_query_and_no_baseline_runs_without_shadow() -> None:
    tool = Recording()

    async def turn(shadow):
        async with streamrag.Speculator(tool, scenario(), reflector=lambda full, call: False, shadow=shadow) as spec:
            spec.hear("turn on the lights", final=True)
            await asyncio.sleep(0.05)
            answer = await spec.resolve()
            return answer, await spec.settle(), list(spec.events)

    answer, report, events = asyncio.run(turn(False))
    assert not answer.speculative and answer.prefix_t == 4 and answer.value == {"answer": "TURN ON THE LIGHTS"}
    assert report.outcome == "fallback" and report.saved_ms is None
    assert {e["arm"] for e in kinds(events, "fire")} == {"streaming"}
    _, shadowed, events = asyncio.run(turn(True))
    assert [e["by"] for e in kinds(events, "fire") if e["arm"] == "baseline"] == ["baseline"]
    # a mis-fire: the call on the full words (held, the reflector looked first) is judged,
    # then the full query is called again (fallback = refire, the anchor's rule): one call late
    assert shadowed.saved_ms is not None and -45 < shadowed.saved_ms < -15


def test_a_failed_speculative_call_is_lost_and_a_failed_full_query_is_one_error() -> None:
    tool = Recording(fail=lambda q: q != "call mom")

    async def turn(text):
        async with streamrag.Speculator(tool, scenario(), reflector="unchanged") as spec:
            spec.hear(text, final=True)
            answer = await spec.resolve()
            return answer, list(spec.events)

    answer, events = asyncio.run(turn("call mom"))
    assert answer.value == {"answer": "CALL MOM"} and len(kinds(events, "tool_error")) == 1  # prefix "call" failed
    with pytest.raises(
        ToolError, match=r"tool Recording: the full query's call failed \(tool Recording: RuntimeError: backend down"
    ):
        asyncio.run(turn("call dad"))


def test_bad_settings_are_one_line_errors() -> None:
    with pytest.raises(ConfigError, match="pass judge="):
        streamrag.Speculator(Recording(), scenario())
    with pytest.raises(ConfigError, match="'stable' needs the question in advance"):
        streamrag.Speculator(Recording(), scenario(["trigger.kind=stable"]), reflector="unchanged")
    with pytest.raises(ConfigError, match="expected 'scenario', 'unchanged' or a callable"):
        streamrag.Speculator(Recording(), scenario(), reflector="newest")  # type: ignore[arg-type]

    def boom(full, call):
        return 1 / 0

    with pytest.raises(ConfigError, match="reflector boom: ZeroDivisionError"):
        asyncio.run(_one_word(streamrag.Speculator(Recording(), scenario(), reflector=boom)))

    async def not_json(**_):
        return 1

    spec = streamrag.Speculator(not_json, scenario(), reflector="unchanged", arguments=lambda q: {"when": object()})
    with pytest.raises(ToolError, match="arguments are not JSON-serializable"):
        asyncio.run(_one_word(spec))


async def _one_word(spec):
    async with spec:
        spec.hear("hello", final=True)
        return await spec.resolve()


def test_turns_follow_one_another_and_an_abandoned_turn_cancels_its_calls() -> None:
    tool = Recording(delay_s=0.1)

    async def session():
        async with streamrag.Speculator(tool, scenario(), reflector="unchanged") as spec:
            spec.hear("play some jazz")
            await asyncio.sleep(0.02)
            spec.cancel()  # the user was interrupted: nobody wants these calls
            await asyncio.sleep(0.01)
            first = spec.report()
            spec.hear("stop the music", final=True)
            answer = await spec.resolve()
            return first, answer, spec.report()

    first, answer, second = asyncio.run(session())
    assert sorted(tool.cancelled) == ["play", "play some", "play some jazz"] and first.outcome is None
    assert answer.value == {"answer": "STOP THE MUSIC"} and second.qid == "turn2" and second.n_words == 3


def test_a_retrieval_tool_is_judged_by_the_heuristic_rule_on_its_hits() -> None:
    from streamrag.engine.clock import RealClock
    from streamrag.live.backends import BM25Tool

    chunks = ["Madrid is the capital of Spain and its largest city.", "Paris is the capital of France.",
              "Rome is the capital of Italy.", "The Nile flows through Egypt.", "Berlin is known for its museums."]  # fmt: skip
    clock = RealClock()
    tool = BM25Tool(chunks, clock)  # a Tool (search(query, k)) and its own judge

    async def turn():
        async with streamrag.Speculator(tool, scenario(), clock=clock) as spec:
            for text in ["madrid", "madrid spain", "madrid spain largest city today"]:
                spec.hear(text)
                await asyncio.sleep(0.02)
            return await spec.resolve(), list(spec.events)

    answer, events = asyncio.run(turn())
    full = "madrid spain largest city today"
    assert answer.speculative and answer.prefix_t == 1 and answer.arguments == {"query": "madrid", "k": 3}
    assert answer.value.top[0] == 0
    (check,) = kinds(events, "check")  # the best finished result (first on ties) is sufficient at once
    assert (check["score"], check["coverage"]) == tool.judge(full, 0) and check["coverage"] == 0.8
    assert check["score"] >= 2.0 and answer.waited_ms < 20


def test_misuse_of_hear_is_named_not_an_internal_error(caplog: pytest.LogCaptureFixture) -> None:
    # hear(None), a NaN instant and a hear after the block closed once raised internal
    # errors or were taken silently; an unresolved final turn is abandoned with a word.
    tool = Recording()

    async def session():
        async with streamrag.Speculator(tool, scenario(), reflector="unchanged") as spec:
            with pytest.raises(TypeError, match="a str"):
                spec.hear(None)  # type: ignore[arg-type]
            with pytest.raises(ValueError, match="finite"):
                spec.hear("play", at_us=float("nan"))
            spec.hear("play some jazz", final=True)
            with caplog.at_level("WARNING", logger="streamrag.speculate.speculator"):
                spec.hear("stop")  # the final turn was never resolved
            spec.cancel()
        return spec

    spec = asyncio.run(session())
    assert any("never resolved" in r.getMessage() for r in caplog.records)
    with pytest.raises(RuntimeError, match="block has ended"):
        spec.hear("again")
