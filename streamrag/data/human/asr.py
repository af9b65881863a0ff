"""ASR partial hypotheses: what a streaming recognizer shows while the user speaks.

The study's input model is the word prefix: after word t the agent has heard exactly
``q[1:t]``. A streaming recognizer shows *partial hypotheses* instead, and a later one
may rewrite words an earlier one showed ("what is the capitol" → "what is the capital
of"). This module draws such hypotheses with a seeded **revision model**:

- one hypothesis per word arrival: hypothesis i shows i words, the last one new;
- at the arrival of word i (i ≥ 2), with probability ``p``, the recognizer *revises*:
  it rewrites the last ``r`` words that are not yet final. Seen from the end, those
  words were shown wrong until then;
- a word is final — no longer revisable — once ``final_words`` later words have
  arrived (the recognizer's stable prefix);
- a word revised m times showed m different wrong forms before its right one; a word
  never revised is right from the start, and the last hypothesis is the question itself.

A wrong form is the word with one vowel swapped for another (one letter for another
when it has no vowel, one digit for another in numbers): "capital" → "capitol",
"2019" → "2016". Acoustic confusions cannot be derived from text; this rule gives a
form that usually drops out of the BM25 vocabulary (the word's evidence is lost until
the revision) and sometimes lands on another word of the corpus (a distractor).

Defaults (``p = 0``: the study's word-prefix model, so every existing result holds;
``r = 2``, ``final_words = 3``) are our assumptions, not measurements: streaming
recognizers revise a short trailing run of words and commit the rest (Shangguan et
al., "Analyzing the Quality and Stability of a Streaming End-to-End On-Device Speech
Recognizer", Interspeech 2020, arXiv 2006.01416, define instability over that trailing
run; Bruguier et al., SLT 2023, halve flickering by re-ranking partials). We found no
published per-word revision probability to calibrate ``p`` against; sweep it
(``sim/grids/asr.toml``).

Draws are seeded per question (``seed`` and the interaction id), so a question's
hypotheses do not depend on which other questions are in the run.

Recorded hypotheses come from a **file** instead (``kind = "file"``), read by
:mod:`streamrag.data.human.hypotheses_file`, which also gives one question's hypotheses
from whichever source the settings name (:func:`~streamrag.data.human.hypotheses_file.question_hypotheses`).

Either way, hypothesis i is *revised* when it is not a word prefix of the final one: a
call fired on it carried words the recognizer later took back.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Discriminator, Field, Tag

from streamrag.base.validation import MAX_WPS, SettingsModel

VOWELS = "aeiou"
LETTERS = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"


class RevisionModel(SettingsModel):
    """The seeded revision model's parameters (see the module docstring)."""

    kind: Literal["model"] = "model"
    p: float = Field(0.0, ge=0.0, le=1.0, allow_inf_nan=False)
    """Probability that a word's arrival revises the trailing words (0: word prefixes)."""
    r: int = Field(2, ge=1)
    """How many trailing, not yet final words a revision rewrites."""
    final_words: int = Field(3, ge=1)
    """A word is final once this many later words have arrived."""
    seed: int = 0
    """Draws the revisions and the wrong forms of each question (with its id)."""
    delta_wps: float = Field(2.5, gt=0.0, le=MAX_WPS, allow_inf_nan=False)
    """Speaking rate for the analyzer's times in ms (word i heard at i/δ; speech ≈ 2.5 w/s,
    design §5). The simulator uses its own cadence."""


Timing = Literal["audio", "available"]


class HypothesesFile(SettingsModel):
    """Recorded partial hypotheses, read from ``path`` (see the module docstring)."""

    kind: Literal["file"] = "file"
    path: str
    """The hypotheses file (JSON lines, one question per line; ``streamrag speak`` writes one)."""
    timing: Timing = "audio"
    """The time each hypothesis arrives at: ``audio`` (``t_ms``, its audio time) or
    ``available`` (``available_ms``: audio time plus the recognizer's compute delay).
    A setting of recorded hypotheses only (``data.asr.kind = "file"``; another kind has no
    such field and refuses it), and, like all of ``data``, of a run that analyzes a data
    file (:mod:`streamrag.simulator.applies` refuses it on a table or generated questions)."""


class TypedInput(SettingsModel):
    """Questions typed the way the participants of a keystroke folder typed
    (:mod:`streamrag.data.human.typed`): each word is heard when the space after it is typed,
    and a backspace run into a heard word revises it."""

    kind: Literal["typed"] = "typed"
    path: str
    """A folder of 136M Keystrokes ``*_keystrokes.txt`` files (or one with ``participants/``)."""
    seed: int = 0
    """Draws the participant and the keys of each question (with its id)."""
    participants: Literal["all", "fit", "held-out"] = "all"
    """Every participant, or one side of the seeded fit / held-out split."""
    held_out_share: float = Field(0.2, gt=0.0, lt=1.0, allow_inf_nan=False)
    """The share of participants on the held-out side of the split (``participants``)."""
    split_seed: int = 0
    """Draws the fit / held-out split of the participants."""


def _asr_kind(value: Any) -> str:
    kind = value.get("kind", "model") if isinstance(value, dict) else getattr(value, "kind", "model")
    return str(kind)


AsrConfig = Annotated[
    Annotated[RevisionModel, Tag("model")] | Annotated[HypothesesFile, Tag("file")] | Annotated[TypedInput, Tag("typed")],
    Discriminator(_asr_kind),
]
"""Input events that may revise: the revision model (``kind = "model"``, the default),
recorded hypotheses (``"file"``: a recognizer's) or typed keys (``"typed"``)."""


@dataclass(frozen=True, slots=True)
class Hypotheses:
    """One question's partial hypotheses, in arrival order."""

    words: tuple[tuple[str, ...], ...]
    """Each hypothesis' words; the last is the final transcript (the model: the question)."""
    revised: tuple[bool, ...]
    """Whether hypothesis i is not a word prefix of the final one (a later one revised it)."""
    n_revisions: int
    """Revision events: hypotheses that changed a word the previous one showed."""
    times_ms: tuple[float, ...] | None = None
    """Each hypothesis' time from the start of speech (recorded hypotheses); None for the
    model, whose hypothesis i arrives with word i at the cadence's time."""
    available_ms: tuple[float, ...] | None = None
    """When each recorded hypothesis was available (audio time plus compute delay), where
    the file records it; None otherwise."""
    speech_ms: tuple[tuple[float, float], ...] | None = None
    """The speech segments ``(start_ms, end_ms)`` a voice-activity detector found in the
    audio (audio time), where the file records them (``speech_ms``); None otherwise."""

    @property
    def revised_share(self) -> float:
        return sum(self.revised) / len(self.revised) if self.revised else 0.0


def question_rng(seed: int, key: str) -> np.random.Generator:
    """A generator seeded by ``seed`` and the question's id alone."""
    digest = hashlib.blake2b(f"{seed}\0{key}".encode(), digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(digest, "little"))


def misheard(word: str, rng: np.random.Generator) -> str:
    """A wrong form of ``word``: one vowel, else one letter, else one digit changed.

    Returns ``word`` itself when it has no letter or digit (punctuation: nothing to
    mishear, and nothing the tokenizer keeps)."""
    for alphabet in (VOWELS, LETTERS, DIGITS):
        positions = [i for i, ch in enumerate(word) if ch.lower() in alphabet]
        if positions:
            i = positions[int(rng.integers(len(positions)))]
            old = word[i].lower()
            choices = [c for c in alphabet if c != old]
            new = choices[int(rng.integers(len(choices)))]
            return word[:i] + (new.upper() if word[i].isupper() else new) + word[i + 1 :]
    return word


def revise(query: str, model: RevisionModel, key: str) -> Hypotheses:
    """The hypotheses a recognizer following ``model`` shows for ``query``: one per word.

    With ``p = 0`` they are exactly the word prefixes ``q[1:1] … q[1:n]``.
    """
    words = query.split()
    n = len(words)
    if n == 0:
        return Hypotheses((), (), 0)
    touched: list[list[int]] = [[] for _ in range(n)]  # word j → arrivals (0-based) that rewrote it
    if model.p > 0:
        rng = question_rng(model.seed, key)
        draws = rng.random(n)
        for i in range(1, n):
            if draws[i] < model.p:
                first = max(0, i - model.r, i - model.final_words)
                for j in range(first, i):
                    touched[j].append(i)
        forms = [[misheard(words[j], rng) for _ in touched[j]] for j in range(n)]
    else:
        forms = [[] for _ in range(n)]
    shown: list[tuple[str, ...]] = []
    for i in range(n):
        hypothesis = []
        for j in range(i + 1):
            later = [a for a in touched[j] if a > i]  # rewrites still to come
            hypothesis.append(forms[j][len(touched[j]) - len(later)] if later else words[j])
        shown.append(tuple(hypothesis))
    return hypotheses_of(shown)


def hypotheses_of(
    shown: Sequence[tuple[str, ...]],
    times_ms: Sequence[float] | None = None,
    available_ms: Sequence[float] | None = None,
    speech_ms: Sequence[tuple[float, float]] | None = None,
) -> Hypotheses:
    """Hypotheses with their revised flags and the number of revision events."""
    final = shown[-1]
    revised = tuple(h != final[: len(h)] for h in shown)
    events = sum(1 for prev, cur in itertools.pairwise(shown) if cur[: len(prev)] != prev[: len(cur)])
    return Hypotheses(
        tuple(shown),
        revised,
        events,
        None if times_ms is None else tuple(times_ms),
        None if available_ms is None else tuple(available_ms),
        None if speech_ms is None else tuple(speech_ms),
    )
