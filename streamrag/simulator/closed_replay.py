"""The closed-form replay's machine: one question's two arms on unlimited capacity.

What the event engine does for a question replayed alone — resolve wake-ups one at a
time in ``(t_us, priority, seq)`` order (:mod:`streamrag.engine.loop`) for the arms'
jobs on :class:`~streamrag.engine.resources.Unlimited` resources — restated as one heap
of stage ends merged with the (sorted) input instants. Without a trace (``events`` is
None) it folds what a result row needs into a
:class:`~streamrag.simulator.trace_fold.Tally` as it goes, and the baseline arm and the
responses, which interact with nothing, are not scheduled at all; with one it also
records every event the engine records — same kinds, fields, order and timestamps.

The trigger's decisions are the trigger object's (``on_word``, ``on_tick``, ``fired``,
``kills_in_flight``) and the verdicts the reflector's (``pick``, ``judge``). What is
restated is the streaming arm's bookkeeping (:class:`~streamrag.pipeline.streaming.StreamingArm`,
whose method each part names: the distinct-prefix rule, the thread cap with
``capped_fire`` and ``slot_release``, calls held at the last word under
``turn_end_order``, the reflector's ``rejudge`` and ``fallback``), the calls' stages
(:mod:`streamrag.pipeline.calls`) and the baseline arm
(:class:`~streamrag.pipeline.baseline.BaselineArm`). ``tests/test_closed_form.py`` checks
the restatement against the engine on random populations, every rule variant and trigger
kind, latencies tied to word instants: identical events and result rows.
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any

from streamrag.engine.clock import Priority
from streamrag.pipeline.plan import QuestionPlan
from streamrag.pipeline.question import SimQuestion
from streamrag.pipeline.reflectors import Reflector
from streamrag.pipeline.streaming import ArmRules, input_schedule
from streamrag.pipeline.triggers import Trigger
from streamrag.simulator.trace_fold import Tally

_COMPLETION = int(Priority.COMPLETION)
_TURN_END = int(Priority.TURN_END)
# What a heap entry ends (its priority orders it; this says what to do). The baseline
# arm's stages and both responses are scheduled only when the trace is recorded.
_GEN, _TOOL, _CHECK, _REFLECT, _ANSWER, _BASELINE, _B_GEN, _B_TOOL, _B_ANSWER = range(9)
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
    """One question's replay: the streaming arm, folded as it runs (the names follow
    StreamingArm's), and, when the trace is recorded, the baseline arm and the responses."""

    __slots__ = (
        "after_words",
        "answer_us",
        "calls",
        "cap",
        "defer",
        "deferred",
        "events",
        "finished",
        "fired_prefixes",
        "g_us",
        "heap",
        "heard",
        "held",
        "hold_at_turn_end",
        "in_flight",
        "l_us",
        "n_words",
        "now_us",
        "plan",
        "qid",
        "question",
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

    def __init__(
        self,
        plan: QuestionPlan,
        trigger: Trigger,
        reflector: Reflector,
        rules: ArmRules,
        tally: Tally,
        events: list[dict[str, Any]] | None,
    ) -> None:
        self.plan = plan
        self.question: SimQuestion = plan.question
        self.qid = plan.question.interaction_id
        self.events = events
        """The trace, when it is recorded (dicts as :class:`~streamrag.engine.trace.Recorder` keeps them)."""
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
        self.calls: list[_Call] = []
        """Every call of the arm, ``calls[idx - 1]``."""
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

    def emit(self, kind: str, **fields: Any) -> None:
        """Record an event (``Recorder.emit``'s dict: qid, t_us, kind, then the fields)."""
        self.events.append({"qid": self.qid, "t_us": self.now_us, "kind": kind, **fields})  # type: ignore[union-attr]

    def push(self, at_us: int, priority: int, what: int, call: _Call) -> None:
        """A timer at ``at_us`` (never in the past: latencies are ≥ 0)."""
        self.seq += 1
        heappush(self.heap, (at_us, priority, self.seq, what, call))

    def run(self, schedule: list[tuple[int, int, int]], turn_end_us: int) -> None:
        """Merge the input instants (registered first, so first among equals) with the
        heap of stage ends, in ``(t_us, priority, seq)`` order."""
        heap, trigger, tracing = self.heap, self.trigger, self.events is not None
        on_word, n = trigger.on_word, self.n_words
        if tracing:  # BaselineArm's timer is registered before the streaming arm's
            self.push(turn_end_us, _TURN_END, _BASELINE, _NO_CALL)
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
                        if tracing:
                            self.emit("word", word=word_t)
                            if word_t == n:
                                self.emit("input_end", n_words=n)
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
                if tracing:  # StreamingArm._reflect
                    self.emit("reflect", finished=tuple(c.idx for c in self.finished), in_flight=tuple(self.in_flight))
                if self.reflector.check_us:
                    self.push(at_us + self.reflector.check_us, _COMPLETION, _CHECK, _NO_CALL)
                else:
                    self.first_look()
            elif what == _CHECK:
                self.first_look()
            else:
                self.baseline(what)

    def baseline(self, what: int) -> None:
        """The baseline arm and the responses (traced runs only): BaselineArm, respond()."""
        n = self.n_words
        if what == _BASELINE:
            self.emit("fire", arm="baseline", call=1, prefix_t=n, by="baseline")
            self.emit("thread_start", arm="baseline", call=1)
            self.push(self.now_us + self.g_us[n - 1], _COMPLETION, _B_GEN, _NO_CALL)
        elif what == _B_GEN:
            self.emit("gen_done", arm="baseline", call=1)
            self.push(self.now_us + self.l_us[n - 1], _COMPLETION, _B_TOOL, _NO_CALL)
        elif what == _B_TOOL:
            self.emit("tool_done", arm="baseline", call=1, prefix_t=n, top=self.question.top(n))
            self.emit("respond", arm="baseline", call=1, prefix_t=n)
            self.push(self.now_us + self.plan.f_us, _COMPLETION, _B_ANSWER, _NO_CALL)
        elif what == _B_ANSWER:
            self.emit("answer_ready", arm="baseline")
        else:
            self.emit("answer_ready", arm="streaming")

    # -- trigger (StreamingArm._opportunity, _fire) -------------------------------------

    def opportunity(self, t: int) -> None:
        if t < 1 or t in self.fired_prefixes:
            self.deferred = False
            return
        trigger = self.trigger
        if trigger.kills_in_flight:
            for call in list(self.in_flight.values()):
                self.cancel(call, "replaced")
        elif self.cap is not None and self.occupied() >= self.cap:
            self.tally.skipped += 1
            if self.defer:
                self.deferred = True
                if self.events is not None:
                    self.emit("skip", prefix_t=t, reason="deferred")
            else:
                if self.events is not None:
                    self.emit("skip", prefix_t=t, reason="cap")
                trigger.fired(t)
            return
        self.deferred = False
        self.fire(t, speculative=True)
        trigger.fired(t)

    def occupied(self) -> int:
        at_us, n_freed = self.slots_freed
        return len(self.in_flight) + (n_freed if at_us == self.now_us else 0)

    def fire(self, t: int, *, speculative: bool) -> _Call:
        call = _Call(len(self.calls) + 1, t)
        self.calls.append(call)
        self.in_flight[call.idx] = call
        self.fired_prefixes.add(t)
        tally = self.tally
        tally.fired += 1
        tally.speculative += speculative
        tally.fired_on[call.idx] = t
        if self.events is not None:
            self.emit("fire", arm="streaming", call=call.idx, prefix_t=t, by="trigger" if speculative else "reflector")
        if speculative and self.hold_at_turn_end and t == self.n_words:
            self.held.append(call)
        else:
            self.start(call)
        return call

    # -- calls (pipeline.calls on unlimited capacity) -----------------------------------

    def start(self, call: _Call) -> None:
        call.stage = _IN_G
        call.started_us = self.now_us
        if self.events is not None:
            self.emit("thread_start", arm="streaming", call=call.idx)
        self.push(self.now_us + self.g_us[call.prefix_t - 1], _COMPLETION, _GEN, call)

    def gen_done(self, call: _Call) -> None:
        call.stage = _IN_L
        self.tally.gen_us += self.g_us[call.prefix_t - 1]
        if self.events is not None:
            self.emit("gen_done", arm="streaming", call=call.idx)
        self.push(self.now_us + self.l_us[call.prefix_t - 1], _COMPLETION, _TOOL, call)

    def tool_done(self, call: _Call) -> None:
        call.stage = _DONE
        self.tally.tool_us += self.l_us[call.prefix_t - 1]
        if self.events is not None:
            self.emit("tool_done", arm="streaming", call=call.idx, prefix_t=call.prefix_t, top=self.question.top(call.prefix_t))
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

    def cancel(self, call: _Call, reason: str) -> None:
        """A call killed in flight: its stage's time counts up to now."""
        tally = self.tally
        if call.stage == _IN_G:
            tally.gen_us += self.now_us - call.started_us
        elif call.stage == _IN_L:
            tally.tool_us += self.now_us - call.started_us - self.g_us[call.prefix_t - 1]
        tally.cancelled += 1
        call.stage = _GONE
        del self.in_flight[call.idx]
        if self.events is not None:
            self.emit("cancel", arm="streaming", call=call.idx, reason=reason)

    # -- reflector (StreamingArm.first_look, look_again, fall_back, _judge, _decide) ----

    def judge(self, candidates: list[_Call]) -> _Call | None:
        for idx, t in self.reflector.pick([(c.idx, c.prefix_t) for c in candidates]):
            known = self.verdicts.get(idx)
            if known is None:
                verdict = self.reflector.judge(t)
                known = self.verdicts[idx] = verdict.sufficient
                if self.events is not None:
                    self.emit(
                        "check",
                        call=idx,
                        prefix_t=t,
                        sufficient=verdict.sufficient,
                        score=verdict.score,
                        coverage=verdict.coverage,
                    )
            if known:
                return self.calls[idx - 1]
        return None

    def decide(self, call: _Call, *, fallback: bool) -> None:
        self.tally.fallback = fallback
        tracing = self.events is not None
        if tracing:
            self.emit("decision", outcome="fallback" if fallback else "speculative", call=call.idx, prefix_t=call.prefix_t)
        for held in self.held:  # never started: not fired
            self.tally.fired -= 1
            self.tally.fired_on.pop(held.idx, None)
            held.stage = _GONE
            del self.in_flight[held.idx]
            if tracing:
                self.emit("cancel", arm="streaming", call=held.idx, reason="unstarted")
        self.held = []
        for other in list(self.in_flight.values()):
            self.cancel(other, "reflector")
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
        if self.events is not None:
            self.emit("decision", outcome="fallback", call=None, prefix_t=n)
        self.waiting_for = self.fire(n, speculative=False)

    def answer(self, call: _Call) -> None:
        self.answer_us = self.now_us
        self.tally.used_prefix_t = call.prefix_t
        if self.events is not None:  # StreamingArm._run: response generation F
            self.emit("respond", arm="streaming", call=call.idx, prefix_t=call.prefix_t)
            self.push(self.now_us + self.plan.f_us, _COMPLETION, _ANSWER, _NO_CALL)


def replay(
    plan: QuestionPlan, trigger: Trigger, reflector: Reflector, rules: ArmRules, events: list[dict[str, Any]] | None = None
) -> Tally:
    """Replay one planned question (unlimited capacity; µs since arrival): what the fold of
    its trace (:func:`~streamrag.simulator.trace_fold.fold_trace`) gives; its trace events
    are appended to ``events`` when given."""
    tally = Tally()
    machine = _Replay(plan, trigger, reflector, rules, tally, events)
    machine.run(input_schedule(plan, trigger.tick_us), plan.turn_end_us)
    if machine.answer_us is None:  # pragma: no cover - unlimited capacity always answers
        raise RuntimeError(f"question {plan.question.interaction_id!r}: the closed-form replay did not answer")
    n = plan.question.n_words
    f_us = plan.f_us
    tally.input_end_us = plan.input_end_us
    tally.respond_us = machine.answer_us
    tally.streaming_answer_us = machine.answer_us + f_us
    tally.response_us = f_us
    tally.baseline_answer_us = plan.turn_end_us + plan.g_us[n - 1] + plan.l_us[n - 1] + f_us
    return tally
