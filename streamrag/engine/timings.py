"""Real word timings per question: the file behind the ``timings`` cadence.

JSON lines, one object per question — the shape of forced-alignment or ASR word output::

    {"interaction_id": "q-17", "words": [{"word": "who", "start_ms": 1020.0, "end_ms": 1180.5},
                                          {"word": "directed", "start_ms": 1200.0, "end_ms": 1610.0}, …]}

Word i *arrives* at ``end_i − start_1``: time 0 is the moment the speaker starts the
first word (the question's arrival; silence before it, such as the start of a recording,
is not part of the question), and a word counts only once it has been spoken to its end,
because the prefix ``q[1:t]`` holds whole words (a streaming recognizer finalizes a word
after its end). Each instant is rounded to the µs on its own. This matches the
``uniform`` cadence, whose word 1 arrives ``1/δ`` after the arrival and whose end of
input is the last word's arrival.

Rules, each a :class:`~streamrag.base.errors.RecordError` naming the file, line and field:
an ``interaction_id`` string, unique in the file; a non-empty ``words`` list of objects
with a ``word`` string and finite ``start_ms`` ≤ ``end_ms``; end times non-decreasing in
spoken order. Whether the words are the question's words is checked by their count
(:meth:`~streamrag.engine.cadence.TimingsCadence.word_times_us`), not their spelling,
since recognizers normalize text differently.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamrag.base.digest import file_sha256
from streamrag.base.errors import DataFileError, RecordError
from streamrag.base.lines import iter_question_objects


@dataclass(frozen=True, slots=True)
class WordTimings:
    """A timings file, read: each question's word arrival offsets (µs)."""

    path: str
    sha256: str
    offsets_us: dict[str, tuple[int, ...]]
    """Question id → arrival offset of words 1..n in µs from the first word's start."""
    starts_us: dict[str, tuple[int, ...]]
    """Question id → start of words 1..n on the same scale (where a silence ends)."""


def _ms(path: str, line_no: int, where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        problem = "missing" if value is None else f"expected a finite number of ms, got {value!r}"
        raise RecordError(path, line_no, where, problem)
    return float(value)


def _offsets(path: str, line_no: int, words: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if not isinstance(words, list) or not words:
        problem = "missing" if words is None else "expected a non-empty list of {word, start_ms, end_ms}"
        raise RecordError(path, line_no, "words", problem)
    ends_us: list[int] = []
    starts_us: list[int] = []
    origin_us = 0
    previous_end = -math.inf
    for i, item in enumerate(words):
        where = f"words[{i}]"
        if not isinstance(item, dict):
            raise RecordError(path, line_no, where, f"expected an object, got {type(item).__name__}")
        if not isinstance(item.get("word"), str):
            raise RecordError(path, line_no, f"{where}.word", "missing (the word's text)")
        start = _ms(path, line_no, f"{where}.start_ms", item.get("start_ms"))
        end = _ms(path, line_no, f"{where}.end_ms", item.get("end_ms"))
        if end < start:
            raise RecordError(path, line_no, f"{where}.end_ms", f"{end:g} is before the word's start_ms {start:g}")
        if end < previous_end:
            raise RecordError(
                path,
                line_no,
                f"{where}.end_ms",
                f"{end:g} is before words[{i - 1}].end_ms {previous_end:g} (words go in spoken order)",
            )
        if i == 0:
            origin_us = round(start * 1000)
        ends_us.append(round(end * 1000) - origin_us)
        starts_us.append(round(start * 1000) - origin_us)
        previous_end = end
    return tuple(ends_us), tuple(starts_us)


def read_word_timings(path: str | os.PathLike[str]) -> WordTimings:
    """Read and check a timings file (see the module docstring)."""
    name = str(path)
    offsets: dict[str, tuple[int, ...]] = {}
    starts: dict[str, tuple[int, ...]] = {}
    for line_no, qid, obj in iter_question_objects(Path(path), twice="is timed twice"):
        offsets[qid], starts[qid] = _offsets(name, line_no, obj.get("words"))
    if not offsets:
        raise DataFileError(f"{name}: no word timings (expected one JSON object per question)")
    return WordTimings(name, file_sha256(path), offsets, starts)
