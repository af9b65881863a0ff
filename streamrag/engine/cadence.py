"""Input cadence: when each word of a question arrives (design §5).

A ``CadenceModel`` turns a question's ``n`` words into arrival offsets in µs from the
question's arrival ``a`` (``word_times_us(n_words, rng, question_id=…)``):

- ``uniform`` — word i at ``i/δ`` seconds (word 1 at 1/δ, end of input ``E = n/δ``);
  every instant is rounded to the µs on its own, so there is no accumulated drift;
- ``jittered`` — gaps drawn from a Gamma distribution with mean ``1/δ`` and coefficient
  of variation ``cv`` (shape ``1/cv²``; ``cv = 0`` is uniform);
- ``timings`` — each question's real word times from a file (``path``; forced alignment
  or ASR output, :mod:`streamrag.engine.timings`): word i arrives at its end, measured
  from the start of the question's first word. ``delta_wps`` is then only the nominal
  cadence of the analytic bounds H and H_G (analysis is unchanged; only the simulated
  arrivals are real).

Uniform and jittered accept pauses: before each word after the first, with probability ``pause_prob``,
``pause_ms`` is added (a speaker's hesitation). ``end_of_turn_ms`` is the delay between
the last word and the moment the system knows the turn ended (end-of-turn detection);
the reflector and the baseline arm start then. Perceived latency is still measured from
the last word.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field, PrivateAttr, model_validator

from streamrag.base.errors import ConfigError
from streamrag.base.validation import MAX_MS, MAX_WPS, SettingsModel
from streamrag.engine.timings import WordTimings, read_word_timings


class _AsList:
    """``word_times_list_us``: the arrivals as a list of ints (what a question's plan keeps)."""

    def word_times_us(
        self, n_words: int, rng: np.random.Generator | None = None, *, question_id: str | None = None
    ) -> np.ndarray:  # pragma: no cover - every cadence defines it
        raise NotImplementedError

    def word_times_list_us(
        self, n_words: int, rng: np.random.Generator | None = None, *, question_id: str | None = None
    ) -> list[int]:
        return self.word_times_us(n_words, rng, question_id=question_id).tolist()


class _Cadence(_AsList, SettingsModel):
    delta_wps: float = Field(gt=0, le=MAX_WPS, allow_inf_nan=False, description="words per second")
    """The cadence δ (words/s): the mean gap between words is ``1/δ`` s; also the δ of the
    bounds H and H_G."""
    pause_prob: float = Field(default=0.0, ge=0, le=1)
    """Probability that a word after the first is preceded by a pause of ``pause_ms``
    (0: no pauses)."""
    pause_ms: float = Field(default=0.0, ge=0, le=MAX_MS, allow_inf_nan=False)
    """Length (ms) of one pause, added before a word with probability ``pause_prob``."""
    end_of_turn_ms: float = Field(default=0.0, ge=0, le=MAX_MS, allow_inf_nan=False)
    """Delay (ms) from the last word until the system knows the turn ended (end-of-turn
    detection); the reflector and the baseline start then. ``endpoint.kind = "fixed"`` only."""

    @property
    def end_of_turn_us(self) -> int:
        return round(self.end_of_turn_ms * 1000)

    def _pauses_us(self, n: int, rng: np.random.Generator | None) -> np.ndarray | None:
        if self.pause_prob == 0.0 or self.pause_ms == 0.0 or n < 2:
            return None
        assert rng is not None
        hits = rng.random(n - 1) < self.pause_prob
        extra = np.zeros(n, dtype=np.int64)
        extra[1:] = np.cumsum(hits) * round(self.pause_ms * 1000)
        return extra


class UniformCadence(_Cadence):
    """Word i at ``i/δ`` s (plus pauses)."""

    kind: Literal["uniform"] = "uniform"

    @property
    def needs_rng(self) -> bool:
        return self.pause_prob > 0.0 and self.pause_ms > 0.0

    def word_times_us(
        self, n_words: int, rng: np.random.Generator | None = None, *, question_id: str | None = None
    ) -> np.ndarray:
        """Arrival offsets (µs) of words 1..n, int64, non-decreasing."""
        times = np.rint(np.arange(1, n_words + 1, dtype=np.float64) * (1e6 / self.delta_wps)).astype(np.int64)
        pauses = self._pauses_us(n_words, rng)
        return times if pauses is None else times + pauses

    def word_times_list_us(
        self, n_words: int, rng: np.random.Generator | None = None, *, question_id: str | None = None
    ) -> list[int]:
        """``word_times_us`` as a list of ints; without pauses, computed without an array
        (the same values: one float64 product per word, rounded half to even like ``np.rint``)."""
        if self.needs_rng:
            return self.word_times_us(n_words, rng, question_id=question_id).tolist()
        step = 1e6 / self.delta_wps
        return [round(i * step) for i in range(1, n_words + 1)]


class JitteredCadence(_Cadence):
    """Gamma-distributed gaps: mean ``1/δ``, coefficient of variation ``cv``."""

    kind: Literal["jittered"] = "jittered"
    cv: float = Field(default=0.3, ge=0, allow_inf_nan=False)
    """Coefficient of variation (standard deviation / mean) of the Gamma-distributed gaps
    between words (0: uniform gaps)."""

    @property
    def needs_rng(self) -> bool:
        return True

    def word_times_us(
        self, n_words: int, rng: np.random.Generator | None = None, *, question_id: str | None = None
    ) -> np.ndarray:
        if rng is None:
            raise ValueError("a jittered cadence needs a random generator")
        mean_s = 1.0 / self.delta_wps
        if self.cv == 0.0:
            gaps = np.full(n_words, mean_s)
        else:
            shape = 1.0 / (self.cv * self.cv)
            gaps = rng.gamma(shape, mean_s / shape, n_words)
        times = np.rint(np.cumsum(gaps) * 1e6).astype(np.int64)
        pauses = self._pauses_us(n_words, rng)
        return times if pauses is None else times + pauses


class TimingsCadence(_AsList, SettingsModel):
    """Each question's real word times, read from ``path`` when the model is built."""

    kind: Literal["timings"] = "timings"
    path: str
    """JSON lines of ``{interaction_id, words: [{word, start_ms, end_ms}, …]}``."""
    delta_wps: float = Field(gt=0, le=MAX_WPS, allow_inf_nan=False, description="words per second")
    """Nominal cadence of the analytic bounds H and H_G only; arrivals come from ``path``."""
    end_of_turn_ms: float = Field(default=0.0, ge=0, le=MAX_MS, allow_inf_nan=False)
    """Delay (ms) from the end of the last timed word until the system knows the turn
    ended; as the other cadences' ``end_of_turn_ms``."""
    _timings: WordTimings = PrivateAttr()

    @model_validator(mode="after")
    def _read(self) -> TimingsCadence:
        # Read once, here: a bad file fails when the scenario loads, not mid-run, and the
        # timings travel with the (pickled) model to worker processes.
        self._timings = read_word_timings(self.path)
        return self

    @property
    def sha256(self) -> str:
        """SHA-256 of the timings file as read."""
        return self._timings.sha256

    @property
    def end_of_turn_us(self) -> int:
        return round(self.end_of_turn_ms * 1000)

    @property
    def needs_rng(self) -> bool:
        return False

    def word_times_us(
        self, n_words: int, rng: np.random.Generator | None = None, *, question_id: str | None = None
    ) -> np.ndarray:
        """Question ``question_id``'s word arrivals (µs), which must number ``n_words``."""
        if question_id is None:
            raise ValueError("a timings cadence needs the question id")
        times = self._timings.offsets_us.get(question_id)
        if times is None:
            raise ConfigError(f"input.path: {self.path}: no word timings for question {question_id!r}")
        if len(times) != n_words:
            raise ConfigError(
                f"input.path: {self.path}: question {question_id!r} has {len(times)} timed words, "
                f"but the question has {n_words} words (query.split())"
            )
        return np.asarray(times, dtype=np.int64)

    def word_starts_us(self, question_id: str) -> tuple[int, ...]:
        """Question ``question_id``'s word starts (µs, the scale of :meth:`word_times_us`)."""
        return self._timings.starts_us[question_id]


CadenceModel = Annotated[UniformCadence | JitteredCadence | TimingsCadence, Field(discriminator="kind")]
"""When words arrive, chosen by ``kind``."""
