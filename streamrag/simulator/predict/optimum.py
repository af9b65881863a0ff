"""The offline optimum of a question: the best fire schedule under the simulator's own rules.

A **schedule** is the set of prefixes a speculative call is fired on (at the word that
completes the prefix, the first instant it is known). Its **score** at a price λ ≥ 0 (ms
per call) is ``saved_ms − λ·extra_calls``, extra calls = calls fired − 1 (design §10),
each schedule replayed through the real streaming arm — the question's own draws of
word times and of G, L, F per prefix (common random numbers), the thread cap, the
reflector and the five rules — exactly as :func:`~streamrag.simulator.simulate.simulate`
replays a policy. The optimum is the best score over **every** schedule.

Search by dominance, then by replay:

1. *Removing a call the answer does not use never makes the answer later.* The answer
   is ready at the reflector's decision + F. Per-question replays share no capacity, so
   a call's removal changes no other call's timing; it only changes the set of results
   the reflector sees. Every reflector judges candidates in an order fixed by score
   (heuristic: the best completed result only), call index or completion, and takes
   the first sufficient one; an unused call is, whenever it is among the candidates,
   either insufficient or behind the used call. So without it the used call is still
   chosen at its moment or a sufficient one earlier (the heuristic's best completed
   result may have been the unused call, blocking a sufficient one: that is the
   mis-fire the anchor's reflector adds), and a fall-back — fired when no call is in
   flight — starts no later. A removed call also frees a thread (the cap only ever
   blocks). The same holds for calls fired later than their word (time-based triggers)
   or killed in flight (``replace``).
2. Hence an optimal schedule has **at most one call**: either none (score 0, the
   baseline's answer — a call on prefix t costs the same draws in both arms — less a
   reflector's check at end of turn) or a single call on some prefix t fired at its
   word. A single call the reflector rejects scores no more than none, less λ (the
   answer waits for it, then for the full query again), so only the prefixes whose
   result the reflector accepts are candidates; each is replayed, and so is none.
3. So the k-fire optimum equals the single-fire optimum for every k ≥ 1 and every
   λ ≥ 0, and its extra calls are 0: the optimum does not depend on λ. This is checked,
   not assumed: the tests replay every subset of prefixes through the arm on small
   questions (``tests/oracles/oracles.py``) and compare, and a property test checks that no
   policy's realized schedule scores above it.

Why ``oracle`` (fire at t*) is not this optimum: t* is where gold first enters the top-k,
not where the *heuristic* reflector first accepts a result (it may reject t* and accept
a later or earlier prefix); the call at t* may finish after the end of input while a
later accepted prefix finishes before E + G + L; and every extra call ``oracle`` does not
make is a call the optimum never makes either — but a policy firing many calls also
lets an early insufficient result block the answer.

Scope: per-question replays (unlimited capacity). Under shared capacity (load runs) a
call delays other sessions' calls, and this argument does not apply.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from streamrag.engine.clock import Clock
from streamrag.engine.loop import run_virtual
from streamrag.engine.trace import Recorder
from streamrag.pipeline.question import SimQuestion
from streamrag.pipeline.streaming import QuestionPlan, simulate_question
from streamrag.simulator.replay.planning import plan_question
from streamrag.simulator.results import ResultRow, derive_result
from streamrag.simulator.scenario import ResolvedScenario


class ScheduleTrigger:
    """Fires at a fixed set of prefixes (word-driven; the arm's rules still apply)."""

    tick_us: int | None = None
    kills_in_flight = False
    __slots__ = ("schedule",)

    def __init__(self, schedule: frozenset[int]) -> None:
        self.schedule = schedule

    def on_word(self, t: int) -> bool:
        return t in self.schedule

    def on_tick(self, t: int) -> bool:
        return False

    def fired(self, t: int) -> None:
        return None


def score(row: ResultRow, lam_ms: float) -> float:
    """``saved_ms − λ·extra_calls`` of a replayed question (extra = calls fired − 1)."""
    return float(row.saved_ms) - lam_ms * (int(row.calls_fired) - 1)  # type: ignore[arg-type]


async def replay_schedule(clock: Clock, plan: QuestionPlan, schedule: frozenset[int], rs: ResolvedScenario) -> ResultRow:
    """One question replayed with calls fired at exactly ``schedule`` (as opportunities:
    the thread cap and its rule still apply), on the plan's draws."""
    q = plan.question
    rec = Recorder(q.interaction_id, clock, clock.now_us())
    await simulate_question(clock, plan, ScheduleTrigger(schedule), rs.scenario.reflector.build(q), rs.arm_rules, rec)
    return derive_result(
        rec.events,
        n_words=q.n_words,
        t_star=q.t_star,
        L_ms=rs.L_ms,
        G_ms=rs.G_ms,
        delta_wps=rs.delta_wps,
        question_type=q.question_type,
    )


@dataclass(frozen=True, slots=True)
class Optimum:
    """A question's offline optimum (the same at every λ ≥ 0; see the module docstring)."""

    interaction_id: str
    saved_ms: float
    """The optimum's saving (its score at every λ ≥ 0: it makes no extra call)."""
    fire_t: int | None
    """The prefix of its single call (the earliest among equals); None: firing nothing is best."""
    n_candidates: int
    """Prefixes whose single result the reflector accepts (each replayed)."""


def candidates(q: SimQuestion, rs: ResolvedScenario) -> list[int]:
    """The prefixes whose result, alone, the reflector accepts (step 2 of the module docstring)."""
    reflector = rs.scenario.reflector.build(q)
    return [t for t in range(1, q.n_words + 1) if reflector.judge(t).sufficient]


async def question_optimum(clock: Clock, q: SimQuestion, rs: ResolvedScenario) -> Optimum:
    """The optimum of one question on ``clock``."""
    plan = plan_question(q, rs)
    # Firing nothing saves 0, or less when the reflector spends a check at end of turn.
    best_saved, best_t = score(await replay_schedule(clock, plan, frozenset(), rs), 0.0), None
    found = candidates(q, rs)
    for t in found:
        row = await replay_schedule(clock, plan, frozenset({t}), rs)
        saved = score(row, 0.0)  # one call, used: no extra call
        if saved > best_saved:
            best_saved, best_t = saved, t
    return Optimum(q.interaction_id, best_saved, best_t, len(found))


def optimum_chunk(questions: Sequence[SimQuestion], rs: ResolvedScenario) -> list[Optimum]:
    """The optima of questions replayed one after another on one virtual loop."""

    async def main(clock: Clock) -> list[Optimum]:
        return [await question_optimum(clock, q, rs) for q in questions]

    return run_virtual(main)


def optima(
    questions: Sequence[SimQuestion], rs: ResolvedScenario, *, jobs: int = 1, on_progress: Callable[[int], None] | None = None
) -> list[Optimum]:
    """Every question's optimum, in input order (``jobs`` worker processes)."""
    from concurrent.futures import as_completed

    from streamrag.base.system.processes import worker_pool

    size = max(1, min(256, -(-len(questions) // max(1, jobs * 8))))
    chunks = [questions[i : i + size] for i in range(0, len(questions), size)]
    if jobs <= 1 or len(chunks) < 2:
        out: list[Optimum] = []
        for chunk in chunks:
            out += optimum_chunk(chunk, rs)
            if on_progress:
                on_progress(len(chunk))
        return out
    parts: list[list[Optimum]] = [[] for _ in chunks]
    with worker_pool(jobs) as pool:
        futures = {pool.submit(optimum_chunk, chunk, rs): i for i, chunk in enumerate(chunks)}
        for fut in as_completed(futures):
            parts[futures[fut]] = fut.result()
            if on_progress:
                on_progress(len(chunks[futures[fut]]))
    return [o for part in parts for o in part]
