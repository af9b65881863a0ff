"""The endpointer: when a voice agent decides the user's turn has ended (scenario ``[endpoint]``).

Both arms start their work when the turn ends, and a turn ends when an endpointer says so,
not at the last word. ``kind`` chooses the endpointer:

- ``fixed`` — the study's: the turn ends ``input.end_of_turn_ms`` after the last word (0:
  at the last word), and nothing ends it early;
- ``silence`` — a silence timeout (a VAD's ``stop_secs`` or a server VAD's
  ``silence_duration_ms``): the turn ends ``silence_ms`` into the first silence at least
  that long. Every such silence before the last word is a **false cut-off**;
- ``detector`` — a turn-detection model given by one operating point, as its benchmarks
  report it: it confirms ``delay_ms`` after the last word, and cuts a turn off early with
  probability ``false_cutoff_rate``, at the turn's longest pause if that pause is at least
  ``delay_ms`` long (a speaker who never pauses that long cannot be cut off, so the rate
  realised on smooth input is lower than the stated one; the output counts what happened).

**Eager end of turn** (``eager_ms``, a framework's preemptive generation or eager end of
turn): both arms start ``eager_ms`` after the last word, before the end of turn is confirmed
(``delay_ms`` or ``silence_ms`` after it); an answer ready sooner is heard at the
confirmation. ``eager_tools = false`` holds the tool stage of the calls started by the
reflector or the baseline until the confirmation (tools only after the reply is
authorized); streamrag's own speculative calls, fired before, are not held. Every pause at
least ``eager_ms`` long that ends no turn is an **eager restart**: a reply started at
``eager_ms`` into it (G, then L if tools may run, then F) and thrown away when the user
resumes; it is never spoken.

**Silence.** Input events arrive when a word is complete (heard, or typed to its space).
The silence before event ``i + 1`` is its gap less the time the word takes to say:
``word_us[i+1] − word_us[i] − voiced``, where ``voiced`` is ``voiced_ms``, by default the
input's nominal word interval ``1000/δ`` (so a uniform cadence is unbroken speech, and only
its pauses, or a jittered or typed gap longer than usual, are silence). A timings file
knows each word's start: there the silence is the next word's start less this word's end.

**A false cut-off** at the pause after event ``i`` ends the turn on the first ``i`` words at
``cut`` (that pause's start plus the endpointer's delay); the user resumes at ``resume``
(the next word's start). What the agent does with the partial turn is priced as its own
reply pipeline, the same in both arms: query generation G on prefix ``i`` from ``cut``,
then the tool L, then the response F, each run only while the user has not resumed; a
response complete before ``resume`` was spoken to the user (``answered_partial``). Every
stage started is extra compute (:func:`break_cost`); the turn then goes on and ends as it
would have. The timeout is exact in virtual time: a silence ``silence_ms − 1 µs`` long
does not end the turn, one ``silence_ms`` long does.

**Spoken input** (recorded hypotheses with the speech segments a voice-activity detector
found in the audio: :mod:`streamrag.data.human.voice_activity`): the endpointer listens to
the audio, not the transcript. The silences are the gaps between segments, and a silence
timeout or a detector counts from the **end of speech** (the last segment's end), so the
turn is confirmed at ``speech_end + silence_ms`` (or ``+ delay_ms``), and an eager start
comes ``eager_ms`` after the end of speech. Both arms still need the final transcript: they
start at the later of that and the last hypothesis (``EndOfTurn`` times are after the last
word, never negative). A break in a gap ends the turn on the hypotheses in by then; a break
before any hypothesis is no turn to answer and is not counted. ``voiced_ms`` does not apply.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from streamrag.base.validation import MAX_MS, SettingsModel

EndpointKind = Literal["fixed", "silence", "detector"]

_APPLIES: dict[str, tuple[str, ...]] = {
    "silence_ms": ("silence",),
    "delay_ms": ("detector",),
    "false_cutoff_rate": ("detector",),
    "voiced_ms": ("silence", "detector"),
    "eager_ms": ("silence", "detector"),
}
"""Which kinds read each setting (any other kind refuses it)."""


class EndpointConfig(SettingsModel):
    """``[endpoint]``: the endpointer of the simulated turn (module docstring)."""

    kind: EndpointKind = "fixed"
    silence_ms: float | None = Field(default=None, gt=0, le=MAX_MS, allow_inf_nan=False)
    """``silence``: the timeout (ms of silence that end the turn)."""
    delay_ms: float | None = Field(default=None, ge=0, le=MAX_MS, allow_inf_nan=False)
    """``detector``: how long after the last word it confirms the end of turn (its operating point)."""
    false_cutoff_rate: float = Field(default=0.0, ge=0, le=1, allow_inf_nan=False)
    """``detector``: the share of turns it cuts off early (at the same operating point)."""
    voiced_ms: float | None = Field(default=None, ge=0, le=MAX_MS, allow_inf_nan=False)
    """How long a word is voiced before it is complete (default: the nominal word interval 1000/δ)."""
    eager_ms: float | None = Field(default=None, ge=0, le=MAX_MS, allow_inf_nan=False)
    """Eager end of turn: both arms start this long after the last word, before the confirmation."""
    eager_tools: bool = True
    """With ``eager_ms``: tools may start before the confirmation (false: held until it)."""

    @model_validator(mode="after")
    def _settings_of_the_kind(self) -> EndpointConfig:
        for name, kinds in _APPLIES.items():
            value = getattr(self, name)
            if (value is not None if name == "eager_ms" else value not in (None, 0.0)) and self.kind not in kinds:
                raise ValueError(f"{name}: applies to kind = {' or '.join(map(repr, kinds))} only (kind is {self.kind!r})")
        if self.kind == "silence" and self.silence_ms is None:
            raise ValueError("silence_ms: required with kind = 'silence' (the silence timeout)")
        if self.kind == "detector" and self.delay_ms is None:
            raise ValueError("delay_ms: required with kind = 'detector' (its end-of-turn delay)")
        if self.eager_ms is not None:
            confirm = self.silence_ms if self.kind == "silence" else self.delay_ms
            if confirm is not None and self.eager_ms >= confirm:
                raise ValueError(
                    f"eager_ms: {self.eager_ms:g} must come before the confirmed end of turn ({confirm:g} ms after the last word)"
                )
        elif not self.eager_tools:
            raise ValueError("eager_tools: applies with eager_ms (an eager end of turn) only")
        return self

    @property
    def needs_rng(self) -> bool:
        return self.kind == "detector" and self.false_cutoff_rate > 0

    def decide(
        self,
        word_us: Sequence[int],
        starts_us: Sequence[int] | None,
        *,
        word_interval_us: int,
        fixed_us: int,
        rng: np.random.Generator | None,
        speech_us: Sequence[tuple[int, int]] | None = None,
    ) -> EndOfTurn:
        """One turn's end: when it is confirmed after the last word, and its false cut-offs.

        ``starts_us``: each word's start when the input knows it (a timings file), else
        ``None`` (a word is voiced ``voiced_ms``, default ``word_interval_us``, before it
        completes); ``fixed_us``: ``input.end_of_turn_ms`` (kind ``fixed``); ``rng``: the
        question's ``endpoint`` stream (:attr:`needs_rng`); ``speech_us``: spoken input's
        speech segments from a voice-activity detector (:meth:`_decide_spoken`)."""
        if self.kind == "fixed":
            return EndOfTurn(fixed_us, fixed_us, ())
        if speech_us is not None:
            return self._decide_spoken(word_us, speech_us, rng)
        pauses = silences_us(word_us, starts_us, word_interval_us if self.voiced_ms is None else round(self.voiced_ms * 1000))
        eager = None if self.eager_ms is None else round(self.eager_ms * 1000)
        if self.kind == "silence":
            confirm = round(self.silence_ms * 1000)  # type: ignore[operator]  # required for the kind
            cut_at = {i for i, s in enumerate(pauses) if s >= confirm}
        else:
            confirm = round(self.delay_ms * 1000)  # type: ignore[operator]  # required for the kind
            cut_at = set()
            if rng is not None and bool(rng.random() < self.false_cutoff_rate) and pauses:
                i = int(np.argmax(pauses))  # the first of the longest
                if pauses[i] >= confirm and pauses[i] > 0:
                    cut_at.add(i)
        cuts = tuple(Break(i + 1, word_us[i] + confirm, word_us[i] + pauses[i]) for i in sorted(cut_at))
        restarts: tuple[Break, ...] = ()
        if eager is not None:
            restarts = tuple(
                Break(i + 1, word_us[i] + eager, word_us[i] + s)
                for i, s in enumerate(pauses)
                if s >= eager and s > 0 and i not in cut_at
            )
        return EndOfTurn(confirm if eager is None else eager, confirm, cuts, restarts)

    def _decide_spoken(
        self, word_us: Sequence[int], speech_us: Sequence[tuple[int, int]], rng: np.random.Generator | None
    ) -> EndOfTurn:
        """The end of a spoken turn, from the audio (module docstring, *Spoken input*): the
        silences are the gaps between speech segments, and the endpointer counts from the end
        of speech; the arms still need the final transcript, so nothing starts before it."""
        confirm = round((self.silence_ms if self.kind == "silence" else self.delay_ms) * 1000)  # type: ignore[operator]
        eager = None if self.eager_ms is None else round(self.eager_ms * 1000)
        gaps = [(speech_us[k][1], speech_us[k + 1][0]) for k in range(len(speech_us) - 1)]
        if self.kind == "silence":
            cut_at = {k for k, (end, start) in enumerate(gaps) if start - end >= confirm}
        else:
            cut_at = set()
            if rng is not None and bool(rng.random() < self.false_cutoff_rate) and gaps:
                k = int(np.argmax([start - end for end, start in gaps]))  # the first of the longest
                if gaps[k][1] - gaps[k][0] >= confirm:
                    cut_at.add(k)

        def heard(k: int, after_us: int) -> Break | None:
            # The words the agent has at the break: the hypotheses in by then. Nothing heard
            # yet is no turn to answer; everything heard is no partial one.
            prefix_t = bisect_right(word_us, gaps[k][0] + after_us)
            return Break(prefix_t, gaps[k][0] + after_us, gaps[k][1]) if 0 < prefix_t < len(word_us) else None

        cuts = tuple(b for k in sorted(cut_at) if (b := heard(k, confirm)) is not None)
        restarts: tuple[Break, ...] = ()
        if eager is not None:
            restarts = tuple(
                b
                for k, (end, start) in enumerate(gaps)
                if start - end >= eager and k not in cut_at and (b := heard(k, eager)) is not None
            )
        speech_end, last_word = (speech_us[-1][1] if speech_us else 0), word_us[-1]
        confirm_after = max(0, speech_end + confirm - last_word)
        start_after = confirm_after if eager is None else max(0, speech_end + eager - last_word)
        return EndOfTurn(start_after, confirm_after, cuts, restarts)


def silences_us(word_us: Sequence[int], starts_us: Sequence[int] | None, voiced_us: int) -> list[int]:
    """The silence after each word but the last (µs, ≥ 0): the next word's start less this
    word's end (the module docstring)."""
    if starts_us is not None:
        return [max(0, starts_us[i + 1] - word_us[i]) for i in range(len(word_us) - 1)]
    return [max(0, word_us[i + 1] - word_us[i] - voiced_us) for i in range(len(word_us) - 1)]


@dataclass(frozen=True, slots=True)
class Break:
    """A false cut-off: the turn ended on the first ``prefix_t`` words at ``cut_us``; the
    user resumed at ``resume_us`` (µs from the question's arrival)."""

    prefix_t: int
    cut_us: int
    resume_us: int


@dataclass(frozen=True, slots=True)
class EndOfTurn:
    """One turn's endpointing (µs after the last word): ``start_us``, when both arms start
    (the eager signal, or the confirmation); ``confirm_us``, the confirmed end of turn; the
    false cut-offs before it and the eager restarts, in order."""

    start_us: int
    confirm_us: int
    cutoffs: tuple[Break, ...]
    restarts: tuple[Break, ...] = ()


@dataclass(frozen=True, slots=True)
class BreakCost:
    """What a turn's false cut-offs and eager restarts cost (:func:`break_cost`)."""

    llm_calls: int = 0
    tool_calls: int = 0
    answered_partial: int = 0
    words_in: int = 0
    """Words the replies' LLM calls read: each G and each F started reads the partial question."""

    def __add__(self, other: BreakCost) -> BreakCost:
        return BreakCost(
            self.llm_calls + other.llm_calls,
            self.tool_calls + other.tool_calls,
            self.answered_partial + other.answered_partial,
            self.words_in + other.words_in,
        )


@dataclass(frozen=True, slots=True)
class EndpointTurn:
    """What a question's plan keeps of a (non-``fixed``) endpointer's decision, priced: the
    fields of its trace event ``endpoint``."""

    end: EndOfTurn
    hold_tools: bool
    """Tool stages of the reflector's and the baseline's calls wait for the confirmation."""
    cost: BreakCost

    @classmethod
    def priced(cls, end: EndOfTurn, config: EndpointConfig, g_us: Sequence[int], l_us: Sequence[int], f_us: int) -> EndpointTurn:
        """The decision with its breaks priced (:func:`break_cost`)."""
        eager_tools = config.eager_tools or config.eager_ms is None
        cost = break_cost(end.cutoffs, g_us, l_us, f_us) + break_cost(
            end.restarts, g_us, l_us, f_us, tools=eager_tools, spoken=False
        )
        return cls(end, not eager_tools, cost)

    def event_fields(self) -> dict[str, Any]:
        """The ``endpoint`` trace event's fields."""
        end = self.end
        return {
            "start_us": end.start_us,
            "confirm_us": end.confirm_us,
            "hold_tools": self.hold_tools,
            "cutoffs": [[b.prefix_t, b.cut_us, b.resume_us] for b in end.cutoffs],
            "restarts": [[b.prefix_t, b.cut_us, b.resume_us] for b in end.restarts],
            "llm_calls": self.cost.llm_calls,
            "tool_calls": self.cost.tool_calls,
            "answered_partial": self.cost.answered_partial,
            "words_in": self.cost.words_in,
        }


def break_cost(
    breaks: Sequence[Break],
    g_us: Sequence[int],
    l_us: Sequence[int],
    f_us: int,
    *,
    tools: bool = True,
    spoken: bool = True,
) -> BreakCost:
    """The agent's reply to each partial turn, run while the user is silent: G on the prefix
    from the cut, then L (``tools``: may run), then F; a stage counts once started (before
    the user resumed, strictly); with ``spoken`` (a false cut-off, not an eager restart) a
    reply counts as spoken when F ends before the user resumes (or as they do). Each LLM
    call started reads the ``prefix_t`` words heard (``words_in``)."""
    llm = tool = said = words = 0
    for b in breaks:
        at = b.cut_us
        llm += 1  # G starts at the cut (the cut precedes the resume)
        words += b.prefix_t
        at += g_us[b.prefix_t - 1]
        if at >= b.resume_us or not tools:
            continue
        tool += 1
        at += l_us[b.prefix_t - 1]
        if at >= b.resume_us:
            continue
        llm += 1
        words += b.prefix_t
        if spoken and at + f_us <= b.resume_us:
            said += 1
    return BreakCost(llm, tool, said, words)
