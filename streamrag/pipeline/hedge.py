"""The ``hedge`` trigger: fire only while the rest of the utterance is expected to hide L.

A baseline that reads no retrieval at all, only the clock of the input: a deployer who
knows how long questions are and how long the tool takes. With t words heard, the
question's length n is unknown; a **length prior** (a histogram of question lengths, by
default CRAG's — never the question's own n) gives the **expected remaining input**

    R(t) = w · E[n − t | n ≥ t]   (ms; w = 1000/δ, the nominal gap between words)

which can be computed before the first word from the prior alone, so it is online. The
hedge fires at word t when ``R(t) ≥ L_q`` and ``R(t + 1) < L_q``: the *last* word after
which the rest of the question is still expected to cover a ``quantile`` q of the tool
latency L, i.e. the latest call expected to be hidden (a later prefix retrieves better;
an earlier one is more likely hidden). R need not decrease (a prior with a heavy tail),
so every such downward crossing fires; on CRAG's prior there is one. The knob is q: a
higher quantile asks for more remaining input, so the hedge fires earlier.

``threshold_ms`` (L_q) and ``word_interval_ms`` (w) are resolved from the scenario's
latency model and cadence when the scenario is read (:mod:`streamrag.simulator.scenario`),
and the resolved values are part of every output's settings.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from streamrag.base.errors import ConfigError
from streamrag.base.validation import MAX_MS, SettingsModel
from streamrag.pipeline.question import Need, SimQuestion


def expected_remaining_ms(lengths: dict[int, int], t_max: int, word_interval_ms: float) -> list[float]:
    """``R(t)`` for t = 1 … ``t_max`` (index t − 1): ``w · E[n − t | n ≥ t]`` under the
    histogram ``lengths`` (n → count); 0 past the longest length of the prior."""
    out = []
    for t in range(1, t_max + 1):
        mass = sum(c for n, c in lengths.items() if n >= t)
        rest = sum(c * (n - t) for n, c in lengths.items() if n >= t)
        out.append(word_interval_ms * rest / mass if mass else 0.0)
    return out


class HedgeTrigger:
    """Fires at the words where the expected remaining input crosses below the threshold."""

    tick_us: int | None = None
    kills_in_flight = False
    __slots__ = ("_fire_at",)

    def __init__(self, fire_at: frozenset[int]) -> None:
        self._fire_at = fire_at

    def on_word(self, t: int) -> bool:
        return t in self._fire_at

    def on_tick(self, t: int) -> bool:
        return False

    def fired(self, t: int) -> None:
        return None


class HedgeTriggerConfig(SettingsModel):
    """Fire at the last word whose expected remaining input still covers the q-quantile of L."""

    kind: Literal["hedge"] = "hedge"
    needs: ClassVar[frozenset[Need]] = frozenset()
    """Words heard only (with the length prior and L's quantile filled in from the scenario)."""
    ranks_online: ClassVar[bool] = False
    quantile: float = Field(default=0.5, gt=0, lt=1, allow_inf_nan=False)
    """The knob q: the remaining input must be expected to exceed L's q-quantile."""
    lengths: dict[int, int] | None = None
    """The length prior (n_words → count); None: CRAG's histogram, filled in when the scenario is read."""
    threshold_ms: float | None = Field(default=None, ge=0, le=MAX_MS, allow_inf_nan=False)
    """L_q (ms); None: the scenario's tool-latency model's q-quantile, filled in when the scenario is read."""
    word_interval_ms: float | None = Field(default=None, gt=0, le=MAX_MS, allow_inf_nan=False)
    """w = 1000/δ (ms); None: the scenario's cadence, filled in when the scenario is read."""

    def fire_words(self, n_words: int) -> frozenset[int]:
        """The words (1 … n_words) at which the hedge fires on a question of that length."""
        if self.lengths is None or self.threshold_ms is None or self.word_interval_ms is None:
            raise ConfigError(
                "trigger.kind 'hedge': lengths, threshold_ms and word_interval_ms are unresolved (read the scenario)"
            )
        if not self.lengths or any(n < 1 or c < 0 for n, c in self.lengths.items()) or not any(self.lengths.values()):
            raise ConfigError("trigger.lengths: a histogram of question lengths ≥ 1 with counts ≥ 0, not all zero")
        remaining = expected_remaining_ms(self.lengths, n_words + 1, self.word_interval_ms)
        threshold = self.threshold_ms
        return frozenset(t for t in range(1, n_words + 1) if remaining[t - 1] >= threshold > remaining[t])

    def build(self, q: SimQuestion) -> HedgeTrigger:
        """The fire words up to the prior's longest question: nothing of ``q`` is read (the
        trigger is online, and runs on live words whose count is unknown)."""
        return HedgeTrigger(self.fire_words(max(self.lengths or {1: 0})))
