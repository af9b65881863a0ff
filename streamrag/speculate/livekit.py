"""LiveKit Agents adapter (extra ``livekit``): speculative tool calls while the user speaks.

:class:`LiveKitSpeculation` feeds a :class:`~streamrag.speculate.speculator.Speculator`
from an ``AgentSession``'s ``user_input_transcribed`` events (final segments so far plus
the current interim one: the turn's text) and puts the turn's result into the chat
context of the LLM request that answers the turn.

Why the request and not ``on_user_turn_completed`` (LiveKit Agents 1.8,
``voice/agent_activity.py``): with preemptive generation (on by default),
``on_preemptive_generation`` starts the reply on a final or preflight transcript, before
the turn is over, from a copy of the agent's chat context; at the end of the turn
``_user_turn_completed_impl`` keeps that reply only if the context after
``on_user_turn_completed`` ``is_equivalent`` to that copy (and the transcript, tools and
tool choice are unchanged), else cancels it and asks the LLM again. A result added in
``on_user_turn_completed`` would throw every preemptive reply away. Both paths reach the
LLM through ``Agent.llm_node`` (``_pipeline_reply_task_impl`` → ``perform_llm_inference``),
on a per-request copy that LiveKit keeps for a tool's follow-up request: the result goes
there, before the user message, where LiveKit's RAG recipe puts it. So:

- preemptive generation on: the preemptive request resolves the turn (waiting for the
  calls in flight) and answers with the result; ``on_user_turn_completed`` leaves the
  context alone and LiveKit keeps the reply. When LiveKit discards it (the final
  transcript differs), its new request answers the new words from a new resolution;
- preemptive generation off: the request at the end of the turn resolves it;
- a result that adds nothing (no hits, a failed full-query call) adds no message.

:class:`SpeculativeAgent` is an ``Agent`` wired to it: ``on_enter`` attaches the
listener to its session once, ``on_exit`` removes it (an agent handed back to hears
each transcript once), ``on_user_turn_completed`` closes the turn's text, ``llm_node``
adds the result. Use it inside ``async with speculator:`` (the calls run in its task
group).
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Any

from livekit.agents import Agent, ChatContext, ChatMessage, ModelSettings
from livekit.agents.llm import ChatChunk, Tool
from livekit.agents.voice.events import UserInputTranscribedEvent

from streamrag.speculate.bridge import TranscriptBridge
from streamrag.speculate.speculator import Resolution

_MARK = "streamrag_result"
"""The ``extra`` key of a message this adapter added."""


class LiveKitSpeculation(TranscriptBridge):
    """The bridge between an ``AgentSession`` and a Speculator (module docstring)."""

    session: Any = None
    """The session listened to (an ``AgentSession``), ``None`` when detached."""

    def attach(self, session: Any) -> None:
        """Listen to ``session``'s transcripts (an ``AgentSession``), once: attaching to the
        session listened to already is nothing, to another one moves the listener."""
        if session is self.session:
            return
        self.detach()
        session.on("user_input_transcribed", self.on_transcribed)
        self.session = session

    def detach(self) -> None:
        """Stop listening (the agent left the session)."""
        if self.session is not None:
            self.session.off("user_input_transcribed", self.on_transcribed)
            self.session = None

    def on_transcribed(self, ev: UserInputTranscribedEvent) -> None:
        self.heard(ev.transcript, ev.is_final)

    async def inject(self, chat_ctx: ChatContext) -> Resolution | None:
        """Resolve the turn of the last user message in ``chat_ctx`` (an LLM request's
        context) and insert the result before that message. Nothing when the message
        already has it (a tool's follow-up request keeps the first request's context) or
        when it answers no heard turn (``resolve``: a greeting, a typed message)."""
        items = chat_ctx.items
        idx = next((i for i in range(len(items) - 1, -1, -1) if _is_user_message(items[i])), None)
        if idx is None or (idx > 0 and _MARK in getattr(items[idx - 1], "extra", {})):
            return None
        resolution = await self.resolve(items[idx].text_content or "")  # type: ignore[union-attr]
        text = self.message(resolution)
        if text is not None:
            items.insert(idx, ChatMessage(role=self.role, content=[text], extra={_MARK: True}))
        return resolution


def _is_user_message(item: Any) -> bool:
    return isinstance(item, ChatMessage) and item.role == "user"


class SpeculativeAgent(Agent):
    """An ``Agent`` whose replies get the Speculator's result (module docstring)."""

    def __init__(self, speculation: LiveKitSpeculation, **agent_options: Any) -> None:
        super().__init__(**agent_options)
        self.speculation = speculation

    async def on_enter(self) -> None:
        self.speculation.attach(self.session)

    async def on_exit(self) -> None:
        self.speculation.detach()

    async def on_user_turn_completed(self, turn_ctx: ChatContext, new_message: ChatMessage) -> None:
        # the context is left as it is, so that LiveKit keeps a preemptive reply
        self.speculation.turn_ended()

    async def llm_node(
        self, chat_ctx: ChatContext, tools: list[Tool], model_settings: ModelSettings
    ) -> AsyncIterable[ChatChunk | str]:
        await self.speculation.inject(chat_ctx)
        async for chunk in Agent.default.llm_node(self, chat_ctx, tools, model_settings):
            yield chunk  # type: ignore[misc]
