"""What both agent adapters share: a turn's text from transcript segments, fed to a Speculator.

Frameworks deliver speech per segment: an interim transcript is the current segment's
hypothesis, a final one closes the segment. The turn's text is the final segments so far
plus the current interim one, so a new interim hypothesis may revise words the previous
one had (the Speculator's revisions). The adapters (:mod:`.livekit`, :mod:`.pipecat`)
differ only in where the segments come from and where the result goes.
"""

from __future__ import annotations

from collections.abc import Callable

from streamrag.speculate.judging import render_result
from streamrag.speculate.speculator import Resolution, Speculator


class TranscriptBridge:
    """A Speculator fed with transcript segments; ``render`` turns a resolution into the
    text given to the LLM under ``role``."""

    def __init__(
        self, speculator: Speculator, *, render: Callable[[Resolution], str] = render_result, role: str = "assistant"
    ) -> None:
        self.speculator = speculator
        self.render = render
        self.role = role
        self.committed = ""
        """The turn's final segments so far."""
        self.last: Resolution | None = None

    def heard(self, segment: str, final: bool) -> None:
        """One transcript segment (interim or final); empty ones (speech stopped) are ignored."""
        if not segment.strip():
            return
        text = f"{self.committed} {segment}".strip()
        if final:
            self.committed = text
        self.speculator.hear(text)
