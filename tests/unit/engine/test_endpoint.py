"""The endpointer (issue 46): silence timeouts exact to the µs, a detector's operating
point, false cut-offs and what the replies to a partial turn cost."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from streamrag.engine.endpoint import Break, BreakCost, EndpointConfig, break_cost, silences_us

T = 500_000  # a 500 ms timeout, in µs


def _silence(ms: float = 500.0) -> EndpointConfig:
    return EndpointConfig(kind="silence", silence_ms=ms)


def _decide(config: EndpointConfig, words: list[int], *, starts: list[int] | None = None, rng=None, interval: int = 400_000):
    return config.decide(words, starts, word_interval_us=interval, fixed_us=0, rng=rng)


@pytest.mark.parametrize(("pause_us", "cut"), [(T - 1, False), (T, True), (T + 1, True)])
def test_a_silence_one_us_shorter_than_the_timeout_does_not_end_the_turn_and_one_as_long_does(pause_us: int, cut: bool) -> None:
    # words every 400 ms (voiced 400 ms: unbroken speech), one pause of pause_us after word 2
    words = [400_000, 800_000, 1_200_000 + pause_us, 1_600_000 + pause_us]
    end = _decide(_silence(), words)
    assert end.start_us == end.confirm_us == T  # the turn ends silence_ms into the final silence
    if cut:
        assert end.cutoffs == (Break(prefix_t=2, cut_us=800_000 + T, resume_us=800_000 + pause_us),)
    else:
        assert end.cutoffs == ()


def test_unbroken_speech_is_never_cut_off_and_a_longer_voiced_time_hides_a_gap() -> None:
    words = [400_000 * i for i in range(1, 11)]
    assert _decide(_silence(1.0), words).cutoffs == ()  # a 1 ms timeout, but no silence at all
    gappy = [0, 1_000_000, 2_000_000]  # 1 s gaps at a nominal 400 ms per word: 600 ms silences
    assert len(_decide(_silence(), gappy).cutoffs) == 2
    assert _decide(EndpointConfig(kind="silence", silence_ms=500.0, voiced_ms=600.0), gappy).cutoffs == ()


def test_a_timings_file_gives_each_silence_from_the_next_words_start() -> None:
    ends = [300_000, 700_000, 1_500_000]
    starts = [0, 400_000, 1_200_000]  # 500 ms from word 2's end to word 3's start: exactly the timeout
    assert silences_us(ends, starts, 10**9) == [100_000, 500_000]
    end = _decide(_silence(), ends, starts=starts)
    assert end.cutoffs == (Break(2, 700_000 + T, 1_200_000),)


def test_a_detector_cuts_off_at_the_longest_pause_that_is_as_long_as_its_delay() -> None:
    detector = EndpointConfig(kind="detector", delay_ms=300.0, false_cutoff_rate=1.0)
    words = [0, 400_000 + 200_000, 1_000_000 + 350_000, 1_400_000 + 350_000]  # pauses 200 ms, 350 ms, 0
    end = _decide(detector, words, rng=np.random.default_rng(0))
    assert end.start_us == end.confirm_us == 300_000
    assert end.cutoffs == (Break(2, 600_000 + 300_000, 600_000 + 350_000),)
    short = [0, 600_000, 1_200_000]  # pauses of 200 ms, shorter than the delay: nothing to cut
    assert _decide(detector, short, rng=np.random.default_rng(0)).cutoffs == ()
    never = EndpointConfig(kind="detector", delay_ms=300.0)
    assert not never.needs_rng and _decide(never, words).cutoffs == ()


def test_a_detectors_rate_is_the_share_of_turns_it_cuts_off() -> None:
    detector = EndpointConfig(kind="detector", delay_ms=100.0, false_cutoff_rate=0.25)
    words = [0, 1_000_000, 1_400_000]  # a 600 ms pause after word 1
    rng = np.random.default_rng(7)
    cut = sum(bool(_decide(detector, words, rng=rng).cutoffs) for _ in range(4000))
    assert 0.22 < cut / 4000 < 0.28


def test_fixed_is_the_studys_end_of_turn() -> None:
    end = EndpointConfig().decide([1, 2, 3], None, word_interval_us=1, fixed_us=250_000, rng=None)
    assert end.start_us == end.confirm_us == 250_000 and end.cutoffs == ()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"kind": "silence"}, "silence_ms: required"),
        ({"kind": "detector"}, "delay_ms: required"),
        ({"kind": "detector", "delay_ms": 300, "silence_ms": 200}, "silence_ms: applies to kind = 'silence' only"),
        ({"kind": "silence", "silence_ms": 200, "false_cutoff_rate": 0.1}, "false_cutoff_rate: applies to kind = 'detector'"),
        ({"kind": "fixed", "voiced_ms": 300}, "voiced_ms: applies to kind = 'silence' or 'detector' only"),
        ({"kind": "fixed", "eager_ms": 0}, "eager_ms: applies to kind = 'silence' or 'detector' only"),
        ({"kind": "detector", "delay_ms": 300, "eager_ms": 300}, "eager_ms: 300 must come before the confirmed end of turn"),
        ({"kind": "silence", "silence_ms": 300, "eager_tools": False}, "eager_tools: applies with eager_ms"),
    ],
)
def test_a_setting_of_another_kind_is_refused(settings: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        EndpointConfig(**settings)


def test_the_reply_to_a_partial_turn_runs_only_while_the_user_is_silent() -> None:
    g, tool, f = (100_000,) * 3, (200_000,) * 3, 300_000
    assert break_cost([Break(1, 0, 100_000)], g, tool, f) == BreakCost(1, 0, 0, 1)  # G ends as the user resumes
    assert break_cost([Break(1, 0, 100_001)], g, tool, f) == BreakCost(1, 1, 0, 1)  # the tool call starts
    assert break_cost([Break(1, 0, 300_001)], g, tool, f) == BreakCost(2, 1, 0, 2)  # F starts, not finished
    assert break_cost([Break(1, 0, 600_000)], g, tool, f) == BreakCost(2, 1, 1, 2)  # spoken to a partial turn
    two = [Break(1, 0, 600_000), Break(2, 700_000, 800_000)]
    assert break_cost(two, g, tool, f) == BreakCost(3, 1, 1, 1 + 1 + 2)  # each LLM call reads its prefix


def test_an_eager_start_comes_before_the_confirmation_and_every_pause_as_long_restarts_it() -> None:
    eager = EndpointConfig(kind="silence", silence_ms=500.0, eager_ms=200.0)
    # pauses after words 1-3: 199.999 ms, 200 ms, 500 ms (a cut-off, not a restart)
    words = [400_000, 999_999, 1_599_999, 2_499_999]
    end = _decide(eager, words)
    assert (end.start_us, end.confirm_us) == (200_000, 500_000)
    assert end.restarts == (Break(2, 999_999 + 200_000, 999_999 + 200_000),)
    assert end.cutoffs == (Break(3, 1_599_999 + 500_000, 1_599_999 + 500_000),)


def test_an_eager_restart_is_never_spoken_and_its_tools_wait_when_they_must() -> None:
    g, tool, f = (100_000,) * 3, (200_000,) * 3, 300_000
    long = [Break(1, 0, 10_000_000)]
    assert break_cost(long, g, tool, f, spoken=False) == BreakCost(2, 1, 0, 2)  # G, L, F ran; nobody heard F
    assert break_cost(long, g, tool, f, tools=False, spoken=False) == BreakCost(1, 0, 0, 1)  # only G before the confirmation


# Spoken input: the silences and the end of speech come from the audio's speech segments.
SPEECH = [(100_000, 1_500_000), (1_500_000 + 500_000, 3_000_000)]  # a 500 ms silence inside, speech ends at 3 s
HEARD = [600_000, 1_200_000, 1_700_000, 2_400_000, 2_900_000, 3_150_000]  # hypotheses; the final 150 ms after speech


def _spoken(config: EndpointConfig, speech=SPEECH, words=HEARD, rng=None):
    return config.decide(words, None, word_interval_us=400_000, fixed_us=0, rng=rng, speech_us=speech)


@pytest.mark.parametrize(("gap_us", "cut"), [(T - 1, False), (T, True)])
def test_spoken_silences_are_the_gaps_between_speech_segments_exact_to_the_us(gap_us: int, cut: bool) -> None:
    speech = [(100_000, 1_500_000), (1_500_000 + gap_us, 3_000_000)]
    end = _spoken(_silence(), speech)
    # confirmed 500 ms after the end of speech (3.5 s): 350 ms after the final hypothesis (3.15 s)
    assert end.start_us == end.confirm_us == 3_500_000 - 3_150_000
    # the cut at 1.5 s + 500 ms: the agent has the three hypotheses in by then
    assert end.cutoffs == ((Break(3, 2_000_000, 1_500_000 + gap_us),) if cut else ())


def test_a_spoken_turn_starts_no_sooner_than_its_final_transcript() -> None:
    late = [*HEARD[:-1], 3_800_000]  # the final transcript 800 ms after the end of speech
    assert _spoken(_silence(), words=late).confirm_us == 0  # the timeout ran out first: the transcript decides
    eager = EndpointConfig(kind="detector", delay_ms=543.0, eager_ms=0.0)
    end = _spoken(eager)
    assert (end.start_us, end.confirm_us) == (0, 3_543_000 - 3_150_000)  # eager at the end of speech, then the transcript
    assert end.restarts == (Break(2, 1_500_000, 2_000_000),)  # the inner silence restarts the eager reply (2 heard)


def test_a_spoken_break_before_any_hypothesis_is_no_turn_to_answer() -> None:
    early = [(0, 50_000), (550_000, 3_000_000)]  # a 500 ms silence, cut at 550 ms: before the first hypothesis (600 ms)
    end = _spoken(_silence(), early)
    assert end.cutoffs == ()


def test_a_detector_on_spoken_input_cuts_at_the_longest_silence_between_segments() -> None:
    speech = [(0, 1_000_000), (1_300_000, 2_000_000), (2_600_000, 3_000_000)]  # silences 300 ms, 600 ms
    detector = EndpointConfig(kind="detector", delay_ms=543.0, false_cutoff_rate=1.0)
    end = _spoken(detector, speech, rng=np.random.default_rng(0))
    assert end.cutoffs == (Break(4, 2_543_000, 2_600_000),)  # four hypotheses in by 2.543 s
    assert end.confirm_us == 3_543_000 - 3_150_000
