"""Pipecat adapter (extra ``pipecat``): speculative tool calls while the user speaks.

:class:`PipecatSpeculation` gives two frame processors around the user context
aggregator::

    Pipeline([transport.input(), stt, spec.transcripts, aggregators.user(), spec.context,
              llm, tts, transport.output(), aggregators.assistant()])

- ``transcripts`` (between the transcriber and the aggregator) hears every
  ``InterimTranscriptionFrame``, ``EagerTranscriptionFrame`` and ``TranscriptionFrame``:
  the turn's text is its final segments so far plus the current hypothesis (which may
  revise words); frames pass on unchanged;
- ``context`` (between the aggregator and the LLM) holds each ``LLMContextFrame`` while
  the Speculator resolves the text of its last user message, adds the result to that
  frame's context (a ``role`` message after the user's), and passes the frame on.

In Pipecat 1.14 the user aggregator decides that the turn ended (its user-turn
strategies) and pushes the context itself, so the result can only be added after it.
How each strategy reaches the LLM (``processors/aggregators/llm_response_universal.py``):

- external and default strategies: at the end of the turn ``_push_aggregation`` writes
  the user message to the context, broadcasts ``LLMContextUserTurnFrame`` and pushes an
  ``LLMContextFrame`` with the context itself: the result is added to it, and stays in
  the conversation;
- eager strategies (``EagerUserTurnStrategies``): on an ``EagerTranscriptionFrame``,
  ``_run_speculative_inference`` pushes ``LLMContextFrame(speculation=True)`` with a
  provisional copy of the context plus the eager text; the result is added to that copy,
  which is what the speculative reply answers from. When the committed turn matches
  (``EagerUserTurnStopStrategy.trigger_user_turn_stopped``), the aggregator only writes
  the user message (``_push_aggregation(run_llm=False)``: an ``LLMContextUserTurnFrame``
  and no context frame) and the LLM service's ``SpeculationGate`` releases the held
  reply; the same result is then written to the conversation after that user message,
  from ``context=`` (the aggregator's context). When it does not match or the service
  withdraws the prediction, an ``EagerEndOfTurnCancelFrame`` discards the reply: a
  speculative frame still waiting here for its result is dropped, and the committed
  turn's ``LLMContextFrame`` is resolved on its own words.

Use inside ``async with speculator:`` (the calls run in its task group).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipecat.frames.frames import (
    EagerEndOfTurnCancelFrame,
    EagerTranscriptionFrame,
    Frame,
    InterimTranscriptionFrame,
    LLMContextFrame,
    LLMContextUserTurnFrame,
    TranscriptionFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor

from streamrag.speculate.bridge import TranscriptBridge
from streamrag.speculate.judging import render_result
from streamrag.speculate.speculator import Resolution, Speculator


class PipecatSpeculation(TranscriptBridge):
    """The two processors of one Speculator (module docstring). ``context``: the user
    aggregator's ``LLMContext``, where a result that a confirmed eager turn's reply was
    answered from is written (without it, only the reply's provisional context has it)."""

    def __init__(
        self,
        speculator: Speculator,
        *,
        context: Any = None,
        render: Callable[[Resolution], str] = render_result,
        role: str = "system",
    ) -> None:
        super().__init__(speculator, render=render, role=role)
        self.conversation = context
        self.transcripts = _Transcripts(self)
        self.context = _Context(self)

    async def add_result(self, context: Any) -> Resolution | None:
        """Resolve the text of ``context``'s last user message (an ``LLMContext``) and add
        the result after it; ``None`` (nothing added) when there is none to add."""
        idx, text = _last_user_message(context.messages)
        if idx is None:
            return None
        resolution = await self.resolve(text)
        _insert_after(context, idx, self.message(resolution), self.role)
        return resolution

    def confirmed(self, text: str, resolution: Resolution | None) -> None:
        """A speculative reply's turn was confirmed as ``text``: its result goes into the
        conversation, after that user message."""
        if self.conversation is not None:
            messages = self.conversation.messages
            idx = next((i for i in range(len(messages) - 1, -1, -1) if _user_text(messages[i]) == text), None)
            if idx is not None:
                _insert_after(self.conversation, idx, self.message(resolution), self.role)
        self.turn_ended()


def _user_text(message: Any) -> str | None:
    if not isinstance(message, dict) or message.get("role") != "user":
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: the text ones
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return None


def _last_user_message(messages: list[Any]) -> tuple[int | None, str]:
    for i in range(len(messages) - 1, -1, -1):
        text = _user_text(messages[i])
        if text is not None:
            return i, text
    return None, ""


def _insert_after(context: Any, idx: int, text: str | None, role: str) -> None:
    if text is not None:
        messages = list(context.messages)
        context.set_messages([*messages[: idx + 1], {"role": role, "content": text}, *messages[idx + 1 :]])


class _Transcripts(FrameProcessor):
    def __init__(self, speculation: PipecatSpeculation) -> None:
        super().__init__(name="streamrag-transcripts")
        self.speculation = speculation

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, InterimTranscriptionFrame | EagerTranscriptionFrame):
            self.speculation.heard(frame.text, final=False)
        elif isinstance(frame, TranscriptionFrame):
            self.speculation.heard(frame.text, final=True)
        await self.push_frame(frame, direction)


class _Context(FrameProcessor):
    def __init__(self, speculation: PipecatSpeculation) -> None:
        super().__init__(name="streamrag-context")
        self.speculation = speculation
        self.n_withdrawn = 0
        """``EagerEndOfTurnCancelFrame``s seen: system frames, they overtake a held frame."""
        self.held: tuple[str, Resolution | None] | None = None
        """The eager text and result a speculative reply answers from, until confirmed."""

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if direction == FrameDirection.DOWNSTREAM:
            if isinstance(frame, EagerEndOfTurnCancelFrame):
                self.n_withdrawn, self.held = self.n_withdrawn + 1, None
            elif isinstance(frame, LLMContextFrame):
                n_withdrawn = self.n_withdrawn
                resolution = await self.speculation.add_result(frame.context)
                if frame.speculation:
                    if self.n_withdrawn != n_withdrawn:
                        return  # withdrawn while it waited: no reply may answer it
                    self.held = (_last_user_message(frame.context.messages)[1], resolution)
                else:
                    self.held = None
                    self.speculation.turn_ended()
            elif isinstance(frame, LLMContextUserTurnFrame) and self.held is not None:
                # a confirmed eager turn: the aggregator pushes no context frame after it
                (_, resolution), self.held = self.held, None
                self.speculation.confirmed(frame.text, resolution)
        await self.push_frame(frame, direction)
