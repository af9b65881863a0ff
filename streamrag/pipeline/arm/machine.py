"""The streaming arm's state machine (:class:`ArmMachine`): words heard, fires, calls in
flight; its turn-end part is :mod:`.turn_end`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from streamrag.pipeline.arm.driver import _CLOSED, ArmDriver, Emitter, NumberOfWords
from streamrag.pipeline.arm.rules import ArmRules
from streamrag.pipeline.arm.turn_end import TurnEnd
from streamrag.pipeline.calls import Call
from streamrag.pipeline.outcomes import CallEnds
from streamrag.pipeline.ranking_cost import RankingInbox
from streamrag.pipeline.reflectors import Reflector
from streamrag.pipeline.triggers import Trigger

if TYPE_CHECKING:
    from streamrag.engine.endpoint import EndpointTurn


class ArmMachine(TurnEnd):
    """One question's (or session's) streaming arm: its state and every rule.

    ``refuse(words_since_fire)`` (a speculation policy's verdict under load: a ``skip``
    reason or None) and ``reaim(t)`` (``coalesce``: re-aim a waiting call at prefix t,
    True if done) are optional hooks of drivers that run a policy."""

    __slots__ = (
        "authorize",
        "calls",
        "cap",
        "defer",
        "deferral",
        "deferred",
        "driver",
        "endpoint",
        "ends",
        "finished",
        "fired_prefixes",
        "freed",
        "heard",
        "hold_at_turn_end",
        "hold_tools",
        "holding",
        "in_flight",
        "inbox",
        "last_fire_t",
        "n_cancelled",
        "n_ranked",
        "n_skipped",
        "never",
        "question",
        "reaim",
        "rec",
        "reflector",
        "refuse",
        "release_after_words",
        "reuse",
        "rules",
        "tracing",
        "trigger",
        "unstarted",
        "verdicts",
    )

    def __init__(
        self,
        question: NumberOfWords,
        trigger: Trigger,
        reflector: Reflector,
        rules: ArmRules,
        driver: ArmDriver,
        rec: Emitter,
        *,
        end_of_turn_us: int,
        tracing: bool = True,
        refuse: Callable[[int], str | None] | None = None,
        reaim: Callable[[int], bool] | None = None,
        endpoint: EndpointTurn | None = None,
    ) -> None:
        self.question = question
        self.trigger = trigger
        self.reflector = reflector
        self.driver = driver
        self.rec = rec
        self.tracing = tracing
        self.refuse = refuse
        self.reaim = reaim
        self.cap = rules.max_threads
        self.defer = rules.capped_fire == "defer"
        self.release_after_words = rules.slot_release == "after_words"
        self.rules = rules
        self.endpoint = endpoint
        """The endpointer's decision, recorded after ``input_end`` (None: a fixed end of turn)."""
        self.hold_tools = endpoint is not None and endpoint.hold_tools
        """The reflector's calls' tool stages wait for the confirmed end of turn (:meth:`confirmed`)."""
        self.holding: list[Call] = []
        """Such calls whose G ended before the confirmation."""
        self.reuse = rules.fallback == "reuse"
        self.hold_at_turn_end = rules.turn_end_order == "reflector_first" and end_of_turn_us == 0
        """Calls fired on the last word wait for the reflector's first look."""
        self.calls: list[Call] = []
        """Every call of the arm, ``calls[idx - 1]``."""
        self.in_flight: dict[int, Call] = {}
        self.fired_prefixes: set[int] = set()
        self.finished: list[Call] = []
        """Completed calls, in completion order."""
        self.verdicts: dict[int, bool] = {}
        self.held: list[Call] = []
        self.unstarted: list[Call] = []
        """Held calls cancelled before they started: fired but not counted as fired."""
        self.deferred = False
        """A fire blocked by the cap waits for a later word (``capped_fire = "defer"``)."""
        self.last_fire_t = 0
        self.heard = 0
        """Words heard so far."""
        self.freed: tuple[int, int] = (-1, 0)
        """(instant in µs, slots freed then) — ``slot_release = "after_words"``."""
        self.n_skipped = 0
        self.n_cancelled = 0
        """Calls withdrawn in flight (not the unstarted ones)."""
        self.waiting = False
        """The reflector waits for the next completion."""
        self.waiting_for: Call | None = None
        """The fallback call the reflector waits for."""
        self.decided = False
        self.chosen: Call | None = None
        """The call whose result the answer is built from, once the reflector decided."""
        self.fallback = False
        """The answer did not come from a speculative call."""
        self.inbox = None if rules.ranking == "free" else RankingInbox()
        """Rankings the trigger waits for (None: they are free, it looks at each word)."""
        self.n_ranked = 0
        """Rankings started (``ranking`` not ``free``)."""
        self.reflecting = False
        self.ends = CallEnds()
        """How each speculative call ended (:mod:`~streamrag.pipeline.outcomes`)."""
        self.never = rules.mutating == "never"
        """A mutating tool that is not speculated: every opportunity is skipped."""
        self.authorize = rules.mutating == "after_authorization"
        """Speculative calls are held unstarted until the turn is confirmed."""
        self.deferral = rules.mutating == "deferral"
        """Speculative calls' tool stages wait for the turn to be confirmed."""
        self.parked: list[Call] = []
        """Calls whose G ended and whose L waits for the turn to be confirmed (``deferral``)."""

    # -- input and trigger ------------------------------------------------------------

    def word(self, t: int, at_us: int) -> None:
        """Word t was heard at ``at_us``."""
        self.heard = t
        if self.tracing:
            self.rec.emit("word", word=t)
            n = self.question.n_words
            if t == n:
                self.rec.emit("input_end", n_words=n)
                if self.endpoint is not None:
                    self.rec.emit("endpoint", **self.endpoint.event_fields())
        if self.inbox is not None:
            self.n_ranked += 1
            self.inbox.out.append(t)
            if self.tracing:
                self.rec.emit("rank", word=t)
            self.driver.rank(t)
        elif self.trigger.on_word(t) or self.deferred:
            self._opportunity(t, at_us)

    def ranked(self, t: int, at_us: int, ok: bool = True) -> None:
        """Word t's ranking came in at ``at_us`` (``ok``) or was lost to a full queue: the
        trigger looks at the words now readable, in order, until the turn has ended."""
        if self.tracing:
            self.rec.emit("rank_done", word=t, outcome="in" if ok else "lost")
        for word_t, landed in self.inbox.land(t, ok):  # type: ignore[union-attr]
            if landed and not self.reflecting and (self.trigger.on_word(word_t) or self.deferred):
                self._opportunity(word_t, at_us)

    def tick(self, at_us: int) -> None:
        """A time-based trigger opportunity at ``at_us``."""
        if self.trigger.on_tick(self.heard):
            self._opportunity(self.heard, at_us)

    def revise(self, kept_t: int) -> None:
        """Live input revised every word after ``kept_t``: calls on longer prefixes asked
        a question nobody asks any more. Those in flight (or held) are cancelled
        (``revised``), finished ones are never judged, and their prefixes may fire again
        on the new words. Trigger state is not rewound: it counts words, and the new
        words after ``kept_t`` are heard as words ``kept_t + 1``, … again."""
        for call in list(self.in_flight.values()):
            if call.prefix_t > kept_t:
                self._cancel(call, "revised")
        self.ends.revised(kept_t)
        self.held = [c for c in self.held if c.prefix_t <= kept_t]
        self.parked = [c for c in self.parked if c.prefix_t <= kept_t]
        self.finished = [c for c in self.finished if c.prefix_t <= kept_t]
        self.fired_prefixes = {t for t in self.fired_prefixes if t <= kept_t}
        self.heard = min(self.heard, kept_t)
        self.last_fire_t = min(self.last_fire_t, kept_t)

    def _opportunity(self, t: int, at_us: int) -> None:
        if t < 1 or t in self.fired_prefixes:
            self.deferred = False
            return
        trigger = self.trigger
        if self.never:  # a mutating tool is not speculated
            self.deferred = False
            self.n_skipped += 1
            if self.tracing:
                self.rec.emit("skip", prefix_t=t, reason="mutating")
            trigger.fired(t)
            return
        if trigger.kills_in_flight:
            for call in list(self.in_flight.values()):
                self._cancel(call, "replaced")
        elif self.cap is not None and self._occupied(at_us) >= self.cap:
            self.n_skipped += 1
            if self.defer:
                self.deferred = True
                if self.tracing:
                    self.rec.emit("skip", prefix_t=t, reason="deferred")
            else:
                if self.tracing:
                    self.rec.emit("skip", prefix_t=t, reason="cap")
                trigger.fired(t)  # drop: the interval restarts as if it had fired
            return
        if self.refuse is not None:
            refused = self.refuse(t - self.last_fire_t)
            if refused is not None:
                self.deferred = False
                self.n_skipped += 1
                if self.tracing:
                    self.rec.emit("skip", prefix_t=t, reason=refused)
                trigger.fired(t)
                return
        self.deferred = False
        if self.reaim is not None and self.reaim(t):
            self.fired_prefixes.add(t)
            self.last_fire_t = t
            trigger.fired(t)
            return
        self._fire(t, "trigger")
        trigger.fired(t)

    def _occupied(self, at_us: int) -> int:
        """Slots taken for a fire at ``at_us``: calls in flight, plus (``after_words``)
        the calls that completed at this very instant, whose slots are freed only after it."""
        freed_at_us, n_freed = self.freed
        idle = len(self.parked) + (len(self.held) if self.authorize else 0)  # waiting for the turn: no thread
        return len(self.in_flight) - idle + (n_freed if freed_at_us == at_us else 0)

    def _fire(self, t: int, by: str) -> Call:
        call = Call(len(self.calls) + 1, t, "streaming", by)
        self.calls.append(call)
        self.in_flight[call.idx] = call
        self.fired_prefixes.add(t)
        if by == "trigger":
            self.last_fire_t = t
            self.ends.fired(call.idx, t)
        if self.tracing:
            self.rec.emit("fire", arm="streaming", call=call.idx, prefix_t=t, by=by)
        if self.holds(call):
            self.held.append(call)  # the reflector looks first (the anchor's order)
        else:
            self.driver.start(call)
        return call

    def holds(self, call: Call) -> bool:
        """Whether ``call`` waits for the reflector's first look before it starts (fired
        by the trigger on the last word under ``turn_end_order = "reflector_first"``, or any
        speculative call of a mutating tool ``after_authorization``)."""
        if call.by != "trigger":
            return False
        return self.authorize or (self.hold_at_turn_end and call.prefix_t == self.question.n_words)

    # -- calls ------------------------------------------------------------------------

    def completed(self, call: Call, at_us: int) -> None:
        """``call``'s result came in at ``at_us``."""
        del self.in_flight[call.idx]
        self.ends.completed(call.idx)
        if self.release_after_words:
            freed_at_us, n_freed = self.freed
            self.freed = (at_us, n_freed + 1 if freed_at_us == at_us else 1)
        self.finished.append(call)
        if self.waiting_for is call:
            self.waiting_for = None
            self._answer(call)
        elif self.waiting:
            self.waiting = False
            chosen = self._judge(self.rules.judged_after(self.finished, call))
            if chosen is None:
                self._wait()
            else:
                self._decide(chosen, fallback=False)

    def lost(self, call: Call) -> None:
        """A full queue rejected a stage of ``call``: speculative, the call is lost; the
        fallback call on the full query, the session fails."""
        self.in_flight.pop(call.idx, None)
        self.ends.lost(call.idx, call.timed_out)
        if self.waiting_for is call:
            self.waiting_for = None
            self.driver.fail()
        elif self.waiting:
            self.waiting = False
            self._wait()

    def withdraw(self, call: Call, reason: str) -> None:
        """The driver took ``call`` back itself (its stage replaced in a queue)."""
        del self.in_flight[call.idx]
        self.ends.cancelled(call.idx, reason)
        if self.tracing:
            self.rec.emit("cancel", arm="streaming", call=call.idx, reason=reason)

    def _cancel(self, call: Call, reason: str) -> None:
        self.driver.stop(call)
        self.n_cancelled += 1
        del self.in_flight[call.idx]
        if call in self.held:  # a mutating tool's call held for authorization, replaced
            self.held.remove(call)
        if call in self.parked:
            self.parked.remove(call)
        self.ends.cancelled(call.idx, reason)
        if self.tracing:
            self.rec.emit("cancel", arm="streaming", call=call.idx, reason=reason)

    def abandon(self) -> None:
        """The turn was abandoned before it ended (barge-in, a new turn): every call in
        flight is cancelled (``abandoned``); the rest end with the turn (:meth:`close`)."""
        if self.driver is _CLOSED:
            return
        for call in list(self.in_flight.values()):
            self._cancel(call, "abandoned")
        self.held = []
        self.parked = []

    def generated(self, call: Call) -> bool:
        """``call``'s query generation ended: whether its tool stage may start now. A
        mutating tool's speculative call under ``deferral`` waits for the turn to be
        confirmed (``defer``; then :meth:`_confirm`); with an eager end of turn whose tools
        wait (``hold_tools``), so does a call of the reflector (then :meth:`confirmed`)."""
        if self.hold_tools and call.by != "trigger":
            self.holding.append(call)
            if self.tracing:
                self.rec.emit("defer", arm="streaming", call=call.idx, prefix_t=call.prefix_t)
            return False
        if not self.deferral or call.by != "trigger" or self.reflecting:
            return True  # after the confirmation only calls on the final text are left (_confirm)
        self.parked.append(call)
        if self.tracing:
            self.rec.emit("defer", arm="streaming", call=call.idx, prefix_t=call.prefix_t)
        return False

    def confirmed(self) -> None:
        """The endpointer confirmed the end of turn (``hold_tools``): the held tool stages
        start, and any later call's at once."""
        self.hold_tools = False
        held, self.holding = self.holding, []
        for call in held:
            if call.idx in self.in_flight:
                if self.tracing:
                    self.rec.emit("execute", arm="streaming", call=call.idx, prefix_t=call.prefix_t)
                self.driver.execute(call)

    def close(self) -> None:
        """The arm is over: drop the driver and its hooks. A driver usually holds the
        machine, so this leaves no reference cycle and the session's memory is returned
        as it ends, without the cycle collector."""
        self.driver = _CLOSED
        self.refuse = self.reaim = None
        self.ends.close()

    # -- what happened ----------------------------------------------------------------

    @property
    def n_fired(self) -> int:
        """Calls fired (a held call cancelled before it started is not)."""
        return len(self.calls) - len(self.unstarted)

    @property
    def n_tool_calls(self) -> int:
        """Calls on the tool: those fired and, with ``ranking = "tool"``, a search per word
        ranked (what the frontier counts as a session's calls, ``tool_calls``)."""
        return self.n_fired + (self.n_ranked if self.rules.ranking == "tool" else 0)
