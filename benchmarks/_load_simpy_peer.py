"""The SimPy peer of a streamrag load run: the same shape, written as SimPy is meant to be used.

Run by ``bench_load_simpy.py`` as a child process, beside ``streamrag simulate --table
TABLE --scenario load --set load.arrivals.n_sessions=N``:
``python benchmarks/_load_simpy_peer.py TABLE --sessions N [--out PEER.npz]``.
Prints one JSON line: its setup's and its simulation's CPU seconds, and the summary
statistics of the run; ``--out`` keeps the per-session answers for the comparison.

**Its inputs are streamrag's, prepared in advance (setup, timed apart).** The scenario
``load`` (:func:`streamrag.simulator.scenario.load_scenario`), its population from the
table (:func:`~streamrag.simulator.question_select.load_selected`), the arrival instants
(:func:`~streamrag.simulator.load.workload.open_arrivals` at the scenario's offered load),
the question each session asks (:func:`~streamrag.simulator.load.workload.draw_questions`)
and each session's plan — its word arrivals and its G, L, F per prefix — drawn on the
session's own streams (:func:`~streamrag.simulator.replay.planning.plan_question` with
:func:`~streamrag.simulator.load.workload.session_id`, as a load run draws it). A result's
verdict is data too: per question and prefix, the heuristic reflector's score and whether
it is sufficient (streamrag's :class:`~streamrag.pipeline.reflectors.HeuristicReflector`,
built by the scenario, asked once per prefix). The simulation touches none of streamrag.

**The model** (one :class:`simpy.Environment`, µs as integers; each system has its own
:class:`simpy.Resource` of 4 FIFO servers for the tool; the LLM is unlimited: a delay):

- an arrival process starts, per session, one process per system;
- *baseline*: after the last word, G, then the tool (a request, then L), then F;
- *streaming*: a timeout per word at the cadence; the interval trigger (3 words since the
  last fire) fires a call unless 4 are in flight — a completion at the instant of a word
  still holds its slot for that word — else the fire waits for the next word (the trigger
  is not reset: ``capped_fire = "defer"``); each call is a process: G, then a tool request,
  then L, then it reports to its session. The call fired on the last word waits for the
  reflector's first look (``turn_end_order = "reflector_first"``). At the end of the turn
  (after what finishes at that instant, as in streamrag: a zero timeout) the reflector
  judges the best finished result (highest score, first finished on ties); if it is not
  sufficient, the held call starts and each completion re-judges the best of all finished
  results; with nothing left in flight it falls back to the full query (G + tool L).
  Once decided, the session's other calls are interrupted (:meth:`simpy.Process.interrupt`):
  a call waiting for a server leaves the queue, a call in service frees its server (the
  request's ``with`` block). Then F.

Warm-up and counting as a load run: sessions arriving before ``load.warmup_s`` are
simulated and not counted; utilization is the busy server time over the servers times
the span from the first tool request to the system's last answer.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import resource
import sys
import time
from collections.abc import Generator, Sequence
from typing import Any, NamedTuple

import numpy as np
import simpy


class Session(NamedTuple):
    """One session's inputs, drawn by streamrag in advance (µs)."""

    arrival_us: int
    word_us: tuple[int, ...]
    """Offsets from the arrival of words 1..n."""
    end_of_turn_us: int
    g_us: tuple[int, ...]
    l_us: tuple[int, ...]
    f_us: int
    score: tuple[float, ...]
    """The reflector's score of a call on prefix t at t − 1 (its pick: the highest)."""
    sufficient: tuple[bool, ...]
    """Its verdict on prefix t at t − 1."""


class Rules(NamedTuple):
    """The streaming arm's settings this model follows (read off the scenario)."""

    words: int
    """The interval trigger: a fire once this many words arrived since the last."""
    cap: int
    """Calls in flight at most."""


class System:
    """One system: its tool servers and what its report needs."""

    __slots__ = ("answer_us", "busy_us", "env", "fired", "first_us", "last_us", "tool")

    def __init__(self, env: simpy.Environment, servers: int, n: int) -> None:
        self.env = env
        self.tool = simpy.Resource(env, capacity=servers)
        self.busy_us = 0
        self.first_us = -1
        """The first tool request (the start of the report's span)."""
        self.last_us = 0
        """The last answer (its end)."""
        self.answer_us = [-1] * n
        """Per session: answer ready − last word (µs)."""
        self.fired = [0] * n

    def tool_stage(self, l_us: int) -> Generator[simpy.Event, Any, None]:
        """The tool call: wait for a server (FIFO), hold it for ``l_us``. Interrupted,
        the request leaves the queue or frees its server (the ``with`` block)."""
        env = self.env
        with self.tool.request() as req:
            if self.first_us < 0:
                self.first_us = env.now
            yield req
            started = env.now
            try:
                yield env.timeout(l_us)
            finally:
                self.busy_us += env.now - started

    def answered(self, i: int, s: Session) -> None:
        now = self.env.now
        self.answer_us[i] = now - s.arrival_us - s.word_us[-1]
        self.last_us = now


def baseline(system: System, i: int, s: Session) -> Generator[simpy.Event, Any, None]:
    """At the end of the turn: G, the tool L, F on the full query."""
    env = system.env
    n = len(s.word_us)
    system.fired[i] = 1
    yield env.timeout(s.word_us[-1] + s.end_of_turn_us + s.g_us[n - 1])
    yield from system.tool_stage(s.l_us[n - 1])
    yield env.timeout(s.f_us)
    system.answered(i, s)


class Call:
    __slots__ = ("idx", "proc", "t")

    def __init__(self, idx: int, t: int) -> None:
        self.idx = idx
        self.t = t
        self.proc: simpy.Process | None = None
        """None: held for the reflector's first look (not started)."""


class Streaming:
    """One session's streaming arm: its process (:meth:`run`) and its calls' reports."""

    __slots__ = (
        "decided",
        "finished",
        "fired",
        "freed_at_us",
        "i",
        "in_flight",
        "n_calls",
        "n_freed",
        "rules",
        "s",
        "system",
        "waiting",
        "waiting_for",
    )

    def __init__(self, system: System, i: int, s: Session, rules: Rules) -> None:
        self.system = system
        self.i = i
        self.s = s
        self.rules = rules
        self.in_flight: dict[int, Call] = {}
        self.finished: list[Call] = []
        """Completed calls, in completion order."""
        self.n_calls = 0
        self.fired = 0
        self.freed_at_us = -1
        self.n_freed = 0
        """Calls completed at ``freed_at_us``: their slots count for a word at that instant."""
        self.waiting = False
        self.waiting_for: Call | None = None
        self.decided = system.env.event()

    def run(self) -> Generator[simpy.Event, Any, None]:
        env, s, rules = self.system.env, self.s, self.rules
        n = len(s.word_us)
        last_t = 0
        held: Call | None = None
        heard_us = 0
        for t, word_us in enumerate(s.word_us, start=1):
            yield env.timeout(word_us - heard_us)
            heard_us = word_us
            if t - last_t < rules.words:
                continue
            occupied = len(self.in_flight) + (self.n_freed if self.freed_at_us == env.now else 0)
            if occupied >= rules.cap:
                continue  # deferred: the trigger is not reset, the next word tries again
            last_t = t
            call = self._fire(t)
            if t == n and s.end_of_turn_us == 0:
                held = call  # the reflector looks before it starts
            else:
                self._start(call)
        # The end of the turn: after whatever finishes at this instant (a zero timeout is
        # processed after the events already scheduled for now).
        yield env.timeout(s.end_of_turn_us)
        chosen = self._judge()
        if chosen is not None:
            if held is not None:  # never started: not counted as fired
                del self.in_flight[held.idx]
                self.fired -= 1
            self._decide(chosen)
        else:
            if held is not None:
                self._start(held)
            self._wait()
        if not self.decided.triggered:
            yield self.decided
        yield env.timeout(s.f_us)
        self.system.answered(self.i, s)
        self.system.fired[self.i] = self.fired

    def _fire(self, t: int) -> Call:
        self.n_calls += 1
        call = Call(self.n_calls, t)
        self.in_flight[call.idx] = call
        self.fired += 1
        return call

    def _start(self, call: Call) -> None:
        call.proc = self.system.env.process(self._call(call))

    def _call(self, call: Call) -> Generator[simpy.Event, Any, None]:
        """G, then the tool; report the result. Interrupted: withdrawn."""
        try:
            yield self.system.env.timeout(self.s.g_us[call.t - 1])
            yield from self.system.tool_stage(self.s.l_us[call.t - 1])
        except simpy.Interrupt:
            return
        self._completed(call)

    def _completed(self, call: Call) -> None:
        now = self.system.env.now
        del self.in_flight[call.idx]
        if self.freed_at_us == now:
            self.n_freed += 1
        else:
            self.freed_at_us, self.n_freed = now, 1
        self.finished.append(call)
        if self.waiting_for is call:
            self.decided.succeed(call)
        elif self.waiting:
            self.waiting = False
            chosen = self._judge()
            if chosen is None:
                self._wait()
            else:
                self._decide(chosen)

    def _judge(self) -> Call | None:
        """The best finished result (first finished on ties), if it is sufficient."""
        score = self.s.score
        best: Call | None = None
        best_score = -math.inf
        for call in self.finished:
            if best is None or score[call.t - 1] > best_score:
                best, best_score = call, score[call.t - 1]
        return best if best is not None and self.s.sufficient[best.t - 1] else None

    def _wait(self) -> None:
        """Wait for the next completion; with nothing in flight, refire the full query."""
        if self.in_flight:
            self.waiting = True
            return
        call = self._fire(len(self.s.word_us))
        self.waiting_for = call
        self._start(call)

    def _decide(self, chosen: Call) -> None:
        for call in self.in_flight.values():
            call.proc.interrupt()  # type: ignore[union-attr]  # every call still in flight has started
        self.in_flight.clear()
        self.decided.succeed(chosen)


def arrivals(
    env: simpy.Environment, sessions: Sequence[Session], streaming: System, base: System, rules: Rules
) -> Generator[simpy.Event, Any, None]:
    """Each session at its arrival instant, in both systems."""
    for i, s in enumerate(sessions):
        yield env.timeout(s.arrival_us - env.now)
        env.process(baseline(base, i, s))
        env.process(Streaming(streaming, i, s, rules).run())


def simulate(sessions: Sequence[Session], rules: Rules, servers: int) -> tuple[System, System]:
    """Both systems' runs on one clock: (streaming, baseline)."""
    env = simpy.Environment()
    streaming, base = System(env, servers, len(sessions)), System(env, servers, len(sessions))
    env.process(arrivals(env, sessions, streaming, base, rules))
    env.run()
    return streaming, base


# -- setup: streamrag's inputs --------------------------------------------------------------


def prepare(table: str, n: int) -> tuple[list[Session], Rules, int, int]:
    """(sessions, rules, tool servers, warm-up µs) of ``simulate --table TABLE --scenario
    load --set load.arrivals.n_sessions=N``, drawn with streamrag's own functions."""
    from streamrag.pipeline.reflectors import HeuristicReflector
    from streamrag.pipeline.triggers import WordIntervalTrigger
    from streamrag.simulator.load.checks import tool_servers
    from streamrag.simulator.load.workload import draw_questions, open_arrivals, session_id
    from streamrag.simulator.question_select import load_selected
    from streamrag.simulator.replay.planning import plan_question
    from streamrag.simulator.scenario import load_scenario

    rs = load_scenario("load", [f"load.arrivals.n_sessions={n}"])
    sc = rs.scenario
    rules = rs.arm_rules
    if (rules.capped_fire, rules.turn_end_order, rules.slot_release, rules.rejudge, rules.fallback, rules.ranking) != (
        "defer", "reflector_first", "after_words", "best_of_completed", "refire", "free"
    ):  # fmt: skip
        raise SystemExit(f"_load_simpy_peer: the model follows the anchor's rules, not {rules}")
    qs = load_selected(sc, data=None, table=table, evidence=None, ids=None, cache=None, jobs=1).questions
    servers = tool_servers(rs)
    assert servers is not None and sc.load is not None
    instants = itertools.islice(open_arrivals(sc.load.arrivals, sc.seed, servers, rs.stages.L.mean_ms), n)  # type: ignore[arg-type]
    asked = draw_questions(sc.seed, n, len(qs))
    verdicts: dict[int, tuple[tuple[float, ...], tuple[bool, ...]]] = {}
    words: int | None = None
    sessions = []
    for i, at in enumerate(instants):
        k = int(asked[i])
        q = qs[k]
        if k not in verdicts:
            reflector = sc.reflector.build(q)
            trigger = sc.trigger.build(q)
            if not isinstance(reflector, HeuristicReflector) or not isinstance(trigger, WordIntervalTrigger):
                raise SystemExit(
                    "_load_simpy_peer: the model's reflector is the heuristic on evidence, its trigger an interval of words"
                )
            words = trigger.words
            judged = [reflector.judge(t) for t in range(1, q.n_words + 1)]
            verdicts[k] = (
                tuple(-math.inf if v.score is None else v.score for v in judged),
                tuple(v.sufficient for v in judged),
            )
        plan = plan_question(q, rs, stream_id=session_id(i))
        sessions.append(Session(at, plan.word_us, plan.end_of_turn_us, plan.g_us, plan.l_us, plan.f_us, *verdicts[k]))
    assert words is not None and rules.max_threads is not None
    return sessions, Rules(words, rules.max_threads), servers, round(sc.load.warmup_s * 1e6)


def _stats(answer_us: np.ndarray) -> dict[str, float]:
    """p50 and p90 (ms) as a load run's summary computes them (``numpy.quantile``)."""
    q = np.quantile(answer_us / 1000, [0.5, 0.9])
    return {"median": float(q[0]), "p90": float(q[1]), "mean": float((answer_us / 1000).mean())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table")
    ap.add_argument("--sessions", type=int, required=True)
    ap.add_argument("--out", help="an .npz of the per-session answers (µs) and calls fired")
    args = ap.parse_args(argv)
    sessions, rules, servers, warmup_us = prepare(args.table, args.sessions)
    setup_cpu_s = time.process_time()  # the interpreter, its imports and the inputs drawn
    started = time.process_time()
    wall0 = time.perf_counter()
    streaming, base = simulate(sessions, rules, servers)
    sim_cpu_s = time.process_time() - started
    sim_wall_s = time.perf_counter() - wall0
    arrival = np.array([s.arrival_us for s in sessions], dtype=np.int64)
    counted = arrival >= warmup_us
    out: dict[str, Any] = {
        "sessions": len(sessions),
        "counted": int(counted.sum()),
        "setup_cpu_s": setup_cpu_s,
        "sim_cpu_s": sim_cpu_s,
        "sim_wall_s": sim_wall_s,
        "simpy": simpy.__version__,
    }
    for name, system in (("streaming", streaming), ("baseline", base)):
        answer = np.array(system.answer_us, dtype=np.int64)
        ok = counted & (answer >= 0)
        out[name] = {
            "answer_ms": _stats(answer[ok]),
            "calls_fired": {"mean": float(np.array(system.fired)[counted].mean())},
            "tool_utilization": system.busy_us / (servers * max(1, system.last_us - system.first_us)),
        }
    if args.out:
        np.savez(
            args.out,
            arrival_us=arrival,
            streaming_us=np.array(streaming.answer_us, dtype=np.int64),
            baseline_us=np.array(base.answer_us, dtype=np.int64),
            fired=np.array(streaming.fired, dtype=np.int64),
        )
    out["rusage_cpu_s"] = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
