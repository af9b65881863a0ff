"""Pipecat adapter (extra ``pipecat``): speculative tool calls while the user speaks.

:class:`PipecatSpeculation` gives two frame processors around the user context
aggregator::

    Pipeline([transport.input(), stt, spec.transcripts, context_aggregator.user(),
              spec.context, llm, tts, transport.output(), context_aggregator.assistant()])

- ``transcripts`` (between the transcriber and the aggregator) hears every
  ``InterimTranscriptionFrame`` and ``TranscriptionFrame``: the turn's text is its final
  segments so far plus the current interim one (a new hypothesis may revise words);
  frames pass on unchanged;
- ``context`` (between the aggregator and the LLM) holds the turn's ``LLMContextFrame``
  while the Speculator resolves, adds the result to the context as a message, and passes
  the frame on. In Pipecat 1.x the user aggregator itself decides that the turn ended
  (its user-turn strategies) and pushes the context at once, so the result can only be
  added after it; a frame from Pipecat's own speculative inference
  (``speculation=True``) passes untouched.

Use inside ``async with speculator:`` (the calls run in its task group).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipecat.frames.frames import Frame, InterimTranscriptionFrame, LLMContextFrame, TranscriptionFrame
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from streamrag.base.errors import ToolError
from streamrag.speculate.bridge import TranscriptBridge
from streamrag.speculate.judging import render_result
from streamrag.speculate.speculator import Resolution, Speculator


class PipecatSpeculation(TranscriptBridge):
    """The two processors of one Speculator (module docstring)."""

    def __init__(
        self, speculator: Speculator, *, render: Callable[[Resolution], str] = render_result, role: str = "system"
    ) -> None:
        super().__init__(speculator, render=render, role=role)
        self.transcripts = _Transcripts(self)
        self.context = _Context(self)

    async def resolve(self, context: Any) -> Resolution | None:
        """Resolve the turn; its result is added to ``context`` (an ``LLMContext``)."""
        text, self.committed, self.last = self.committed, "", None
        if not text and not self.speculator.words:
            return None
        if text:
            self.speculator.hear(text, final=True)
        try:
            self.last = await self.speculator.resolve()
        except ToolError:
            return None
        context.add_message({"role": self.role, "content": self.render(self.last)})
        return self.last


class _Transcripts(FrameProcessor):
    def __init__(self, speculation: PipecatSpeculation) -> None:
        super().__init__(name="streamrag-transcripts")
        self.speculation = speculation

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InterimTranscriptionFrame):
            self.speculation.heard(frame.text, final=False)
        elif isinstance(frame, TranscriptionFrame):
            self.speculation.heard(frame.text, final=True)
        await self.push_frame(frame, direction)


class _Context(FrameProcessor):
    def __init__(self, speculation: PipecatSpeculation) -> None:
        super().__init__(name="streamrag-context")
        self.speculation = speculation

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMContextFrame) and not frame.speculation and direction == FrameDirection.DOWNSTREAM:
            await self.speculation.resolve(frame.context)
        await self.push_frame(frame, direction)
