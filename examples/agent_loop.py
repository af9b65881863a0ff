"""An agent loop on streamrag's public API alone: retrieval fired while the user speaks."""

import asyncio

import streamrag

DOCS = ["Paris is the capital of France.", "Madrid is the capital of Spain.", "Rome is the capital of Italy."]


async def search(query: str) -> list[str]:
    await asyncio.sleep(0.05)  # a 50 ms retrieval call
    return [d for d in DOCS if d.lower().rstrip(".").split()[-1] in query.lower().split()]  # by country


async def main() -> None:
    scenario = streamrag.load_scenario("paper_rq3", ["trigger.kind=every_word"])
    spec = streamrag.Speculator(search, scenario, reflector=lambda full, call: len(call.value) == 1, shadow=True)
    async with spec:
        # interim transcripts, 200 ms apart; the third revises "capitol" into "capital of"
        for text in ["what is", "what is the capitol", "what is the capital of", "what is the capital of spain please"]:
            spec.hear(text)
            await asyncio.sleep(0.2)
        answer = await spec.resolve()  # end of turn: the result to hand to the LLM
        report = await spec.settle()  # shadow mode: the baseline's call has finished too
    print(f"result={answer.value} speculative={answer.speculative} prefix={answer.prefix_t}/{answer.n_words}")
    print(f"waited_ms={answer.waited_ms:.1f} saved_ms={report.saved_ms:.1f} fired={report.fired} stale={report.stale}")


asyncio.run(main())
