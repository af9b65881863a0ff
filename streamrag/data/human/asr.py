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

Recorded hypotheses come from a **file** instead (``kind = "file"``): JSON lines, one
object per question, the shape of a streaming recognizer's partial results::

    {"interaction_id": "q-17", "hypotheses": [{"t_ms": 420, "text": "who"},
                                               {"t_ms": 810, "text": "who directed"}, …]}

``t_ms`` counts from the start of speech (the question's arrival); times never decrease;
a hypothesis may rewrite, drop or add any words; the last one is the final transcript,
the query the agent answers. Each hypothesis is then one input event: the analyzer
ranks it and reports t_sc and t_suf at its time, the simulator delivers it at its time.

A hypothesis may also carry ``available_ms``: when the recognizer had produced it (its
audio time ``t_ms`` plus the compute delay, as ``streamrag speak`` measures it:
:mod:`streamrag.data.human.speech`); ``available_ms ≥ t_ms``, never decreasing, and given
for every hypothesis of a question or for none. ``HypothesesFile.timing`` picks the time
the events arrive at: ``"audio"`` (``t_ms``, the default: what a user would see if
decoding took no time) or ``"available"`` (what a user sees); a file without
``available_ms`` is read as before, and refused only when ``"available"`` is asked of it.

A line may carry ``speech_ms``: ``[[start_ms, end_ms], …]``, the speech segments a
voice-activity detector found in the audio (audio time; ``streamrag speak`` records them:
:mod:`streamrag.data.human.voice_activity`). An endpointer (``[endpoint]``) on recorded
hypotheses takes its silences and the end of speech from them, and refuses a file without.

Either way, hypothesis i is *revised* when it is not a word prefix of the final one: a
call fired on it carried words the recognizer later took back.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import logging
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Discriminator, Field, Tag

from streamrag.base.digest import file_sha256
from streamrag.base.errors import DataFileError, InputError, RecordError
from streamrag.base.lines import iter_question_objects
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


def _time_ms(path: str, line_no: int, where: str, t: Any) -> float:
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        problem = "missing" if t is None else f"expected a finite number of ms ≥ 0, got {t!r}"
        raise RecordError(path, line_no, where, problem)
    return float(t)


# --------------------------------------------------------------------------- files


@dataclass(frozen=True, slots=True)
class RecordedHypotheses:
    """A hypotheses file, read: each question's hypotheses."""

    path: str
    sha256: str
    questions: dict[str, Hypotheses]


def _speech(path: str, line_no: int, segments: Any) -> list[tuple[float, float]] | None:
    """A line's ``speech_ms`` (absent: None): ``[[start_ms, end_ms], …]``, at least one, each
    ``start < end``, in order and disjoint."""
    if segments is None:
        return None
    if not isinstance(segments, list) or not segments:
        got = "an empty list (no speech heard: leave the question out)" if isinstance(segments, list) else type(segments).__name__
        raise RecordError(path, line_no, "speech_ms", f"expected a list of [start_ms, end_ms], got {got}")
    found: list[tuple[float, float]] = []
    for i, seg in enumerate(segments):
        where = f"speech_ms[{i}]"
        if not isinstance(seg, list) or len(seg) != 2:
            raise RecordError(path, line_no, where, f"expected [start_ms, end_ms], got {seg!r}")
        start, end = _time_ms(path, line_no, f"{where}[0]", seg[0]), _time_ms(path, line_no, f"{where}[1]", seg[1])
        if end <= start:
            raise RecordError(path, line_no, where, f"ends at {end:g}, not after its start {start:g}")
        if found and start < found[-1][1]:
            raise RecordError(path, line_no, where, f"starts at {start:g}, before speech_ms[{i - 1}] ends ({found[-1][1]:g})")
        found.append((start, end))
    return found


def _hypotheses(path: str, line_no: int, items: Any, speech: Any = None) -> Hypotheses:
    if not isinstance(items, list) or not items:
        problem = "missing" if items is None else "expected a non-empty list of {t_ms, text}"
        raise RecordError(path, line_no, "hypotheses", problem)
    shown: list[tuple[str, ...]] = []
    times: list[float] = []
    available: list[float] = []
    timed = isinstance(items[0], dict) and "available_ms" in items[0]  # all or none, as the first
    for i, item in enumerate(items):
        where = f"hypotheses[{i}]"
        if not isinstance(item, dict):
            raise RecordError(path, line_no, where, f"expected an object, got {type(item).__name__}")
        t = _time_ms(path, line_no, f"{where}.t_ms", item.get("t_ms"))
        if times and t < times[-1]:
            raise RecordError(path, line_no, f"{where}.t_ms", f"{t:g} is before hypotheses[{i - 1}].t_ms {times[-1]:g}")
        if timed != ("available_ms" in item):
            problem = (
                "missing (hypotheses[0] has one: give it for every hypothesis or none)"
                if timed
                else ("given, but hypotheses[0] has none: give it for every hypothesis or none")
            )
            raise RecordError(path, line_no, f"{where}.available_ms", problem)
        if timed:
            a = _time_ms(path, line_no, f"{where}.available_ms", item["available_ms"])
            if a < t:
                raise RecordError(path, line_no, f"{where}.available_ms", f"{a:g} is before its t_ms {t:g}")
            if available and a < available[-1]:
                raise RecordError(
                    path, line_no, f"{where}.available_ms", f"{a:g} is before hypotheses[{i - 1}].available_ms {available[-1]:g}"
                )
            available.append(a)
        text = item.get("text")
        if not isinstance(text, str):
            raise RecordError(path, line_no, f"{where}.text", "missing (the hypothesis' text)")
        if not text.split():
            raise RecordError(path, line_no, f"{where}.text", "has no words (leave empty partials out)")
        shown.append(tuple(text.split()))
        times.append(t)
    return hypotheses_of(shown, times, available if timed else None, _speech(path, line_no, speech))


def read_hypotheses(path: str | os.PathLike[str]) -> RecordedHypotheses:
    """Read and check a hypotheses file; every problem is one line naming file, line and field."""
    name = str(path)
    questions: dict[str, Hypotheses] = {}
    for line_no, qid, obj in iter_question_objects(Path(path)):
        questions[qid] = _hypotheses(name, line_no, obj.get("hypotheses"), obj.get("speech_ms"))
    if not questions:
        raise DataFileError(f"{name}: no hypotheses (expected one JSON object per question)")
    return RecordedHypotheses(name, file_sha256(path), questions)


@functools.lru_cache(maxsize=4)
def _cached(path: str, mtime_ns: int, size: int) -> RecordedHypotheses:
    return read_hypotheses(path)


def recorded_hypotheses(path: str | os.PathLike[str]) -> RecordedHypotheses:
    """:func:`read_hypotheses`, read once per process while the file is unchanged."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise DataFileError(f"{path}: cannot read the hypotheses file: {exc.strerror}") from None
    return _cached(str(path), st.st_mtime_ns, st.st_size)


def question_hypotheses(asr: RevisionModel | HypothesesFile | TypedInput, interaction_id: str, query: str) -> Hypotheses:
    """One question's hypotheses: drawn by the model, typed by a participant, or recorded in the file."""
    if isinstance(asr, RevisionModel):
        return revise(query, asr, interaction_id)
    if isinstance(asr, TypedInput):
        from streamrag.data.human.typed import type_question, typists

        pool = typists(asr.path, asr.participants, asr.held_out_share, asr.split_seed)
        shown, times = type_question(query, pool, question_rng(asr.seed, interaction_id))
        return hypotheses_of(shown, times)
    found = recorded_hypotheses(asr.path).questions.get(interaction_id)
    if found is None:
        raise InputError(f"{asr.path}: no hypotheses for question {interaction_id!r}")
    if asr.timing == "available":
        if found.available_ms is None:
            raise InputError(
                f"{asr.path}: question {interaction_id!r} has no available_ms (when the recognizer produced each "
                "hypothesis): data.asr.timing = 'audio' uses the audio times, or speak the questions again "
                "(streamrag speak records both)"
            )
        found = dataclasses.replace(found, times_ms=found.available_ms)
    warning = transcript_warning(asr.path, interaction_id, query, found.words[-1])
    if warning is not None:
        logging.getLogger(__name__).warning(warning, extra={"interaction_id": interaction_id})
    return found


def _words(text: str | Sequence[str]) -> set[str]:
    return set(re.findall(r"\w+", (text if isinstance(text, str) else " ".join(text)).lower()))


def transcript_warning(path: str, interaction_id: str, query: str, final: Sequence[str]) -> str | None:
    """The warning for a recorded final transcript that shares fewer than half the
    question's distinct words (an ASR error drops or changes a few; a transcript of
    another question, or of nothing, shares none), else ``None``. The run goes on: the
    transcript is what the agent heard."""
    asked, heard = _words(query), _words(final)
    shared = len(asked & heard)
    if not asked or 2 * shared >= len(asked):
        return None
    return (
        f"{path}: question {interaction_id!r}: its final hypothesis shares {shared} of the question's {len(asked)} "
        f"distinct words ({' '.join(final)[:60]!r} for {query[:60]!r}): is it this question's transcript?"
    )


def recorded_speech_us(asr: HypothesesFile, interaction_id: str) -> tuple[tuple[int, int], ...]:
    """One recorded question's speech segments in µs (audio time), for an endpointer; a file
    or question without them is refused in one line."""
    found = recorded_hypotheses(asr.path).questions.get(interaction_id)
    if found is None:
        raise InputError(f"{asr.path}: no hypotheses for question {interaction_id!r}")
    if found.speech_ms is None:
        raise InputError(
            f"{asr.path}: question {interaction_id!r} has no speech_ms (the voice-activity detector's speech segments), "
            "which an endpointer on spoken input listens to: speak the questions again (streamrag speak records them), "
            "or use endpoint.kind = 'fixed'"
        )
    return tuple((round(a * 1000), round(b * 1000)) for a, b in found.speech_ms)
