"""The streaming arm's state machine (streamrag.pipeline.arm) driven by hand: events in,
actions out, no clock — and the guard that its rules are written nowhere else."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from streamrag.pipeline.arm import ArmMachine, ArmRules
from streamrag.pipeline.calls import Call
from streamrag.pipeline.reflectors import PrefixReflector, Verdict
from streamrag.pipeline.triggers import EveryWordTrigger

PACKAGE = Path(__file__).resolve().parents[3] / "streamrag"


class Script:
    """A driver that records the machine's actions and a recorder that keeps its events."""

    def __init__(self) -> None:
        self.actions: list[tuple[str, int]] = []
        self.events: list[tuple[str, dict[str, Any]]] = []

    def start(self, call: Call) -> None:
        self.actions.append(("start", call.idx))

    def stop(self, call: Call) -> None:
        self.actions.append(("stop", call.idx))

    def answer(self, call: Call) -> None:
        self.actions.append(("answer", call.idx))

    def fail(self) -> None:
        self.actions.append(("fail", 0))

    def emit(self, kind: str, **fields: Any) -> None:
        self.events.append((kind, fields))


class Question:
    def __init__(self, n_words: int) -> None:
        self.n_words = n_words


def machine(n_words: int, t_star: int, end_of_turn_us: int = 0, **rules: Any) -> tuple[ArmMachine, Script]:
    script = Script()
    arm = ArmMachine(
        Question(n_words),
        EveryWordTrigger(),
        PrefixReflector(t_star),
        ArmRules(**rules),
        script,
        script,
        end_of_turn_us=end_of_turn_us,
    )
    return arm, script


@pytest.mark.parametrize(("capped_fire", "fires"), [("defer", [1, 3]), ("drop", [1, 3])])
def test_the_cap_blocks_a_fire_and_defer_retries_on_the_next_word(capped_fire: str, fires: list[int]) -> None:
    arm, script = machine(4, t_star=1, max_threads=1, capped_fire=capped_fire, slot_release="at_completion")
    arm.word(1, 100)
    arm.word(2, 200)  # the cap holds: call 1 is in flight
    arm.completed(arm.calls[0], 250)
    arm.word(3, 300)
    assert [c.prefix_t for c in arm.calls] == fires
    skips = [f["reason"] for kind, f in script.events if kind == "skip"]
    assert skips == ["deferred" if capped_fire == "defer" else "cap"] and arm.n_skipped == 1


def test_a_deferred_fire_is_taken_by_the_next_word_even_if_the_trigger_does_not_ask() -> None:
    arm, _ = machine(4, t_star=1, max_threads=1, capped_fire="defer", slot_release="at_completion")
    arm.trigger = _OnlyAt(frozenset({1, 2}))
    arm.word(1, 100)
    arm.word(2, 200)
    arm.completed(arm.calls[0], 250)
    arm.word(3, 300)  # the trigger says no; the deferred fire goes on prefix 3
    assert [c.prefix_t for c in arm.calls] == [1, 3]


@pytest.mark.parametrize(("slot_release", "fired_on_2"), [("after_words", False), ("at_completion", True)])
def test_a_slot_freed_at_the_instant_of_a_word_counts_by_the_slot_release_rule(slot_release: str, fired_on_2: bool) -> None:
    arm, _ = machine(4, t_star=1, max_threads=1, slot_release=slot_release)
    arm.word(1, 100)
    arm.completed(arm.calls[0], 200)  # completes at the very instant word 2 is heard
    arm.word(2, 200)
    assert (2 in [c.prefix_t for c in arm.calls]) is fired_on_2
    arm.word(3, 300)  # a later instant: the deferred fire takes the freed slot; else call 2 holds it
    assert [c.prefix_t for c in arm.calls] == ([1, 2] if fired_on_2 else [1, 3])


@pytest.mark.parametrize("order", ["reflector_first", "calls_first"])
def test_a_call_on_the_last_word_waits_for_the_first_look_only_under_reflector_first(order: str) -> None:
    arm, script = machine(3, t_star=2, turn_end_order=order, max_threads=None)
    for t in (1, 2, 3):
        arm.word(t, t * 100)
    arm.completed(arm.calls[1], 350)  # prefix 2: sufficient, in before the turn ends
    arm.reflect()
    arm.first_look()
    assert arm.chosen is arm.calls[1] and not arm.fallback
    if order == "reflector_first":
        assert ("start", 3) not in script.actions and [c.idx for c in arm.unstarted] == [3]
        assert arm.n_fired == 2 and arm.n_cancelled == 1  # call 1 stopped in flight; call 3 never started
    else:
        assert ("start", 3) in script.actions and arm.unstarted == []
        assert arm.n_fired == 3 and arm.n_cancelled == 2
    assert script.actions[-1] == ("answer", 2)


def test_an_end_of_turn_delay_starts_the_last_call_at_once() -> None:
    arm, script = machine(2, t_star=2, end_of_turn_us=500, max_threads=None)
    arm.word(1, 100)
    arm.word(2, 200)
    assert ("start", 2) in script.actions


class _HighestOnly(PrefixReflector):
    """Judges only the longest prefix finished (as the heuristic judges only the best
    score); sufficient only on prefix 1."""

    def pick(self, finished: list[tuple[int, int]]) -> list[tuple[int, int]]:
        return [max(finished, key=lambda pair: pair[1])] if finished else []

    def judge(self, prefix_t: int) -> Verdict:
        return Verdict(prefix_t == 1)


@pytest.mark.parametrize(("rejudge", "speculative"), [("best_of_completed", False), ("newest", True)])
def test_rejudge_says_what_is_judged_after_a_completion(rejudge: str, speculative: bool) -> None:
    arm, _ = machine(3, t_star=1, rejudge=rejudge, max_threads=None, turn_end_order="calls_first")
    arm.reflector = _HighestOnly(1)
    arm.word(1, 100)
    arm.word(2, 200)
    arm.reflect()
    arm.first_look()  # nothing in yet: wait
    arm.completed(arm.calls[1], 300)  # prefix 2: insufficient, wait again
    arm.completed(arm.calls[0], 400)  # prefix 1: sufficient, but only ``newest`` judges it alone
    assert arm.fallback is not speculative
    assert (arm.chosen is arm.calls[0]) is speculative


def test_rejudge_as_a_rule() -> None:
    assert ArmRules(rejudge="newest").judged_after([1, 2, 3], 3) == [3]
    assert ArmRules().judged_after([1, 2, 3], 3) == [1, 2, 3]


@pytest.mark.parametrize(("fallback", "fired_again"), [("refire", True), ("reuse", False)])
def test_nothing_sufficient_falls_back_by_refire_or_reuse(fallback: str, fired_again: bool) -> None:
    arm, script = machine(2, t_star=9, fallback=fallback, max_threads=None, turn_end_order="calls_first")
    arm.word(1, 100)
    arm.word(2, 200)
    arm.completed(arm.calls[0], 300)
    arm.completed(arm.calls[1], 400)
    arm.reflect()
    arm.first_look()
    assert arm.fallback
    if fired_again:
        assert arm.calls[-1].by == "reflector" and arm.chosen is None
        arm.completed(arm.calls[-1], 900)
        assert arm.chosen is arm.calls[-1]
    else:
        assert arm.chosen is arm.calls[1] and len(arm.calls) == 2
    assert script.actions[-1] == ("answer", arm.chosen.idx)


def test_a_lost_fallback_call_fails_the_session() -> None:
    arm, script = machine(1, t_star=9, max_threads=None, turn_end_order="calls_first")
    arm.word(1, 100)
    arm.completed(arm.calls[0], 200)
    arm.reflect()
    arm.first_look()
    arm.lost(arm.calls[-1])
    assert script.actions[-1] == ("fail", 0) and arm.chosen is None


def test_a_revision_cancels_the_calls_on_longer_prefixes_and_lets_them_fire_again() -> None:
    arm, script = machine(5, t_star=1, max_threads=None)
    for t in (1, 2, 3):
        arm.word(t, t * 100)
    arm.revise(1)
    assert {c.idx for c in arm.in_flight.values()} == {1} and ("stop", 2) in script.actions
    arm.word(2, 400)
    assert arm.calls[-1].prefix_t == 2 and arm.calls[-1].idx == 4


def test_a_closed_arm_takes_no_action() -> None:
    arm, _ = machine(3, t_star=1)
    arm.close()
    with pytest.raises(RuntimeError, match="over"):
        arm.word(1, 100)


class _OnlyAt:
    tick_us = None
    kills_in_flight = False

    def __init__(self, words: frozenset[int]) -> None:
        self.words = words

    def on_word(self, t: int) -> bool:
        return t in self.words

    def on_tick(self, t: int) -> bool:
        return False

    def fired(self, t: int) -> None:
        pass


# --- written once ---------------------------------------------------------------------

RULE = re.compile(r"\b(capped_fire|slot_release|turn_end_order|rejudge|fallback|max_threads)\s*(==|!=|\bin\b)")


def test_the_arm_rules_are_decided_only_in_the_arm_machine() -> None:
    # A rule compared anywhere else is a second copy of it (the engine's driver, the
    # closed form, predict and the Speculator only wait and read the machine).
    others = [p for p in PACKAGE.rglob("*.py") if p.parent.name != "arm" or p.parent.parent.name != "pipeline"]
    found = [
        f"{p.relative_to(PACKAGE)}:{i}"
        for p in others
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if RULE.search(line)
    ]
    assert found == []


@pytest.mark.parametrize(
    ("module", "uses"),
    [
        ("pipeline/streaming.py", "ArmMachine"),
        ("simulator/replay/closed.py", "ArmMachine"),
        ("simulator/predict/saving.py", "replay_arm"),
    ],
)
def test_every_route_drives_the_one_machine(module: str, uses: str) -> None:
    tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    called = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert uses in imported and uses in called
