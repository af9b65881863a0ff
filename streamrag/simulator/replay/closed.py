"""The closed-form replay: one question's two arms on unlimited capacity, from one heap.

What the event engine does for a question replayed alone — resolve wake-ups one at a
time in ``(t_us, priority, seq)`` order (:mod:`streamrag.engine.loop`) for the arms'
jobs on :class:`~streamrag.engine.resources.Unlimited` resources — done directly: one
heap of stage ends merged with the (sorted) input instants, driving the streaming arm's
state machine (:class:`~streamrag.pipeline.arm.ArmMachine`, where every rule of the arm
lives). What this module adds is only the waiting: each call's stages (G then L, as
:mod:`streamrag.pipeline.calls` runs them), the reflector's check time and, when the
trace is recorded, the baseline arm (:class:`~streamrag.pipeline.baseline.BaselineArm`)
and both responses.

Without a trace (``events`` is None) it folds what a result row needs into a
:class:`~streamrag.simulator.replay.fold.Tally` as it goes, and the baseline arm and the
responses, which interact with nothing, are not scheduled at all; with one it records
every event the engine records — same kinds, fields, order and timestamps.
``tests/parity/test_closed_form.py`` checks this against the engine on random populations,
every rule variant and trigger kind, latencies tied to word instants: identical events
and result rows.
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any

from streamrag.engine.clock import Priority
from streamrag.pipeline.arm import ArmMachine, ArmRules, input_schedule
from streamrag.pipeline.calls import Call
from streamrag.pipeline.plan import QuestionPlan
from streamrag.pipeline.reflectors import Reflector
from streamrag.pipeline.triggers import Trigger
from streamrag.simulator.replay.fold import Tally, endpoint_tally

_COMPLETION = int(Priority.COMPLETION)
_TURN_END = int(Priority.TURN_END)
# What a heap entry ends (its priority orders it; this says what to do). The baseline
# arm's stages and both responses are scheduled only when the trace is recorded.
_GEN, _TOOL, _CHECK, _REFLECT, _ANSWER, _BASELINE, _B_GEN, _B_TOOL, _B_ANSWER, _RANK, _CONFIRM, _B_CONFIRM = range(12)
# Where a call is (Call.stage).
_HELD, _IN_G, _IN_L, _DONE, _GONE, _PARKED = 0, 1, 2, 3, 4, 5

_NO_CALL = Call(0, 0, "none", "none")
"""What a heap entry that ends no call's stage carries."""


class _Replay:
    """One question's replay: the heap that runs the streaming arm's machine (its
    :class:`~streamrag.pipeline.arm.ArmDriver`) and, when the trace is recorded, the
    baseline arm and the responses."""

    __slots__ = (
        "answer_us",
        "b_held",
        "deferral",
        "events",
        "g_us",
        "heap",
        "hold",
        "l_us",
        "machine",
        "now_us",
        "plan",
        "qid",
        "ranks",
        "seq",
        "tally",
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
        self.qid = plan.question.interaction_id
        self.events = events
        """The trace, when it is recorded (dicts as :class:`~streamrag.engine.trace.Recorder` keeps them)."""
        self.tally = tally
        self.g_us = plan.g_us
        self.l_us = plan.l_us
        self.heap: list[tuple[int, int, int, int, Call]] = []
        self.seq = 0
        self.now_us = 0
        self.answer_us: int | None = None
        """When the reflector decided (F starts)."""
        self.ranks: dict[int, Call] = {}
        """Rankings still out (``rules.ranking`` not free), each a stand-in call on its word."""
        self.machine = ArmMachine(
            plan.question,
            trigger,
            reflector,
            rules,
            self,
            self,
            end_of_turn_us=plan.end_of_turn_us,
            tracing=events is not None,
            endpoint=plan.endpoint,
        )
        self.hold = plan.holds_tools
        """An eager start whose tools wait: the reflector's and the baseline's tool stages wait for the confirmation."""
        self.deferral = rules.mutating == "deferral" or self.hold
        """Tool stages may wait for the turn (:meth:`ArmMachine.generated`)."""
        self.b_held: bool | None = False if self.hold else None
        """The baseline's tool stage: held for the confirmation (True), not yet (False), or never held (None)."""

    def emit(self, kind: str, **fields: Any) -> None:
        """Record an event (``Recorder.emit``'s dict: qid, t_us, kind, then the fields)."""
        self.events.append({"qid": self.qid, "t_us": self.now_us, "kind": kind, **fields})  # type: ignore[union-attr]

    def push(self, at_us: int, priority: int, what: int, call: Call) -> None:
        """A timer at ``at_us`` (never in the past: latencies are ≥ 0)."""
        self.seq += 1
        heappush(self.heap, (at_us, priority, self.seq, what, call))

    def run(self, schedule: list[tuple[int, int, int]], turn_end_us: int) -> None:
        """Merge the input instants (registered first, so first among equals) with the
        heap of stage ends, in ``(t_us, priority, seq)`` order."""
        heap, machine, tracing = self.heap, self.machine, self.events is not None
        confirm_us = self.plan.confirm_us
        if tracing:  # BaselineArm's timers are registered before the streaming arm's
            self.push(turn_end_us, _TURN_END, _BASELINE, _NO_CALL)
            if self.hold:
                self.push(confirm_us, _TURN_END, _B_CONFIRM, _NO_CALL)
        if self.hold:
            self.push(confirm_us, _TURN_END, _CONFIRM, _NO_CALL)
        self.push(turn_end_us, _TURN_END, _REFLECT, _NO_CALL)  # the heap holds it until every input is in
        i, n_inputs = 0, len(schedule)
        while heap:
            if i < n_inputs:
                at_us, priority, word_t = schedule[i]
                top = heap[0]
                if at_us < top[0] or (at_us == top[0] and priority < top[1]):
                    i += 1
                    self.now_us = at_us
                    if word_t:
                        machine.word(word_t, at_us)
                    else:
                        machine.tick(at_us)
                    continue
            at_us, _, _, what, call = heappop(heap)
            self.now_us = at_us
            if what == _GEN:
                if call.stage == _IN_G:  # else stopped
                    self.gen_done(call)
            elif what == _TOOL:
                if call.stage == _IN_L:
                    self.tool_done(call)
            elif what == _RANK:
                if call.stage == _IN_L:
                    del self.ranks[call.prefix_t]
                    self.tally.ranking_us += self.now_us - call.started_us
                    machine.ranked(call.prefix_t, at_us)
            elif what == _REFLECT:
                machine.reflect()
                check_us = machine.reflector.check_us
                if check_us:
                    self.push(at_us + check_us, _COMPLETION, _CHECK, _NO_CALL)
                else:
                    machine.first_look()
            elif what == _CHECK:
                machine.first_look()
            elif what == _CONFIRM:
                machine.confirmed()
            else:
                self.baseline(what)

    def baseline(self, what: int) -> None:
        """The baseline arm and the responses (traced runs only): BaselineArm, respond()."""
        n = self.plan.question.n_words
        if what == _BASELINE:
            self.emit("fire", arm="baseline", call=1, prefix_t=n, by="baseline")
            self.emit("thread_start", arm="baseline", call=1)
            self.push(self.now_us + self.g_us[n - 1], _COMPLETION, _B_GEN, _NO_CALL)
        elif what == _B_GEN:
            if self.b_held is False:  # its tool stage waits for the confirmation (BaselineArm._generated)
                self.emit("defer", arm="baseline", call=1, prefix_t=n)
                self.b_held = True
                return
            self.emit("gen_done", arm="baseline", call=1)
            self.push(self.now_us + self.l_us[n - 1], _COMPLETION, _B_TOOL, _NO_CALL)
        elif what == _B_CONFIRM:
            if self.b_held:
                self.emit("execute", arm="baseline", call=1, prefix_t=n)
                self.push(self.now_us + self.l_us[n - 1], _COMPLETION, _B_TOOL, _NO_CALL)
            self.b_held = None
        elif what == _B_TOOL:
            self.emit("tool_done", arm="baseline", call=1, prefix_t=n, top=self.plan.question.top(n))
            self.emit("respond", arm="baseline", call=1, prefix_t=n)
            self.push(self.now_us + self.plan.f_us, _COMPLETION, _B_ANSWER, _NO_CALL)
        elif what == _B_ANSWER:
            self.emit("answer_ready", arm="baseline")
        else:
            self.emit("answer_ready", arm="streaming")

    # -- a call's stages on unlimited capacity (pipeline.calls.launch) -----------------

    def gen_done(self, call: Call) -> None:
        call.gen_end_us = self.now_us
        g_us = self.g_us[call.prefix_t - 1]
        if self.deferral and not self.machine.generated(call):  # deferred until the turn is (or its tools are) confirmed
            call.stage = _PARKED
            self.tally.gen_us += g_us
            return
        self.tally.gen_us += g_us
        if self.events is not None:
            self.emit("gen_done", arm="streaming", call=call.idx)
        self.tool(call)

    def tool(self, call: Call) -> None:
        """The tool stage L starts (the side effect of a mutating tool)."""
        call.stage = _IN_L
        call.tool_at_us = self.now_us
        self.tally.executed.append((call.idx, call.prefix_t))
        self.push(self.now_us + self.l_us[call.prefix_t - 1], _COMPLETION, _TOOL, call)

    def tool_done(self, call: Call) -> None:
        call.stage = _DONE
        self.tally.tool_us += self.l_us[call.prefix_t - 1]
        if self.events is not None:
            self.emit(
                "tool_done", arm="streaming", call=call.idx, prefix_t=call.prefix_t, top=self.plan.question.top(call.prefix_t)
            )
        self.machine.completed(call, self.now_us)

    # -- the machine's actions (ArmDriver) ---------------------------------------------

    def start(self, call: Call) -> None:
        call.stage = _IN_G
        call.started_us = self.now_us
        if self.events is not None:
            self.emit("thread_start", arm="streaming", call=call.idx)
        self.push(self.now_us + self.g_us[call.prefix_t - 1], _COMPLETION, _GEN, call)

    def stop(self, call: Call) -> None:
        """A call withdrawn in flight: its stage's time counts up to now."""
        tally = self.tally
        if call.stage == _IN_G:
            tally.gen_us += self.now_us - call.started_us
        elif call.stage == _IN_L:
            tally.tool_us += self.now_us - call.started_us - self.g_us[call.prefix_t - 1]
        call.stage = _GONE

    def execute(self, call: Call) -> None:
        call.started_us = self.now_us - self.g_us[call.prefix_t - 1]  # stop() counts L from started_us + G
        self.tool(call)

    def rank(self, t: int) -> None:
        ranking = self.ranks[t] = Call(0, t, "rank", "rank")
        ranking.stage, ranking.started_us = _IN_L, self.now_us
        self.tally.rankings += 1
        self.push(self.now_us + self.plan.rank_us[t - 1], _COMPLETION, _RANK, ranking)

    def unrank(self, t: int) -> None:
        ranking = self.ranks.pop(t)
        ranking.stage = _GONE
        self.tally.ranking_us += self.now_us - ranking.started_us

    def answer(self, call: Call) -> None:
        self.answer_us = self.now_us
        if self.events is not None:  # StreamingArm.run: response generation F
            self.emit("respond", arm="streaming", call=call.idx, prefix_t=call.prefix_t)
            self.push(self.now_us + self.plan.f_us, _COMPLETION, _ANSWER, _NO_CALL)

    def fail(self) -> None:  # pragma: no cover - unlimited capacity loses no call
        raise RuntimeError(f"question {self.qid!r}: a call was lost on unlimited capacity")


def replay_arm(
    plan: QuestionPlan,
    trigger: Trigger,
    reflector: Reflector,
    rules: ArmRules,
    events: list[dict[str, Any]] | None = None,
    tally: Tally | None = None,
) -> tuple[ArmMachine, int]:
    """Replay one planned question (unlimited capacity; µs since arrival): its streaming
    arm's machine, over, and when the reflector decided. Trace events are appended to
    ``events`` when given; the stages' time is added to ``tally`` when given."""
    replayed = _Replay(plan, trigger, reflector, rules, tally or Tally(), events)
    replayed.run(input_schedule(plan.word_us, trigger.tick_us), plan.turn_end_us)
    replayed.machine.close()
    if replayed.answer_us is None or replayed.machine.chosen is None:  # pragma: no cover - unlimited capacity always answers
        raise RuntimeError(f"question {plan.question.interaction_id!r}: the closed-form replay did not answer")
    return replayed.machine, replayed.answer_us


def replay(
    plan: QuestionPlan, trigger: Trigger, reflector: Reflector, rules: ArmRules, events: list[dict[str, Any]] | None = None
) -> Tally:
    """Replay one planned question (unlimited capacity; µs since arrival): what the fold of
    its trace (:func:`~streamrag.simulator.replay.fold.fold_trace`) gives; its trace events
    are appended to ``events`` when given."""
    tally = Tally()
    machine, answer_us = replay_arm(plan, trigger, reflector, rules, events, tally)
    unstarted = {call.idx for call in machine.unstarted}
    tally.fired = machine.n_fired
    tally.speculative = sum(1 for call in machine.calls if call.by == "trigger")
    tally.fired_on = {call.idx: call.prefix_t for call in machine.calls if call.idx not in unstarted}
    tally.skipped = machine.n_skipped
    tally.cancelled = machine.n_cancelled
    tally.ends = machine.ends
    tally.fallback = machine.fallback
    chosen = machine.chosen
    assert chosen is not None  # replay_arm checked it
    tally.used_prefix_t = chosen.prefix_t
    tally.used_call = chosen.idx
    n = plan.question.n_words
    f_us = plan.f_us
    tally.input_end_us = plan.input_end_us
    tally.respond_us = answer_us
    tally.streaming_answer_us = answer_us + f_us
    tally.response_us = f_us
    start, g_end = plan.turn_end_us, plan.turn_end_us + plan.g_us[n - 1]
    tool_at = max(g_end, plan.confirm_us) if plan.holds_tools else g_end  # BaselineArm: held for the confirmation
    tally.baseline_answer_us = tool_at + plan.l_us[n - 1] + f_us
    if plan.endpoint is not None:  # what the fold of the trace's stage events gives
        tally.endpoint = endpoint_tally(plan.endpoint.event_fields())
        g_us, l_us = plan.g_us[chosen.prefix_t - 1], plan.l_us[chosen.prefix_t - 1]
        tally.spans = {chosen.idx: [chosen.gen_end_us - g_us, chosen.gen_end_us, chosen.tool_at_us, chosen.tool_at_us + l_us]}
        tool_end = tool_at + plan.l_us[n - 1]
        tally.baseline_marks = [start, g_end, tool_at, tool_end, tool_end]
    return tally
