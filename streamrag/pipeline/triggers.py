"""Triggers: when to fire a speculative tool call (design §5).

A trigger is a plain object that *decides*; it never waits. The streaming arm calls
``on_word(t)`` when word t arrives and, for time-based triggers, ``on_tick(t)`` every
``tick_us`` (t = words heard so far). A ``True`` answer is a fire *opportunity* for
prefix t; the arm then applies the rules every trigger shares, and tells the trigger
``fired(t)`` when the opportunity is spent:

- each distinct prefix fires at most once (an opportunity on a fired prefix is dropped);
- with the thread cap full (``pipeline.capped_fire``): ``defer`` (the anchor's code) —
  the fire waits for the first later word with a free slot, and a word interval counts
  from the last *actual* fire; ``drop`` — the opportunity is lost, and a word interval
  counts from it as if it had fired;
- a trigger with ``kills_in_flight`` (``replace``) kills the in-flight call instead.

Policies (config ``kind``):

==============  ==============================================================
``interval``    ``words = m``: every m-th word (m, 2m, …); ``seconds = s``: at
                s, 2s, … on the prefix heard so far (Stream RAG fixed interval)
``replace``     every ``seconds``, fire only if the prefix's top-k (as a set)
                differs from the last fired one, killing the in-flight call
                (Stream RAG model-triggered; one thread)
``stable``      when top-1 has been unchanged for ``words`` words, i.e.
                top1(t) = top1(t−1) = … = top1(t−m); once per stable run
``every_word``  every word
``oracle``      exactly at t*
``none``        never (the baseline)
``hedge``       at the last word whose expected remaining input (a length
                prior) still covers a quantile of L (:mod:`~streamrag.pipeline.hedge`)
``learned``     a saved model's P(t) ≥ τ, once (``single``, the anchor's) or
                at every upward crossing (``rearm``): :mod:`.learned`
==============  ==============================================================

What a trigger reads besides the words heard is declared on its config, ``needs``
(as retrievers declare their ``scale``): ``rankings`` (``replace``, ``stable``: each
prefix's top-k, which a bare stabilization table lacks) or ``t_star`` (``oracle``: the
question's stabilization point, which live input lacks). Simulation, sweeps and live
runs decide what a kind can run on from that declaration alone, so a new trigger is its
config and its implementation here, added to :data:`TriggerConfig`. A config declaring
``ranks_online`` computes its ``rankings`` live from a local ranker of each prefix heard
(the Speculator's ``ranker``), so live input without a known question runs it too.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Protocol

from pydantic import Field, model_validator

from streamrag.base.errors import ConfigError
from streamrag.base.validation import SettingsModel
from streamrag.pipeline.hedge import HedgeTriggerConfig
from streamrag.pipeline.learned import LearnedTriggerConfig
from streamrag.pipeline.question import Need, SimQuestion, kinds_without


class Trigger(Protocol):
    """Decides fire opportunities for one question (fresh state per question)."""

    tick_us: int | None
    """Period of time-based opportunities, ``None`` for word-driven triggers."""
    kills_in_flight: bool
    """Fire by killing the in-flight call (``replace``) instead of respecting the cap."""

    def on_word(self, t: int) -> bool: ...

    def on_tick(self, t: int) -> bool: ...

    def fired(self, t: int) -> None:
        """The opportunity at prefix t was spent (fired, or dropped under ``drop``)."""
        ...


class _Config(SettingsModel):
    kind: str
    needs: ClassVar[frozenset[Need]] = frozenset()
    """What the trigger reads besides the words heard (empty: it runs on live words)."""
    ranks_online: ClassVar[bool] = False
    """Whether live input without a known question can give what it ``needs`` from a
    local ranking of each prefix heard (``learned``: :meth:`LearnedTriggerConfig.online`)."""

    def build(self, q: SimQuestion) -> Trigger:
        """The trigger of question ``q`` (fresh state); ConfigError when ``q`` lacks what
        :attr:`needs` declares."""
        if "rankings" in self.needs and q.topk is None:
            raise ConfigError(
                f"trigger.kind: {self.kind!r} needs per-prefix evidence, but question {q.interaction_id!r} is "
                f"trace-driven (a table only gives t*); use {', '.join(kinds_without(TriggerConfig, 'rankings'))}"
            )
        return self._build(q)

    def _build(self, q: SimQuestion) -> Trigger:  # pragma: no cover - overridden
        raise NotImplementedError


# --- implementations (plain, per question) -------------------------------------------


class _WordTrigger:
    tick_us: int | None = None
    kills_in_flight = False

    def on_word(self, t: int) -> bool:  # pragma: no cover - overridden
        return False

    def on_tick(self, t: int) -> bool:
        return False

    def fired(self, t: int) -> None:
        return None


class NoneTrigger(_WordTrigger):
    """Never fires."""


class EveryWordTrigger(_WordTrigger):
    """Fires on every word."""

    def on_word(self, t: int) -> bool:
        return True


class OracleTrigger(_WordTrigger):
    """Fires exactly at t*."""

    __slots__ = ("t_star",)

    def __init__(self, t_star: int) -> None:
        self.t_star = t_star

    def on_word(self, t: int) -> bool:
        return t == self.t_star


class WordIntervalTrigger(_WordTrigger):
    """An opportunity once ``words`` words have arrived since the last spent one."""

    __slots__ = ("last_t", "words")

    def __init__(self, words: int) -> None:
        self.words = words
        self.last_t = 0

    def on_word(self, t: int) -> bool:
        return t - self.last_t >= self.words

    def fired(self, t: int) -> None:
        self.last_t = t


class SecondsIntervalTrigger(_WordTrigger):
    """An opportunity every ``tick_us`` on the prefix heard so far."""

    def __init__(self, tick_us: int) -> None:
        self.tick_us = tick_us

    def on_word(self, t: int) -> bool:
        return False

    def on_tick(self, t: int) -> bool:
        return t >= 1


class ReplaceTrigger(_WordTrigger):
    """Stream RAG model-triggered: fire when the prefix's top-k changed; kill the old call."""

    kills_in_flight = True

    def __init__(self, tick_us: int, topk_sets: list[frozenset[int]]) -> None:
        self.tick_us = tick_us
        self._sets = topk_sets
        self._last: frozenset[int] | None = None

    def on_word(self, t: int) -> bool:
        return False

    def on_tick(self, t: int) -> bool:
        if t < 1:
            return False
        current = self._sets[t - 1]
        if current == self._last:
            return False
        self._last = current
        return True


class StableTrigger(_WordTrigger):
    """Fires once per run of ``words + 1`` consecutive prefixes with the same top-1."""

    def __init__(self, words: int, top1: list[int]) -> None:
        self.words = words
        self._top1 = top1
        self._run = 0
        self._prev: int | None = None

    def on_word(self, t: int) -> bool:
        top1 = self._top1[t - 1]
        self._run = self._run + 1 if top1 == self._prev else 1
        self._prev = top1
        return self._run == self.words + 1


# --- configs (pydantic, discriminated by kind) ---------------------------------------


class IntervalTriggerConfig(_Config):
    """Every ``words`` words, or every ``seconds`` seconds (exactly one of the two)."""

    kind: Literal["interval"] = "interval"
    EXCLUSIVE: ClassVar[tuple[frozenset[str], ...]] = (frozenset({"words", "seconds"}),)
    """Overriding one of these drops the other (:mod:`streamrag.base.config.overrides`)."""
    words: int | None = Field(default=None, ge=1)
    """Fire once this many words have arrived since the last fire (the anchor's RQ3: 3)."""
    seconds: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Fire every this many seconds from the question's start, on the prefix heard so far
    (Stream RAG's fixed interval: 1 s)."""

    @model_validator(mode="after")
    def _one_of(self) -> IntervalTriggerConfig:
        if (self.words is None) == (self.seconds is None):
            raise ValueError("set exactly one of 'words' and 'seconds'")
        return self

    def _build(self, q: SimQuestion) -> Trigger:
        if self.words is not None:
            return WordIntervalTrigger(self.words)
        return SecondsIntervalTrigger(round(self.seconds * 1e6))  # type: ignore[operator]


class ReplaceTriggerConfig(_Config):
    """Stream RAG model-triggered mode (one thread, kill on change)."""

    kind: Literal["replace"] = "replace"
    needs: ClassVar[frozenset[Need]] = frozenset({"rankings"})
    seconds: float = Field(default=0.5, gt=0, allow_inf_nan=False)
    """Period (s) of the checks: every ``seconds`` from the question's start, fire when the
    prefix's top-k changed since the last check, killing the call in flight."""

    def _build(self, q: SimQuestion) -> Trigger:
        sets = [frozenset(int(c) for c in row) for row in q.topk]  # type: ignore[union-attr]
        return ReplaceTrigger(round(self.seconds * 1e6), sets)


class StableTriggerConfig(_Config):
    """Top-1 unchanged for ``words`` words."""

    kind: Literal["stable"] = "stable"
    needs: ClassVar[frozenset[Need]] = frozenset({"rankings"})
    words: int = Field(default=2, ge=1)
    """Fire once the top-1 chunk has stayed the same for this many further words (a run of
    ``words + 1`` prefixes with one top-1)."""

    def _build(self, q: SimQuestion) -> Trigger:
        return StableTrigger(self.words, [int(r[0]) for r in q.topk])  # type: ignore[union-attr]


class EveryWordTriggerConfig(_Config):
    """A call on every word."""

    kind: Literal["every_word"] = "every_word"

    def _build(self, q: SimQuestion) -> Trigger:
        return EveryWordTrigger()


class OracleTriggerConfig(_Config):
    """Fires exactly at t* (a bound, not a deployable policy)."""

    kind: Literal["oracle"] = "oracle"
    needs: ClassVar[frozenset[Need]] = frozenset({"t_star"})

    def _build(self, q: SimQuestion) -> Trigger:
        return OracleTrigger(q.t_star)


class NoneTriggerConfig(_Config):
    """Never fires: the non-streaming baseline (saves 0, wastes 0)."""

    kind: Literal["none"] = "none"

    def _build(self, q: SimQuestion) -> Trigger:
        return NoneTrigger()


TriggerConfig = Annotated[
    IntervalTriggerConfig
    | ReplaceTriggerConfig
    | StableTriggerConfig
    | EveryWordTriggerConfig
    | OracleTriggerConfig
    | NoneTriggerConfig
    | HedgeTriggerConfig
    | LearnedTriggerConfig,
    Field(discriminator="kind"),
]
"""A trigger policy, chosen by ``kind``."""
