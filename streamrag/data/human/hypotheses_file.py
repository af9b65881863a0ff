"""Recorded partial hypotheses: a recognizer's output read from a file, and one question's
hypotheses from whichever source the settings name (the revision model, typed keys, or
the file: :func:`question_hypotheses`). The hypotheses' types and the revision model are
:mod:`streamrag.data.human.asr`'s.

Recorded hypotheses come from a **file** (``data.asr.kind = "file"``): JSON lines, one
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
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamrag.base.digest import file_sha256
from streamrag.base.errors import DataFileError, InputError, RecordError
from streamrag.base.lines import iter_question_objects
from streamrag.data.human.asr import Hypotheses, HypothesesFile, RevisionModel, TypedInput, hypotheses_of, question_rng, revise


def _time_ms(path: str, line_no: int, where: str, t: Any) -> float:
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        problem = "missing" if t is None else f"expected a finite number of ms ≥ 0, got {t!r}"
        raise RecordError(path, line_no, where, problem)
    return float(t)


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
