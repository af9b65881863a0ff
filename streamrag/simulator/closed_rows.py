"""The closed-form replay's result rows, computed without recording events.

:mod:`~streamrag.simulator.closed_form` replays a question on the same arm objects as the
engine and records its trace; that costs the arm's bookkeeping (jobs, timers, one dict
per event), most of a question's replay time. A result row needs far less: when each
call starts, finishes or is cancelled, and which one the reflector uses. This module
computes exactly that, as a :class:`~streamrag.simulator.trace_fold.Tally` — what the
fold of the trace would give — on plain slotted records and one heap of stage ends.

The trigger's decisions are the trigger object's (``on_word``, ``on_tick``, ``fired``,
``kills_in_flight``) and the verdicts the reflector's (``pick``, ``judge``); what is
restated is the streaming arm's bookkeeping on unlimited capacity
(:class:`~streamrag.pipeline.streaming.StreamingArm`: the distinct-prefix rule, the
thread cap with ``capped_fire`` and ``slot_release``, calls held at the last word under
``turn_end_order``, the reflector's ``rejudge`` and ``fallback``) and the loop's
same-instant order ``(t_us, priority, seq)``. That restatement is checked against the
engine on random populations for every rule variant (``tests/test_closed_form.py``):
identical ``results.csv`` bytes.

On unlimited capacity the baseline arm interacts with nothing: its answer is ready at
end of turn + G + L of the full query + F.
"""

from __future__ import annotations

from heapq import heappop, heappush

from streamrag.engine.clock import Priority
from streamrag.pipeline.plan import QuestionPlan
from streamrag.pipeline.reflectors import Reflector
from streamrag.pipeline.streaming import ArmRules, input_schedule
from streamrag.pipeline.triggers import Trigger
from streamrag.simulator.trace_fold import Tally

_COMPLETION = int(Priority.COMPLETION)
_TURN_END = int(Priority.TURN_END)
# What a heap entry ends (its priority orders it; this says what to do).
_GEN, _TOOL, _CHECK, _REFLECT = 0, 1, 2, 3
# Where a call is.
_HELD, _IN_G, _IN_L, _DONE, _GONE = 0, 1, 2, 3, 4


class _Call:
    __slots__ = ("idx", "prefix_t", "stage", "started_us")

    def __init__(self, idx: int, prefix_t: int) -> None:
        self.idx = idx
        self.prefix_t = prefix_t
        self.stage = _HELD
        self.started_us = 0


_NO_CALL = _Call(0, 0)
"""What a heap entry that ends no call's stage carries."""


class _Replay:
    """One question's streaming arm, folded as it runs (the names follow StreamingArm's)."""

    __slots__ = (
        "after_words",
        "answer_us",
        "cap",
        "defer",
        "deferred",
        "finished",
        "fired_prefixes",
        "g_us",
        "heap",
        "heard",
        "held",
        "hold_at_turn_end",
        "in_flight",
        "l_us",
        "n_calls",
        "n_words",
        "now_us",
        "reflector",
        "rejudge_all",
        "reuse",
        "seq",
        "slots_freed",
        "tally",
        "trigger",
        "verdicts",
        "waiting",
        "waiting_for",
    )

    def __init__(self, plan: QuestionPlan, trigger: Trigger, reflector: Reflector, rules: ArmRules, tally: Tally) -> None:
        self.trigger = trigger
        self.reflector = reflector
        self.cap = rules.max_threads
        self.defer = rules.capped_fire == "defer"
        self.after_words = rules.slot_release == "after_words"
        self.rejudge_all = rules.rejudge == "best_of_completed"
        self.reuse = rules.fallback == "reuse"
        self.tally = tally
        self.g_us = plan.g_us
        self.l_us = plan.l_us
        self.n_words = plan.question.n_words
        self.hold_at_turn_end = rules.turn_end_order == "reflector_first" and plan.end_of_turn_us == 0
        self.heap: list[tuple[int, int, int, int, _Call]] = []
        self.seq = 0
        self.now_us = 0
        self.n_calls = 0
        self.in_flight: dict[int, _Call] = {}
        self.fired_prefixes: set[int] = set()
        self.finished: list[_Call] = []
        self.held: list[_Call] = []
        self.verdicts: dict[int, bool] = {}
        self.deferred = False
        self.heard = 0
        self.slots_freed = (-1, 0)
        self.waiting = False
        """The reflector waits for the next completion."""
        self.waiting_for: _Call | None = None
        """The fallback call the reflector waits for."""
        self.answer_us: int | None = None
        """When the reflector decided (F starts)."""

    def push(self, at_us: int, priority: int, what: int, call: _Call) -> None:
        """A timer at ``at_us`` (never in the past: latencies are ≥ 0)."""
        self.seq += 1
        heappush(self.heap, (at_us, priority, self.seq, what, call))

    def run(self, schedule: list[tuple[int, int, int]], turn_end_us: int) -> None:
        """Merge the input instants (registered first, so first among equals) with the
        heap of stage ends, in ``(t_us, priority, seq)`` order."""
        heap, trigger = self.heap, self.trigger
        on_word = trigger.on_word
        self.push(turn_end_us, _TURN_END, _REFLECT, _NO_CALL)  # the heap holds it until every input is in
        i, n_inputs = 0, len(schedule)
        while heap:
            if i < n_inputs:
                at_us, priority, word_t = schedule[i]
                top = heap[0]
                if at_us < top[0] or (at_us == top[0] and priority < top[1]):
                    i += 1
                    self.now_us = at_us
                    if word_t:  # StreamingArm._on_word
                        self.heard = word_t
                        if on_word(word_t) or self.deferred:
                            self.opportunity(word_t)
                    elif trigger.on_tick(self.heard):  # StreamingArm._on_tick
                        self.opportunity(self.heard)
                    continue
            at_us, _, _, what, call = heappop(heap)
            self.now_us = at_us
            if what == _GEN:
                if call.stage == _IN_G:  # else cancelled
                    self.gen_done(call)
            elif what == _TOOL:
                if call.stage == _IN_L:
                    self.tool_done(call)
            elif what == _REFLECT:
                if self.reflector.check_us:
                    self.push(at_us + self.reflector.check_us, _COMPLETION, _CHECK, _NO_CALL)
                else:
                    self.first_look()
            else:
                self.first_look()

    # -- trigger (StreamingArm._opportunity, _fire) -------------------------------------

    def opportunity(self, t: int) -> None:
        if t < 1 or t in self.fired_prefixes:
            self.deferred = False
            return
        trigger = self.trigger
        if trigger.kills_in_flight:
            for call in list(self.in_flight.values()):
                self.cancel(call)
        elif self.cap is not None and self.occupied() >= self.cap:
            self.tally.skipped += 1
            if self.defer:
                self.deferred = True
            else:
                trigger.fired(t)
            return
        self.deferred = False
        self.fire(t, speculative=True)
        trigger.fired(t)

    def occupied(self) -> int:
        at_us, n_freed = self.slots_freed
        return len(self.in_flight) + (n_freed if at_us == self.now_us else 0)

    def fire(self, t: int, *, speculative: bool) -> _Call:
        self.n_calls += 1
        call = _Call(self.n_calls, t)
        self.in_flight[call.idx] = call
        self.fired_prefixes.add(t)
        tally = self.tally
        tally.fired += 1
        tally.speculative += speculative
        tally.fired_on[call.idx] = t
        if speculative and self.hold_at_turn_end and t == self.n_words:
            self.held.append(call)
        else:
            self.start(call)
        return call

    # -- calls (pipeline.calls on unlimited capacity) -----------------------------------

    def start(self, call: _Call) -> None:
        call.stage = _IN_G
        call.started_us = self.now_us
        self.push(self.now_us + self.g_us[call.prefix_t - 1], _COMPLETION, _GEN, call)

    def gen_done(self, call: _Call) -> None:
        call.stage = _IN_L
        self.tally.gen_us += self.g_us[call.prefix_t - 1]
        self.push(self.now_us + self.l_us[call.prefix_t - 1], _COMPLETION, _TOOL, call)

    def tool_done(self, call: _Call) -> None:
        call.stage = _DONE
        self.tally.tool_us += self.l_us[call.prefix_t - 1]
        del self.in_flight[call.idx]
        if self.after_words:
            at_us, n_freed = self.slots_freed
            self.slots_freed = (self.now_us, n_freed + 1 if at_us == self.now_us else 1)
        self.finished.append(call)
        if self.waiting_for is call:
            self.waiting_for = None
            self.answer(call)
        elif self.waiting:
            self.waiting = False
            self.look_again(call)

    def cancel(self, call: _Call) -> None:
        """A call killed in flight: its stage's time counts up to now."""
        tally = self.tally
        if call.stage == _IN_G:
            tally.gen_us += self.now_us - call.started_us
        elif call.stage == _IN_L:
            tally.tool_us += self.now_us - call.started_us - self.g_us[call.prefix_t - 1]
        tally.cancelled += 1
        call.stage = _GONE
        del self.in_flight[call.idx]

    # -- reflector (StreamingArm.first_look, look_again, fall_back, _judge, _decide) ----

    def judge(self, candidates: list[_Call]) -> _Call | None:
        by_idx = {c.idx: c for c in candidates}
        for idx, t in self.reflector.pick([(c.idx, c.prefix_t) for c in candidates]):
            known = self.verdicts.get(idx)
            if known is None:
                known = self.verdicts[idx] = self.reflector.judge(t).sufficient
            if known:
                return by_idx[idx]
        return None

    def decide(self, call: _Call, *, fallback: bool) -> None:
        self.tally.fallback = fallback
        for held in self.held:  # never started: not fired
            self.tally.fired -= 1
            self.tally.fired_on.pop(held.idx, None)
            held.stage = _GONE
            del self.in_flight[held.idx]
        self.held = []
        for other in list(self.in_flight.values()):
            self.cancel(other)
        self.answer(call)

    def first_look(self) -> None:
        chosen = self.judge(self.finished)
        if chosen is not None:
            self.decide(chosen, fallback=False)
            return
        for call in self.held:
            self.start(call)
        self.held = []
        self.wait()

    def look_again(self, call: _Call) -> None:
        chosen = self.judge(self.finished if self.rejudge_all else [call])
        if chosen is None:
            self.wait()
        else:
            self.decide(chosen, fallback=False)

    def wait(self) -> None:
        if self.in_flight:
            self.waiting = True
            return
        n = self.n_words
        if self.reuse:
            full = next((c for c in self.finished if c.prefix_t == n), None)
            if full is not None:
                self.decide(full, fallback=True)
                return
        self.tally.fallback = True
        self.waiting_for = self.fire(n, speculative=False)

    def answer(self, call: _Call) -> None:
        self.answer_us = self.now_us
        self.tally.used_prefix_t = call.prefix_t


def replay_tally(plan: QuestionPlan, trigger: Trigger, reflector: Reflector, rules: ArmRules) -> Tally:
    """What the fold of the question's trace (:func:`~streamrag.simulator.trace_fold.fold_trace`)
    would give, computed without the trace (unlimited capacity; µs since arrival)."""
    tally = Tally()
    replay = _Replay(plan, trigger, reflector, rules, tally)
    replay.run(input_schedule(plan, trigger.tick_us), plan.turn_end_us)
    if replay.answer_us is None:  # pragma: no cover - unlimited capacity always answers
        raise RuntimeError(f"question {plan.question.interaction_id!r}: the closed-form replay did not answer")
    n = plan.question.n_words
    f_us = plan.f_us
    tally.input_end_us = plan.input_end_us
    tally.respond_us = replay.answer_us
    tally.streaming_answer_us = replay.answer_us + f_us
    tally.response_us = f_us
    tally.baseline_answer_us = plan.turn_end_us + plan.g_us[n - 1] + plan.l_us[n - 1] + f_us
    return tally
