"""LiveKit Agents: retrieval fired on interim transcripts, its result in the reply's context.

Runs in process, no network: a real ``AgentSession`` (its audio recognition, endpointing
and preemptive generation, on by default) with a scripted streaming STT in place of a
plugin and an LLM that records what it is asked. In a worker, the same agent is started
on a room::

    async def entrypoint(ctx: JobContext):
        async with streamrag.Speculator(search, scenario) as speculator:
            session = AgentSession(stt=..., llm=..., tts=..., vad=...)
            agent = SpeculativeAgent(LiveKitSpeculation(speculator), instructions="...")
            await session.start(agent=agent, room=ctx.room)
"""

import asyncio
import logging
from typing import Any

from livekit.agents import AgentSession, LanguageCode, llm, stt
from livekit.agents.types import DEFAULT_API_CONNECT_OPTIONS

import streamrag
from streamrag.speculate.livekit import LiveKitSpeculation, SpeculativeAgent

DOCS = {"spain": "Madrid is the capital of Spain.", "france": "Paris is the capital of France."}


async def search(query: str) -> list[str]:
    await asyncio.sleep(0.05)  # a 50 ms retrieval call
    return [text for country, text in DOCS.items() if country in query.lower().split()]


class ScriptedSTT(stt.STT):
    """A streaming STT whose transcripts are sent with ``say`` (what a plugin's stream emits)."""

    def __init__(self) -> None:
        super().__init__(capabilities=stt.STTCapabilities(streaming=True, interim_results=True))
        self.events: asyncio.Queue[stt.SpeechEvent] = asyncio.Queue()

    async def _recognize_impl(self, buffer: Any, *, language: Any = None, conn_options: Any = None) -> Any:
        raise NotImplementedError("streaming only")

    def stream(self, *, language: Any = None, conn_options: Any = DEFAULT_API_CONNECT_OPTIONS) -> Any:
        return _ScriptedStream(stt=self, conn_options=conn_options)

    def say(self, text: str, final: bool) -> None:
        kind = stt.SpeechEventType.FINAL_TRANSCRIPT if final else stt.SpeechEventType.INTERIM_TRANSCRIPT
        self.events.put_nowait(stt.SpeechEvent(type=kind, alternatives=[stt.SpeechData(LanguageCode("en"), text)]))


class _ScriptedStream(stt.RecognizeStream):
    async def _run(self) -> None:
        events = self._stt.events  # type: ignore[attr-defined]
        while True:
            self._event_ch.send_nowait(await events.get())


class ScriptedLLM(llm.LLM):
    """Records each request's messages as (role, text) and answers "reply N"."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list[tuple[str, str]]] = []

    def chat(self, *, chat_ctx: Any, tools: Any = None, conn_options: Any = DEFAULT_API_CONNECT_OPTIONS, **_: Any) -> Any:
        self.requests.append([(m.role, m.text_content or "") for m in chat_ctx.messages()])
        return _ScriptedReply(self, chat_ctx=chat_ctx, tools=tools or [], conn_options=conn_options)


class _ScriptedReply(llm.LLMStream):
    async def _run(self) -> None:
        reply = f"reply {len(self._llm.requests)}"  # type: ignore[attr-defined]
        self._event_ch.send_nowait(llm.ChatChunk(id=reply, delta=llm.ChoiceDelta(role="assistant", content=reply)))


class _Verdicts(logging.Handler):
    """LiveKit's verdict on each preemptive reply (logged by ``_user_turn_completed_impl``)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.kept = self.discarded = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.kept += record.getMessage() == "using preemptive generation"
        self.discarded += record.getMessage().startswith("preemptive generation invalidated")


async def main() -> dict:
    scenario = streamrag.load_scenario("paper_rq3", ["trigger.kind=every_word"])
    speculator = streamrag.Speculator(search, scenario, reflector=lambda full, call: len(call.value) == 1, shadow=True)
    transcriber, model, verdicts = ScriptedSTT(), ScriptedLLM(), _Verdicts()
    logger = logging.getLogger("livekit.agents")
    logger.addHandler(verdicts)
    logger.setLevel(logging.DEBUG)
    session: AgentSession = AgentSession(stt=transcriber, llm=model)  # no VAD: the turn ends on the transcripts
    async with speculator:
        speculation = LiveKitSpeculation(speculator)
        await session.start(SpeculativeAgent(speculation, instructions="Answer from the information given."))
        # the STT's interim hypotheses of a segment (one revised), then the final one
        for text in ["what is", "what is the capitol", "what is the capital of spain"]:
            transcriber.say(text, final=False)
            await asyncio.sleep(0.2)
        transcriber.say("what is the capital of spain please", final=True)
        while not any(m.role == "assistant" for m in session.history.messages()):  # the reply
            await asyncio.sleep(0.01)
        report = await speculator.settle()
        await session.aclose()
    logger.removeHandler(verdicts)
    answer = speculation.last
    assert answer is not None
    print(f"request={model.requests[-1]}")
    print(f"preemptive kept={verdicts.kept} discarded={verdicts.discarded}")
    print(f"speculative={answer.speculative} prefix={answer.prefix_t}/{answer.n_words} saved_ms={report.saved_ms:.1f}")
    return {"requests": model.requests, "answer": answer, "report": report, "kept": verdicts.kept}


if __name__ == "__main__":
    asyncio.run(main())
