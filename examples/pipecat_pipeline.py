"""Pipecat: retrieval fired on interim transcription frames, its result in the LLM context.

Runs in process, no network: a real Pipecat pipeline (the Speculator's two processors
around Pipecat's own user context aggregator, external turn strategies) fed the frames a
transcriber and a turn detector push. ``tests/integration/test_adapters_compose.py`` runs them with
the default and eager strategies and an LLM service too. In a bot, the same processors
sit in the real pipeline::

    Pipeline([transport.input(), stt, spec.transcripts, aggregators.user(), spec.context,
              llm, tts, transport.output(), aggregators.assistant()])
"""

import asyncio

from pipecat.frames.frames import (
    Frame,
    InterimTranscriptionFrame,
    LLMContextFrame,
    TranscriptionFrame,
    UserStartedSpeakingFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair, LLMUserAggregatorParams
from pipecat.tests.utils import SleepFrame, run_test
from pipecat.turns.user_start.external_user_turn_start_strategy import ExternalUserTurnStartStrategy
from pipecat.turns.user_stop.external_user_turn_stop_strategy import ExternalUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies

import streamrag
from streamrag.speculate.pipecat import PipecatSpeculation

DOCS = {"spain": "Madrid is the capital of Spain.", "france": "Paris is the capital of France."}


async def search(query: str) -> list[str]:
    await asyncio.sleep(0.05)  # a 50 ms retrieval call
    return [text for country, text in DOCS.items() if country in query.lower().split()]


async def main() -> dict:
    scenario = streamrag.load_scenario("paper_rq3", ["trigger.kind=every_word"])
    speculator = streamrag.Speculator(search, scenario, reflector=lambda full, call: len(call.value) == 1, shadow=True)
    context = LLMContext()
    strategies = UserTurnStrategies(start=[ExternalUserTurnStartStrategy()], stop=[ExternalUserTurnStopStrategy()])
    aggregators = LLMContextAggregatorPair(context, user_params=LLMUserAggregatorParams(user_turn_strategies=strategies))
    async with speculator:
        spec = PipecatSpeculation(speculator, context=context)
        pipeline = Pipeline([spec.transcripts, aggregators.user(), spec.context])
        heard = ["what is", "what is the capitol", "what is the capital of spain"]
        frames: list[Frame] = [UserStartedSpeakingFrame()]
        for text in heard:
            frames += [InterimTranscriptionFrame(text, "user", ""), SleepFrame(0.2)]
        frames += [TranscriptionFrame("what is the capital of spain please", "user", ""), UserStoppedSpeakingFrame()]
        down, _ = await run_test(pipeline, frames_to_send=[*frames, SleepFrame(0.3)])
        report = await speculator.settle()
    llm_contexts = [f.context for f in down if isinstance(f, LLMContextFrame)]
    answer = spec.last
    assert answer is not None and llm_contexts
    print(f"messages={[m['role'] for m in context.messages]} result={answer.value}")  # type: ignore[index]
    print(f"speculative={answer.speculative} prefix={answer.prefix_t}/{answer.n_words} saved_ms={report.saved_ms:.1f}")
    return {"messages": list(context.messages), "answer": answer, "report": report}


if __name__ == "__main__":
    asyncio.run(main())
