"""LiveKit Agents adapter (extra ``livekit``): speculative tool calls while the user speaks.

:class:`LiveKitSpeculation` feeds a :class:`~streamrag.speculate.speculator.Speculator`
from an ``AgentSession``'s ``user_input_transcribed`` events and, when the turn is over
(``Agent.on_user_turn_completed``, called before the LLM replies), resolves it and adds
the result to the turn's chat context. LiveKit's transcripts come per segment: an
interim one is the current segment's hypothesis, a final one closes the segment; the
turn's text is the final segments so far plus the current interim one, so a new interim
hypothesis may revise words the previous one had (the Speculator's revisions).

:class:`SpeculativeAgent` is an ``Agent`` wired to it: ``on_enter`` attaches the
listener to its session, ``on_user_turn_completed`` injects the result. Use it inside
``async with speculator:`` (the calls run in its task group).
"""

from __future__ import annotations

from typing import Any

from livekit.agents import Agent, ChatContext, ChatMessage
from livekit.agents.voice.events import UserInputTranscribedEvent

from streamrag.base.errors import ToolError
from streamrag.speculate.bridge import TranscriptBridge
from streamrag.speculate.speculator import Resolution


class LiveKitSpeculation(TranscriptBridge):
    """The bridge between an ``AgentSession`` and a Speculator (module docstring)."""

    def attach(self, session: Any) -> None:
        """Listen to ``session``'s transcripts (an ``AgentSession``)."""
        session.on("user_input_transcribed", self.on_transcribed)

    def on_transcribed(self, ev: UserInputTranscribedEvent) -> None:
        self.heard(ev.transcript, ev.is_final)

    async def on_user_turn_completed(self, turn_ctx: ChatContext, new_message: ChatMessage) -> Resolution | None:
        """Resolve the turn and add its result to ``turn_ctx``; ``None`` (nothing added)
        when nothing was said or the full query's call failed."""
        text = (new_message.text_content or self.committed).strip()
        self.committed = ""
        self.last = None
        if not text:
            self.speculator.cancel()
            return None
        self.speculator.hear(text, final=True)
        try:
            self.last = await self.speculator.resolve()
        except ToolError:
            return None
        turn_ctx.add_message(role=self.role, content=self.render(self.last))  # type: ignore[arg-type]
        return self.last


class SpeculativeAgent(Agent):
    """An ``Agent`` whose turns get the Speculator's result before the LLM replies."""

    def __init__(self, speculation: LiveKitSpeculation, **agent_options: Any) -> None:
        super().__init__(**agent_options)
        self.speculation = speculation

    async def on_enter(self) -> None:
        self.speculation.attach(self.session)

    async def on_user_turn_completed(self, turn_ctx: ChatContext, new_message: ChatMessage) -> None:
        await self.speculation.on_user_turn_completed(turn_ctx, new_message)
