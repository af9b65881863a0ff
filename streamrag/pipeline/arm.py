"""The streaming arm's rules, written once: a state machine with no clock and no I/O.

Events go in — a word heard, a tick, a revision, a call finished or lost, the turn ended
— and actions come out through the :class:`ArmDriver` that runs it: start a call, stop
one, answer from one, fail. The machine decides; its drivers only wait:

- :class:`~streamrag.pipeline.streaming.StreamingArm` drives it on the event engine's
  clock (virtual or real: the simulator, load runs, ``live`` and the
  :class:`~streamrag.speculate.speculator.Speculator`);
- :mod:`~streamrag.simulator.replay.closed` drives it from one heap of stage ends (a
  question alone on unlimited capacity, the default route of ``simulate``);
- :mod:`~streamrag.simulator.predict.saving` drives the closed form on the nominal timeline.

The rules (:class:`ArmRules`; the first value of each is the anchor's code's, the
``paper`` preset): the distinct-prefix rule, the thread cap (``max_threads``) with
``capped_fire`` (defer or drop a blocked fire) and ``slot_release`` (when a finished
call's slot is free again), ``turn_end_order`` (calls fired on the last word held until
the reflector's first look), and the reflector's shell: ``rejudge`` (what is judged
after a completion) and ``fallback`` (what answers when nothing is sufficient).

Time enters only as data: the instant of a word, a tick or a completion (``at_us``),
which the slot-release rule compares. Every trace event the arm records is emitted here,
through ``rec.emit`` (when ``tracing``), in the order the rules take effect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from streamrag.engine.clock import Priority
from streamrag.pipeline.calls import Call
from streamrag.pipeline.outcomes import CallEnds, MutatingPolicy
from streamrag.pipeline.ranking import Ranking, RankingInbox
from streamrag.pipeline.reflectors import Fallback, Reflector, Rejudge
from streamrag.pipeline.triggers import Trigger

CappedFire = Literal["defer", "drop"]
TurnEndOrder = Literal["reflector_first", "calls_first"]
SlotRelease = Literal["after_words", "at_completion"]
_C = TypeVar("_C")


@dataclass(frozen=True, slots=True)
class ArmRules:
    """The rules of the streaming arm that the anchor's code fixes and streamrag makes
    selectable (see :mod:`~streamrag.pipeline.triggers` and
    :mod:`~streamrag.pipeline.reflectors`; the first value of each is the anchor's).

    - ``max_threads``: cap on calls in flight (None: no cap);
    - ``capped_fire``: ``defer`` | ``drop`` a fire blocked by the cap;
    - ``turn_end_order``: ``reflector_first`` — when the reflector starts at the instant
      of the last word (no end-of-turn delay), it looks before the calls fired on that
      word start; if it decides at once they are cancelled unstarted and not counted as
      fired; ``calls_first`` — those calls start first;
    - ``slot_release``: ``after_words`` — a call completing at the instant a word arrives
      still counts against the cap for that word (in the anchor's asyncio harness the
      slot is freed by a done-callback, one loop turn after the words of that instant are
      heard); ``at_completion`` — completions come first (the engine's order), so that
      word sees the freed slot;
    - ``rejudge``: ``best_of_completed`` | ``newest`` (what is judged after a completion);
    - ``fallback``: ``refire`` | ``reuse`` (a call on the full query) when nothing is
      sufficient;
    - ``ranking``: ``free`` | ``tool`` | ``local`` — what a ranking of a word prefix costs
      a trigger that reads it (:mod:`~streamrag.pipeline.ranking`): nothing, or the trigger
      looks at word t only when its ranking is in;
    - ``mutating``: None (the tool has no side effect) or when a mutating tool's
      speculative calls may run (:data:`~streamrag.pipeline.outcomes.MutatingPolicy`).
    """

    max_threads: int | None = 4
    capped_fire: CappedFire = "defer"
    turn_end_order: TurnEndOrder = "reflector_first"
    slot_release: SlotRelease = "after_words"
    rejudge: Rejudge = "best_of_completed"
    fallback: Fallback = "refire"
    ranking: Ranking = "free"
    mutating: MutatingPolicy | None = None

    def judged_after(self, finished: list[_C], newest: _C) -> list[_C]:
        """What the reflector judges when a result comes in while it waits (``rejudge``):
        every finished result, or only the newest."""
        return finished if self.rejudge == "best_of_completed" else [newest]


def input_schedule(word_us: Sequence[int], tick_us: int | None) -> list[tuple[int, int, int]]:
    """Input instants ``(at_us, priority, word_t)``; ``word_t = 0`` marks a tick.

    Ticks fall at k·tick_us (k ≥ 1) up to the last word; a tick at the same µs as a
    word comes after it (priority rule), so it sees that word.
    """
    events = [(at, int(Priority.INPUT), t) for t, at in enumerate(word_us, start=1)]
    if tick_us:
        last = word_us[-1]
        events += [(k * tick_us, int(Priority.TICK), 0) for k in range(1, last // tick_us + 1)]
        events.sort()
    return events


class Emitter(Protocol):
    """Where the arm's trace events go (a :class:`~streamrag.engine.trace.Recorder`)."""

    def emit(self, kind: str, **fields: Any) -> None: ...


class ArmDriver(Protocol):
    """What the machine asks of whoever runs it: the actions out."""

    def start(self, call: Call) -> None:
        """Run the call's stages now (G, then L); report :meth:`ArmMachine.completed`
        or :meth:`ArmMachine.lost`."""
        ...

    def stop(self, call: Call) -> None:
        """Withdraw a started call (whatever stage it is in)."""
        ...

    def answer(self, call: Call) -> None:
        """The reflector decided: the answer is built from ``call``'s result."""
        ...

    def fail(self) -> None:
        """The fallback call on the full query was lost: the session failed."""
        ...

    def rank(self, t: int) -> None:
        """Rank prefix t (``ranking`` is not ``free``); report :meth:`ArmMachine.ranked`."""
        ...

    def unrank(self, t: int) -> None:
        """Withdraw prefix t's ranking, still out at the end of the turn."""
        ...

    def execute(self, call: Call) -> None:
        """Start the tool stage L of ``call``, deferred until the turn was confirmed
        (``mutating = "deferral"``; its G ended, :meth:`ArmMachine.generated`)."""
        ...


class _Closed:
    """The driver of an arm that is over: any action is a bug."""

    def _over(self, *_: object) -> None:
        raise RuntimeError("the streaming arm is over: no action may follow")

    start = stop = answer = rank = unrank = execute = _over

    def fail(self) -> None:
        self._over()


_CLOSED = _Closed()


class NumberOfWords(Protocol):
    """What the machine reads of the question: its length (0 while live input goes on)."""

    @property
    def n_words(self) -> int: ...


class ArmMachine:
    """One question's (or session's) streaming arm: its state and every rule.

    ``refuse(words_since_fire)`` (a speculation policy's verdict under load: a ``skip``
    reason or None) and ``reaim(t)`` (``coalesce``: re-aim a waiting call at prefix t,
    True if done) are optional hooks of drivers that run a policy."""

    __slots__ = (
        "authorize",
        "calls",
        "cap",
        "chosen",
        "decided",
        "defer",
        "deferral",
        "deferred",
        "driver",
        "ends",
        "fallback",
        "finished",
        "fired_prefixes",
        "freed",
        "heard",
        "held",
        "hold_at_turn_end",
        "in_flight",
        "inbox",
        "last_fire_t",
        "n_cancelled",
        "n_ranked",
        "n_skipped",
        "never",
        "parked",
        "question",
        "reaim",
        "rec",
        "reflecting",
        "reflector",
        "refuse",
        "release_after_words",
        "reuse",
        "rules",
        "tracing",
        "trigger",
        "unstarted",
        "verdicts",
        "waiting",
        "waiting_for",
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
        confirmed (``defer``; then :meth:`_confirm`)."""
        if not self.deferral or call.by != "trigger" or self.reflecting:
            return True  # after the confirmation only calls on the final text are left (_confirm)
        self.parked.append(call)
        if self.tracing:
            self.rec.emit("defer", arm="streaming", call=call.idx, prefix_t=call.prefix_t)
        return False

    # -- reflector --------------------------------------------------------------------

    def reflect(self) -> None:
        """The turn ended: the reflector starts (its first look follows after its check
        time, :meth:`first_look`)."""
        self.reflecting = True
        self.ends.turn_ended()
        if self.inbox is not None:
            for t in self.inbox.out:  # the turn's full query is the reflector's to fire
                self.driver.unrank(t)
                if self.tracing:
                    self.rec.emit("rank_done", word=t, outcome="cancelled")
            self.inbox.out.clear()
        if self.tracing:
            self.rec.emit("reflect", finished=tuple(c.idx for c in self.finished), in_flight=tuple(self.in_flight))
        if self.deferral:
            self._confirm()

    def _confirm(self) -> None:
        """``deferral``: the turn is confirmed. A speculative call on the final text runs its
        tool stage now (``execute``) or when its G ends; the others, parked or still in G,
        never may: they are dropped at once (``unconfirmed``), so nobody waits for them."""
        n = self.question.n_words
        parked, self.parked = self.parked, []
        for call in list(self.in_flight.values()):
            if call.by == "trigger" and call.prefix_t != n:
                self._cancel(call, "unconfirmed")
        for call in parked:
            if call.prefix_t == n:
                if self.tracing:
                    self.rec.emit("execute", arm="streaming", call=call.idx, prefix_t=call.prefix_t)
                self.driver.execute(call)

    def first_look(self) -> None:
        """The reflector judges the results in so far; if none is sufficient, the held
        calls start and it waits for the calls in flight."""
        chosen = self._judge(self.finished)
        if chosen is not None:
            self._decide(chosen, fallback=False)
            return
        n = self.question.n_words
        for call in self.held:
            if self.authorize and call.prefix_t != n:  # authorized on the final text only
                self._unstart(call)
            else:
                self.driver.start(call)
        self.held = []
        self._wait()

    def _judge(self, candidates: list[Call]) -> Call | None:
        """The first sufficient call among the reflector's pick of ``candidates``."""
        for idx, t in self.reflector.pick([(c.idx, c.prefix_t) for c in candidates]):
            known = self.verdicts.get(idx)
            if known is None:
                verdict = self.reflector.judge(t)
                known = self.verdicts[idx] = verdict.sufficient
                if self.tracing:
                    self.rec.emit(
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

    def _wait(self) -> None:
        """Wait for the next completion; with nothing in flight, fall back."""
        if self.in_flight:
            self.waiting = True
            return
        # Mis-fire: no speculative result is sufficient; answer from the full query.
        n = self.question.n_words
        if self.reuse:
            full = next((c for c in self.finished if c.prefix_t == n), None)
            if full is not None:
                self._decide(full, fallback=True)
                return
        self.fallback = True
        if self.tracing:
            self.rec.emit("decision", outcome="fallback", call=None, prefix_t=n)
        self.waiting_for = self._fire(n, "reflector")

    def _decide(self, call: Call, *, fallback: bool) -> None:
        self.fallback = fallback
        tracing = self.tracing
        if tracing:
            self.rec.emit("decision", outcome="fallback" if fallback else "speculative", call=call.idx, prefix_t=call.prefix_t)
        for held in self.held:  # never started: not fired
            self._unstart(held)
        self.held = []
        for other in list(self.in_flight.values()):
            self._cancel(other, "reflector")
        self._answer(call)

    def _unstart(self, call: Call) -> None:
        """A held call is dropped before it started: not counted as fired."""
        del self.in_flight[call.idx]
        self.unstarted.append(call)
        self.ends.cancelled(call.idx, "unstarted")
        if self.tracing:
            self.rec.emit("cancel", arm="streaming", call=call.idx, reason="unstarted")

    def _answer(self, call: Call) -> None:
        self.decided = True
        self.chosen = call
        self.ends.used(call.idx)
        self.driver.answer(call)

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
