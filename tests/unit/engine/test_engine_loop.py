"""The virtual-time loop: exact instants, the same-instant rule, deadlocks, live mode."""

from __future__ import annotations

import asyncio
import time

import anyio
import pytest
from _simhelpers import const_scenario, table_q

from streamrag.base.errors import DeadlockError
from streamrag.engine.clock import Clock, Priority, RealClock, VirtualClock
from streamrag.engine.loop import run_real, run_virtual
from streamrag.engine.trace import Recorder
from streamrag.pipeline.streaming import simulate_question
from streamrag.simulator.replay.planning import plan_question


def test_same_instant_order_is_time_then_priority_then_registration():
    async def main(clock: VirtualClock):
        log = []

        async def at(name, t_us, prio):
            await clock.sleep_until_us(t_us, prio)
            log.append((clock.now_us(), name))

        async with anyio.create_task_group() as tg:
            # registered in this order (seq); priorities deliberately scrambled
            tg.start_soon(at, "turn_end", 1_000, Priority.TURN_END)
            tg.start_soon(at, "word-a", 1_000, Priority.INPUT)
            tg.start_soon(at, "done", 1_000, Priority.COMPLETION)
            tg.start_soon(at, "word-b", 1_000, Priority.INPUT)
            tg.start_soon(at, "tick", 1_000, Priority.TICK)
            tg.start_soon(at, "early", 999, Priority.DEFAULT)
        return log

    assert run_virtual(main) == [
        (999, "early"),
        (1_000, "done"),
        (1_000, "word-a"),
        (1_000, "word-b"),
        (1_000, "tick"),
        (1_000, "turn_end"),
    ]


def test_a_wake_up_and_its_cascade_run_before_the_next_wake_up():
    # "a" wakes at 5 and hands off through an Event to "c"; "b" also wakes at 5 but
    # later in (priority, seq): c's reaction must come before b.
    async def main(clock: VirtualClock):
        log = []
        ev = anyio.Event()

        async def a():
            await clock.sleep_until_us(5, Priority.COMPLETION)
            log.append("a")
            ev.set()

        async def b():
            await clock.sleep_until_us(5, Priority.INPUT)
            log.append("b")

        async def c():
            await ev.wait()
            log.append("c")

        async with anyio.create_task_group() as tg:
            tg.start_soon(c)
            tg.start_soon(b)
            tg.start_soon(a)
        return log

    assert run_virtual(main) == ["a", "c", "b"]


def test_hours_of_anyio_timers_run_instantly_in_virtual_time():
    async def main(clock: VirtualClock):
        await anyio.sleep(3 * 3600)  # native asyncio timer
        after_sleep = clock.now_us()
        with anyio.move_on_after(2.5):
            await clock.sleep_us(10_000_000)
        return after_sleep, clock.now_us()

    wall = time.perf_counter()
    assert run_virtual(main) == (3 * 3600 * 1_000_000, 3 * 3600 * 1_000_000 + 2_500_000)
    assert time.perf_counter() - wall < 5  # no real sleeping (generous for slow CI)


def test_the_clock_is_narrow_and_a_negative_sleep_is_an_error():
    async def main(clock: VirtualClock):
        await clock.sleep_until_us(1_250_000)
        a = clock.now_us()
        await clock.sleep_us(7)
        await clock.sleep_until_us(3)  # in the past: returns at once, time does not go back
        with pytest.raises(ValueError, match="negative duration"):
            await clock.sleep_us(-1)
        return a, clock.now_us()

    assert run_virtual(main) == (1_250_000, 1_250_007)
    # what the pipeline may use of a clock, and nothing else
    members = {m for m in vars(Clock) if not m.startswith("_")}
    assert members == {"now_us", "sleep_us", "sleep_until_us", "call_at_us"}


def test_timer_callbacks_run_in_the_kernel_order_and_can_be_cancelled():
    async def main(clock: VirtualClock):
        log: list[tuple[int, str]] = []
        clock.call_at_us(5, Priority.TURN_END, lambda: log.append((clock.now_us(), "turn-end")))
        clock.call_at_us(5, Priority.COMPLETION, lambda: log.append((clock.now_us(), "completion")))
        dropped = clock.call_at_us(3, Priority.COMPLETION, lambda: log.append((clock.now_us(), "cancelled")))
        clock.call_at_us(-7, Priority.DEFAULT, lambda: log.append((clock.now_us(), "past: now")))
        dropped.cancel()
        # a callback scheduled at this instant by an earlier one takes its place by the
        # rule (t, priority, seq): a completion still comes before the end of turn
        clock.call_at_us(5, Priority.INPUT, lambda: clock.call_at_us(5, Priority.COMPLETION, lambda: log.append((5, "chained"))))
        await clock.sleep_until_us(10)
        return log

    assert run_virtual(main) == [(0, "past: now"), (5, "completion"), (5, "chained"), (5, "turn-end")]


def test_deadlock_is_detected_with_the_virtual_time():
    async def main(clock: VirtualClock):
        await clock.sleep_us(1_500_000)
        never = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(never.wait, name="stuck-helper")
            await never.wait()

    with pytest.raises(DeadlockError) as info:
        run_virtual(main)
    assert info.value.virtual_time_s == 1.5
    assert "stuck-helper" in str(info.value)
    assert "1.500000 s" in str(info.value)


def test_live_mode_runs_the_same_pipeline_on_the_real_clock():
    # δ = 20 w/s (words at 50, 100, 150, 200 ms), interval 2 words, G = 20, L = 40,
    # F = 40 ms; trace-driven t* = 1. Expected (ms): call 1 fired 100, G → 120, L → 160;
    # word 4 at 200 fires call 2; end of turn 200: call 1 sufficient → call 2 cancelled,
    # F → 240; baseline 200 → 220 → 260 → 300. Events ≥ 20 ms apart are checked in order.
    q = table_q("live", n=4, t_sc=1)
    rs = const_scenario(delta=20, G=20, L=40, F=40, trigger={"kind": "interval", "words": 2})
    plan = plan_question(q, rs)
    sc = rs.scenario

    async def main(clock: Clock):
        rec = Recorder(q.interaction_id, clock, clock.now_us(), validate=True)
        await simulate_question(clock, plan, sc.trigger.build(q), sc.reflector.build(q), rs.arm_rules, rec)
        return rec.events

    events = run_real(main)
    assert isinstance(RealClock(), Clock)

    def t_of(kind, **match):
        return next(e["t_us"] for e in events if e["kind"] == kind and all(e.get(k) == v for k, v in match.items()))

    ordered = [
        t_of("word", word=1),
        t_of("word", word=2),
        t_of("gen_done", arm="streaming", call=1),
        t_of("word", word=3),
        t_of("tool_done", arm="streaming", call=1),
        t_of("word", word=4),
        t_of("gen_done", arm="baseline"),
        t_of("answer_ready", arm="streaming"),
        t_of("tool_done", arm="baseline"),
        t_of("answer_ready", arm="baseline"),
    ]
    assert ordered == sorted(ordered)
    decision = next(e for e in events if e["kind"] == "decision")
    assert (decision["outcome"], decision["call"]) == ("speculative", 1)
    assert [e["call"] for e in events if e["kind"] == "cancel"] == [2]
    # real time elapsed: at least the nominal schedule (never earlier than planned)
    assert t_of("answer_ready", arm="baseline") >= 300_000
    assert t_of("tool_done", arm="streaming", call=1) >= 160_000


def test_run_virtual_from_inside_a_running_loop() -> None:
    # A notebook kernel already runs an asyncio loop in its thread.
    async def timeline(clock):
        await clock.sleep_us(1_500_000)
        return clock.now_us()

    async def application() -> int:
        return run_virtual(timeline)

    assert asyncio.run(application()) == 1_500_000
