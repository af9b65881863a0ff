"""Scripted components for driving LiveKit Agents and Pipecat through their own turn
machinery in process (no network, no model): an STT stream and an LLM that record what
they were given. Imported only after ``pytest.importorskip`` of each framework.

livekit-agents ships no fake STT or LLM (its tests' ``fake_stt.py`` and ``fake_llm.py``
are not in the package), so ``examples/livekit_agent.py`` implements the public plugin
interfaces the same way (``stt.STT.stream()`` → a ``RecognizeStream`` whose ``_run``
sends ``SpeechEvent``s; ``llm.LLM.chat()`` → an ``LLMStream`` sending ``ChatChunk``s)
and the tests run with its classes. Pipecat's scripted
"STT" is the frames its eager-capable service pushes (``services/cartesia/turns/stt.py``,
``_handle_turn_*``) fed through ``pipecat.tests.utils.run_test``; its LLM is an
``LLMService`` subclass, so the service's own ``SpeculationGate`` holds, releases or
discards each reply.
"""

from __future__ import annotations

import asyncio
import runpy
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamrag

DOCS = {"spain": "Madrid is the capital of Spain.", "france": "Paris is the capital of France."}


def speculator(events: list[dict[str, Any]], delay_s: float = 0.01) -> streamrag.Speculator:
    """A Speculator on a search of ``DOCS`` by country taking ``delay_s``, recording its
    trace events in ``events``; a call is sufficient when it found one document."""

    async def search(query: str) -> list[str]:
        await asyncio.sleep(delay_s)
        return [text for country, text in DOCS.items() if country in query.lower().split()]

    scenario = streamrag.load_scenario("paper_rq3", ["trigger.kind=every_word"])
    return streamrag.Speculator(search, scenario, reflector=lambda full, call: len(call.value) == 1, sink=events.append)


def decisions(events: list[dict[str, Any]]) -> list[str]:
    """The Speculator turns resolved, in order (one ``decision`` event each)."""
    return [e["qid"] for e in events if e["kind"] == "decision"]


async def until(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    """Wait for ``condition`` (a generous bound: a loaded machine is slow, never wrong)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met in time")
        await asyncio.sleep(0.01)


# -- LiveKit ------------------------------------------------------------------------


def livekit_components() -> tuple[Any, Any]:
    """(ScriptedSTT, ScriptedLLM): the classes ``examples/livekit_agent.py`` runs with."""
    example = runpy.run_path(str(Path(__file__).resolve().parents[1] / "examples" / "livekit_agent.py"))
    return example["ScriptedSTT"], example["ScriptedLLM"]


# -- Pipecat ------------------------------------------------------------------------


def pipecat_llm() -> Any:
    """A ScriptedLLM: an ``LLMService`` that records (speculation, messages) per inference
    and answers "reply N" through the service's push path (its SpeculationGate)."""
    from pipecat.frames.frames import LLMContextFrame, LLMFullResponseEndFrame, LLMFullResponseStartFrame, LLMTextFrame
    from pipecat.services.llm_service import LLMService
    from pipecat.services.settings import LLMSettings

    unset = dict.fromkeys(  # None: "unsupported", as the service base asks of every setting
        [
            "model",
            "system_instruction",
            "temperature",
            "max_tokens",
            "top_p",
            "top_k",
            "frequency_penalty",
            "presence_penalty",
            "seed",
            "filter_incomplete_user_turns",
            "user_turn_completion_config",
        ]
    )

    class ScriptedLLM(LLMService):
        def __init__(self) -> None:
            super().__init__(settings=LLMSettings(**unset))  # type: ignore[arg-type]
            self.answered: list[tuple[bool, list[dict[str, Any]]]] = []

        async def process_frame(self, frame: Any, direction: Any) -> None:
            await super().process_frame(frame, direction)
            if isinstance(frame, LLMContextFrame):
                messages: list[Any] = frame.context.messages
                self.answered.append((frame.speculation, [dict(m) for m in messages]))
                await self.push_frame(LLMFullResponseStartFrame())
                await self.push_frame(LLMTextFrame(f"reply {len(self.answered)}"))
                await self.push_frame(LLMFullResponseEndFrame())
            else:
                await self.push_frame(frame, direction)

    return ScriptedLLM()
