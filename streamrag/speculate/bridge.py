"""What both agent adapters share: a turn's text from transcript segments, fed to a
Speculator, and the turn resolved for the text an LLM request answers.

Frameworks deliver speech per segment: an interim transcript is the current segment's
hypothesis, a final one closes the segment. The turn's text is the final segments so far
plus the current interim one, so a new interim hypothesis may revise words the previous
one had (the Speculator's revisions).

Both frameworks may start the LLM before the turn is over (LiveKit's preemptive
generation, Pipecat's eager end of turn) and then either keep that reply or answer again.
So the turn is resolved when an LLM request is about to answer a text, not at a fixed
hook: :meth:`TranscriptBridge.resolve` resolves the Speculator on that text once and
answers a second request for the same words (the confirmed turn after a speculative
reply) from the same resolution, with no new call. When the framework's bet on an early
end of turn is lost (the user went on), the next words start a new Speculator turn and
the request for the final text resolves that one: one resolution per distinct text the
LLM is asked to answer. The adapters (:mod:`.livekit`, :mod:`.pipecat`) differ only in
where the segments come from, which request the result goes into, and where a turn ends.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sized

from streamrag.base.errors import ToolError
from streamrag.speculate.judging import render_result
from streamrag.speculate.speculator import Resolution, Speculator

_APOSTROPHES = re.compile(r"['\u2019\u02bc]")
_WORD = re.compile(r"\w+")


def same_words(a: str, b: str) -> bool:
    """Whether two transcripts say the same words, formatting aside (case, punctuation,
    apostrophes): at least as lenient as LiveKit's ``_transcripts_equivalent``
    (``voice/agent_activity.py``) and Pipecat's ``NormalizedMatch``
    (``turns/user_stop/eager_match_policy.py``), so a reply a framework keeps is never
    taken here for a new turn."""

    def words(text: str) -> list[str]:
        return _WORD.findall(_APOSTROPHES.sub("", unicodedata.normalize("NFKC", text).casefold()))

    return words(a) == words(b)


def adds_nothing(resolution: Resolution | None) -> bool:
    """No result to give the LLM: the turn was not resolved, or its value is empty (no
    hits, an empty list or string, ``None``)."""
    if resolution is None or resolution.value is None:
        return True
    return isinstance(resolution.value, Sized) and len(resolution.value) == 0


class TranscriptBridge:
    """A Speculator fed with transcript segments; ``render`` turns a resolution into the
    text given to the LLM under ``role`` (module docstring)."""

    def __init__(
        self, speculator: Speculator, *, render: Callable[[Resolution], str] = render_result, role: str = "assistant"
    ) -> None:
        self.speculator = speculator
        self.render = render
        self.role = role
        self.committed = ""
        """The turn's final segments so far."""
        self.last: Resolution | None = None
        """The last resolution (``None`` before, or when its full-query call failed)."""
        self._open = False
        """Words were heard that no resolution answered yet."""
        self._answered: tuple[str, Resolution | None] | None = None
        """The text last resolved and its resolution, reused while no new word is heard."""
        self._turn_over = False
        """The framework closed the user turn: the next segment begins a new one."""

    def heard(self, segment: str, final: bool) -> None:
        """One transcript segment (interim or final); empty ones (speech stopped) are
        ignored, and so are the words a resolution already answered (a final transcript
        after the framework's early end of turn)."""
        if not segment.strip():
            return
        if self._turn_over:
            self._turn_over, self.committed, self._answered = False, "", None
        text = f"{self.committed} {segment}".strip()
        if final:
            self.committed = text
        if self._answered is not None:
            if same_words(text, self._answered[0]):
                return
            self._answered = None  # the user went on: a new Speculator turn
        self._open = True
        self.speculator.hear(text)

    async def resolve(self, text: str) -> Resolution | None:
        """The result to answer ``text`` from (the turn's text as the LLM request has it):
        resolved once, then reused for a request on the same words. ``None`` when no word
        was heard for it (a reply that answers no heard turn: a greeting, a tool's
        follow-up) or when the full query's call failed. A request cancelled while it
        waits (the framework withdrew its early reply) abandons the Speculator's turn,
        unless new words have begun another one."""
        if self._answered is not None and same_words(text, self._answered[0]):
            return self._answered[1]
        if not self._open or not text.strip():
            return None
        self.speculator.hear(text, final=True)
        qid = self.speculator.report().qid
        self._open = False
        try:
            resolution: Resolution | None = await self.speculator.resolve()
        except ToolError:
            resolution = None
        except BaseException:
            if self.speculator.report().qid == qid:
                self.speculator.cancel()
            self._open = True  # still unanswered: a later request resolves a new turn
            raise
        self._answered = (text, resolution)
        self.last = resolution
        return resolution

    def message(self, resolution: Resolution | None) -> str | None:
        """The text to give the LLM for ``resolution``; ``None`` when it adds nothing."""
        return None if adds_nothing(resolution) else self.render(resolution)  # type: ignore[arg-type]

    def turn_ended(self) -> None:
        """The framework closed the user turn: the next segment starts the next turn's text
        (the resolution stays, for a request on the same words that comes later)."""
        self._turn_over = True
        self.committed = ""
