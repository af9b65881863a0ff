"""How every speculative call ends, and what a tool's call may do before the turn is confirmed.

**Terminal outcomes.** A speculative call (fired by the trigger) ends in exactly one of:

===================  ===================================================================
``used``             the answer was built from its result, which was in when the turn ended
``used_after_wait``  the answer was built from its result, which came in after the turn
                     ended: the answer waited for it
``superseded``       a later prefix took its place: killed by a newer fire (``replace``
                     trigger, cancel reason ``replaced``) or by a newer call in the tool
                     queue (``coalesce``, reason ``superseded``)
``revoked``          a revision of the transcript dropped the words its prefix ended with:
                     cancelled in flight (reason ``revised``) or finished and never judged
``expired``          the turn ended and the answer came from another call: still running
                     then (reason ``reflector``), never started (``unstarted``), held for a
                     confirmation its text did not get (``unconfirmed``), or finished and
                     never used
``timed_out``        the tool did not answer in time (a ``tool_error`` with ``timed_out``)
``cancelled``        the turn was abandoned before it ended (barge-in, a new turn, the
                     session closed): reason ``abandoned``, or finished in such a turn
``failed``           the tool failed (``tool_error``) or a full queue rejected a stage
                     (``reject``)
===================  ===================================================================

The fallback call on the full query (fired by the reflector) and the baseline arm's call
are not speculative and have no outcome here. :class:`CallEnds` is the one place the rule
lives: the arm's state machine feeds it as calls end (the closed form reads it without a
trace), and :func:`~streamrag.simulator.replay.fold.fold_trace` feeds it from the trace
events (the engine, the Speculator), so the two count alike (``tests/parity/test_closed_form.py``).

**Side-effect classes** of a tool (:data:`Effects`): ``read_only`` (speculate freely),
``idempotent`` (a repeated call with the same arguments may be served from a cache; the
Speculator keeps one per session), ``mutating`` (a call changes the world: it runs only
once the turn is confirmed, :data:`MutatingPolicy`). A call's side effect is its tool
stage L; query generation G only prepares the arguments.

An **unsafe execution** is a mutating call whose tool stage started on text that is not
the turn's final text: a prefix shorter than the final question (its arguments are not
the ones the user ended up giving) or a hypothesis a later one revised. Counted per turn
(``unsafe_calls``) and per 1,000 turns in the summary.
"""

from __future__ import annotations

import typing
from typing import Literal

Outcome = Literal["used", "used_after_wait", "superseded", "revoked", "expired", "timed_out", "cancelled", "failed"]
OUTCOMES: tuple[Outcome, ...] = typing.get_args(Outcome)
"""Every terminal outcome, in the order counts are kept."""

Effects = Literal["read_only", "idempotent", "mutating"]
"""A tool's side-effect class (module docstring)."""

MutatingPolicy = Literal["never", "after_authorization", "deferral", "speculative"]
"""When a mutating tool's speculative calls may run:

- ``never``: it is not speculated (every trigger opportunity is skipped, reason
  ``mutating``; the answer's call is made at end of turn, as Pipecat does);
- ``after_authorization``: calls are fired but none starts before the turn is confirmed;
  then only those on the final text start, the rest expire unstarted (a tool runs after
  the reply is authorized, as LiveKit does);
- ``deferral``: calls run their query generation G at once; their tool stage L waits for
  the turn to be confirmed (``defer`` event), then runs on the final text only
  (``execute``), the rest expire (``unconfirmed``): Deepgram's ``defer_until_eot``;
- ``speculative``: no guard, the tool is run as a read-only one (simulation only, to
  measure what that risks: Deepgram's default for a function without ``defer_until_eot``).
"""

CANCELLED_AS: dict[str, Outcome] = {
    "replaced": "superseded",
    "superseded": "superseded",
    "revised": "revoked",
    "reflector": "expired",
    "unstarted": "expired",
    "unconfirmed": "expired",
    "abandoned": "cancelled",
}
"""The outcome of a call cancelled for each ``cancel`` reason of the trace."""


class CallEnds:
    """The speculative calls of one turn and how each ended (module docstring), fed as
    the turn goes: :meth:`fired`, :meth:`completed`, :meth:`lost`, :meth:`cancelled`,
    :meth:`revised`, :meth:`turn_ended`, :meth:`used`, and :meth:`close` when the turn is over."""

    __slots__ = ("confirmed", "finished", "late", "outcome", "prefix")

    def __init__(self) -> None:
        self.prefix: dict[int, int] = {}
        """Speculative call → the prefix it was fired on."""
        self.outcome: dict[int, Outcome] = {}
        """Call → its outcome, once it ended (the first end counts)."""
        self.finished: set[int] = set()
        """Calls whose result came in."""
        self.late: set[int] = set()
        """Calls whose result came in after the turn ended."""
        self.confirmed = False
        """The turn ended (its words are final)."""

    def fired(self, call: int, prefix_t: int) -> None:
        self.prefix[call] = prefix_t

    def completed(self, call: int) -> None:
        if call in self.prefix:
            self.finished.add(call)
            if self.confirmed:
                self.late.add(call)

    def _end(self, call: int, outcome: Outcome) -> None:
        if call in self.prefix and call not in self.outcome:
            self.outcome[call] = outcome

    def lost(self, call: int, timed_out: bool = False) -> None:
        """The call failed (a tool error, a rejected stage) or timed out."""
        self._end(call, "timed_out" if timed_out else "failed")

    def cancelled(self, call: int, reason: str) -> None:
        self._end(call, CANCELLED_AS[reason])

    def revised(self, kept_t: int) -> None:
        """Every word after ``kept_t`` was withdrawn: finished calls on longer prefixes are
        never judged (those in flight are cancelled, reason ``revised``)."""
        for call in sorted(self.finished):
            if self.prefix[call] > kept_t:
                self._end(call, "revoked")

    def turn_ended(self) -> None:
        self.confirmed = True

    def used(self, call: int) -> None:
        """The answer is built from ``call``'s result."""
        self._end(call, "used_after_wait" if call in self.late else "used")

    def close(self) -> None:
        """The turn is over: a call with no end yet expired (the turn ended and another
        result answered, or none) or was cancelled with its turn (it never ended)."""
        rest: Outcome = "expired" if self.confirmed else "cancelled"
        for call in self.prefix:
            self._end(call, rest)

    def counts(self) -> tuple[int, ...]:
        """Calls per outcome, in :data:`OUTCOMES` order (the ended calls only)."""
        tally = dict.fromkeys(OUTCOMES, 0)
        for outcome in self.outcome.values():
            tally[outcome] += 1
        return tuple(tally.values())

    @property
    def pending(self) -> list[int]:
        """Calls that have not ended (none once :meth:`close` ran)."""
        return [call for call in self.prefix if call not in self.outcome]


def outcome_counts(counts: typing.Sequence[int]) -> dict[str, int]:
    """``{outcome: count}`` of a :meth:`CallEnds.counts` tuple (summary.json's ``call_outcomes``)."""
    return dict(zip(OUTCOMES, counts, strict=True))


def unsafe(prefix_t: int, n_words: int, revised: typing.Sequence[bool] | None) -> bool:
    """Whether a mutating call's tool stage started on prefix ``prefix_t`` is an unsafe
    execution: not the final text (a shorter prefix, or a hypothesis later revised)."""
    return prefix_t < n_words or (revised is not None and bool(revised[prefix_t - 1]))
