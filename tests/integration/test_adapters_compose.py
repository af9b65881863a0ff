"""The adapters composed with each framework's own speculation, through the framework's
real turn machinery: LiveKit's ``AgentSession`` (audio recognition, endpointing,
preemptive generation) fed by a scripted STT stream, and Pipecat's user aggregator and
turn strategies (external, default, eager) with an ``LLMService`` and its
``SpeculationGate`` under ``pipecat.tests.utils.run_test``. No hook is called by hand.

Each test runs two turns and shows the retrieval result in the context the LLM answered
from, the Speculator resolved once per turn (one ``decision`` event each), nothing of
turn 1 in turn 2, and for LiveKit whether its preemptive reply was kept.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from _agentfakes import decisions, livekit_components, pipecat_llm, speculator, until

SPAIN = "what is the capital of spain"
FRANCE = "what is the capital of france"
MADRID = "Information relevant to the user's message:\nMadrid is the capital of Spain."
PARIS = "Information relevant to the user's message:\nParis is the capital of France."


# -- LiveKit ------------------------------------------------------------------------


async def livekit_two_turns(preemptive: bool, events: list[dict[str, Any]]) -> tuple[Any, Any, Any]:
    from livekit.agents import AgentSession

    from streamrag.speculate.livekit import LiveKitSpeculation, SpeculativeAgent

    stt_cls, llm_cls = livekit_components()
    stt, llm = stt_cls(), llm_cls()
    turn_handling: Any = {"endpointing": {"min_delay": 0.3, "max_delay": 3.0}, "preemptive_generation": {"enabled": preemptive}}
    session: AgentSession = AgentSession(stt=stt, llm=llm, turn_handling=turn_handling)  # no VAD: turns end on transcripts
    async with speculator(events) as spec:
        speculation = LiveKitSpeculation(spec)
        await session.start(SpeculativeAgent(speculation, instructions="Answer from the information given."))
        for n, said in enumerate([SPAIN, FRANCE], start=1):
            words = said.split()
            for k in (2, 4, 6):  # the STT's interim hypotheses of the segment, then the final one
                stt.say(" ".join(words[:k]), final=False)
                await asyncio.sleep(0.05)
            stt.say(said, final=True)
            await until(lambda n=n: n_replies(session) == n)  # type: ignore[misc]
        await session.aclose()
    return llm, session, speculation


def n_replies(session: Any) -> int:
    return sum(m.role == "assistant" for m in session.history.messages())


def preemption_log(caplog: pytest.LogCaptureFixture) -> list[str]:
    """LiveKit's verdicts on its preemptive replies (``_user_turn_completed_impl``)."""
    return [r.getMessage() for r in caplog.records if r.name == "livekit.agents" and "preemptive generation" in r.getMessage()]


@pytest.mark.parametrize("preemptive", [True, False], ids=["preemptive-on", "preemptive-off"])
def test_livekit_result_reaches_the_reply_and_a_preemptive_reply_is_kept(preemptive, caplog) -> None:
    pytest.importorskip("livekit.agents", reason="the livekit extra is not installed (pip install -e '.[livekit]')")
    caplog.set_level(logging.DEBUG, logger="livekit.agents")
    events: list[dict[str, Any]] = []
    llm, session, speculation = asyncio.run(livekit_two_turns(preemptive, events))
    # one LLM request per turn: with preemptive generation on, the one started on the
    # final transcript, kept at the end of the turn; the result is right before the user
    # message it answers, and turn 1's result is not in turn 2's request
    instructions = ("system", "Answer from the information given.")
    assert llm.requests == [
        [instructions, ("assistant", MADRID), ("user", SPAIN)],
        [instructions, ("user", SPAIN), ("assistant", "reply 1"), ("assistant", PARIS), ("user", FRANCE)],
    ]
    assert preemption_log(caplog) == (["using preemptive generation"] * 2 if preemptive else [])
    assert decisions(events) == ["turn1", "turn2"]  # resolved once per turn
    assert speculation.last.query == FRANCE and speculation.last.speculative  # nothing carried over
    # the conversation keeps what was said and replied, not the per-request result
    assert [(m.role, m.text_content) for m in session.history.messages()] == [
        ("user", SPAIN),
        ("assistant", "reply 1"),
        ("user", FRANCE),
        ("assistant", "reply 2"),
    ]


def test_livekit_listener_is_registered_once_and_removed_on_exit() -> None:
    """A handoff away and back (``session.update_agent``): ``on_exit`` removes the
    listener, ``on_enter`` adds it again, and a transcript is heard once."""
    pytest.importorskip("livekit.agents", reason="the livekit extra is not installed (pip install -e '.[livekit]')")
    from livekit.agents import AgentSession
    from livekit.agents.voice.events import UserInputTranscribedEvent

    from streamrag.speculate.livekit import LiveKitSpeculation, SpeculativeAgent

    async def main() -> list[str]:
        heard: list[str] = []
        stt_cls, llm_cls = livekit_components()
        session: AgentSession = AgentSession(stt=stt_cls(), llm=llm_cls())
        async with speculator([]) as spec:
            speculation = LiveKitSpeculation(spec)
            speculation.speculator = type("Ear", (), {"hear": lambda self, text, *a, **k: heard.append(text)})()
            first = SpeculativeAgent(speculation, instructions="one")
            await session.start(first)
            session.emit("user_input_transcribed", UserInputTranscribedEvent(transcript="before", is_final=False))
            session.update_agent(SpeculativeAgent(LiveKitSpeculation(spec), instructions="two"))
            await until(lambda: speculation.session is None)  # the first agent's on_exit
            session.emit("user_input_transcribed", UserInputTranscribedEvent(transcript="away", is_final=False))
            session.update_agent(first)  # handed back to
            await until(lambda: speculation.session is session)
            session.emit("user_input_transcribed", UserInputTranscribedEvent(transcript="back", is_final=False))
            await session.aclose()
        return heard

    heard = asyncio.run(main())
    assert heard == ["before", "back"]  # "back" once: one listener; "away" not at all: removed


# -- Pipecat ------------------------------------------------------------------------


def pipecat_strategies(kind: str) -> Any:
    from pipecat.turns.user_turn_strategies import EagerUserTurnStrategies, ExternalUserTurnStrategies, UserTurnStrategies

    return {"external": ExternalUserTurnStrategies, "default": UserTurnStrategies, "eager": EagerUserTurnStrategies}[kind]()


def pipecat_turn(kind: str, said: str) -> list[Any]:
    """The frames a transcriber (and VAD, for the default strategies) push for one turn."""
    from pipecat.audio.vad.vad_analyzer import VAD_START_SECS, VAD_STOP_SECS
    from pipecat.frames.frames import (
        EagerTranscriptionFrame,
        InputAudioRawFrame,
        InterimTranscriptionFrame,
        ProposedUserStartedSpeakingFrame,
        ProposedUserStoppedSpeakingFrame,
        TranscriptionFrame,
        UserStartedSpeakingFrame,
        UserStoppedSpeakingFrame,
        VADUserStartedSpeakingFrame,
        VADUserStoppedSpeakingFrame,
    )
    from pipecat.tests.utils import SleepFrame

    words = said.split()
    interims: list[Any] = []
    for k in (2, 4, 6):
        interims += [InterimTranscriptionFrame(" ".join(words[:k]), "user", ""), SleepFrame(0.05)]
    final = TranscriptionFrame(said, "user", "", finalized=True)
    if kind == "external":  # a service that announces turns (UserStarted/StoppedSpeakingFrame)
        return [UserStartedSpeakingFrame(), *interims, final, UserStoppedSpeakingFrame(), SleepFrame(1.0)]
    if kind == "default":  # VAD start, the smart-turn model, then 3.2 s of silence: a complete turn either way
        audio = [InputAudioRawFrame(b"\0\0" * 320, 16000, 1) for _ in range(160)]  # 20 ms frames
        start, stop = VADUserStartedSpeakingFrame(start_secs=VAD_START_SECS), VADUserStoppedSpeakingFrame(stop_secs=VAD_STOP_SECS)
        return [start, *audio[:25], *interims, final, stop, *audio, SleepFrame(1.0)]
    # eager: a service that predicts the end of the turn (turn.eager_end), then commits it
    eager = EagerTranscriptionFrame(said, "user", "")
    return [
        ProposedUserStartedSpeakingFrame(),
        *interims,
        eager,
        SleepFrame(0.5),
        final,
        ProposedUserStoppedSpeakingFrame(),
        SleepFrame(1.0),
    ]


async def pipecat_run(kind: str, frames: list[Any], events: list[dict[str, Any]], delay_s: float = 0.0) -> tuple[Any, Any, Any]:
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair, LLMUserAggregatorParams
    from pipecat.tests.utils import run_test

    from streamrag.speculate.pipecat import PipecatSpeculation

    context = LLMContext()
    params = LLMUserAggregatorParams(user_turn_strategies=pipecat_strategies(kind))
    aggregators = LLMContextAggregatorPair(context, user_params=params)
    llm = pipecat_llm()
    async with speculator(events, delay_s=delay_s or 0.01) as spec:
        speculation = PipecatSpeculation(spec, context=context)
        pipeline = Pipeline([speculation.transcripts, aggregators.user(), speculation.context, llm, aggregators.assistant()])
        await run_test(pipeline, frames_to_send=frames)
    return llm, context, speculation


@pytest.mark.parametrize("kind", ["external", "default", "eager"])
def test_pipecat_result_reaches_the_reply_under_each_turn_strategy(kind) -> None:
    pytest.importorskip("pipecat", reason="the pipecat extra is not installed (pip install -e '.[pipecat]')")
    events: list[dict[str, Any]] = []
    frames = pipecat_turn(kind, SPAIN) + pipecat_turn(kind, FRANCE)
    llm, context, speculation = asyncio.run(pipecat_run(kind, frames, events))
    turn1 = [{"role": "user", "content": SPAIN}, {"role": "system", "content": MADRID}]
    turn2 = [{"role": "user", "content": FRANCE}, {"role": "system", "content": PARIS}]
    # eager: each reply answers the provisional context (speculation=True), and the
    # service's gate released it (it is in the conversation): the speculative reply kept
    speculative = kind == "eager"
    assert llm.answered == [(speculative, turn1), (speculative, [*turn1, {"role": "assistant", "content": "reply 1"}, *turn2])]
    assert context.messages == [
        *turn1,
        {"role": "assistant", "content": "reply 1"},
        *turn2,
        {"role": "assistant", "content": "reply 2"},
    ]
    assert decisions(events) == ["turn1", "turn2"]  # resolved once per turn
    assert speculation.last.query == FRANCE and speculation.committed == ""  # nothing carried over


@pytest.mark.parametrize("waiting", [False, True], ids=["reply-discarded", "frame-dropped"])
def test_pipecat_withdrawn_eager_turn_is_answered_from_the_committed_words(waiting) -> None:
    """The service withdraws its prediction (the user resumed). ``reply-discarded``: the
    speculative reply was answered and the gate discards it; ``frame-dropped``: a slow
    tool (0.5 s) still held the speculative frame here, so the LLM never sees it."""
    pytest.importorskip("pipecat", reason="the pipecat extra is not installed (pip install -e '.[pipecat]')")
    from pipecat.frames.frames import (
        EagerEndOfTurnCancelFrame,
        EagerTranscriptionFrame,
        InterimTranscriptionFrame,
        ProposedUserStartedSpeakingFrame,
        ProposedUserStoppedSpeakingFrame,
        TranscriptionFrame,
    )
    from pipecat.tests.utils import SleepFrame

    early = "what is the capital"
    frames = [ProposedUserStartedSpeakingFrame(), InterimTranscriptionFrame(early, "user", ""), SleepFrame(0.05)]
    frames += [EagerTranscriptionFrame(early, "user", ""), SleepFrame(0.05 if waiting else 0.5), EagerEndOfTurnCancelFrame()]
    frames += [
        InterimTranscriptionFrame(SPAIN, "user", ""),
        SleepFrame(0.05),
        TranscriptionFrame(SPAIN, "user", "", finalized=True),
    ]
    frames += [ProposedUserStoppedSpeakingFrame(), SleepFrame(2.0)]
    events: list[dict[str, Any]] = []
    llm, context, speculation = asyncio.run(pipecat_run("eager", frames, events, delay_s=0.5 if waiting else 0.0))
    turn = [{"role": "user", "content": SPAIN}, {"role": "system", "content": MADRID}]
    early_request = [] if waiting else [(True, [{"role": "user", "content": early}])]  # no hit: nothing added
    assert llm.answered == [*early_request, (False, turn)]
    assert context.messages == [*turn, {"role": "assistant", "content": f"reply {len(llm.answered)}"}]
    # one resolution per text the LLM was asked to answer: the early words, then the turn
    assert decisions(events) == ["turn1", "turn2"] and speculation.last.query == SPAIN


# -- LiveKit's preflight transcripts ----------------------------------------------------


def preflight(stt: Any, text: str) -> None:
    """A preflight transcript (``SpeechEventType.PREFLIGHT_TRANSCRIPT``): what an STT with an
    eager end of turn (Deepgram Flux's EagerEndOfTurn, LiveKit's inference STT) sends when it
    is confident the turn ended; LiveKit starts its preemptive reply on it."""
    from livekit.agents import stt as lk_stt
    from livekit.agents.language import LanguageCode

    data = lk_stt.SpeechData(LanguageCode("en"), text)
    stt.events.put_nowait(lk_stt.SpeechEvent(type=lk_stt.SpeechEventType.PREFLIGHT_TRANSCRIPT, alternatives=[data]))


async def livekit_preflight_turns(events: list[dict[str, Any]]) -> tuple[Any, Any, Any]:
    from livekit.agents import AgentSession

    from streamrag.speculate.livekit import LiveKitSpeculation, SpeculativeAgent

    stt_cls, llm_cls = livekit_components()
    stt, llm = stt_cls(), llm_cls()
    turn_handling: Any = {"endpointing": {"min_delay": 0.3, "max_delay": 3.0}, "preemptive_generation": {"enabled": True}}
    session: AgentSession = AgentSession(stt=stt, llm=llm, turn_handling=turn_handling)
    async with speculator(events) as spec:
        speculation = LiveKitSpeculation(spec)
        await session.start(SpeculativeAgent(speculation, instructions="Answer from the information given."))
        # turn 1: the preflight is the final text; LiveKit's reply on it is kept
        for text in ("what is", "what is the capital"):
            stt.say(text, final=False)
            await asyncio.sleep(0.05)
        preflight(stt, SPAIN)
        await asyncio.sleep(0.2)  # the preemptive request resolves the turn on the preflight
        stt.say(SPAIN, final=True)
        await until(lambda: n_replies(session) == 1)
        # turn 2: a preflight the user talks past (Flux's TurnResumed): LiveKit drops the reply
        stt.say("what is the", final=False)
        await asyncio.sleep(0.05)
        preflight(stt, "what is the capital of")
        await asyncio.sleep(0.2)
        stt.say(FRANCE, final=False)  # stale: on_preflight_stale cancels the preemptive reply
        await asyncio.sleep(0.05)
        stt.say(FRANCE, final=True)
        await until(lambda: n_replies(session) == 2)
        await session.aclose()
    return llm, session, speculation


def test_livekit_preflight_transcript_reply_is_kept_and_a_stale_one_is_answered_again(caplog) -> None:
    """LiveKit's preflight path (``AudioRecognition`` on ``PREFLIGHT_TRANSCRIPT`` →
    ``on_preemptive_generation``; ``on_preflight_stale``): the preemptive request made on a
    preflight transcript carries the retrieval result and is kept when the final transcript
    says the same; a preflight the user talked past is cancelled, its Speculator turn
    leaves nothing in the next request, and the request for the final words answers from
    a resolution of those words."""
    pytest.importorskip("livekit.agents", reason="the livekit extra is not installed (pip install -e '.[livekit]')")
    caplog.set_level(logging.DEBUG, logger="livekit.agents")
    events: list[dict[str, Any]] = []
    llm, session, speculation = asyncio.run(livekit_preflight_turns(events))
    instructions = ("system", "Answer from the information given.")
    assert llm.requests[0] == [instructions, ("assistant", MADRID), ("user", SPAIN)]  # made on the preflight
    assert llm.requests[-1] == [instructions, ("user", SPAIN), ("assistant", "reply 1"), ("assistant", PARIS), ("user", FRANCE)]
    stale = llm.requests[1:-1]  # the reply started on "what is the capital of", if it reached the LLM before its cancel
    assert all(r[-1] == ("user", "what is the capital of") and PARIS not in str(r) and MADRID not in str(r[2:]) for r in stale)
    verdicts = preemption_log(caplog)
    assert verdicts[0] == "using preemptive generation" and verdicts[-1] == "using preemptive generation"
    answered = [e for e in events if e["kind"] == "decision"]
    assert answered[0]["qid"] == "turn1" and len(answered) in (2, 3)  # the stale preflight's turn: resolved or abandoned
    assert speculation.last.query == FRANCE  # the final words' own resolution (their words came at once: no lead)
    assert [(m.role, m.text_content) for m in session.history.messages()] == [
        ("user", SPAIN),
        ("assistant", "reply 1"),
        ("user", FRANCE),
        ("assistant", f"reply {len(llm.requests)}"),  # the stale reply, cancelled, is not in the history
    ]
