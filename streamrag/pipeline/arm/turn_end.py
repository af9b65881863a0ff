"""The arm's part once the turn has ended: the reflector looks, judges, waits, falls back
and answers (:class:`TurnEnd`, a part of :class:`~streamrag.pipeline.arm.machine.ArmMachine`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from streamrag.pipeline.calls import Call

if TYPE_CHECKING:
    from streamrag.pipeline.arm.driver import ArmDriver, Emitter, NumberOfWords
    from streamrag.pipeline.outcomes import CallEnds
    from streamrag.pipeline.ranking_cost import RankingInbox
    from streamrag.pipeline.reflectors import Reflector


class TurnEnd:
    """The reflector's rules: :meth:`reflect` at the end of the turn, :meth:`first_look`
    after its check time, then the judging of each completion until it answers. The
    state is the machine's: what this part sets is in its slots, what it reads of the
    rest is declared for the type checker."""

    __slots__ = ("chosen", "decided", "fallback", "held", "parked", "reflecting", "waiting", "waiting_for")
    chosen: Call | None
    decided: bool
    fallback: bool
    held: list[Call]
    parked: list[Call]
    reflecting: bool
    waiting: bool
    waiting_for: Call | None

    if TYPE_CHECKING:
        authorize: bool
        calls: list[Call]
        deferral: bool
        driver: ArmDriver
        ends: CallEnds
        finished: list[Call]
        in_flight: dict[int, Call]
        inbox: RankingInbox | None
        question: NumberOfWords
        rec: Emitter
        reflector: Reflector
        reuse: bool
        tracing: bool
        unstarted: list[Call]
        verdicts: dict[int, bool]

        def _cancel(self, call: Call, reason: str) -> None: ...

        def _fire(self, t: int, by: str) -> Call: ...

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
