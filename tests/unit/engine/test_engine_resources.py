"""Resources: servers and queues, disciplines, rejection, cancellation, batching — exact timelines."""

from __future__ import annotations

from typing import Any

import pytest

from streamrag.engine.clock import VirtualClock
from streamrag.engine.loop import run_virtual
from streamrag.engine.resources import CONFIRMED, SPECULATIVE, Batching, Job, Servers, Unlimited, resource_report


class Log:
    """Collects (µs, what) pairs and stands in for a session's recorder."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.items: list[tuple[int, str]] = []
        self.events: list[dict[str, Any]] = []

    def note(self, what: str):
        return lambda: self.items.append((self.clock.now_us(), what))

    def emit(self, kind: str, **fields: Any) -> None:
        self.events.append({"t_us": self.clock.now_us(), "kind": kind, **fields})


def _job(log: Log, name: str, work: int, job_class: int = CONFIRMED) -> Job:
    return Job(work, job_class=job_class, on_start=log.note(f"{name} start"), on_done=log.note(f"{name} done"),
               on_reject=log.note(f"{name} rejected"), rec=log, stage="L", call=int(name[1:]))  # fmt: skip


def _at(clock: VirtualClock, t_us: int, fn) -> None:
    clock.call_at_us(t_us, 4, fn)


def test_two_servers_fifo_exact_timeline():
    async def main(clock: VirtualClock):
        log = Log(clock)
        res = Servers(clock, name="tool", servers=2)
        for i, (at, work) in enumerate([(0, 300), (100, 300), (150, 100), (200, 50)], start=1):
            _at(clock, at, lambda i=i, work=work: res.submit(_job(log, f"j{i}", work)))
        await clock.sleep_until_us(10_000)
        return log, res

    log, res = run_virtual(main)
    # j1 0-300 (server 0), j2 100-400 (server 1); j3 waits 150→300 and runs on server 0
    # until 400; j4 waits 200→400: j2's completion was scheduled first (at 100), so it
    # frees server 1 first and j4 takes it. A freed server
    # takes the next waiting job before the finished job's caller hears of it, so a
    # follow-up stage the caller submits queues behind jobs that waited longer.
    assert log.items == [
        (0, "j1 start"), (100, "j2 start"), (300, "j3 start"), (300, "j1 done"), (400, "j4 start"), (400, "j2 done"),
        (400, "j3 done"), (450, "j4 done"),
    ]  # fmt: skip
    serves = [(e["t_us"], e["call"], e["server"]) for e in log.events if e["kind"] == "serve"]
    assert serves == [(0, 1, 0), (100, 2, 1), (300, 3, 0), (400, 4, 1)]
    report = resource_report(res, 10_000)
    assert report is not None
    # waits: j3 150, j4 200 → mean over 4 jobs 87.5 µs; busy 750 µs of 2 servers over [0, 10 ms]
    assert report["wait_ms"]["mean"] == pytest.approx(0.0875)
    assert report["utilization"] == pytest.approx(750 / (2 * 10_000))
    little = report["littles_law"]
    assert little["L"] == pytest.approx(little["lambda_per_s"] * little["W_s"])


def test_priority_serves_confirmed_work_first_and_fifo_within_a_class():
    async def main(clock: VirtualClock):
        log = Log(clock)
        res = Servers(clock, name="tool", servers=1, discipline="priority")
        _at(clock, 0, lambda: res.submit(_job(log, "j1", 100)))
        _at(clock, 10, lambda: res.submit(_job(log, "j2", 100, SPECULATIVE)))
        _at(clock, 20, lambda: res.submit(_job(log, "j3", 100, SPECULATIVE)))
        _at(clock, 30, lambda: res.submit(_job(log, "j4", 100, CONFIRMED)))
        await clock.sleep_until_us(1000)
        return log

    starts = [what for _, what in run_virtual(main).items if what.endswith("start")]
    assert starts == ["j1 start", "j4 start", "j2 start", "j3 start"]


def test_a_full_queue_rejects_and_cancelling_frees_or_keeps_the_server():
    async def main(clock: VirtualClock, cancel: str):
        log = Log(clock)
        res = Servers(clock, name="tool", servers=1, queue_limit=1, cancel=cancel)  # type: ignore[arg-type]
        jobs = {name: _job(log, name, 500) for name in ("j1", "j2", "j3")}
        _at(clock, 0, lambda: res.submit(jobs["j1"]))
        _at(clock, 10, lambda: res.submit(jobs["j2"]))  # waits
        _at(clock, 20, lambda: res.submit(jobs["j3"]))  # queue full: rejected
        _at(clock, 100, jobs["j1"].cancel)  # in service
        await clock.sleep_until_us(5000)
        return log.items

    frees = run_virtual(lambda clock: main(clock, "frees"))
    assert frees == [(0, "j1 start"), (20, "j3 rejected"), (100, "j2 start"), (600, "j2 done")]
    completes = run_virtual(lambda clock: main(clock, "completes"))
    # the cancelled call runs on until 500 (its result dropped): j2 starts only then
    assert completes == [(0, "j1 start"), (20, "j3 rejected"), (500, "j2 start"), (1000, "j2 done")]


def test_a_job_cancelled_while_waiting_never_starts():
    async def main(clock: VirtualClock):
        log = Log(clock)
        res = Servers(clock, name="llm", servers=1)
        j1, j2, j3 = (_job(log, n, 100) for n in ("j1", "j2", "j3"))
        _at(clock, 0, lambda: [res.submit(j) for j in (j1, j2, j3)])
        _at(clock, 50, j2.cancel)
        await clock.sleep_until_us(1000)
        return log

    log = run_virtual(main)
    assert log.items == [(0, "j1 start"), (100, "j3 start"), (100, "j1 done"), (200, "j3 done")]
    assert [(e["kind"], e["server"]) for e in log.events if e["kind"] == "withdraw"] == [("withdraw", -1)]


def test_continuous_batching_shares_the_llm_with_a_linear_slowdown():
    # s(b) = 1 + 0.5·(b − 1): two requests at once each run at rate 1/1.5.
    # j1 (work 300) alone from 0; j2 (work 300) joins at 100 → both at 2/3: j1 has 200
    # left → done at 100 + 300 = 400; j2 then has 300 − 200 = 100 left, alone → 500.
    async def main(clock: VirtualClock):
        log = Log(clock)
        llm = Batching(clock, name="llm", max_batch=4, slowdown=0.5)
        _at(clock, 0, lambda: llm.submit(_job(log, "j1", 300)))
        _at(clock, 100, lambda: llm.submit(_job(log, "j2", 300)))
        await clock.sleep_until_us(2000)
        return log.items

    assert run_virtual(main) == [(0, "j1 start"), (100, "j2 start"), (400, "j1 done"), (500, "j2 done")]


def test_batch_limit_queues_the_rest():
    async def main(clock: VirtualClock):
        log = Log(clock)
        llm = Batching(clock, name="llm", max_batch=1, slowdown=0.0)
        for name in ("j1", "j2"):
            llm.submit(_job(log, name, 100))
        await clock.sleep_until_us(1000)
        return log.items

    assert run_virtual(main) == [(0, "j1 start"), (100, "j2 start"), (100, "j1 done"), (200, "j2 done")]


def test_unlimited_starts_everything_at_once_and_emits_nothing():
    async def main(clock: VirtualClock):
        log = Log(clock)
        res = Unlimited(clock)
        for name in ("j1", "j2"):
            res.submit(_job(log, name, 100))
        await clock.sleep_until_us(1000)
        return log

    log = run_virtual(main)
    assert log.items == [(0, "j1 start"), (0, "j2 start"), (100, "j1 done"), (100, "j2 done")] and log.events == []
