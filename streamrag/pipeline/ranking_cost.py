"""Rankings that cost something: when a trigger that reads them may look at a word.

Triggers that read each word prefix's ranking (``needs = {"rankings"}``: ``learned``,
``stable``, ``replace``) get it free in the anchor's simulator, computed offline (the
``paper`` preset, ``pipeline.ranking = "free"``). A deployed agent computes it:

- ``tool``: with only its tool, the ranking of prefix t is a search on the words heard:
  one tool call of the tool's latency L (drawn per prefix; on the tool's servers under
  load), counted in the calls per turn (``rankings``) and in the tool's busy time;
- ``local``: a local index ranks the prefix in ``pipeline.local_rank_ms`` of the agent's
  own time (a constant per ranking), no tool call.

Either way the trigger looks at word t only when its ranking is in, and in the order of
the words (an agent reads the rankings as the words came: :class:`RankingInbox`). A
ranking lost to a full queue is skipped: the trigger never looks at that word. A ranking
that comes in after the turn ended is not looked at (the turn's full query is the
reflector's to fire).
"""

from __future__ import annotations

from typing import Literal

Ranking = Literal["free", "tool", "local"]
RANKING_SOURCES: tuple[Ranking, ...] = ("free", "tool", "local")


RankOutcome = Literal["in", "lost", "cancelled"]


class RankingInbox:
    """Rankings started and come in, released to the trigger in word order."""

    __slots__ = ("landed", "next_t", "out")

    def __init__(self) -> None:
        self.next_t = 1
        """The word whose ranking the trigger reads next."""
        self.landed: dict[int, bool] = {}
        """Word → its ranking came in (True) or was lost (False), while an earlier one is out."""
        self.out: list[int] = []
        """Words whose ranking is still out, in the order they started."""

    def land(self, t: int, ok: bool) -> list[tuple[int, bool]]:
        """Word t's ranking came in (``ok``) or was lost: the words now readable, in order."""
        self.out.remove(t)
        self.landed[t] = ok
        ready: list[tuple[int, bool]] = []
        while self.next_t in self.landed:
            ready.append((self.next_t, self.landed.pop(self.next_t)))
            self.next_t += 1
        return ready
