"""LiveKit Agents: retrieval fired on interim transcripts, its result in the turn's context.

Runs in process, no network: a real ``AgentSession`` emits the ``user_input_transcribed``
events an STT plugin would, and the real ``SpeculativeAgent`` gets its
``on_user_turn_completed`` call. In a worker, the same agent is started on a room::

    async def entrypoint(ctx: JobContext):
        async with streamrag.Speculator(search, scenario) as speculator:
            session = AgentSession(stt=..., llm=..., tts=..., vad=...)
            agent = SpeculativeAgent(LiveKitSpeculation(speculator), instructions="...")
            await session.start(agent=agent, room=ctx.room)
"""

import asyncio

from livekit.agents import AgentSession, ChatContext
from livekit.agents.voice.events import UserInputTranscribedEvent

import streamrag
from streamrag.speculate.livekit import LiveKitSpeculation, SpeculativeAgent

DOCS = {"spain": "Madrid is the capital of Spain.", "france": "Paris is the capital of France."}


async def search(query: str) -> list[str]:
    await asyncio.sleep(0.05)  # a 50 ms retrieval call
    return [text for country, text in DOCS.items() if country in query.lower().split()]


async def main() -> dict:
    scenario = streamrag.load_scenario("paper_rq3", ["trigger.kind=every_word"])
    speculator = streamrag.Speculator(search, scenario, reflector=lambda full, call: len(call.value) == 1, shadow=True)
    session = AgentSession()  # no STT, LLM or room: the events below are what an STT plugin emits
    async with speculator:
        speculation = LiveKitSpeculation(speculator)
        agent = SpeculativeAgent(speculation, instructions="Answer from the information given.")
        await session.start(agent)  # on_enter: the agent's speculation listens to the session
        # an STT's events: interim hypotheses of a segment (one revised), then the final one
        for text, final in [("what is", False), ("what is the capitol", False), ("what is the capital of spain", False)]:
            session.emit("user_input_transcribed", UserInputTranscribedEvent(transcript=text, is_final=final))
            await asyncio.sleep(0.2)
        said = "what is the capital of spain please"
        session.emit("user_input_transcribed", UserInputTranscribedEvent(transcript=said, is_final=True))
        turn_ctx = ChatContext.empty()
        message = turn_ctx.add_message(role="user", content=said)
        await agent.on_user_turn_completed(turn_ctx, message)  # the session calls it at end of turn
        report = await speculator.settle()
        await session.aclose()
    answer = speculation.last
    assert answer is not None
    print(f"context={[(m.role, m.text_content) for m in turn_ctx.messages()]}")
    print(f"speculative={answer.speculative} prefix={answer.prefix_t}/{answer.n_words} saved_ms={report.saved_ms:.1f}")
    return {"context": turn_ctx, "answer": answer, "report": report}


if __name__ == "__main__":
    asyncio.run(main())
