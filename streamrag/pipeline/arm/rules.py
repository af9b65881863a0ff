"""The streaming arm's selectable rules (:class:`ArmRules`) and when its input comes
(:func:`input_schedule`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from streamrag.engine.clock import Priority
from streamrag.pipeline.outcomes import MutatingPolicy
from streamrag.pipeline.ranking_cost import Ranking
from streamrag.pipeline.reflectors import Fallback, Rejudge

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
      a trigger that reads it (:mod:`~streamrag.pipeline.ranking_cost`): nothing, or the trigger
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
