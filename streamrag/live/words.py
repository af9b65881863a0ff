"""Where a live turn's words come from, and when.

A :class:`WordSource` yields :class:`HeardWord` s as they are heard, the last one
marked (the turn ends with it):

- :class:`ScheduledWords` — words at given offsets from the turn's start, slept on the
  clock: a known question replayed at the scenario's cadence δ
  (:func:`replayed_question`), or a timestamped transcript (:func:`read_transcript`,
  JSON lines ``{"word": str, "t_ms": number}``, non-decreasing);
- :class:`TypedWords` — a stream (stdin, the keyboard): a word is heard when the
  whitespace after it is typed; a line break ends the turn, the end of the stream ends
  the last turn and the run.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import anyio

from streamrag.base.errors import DataFileError, RecordError
from streamrag.engine.clock import Clock


@dataclass(frozen=True, slots=True)
class HeardWord:
    """A word and whether the turn ends with it; ``text == ""``: the turn ended after
    the previous word (typed input learns it only then)."""

    text: str
    last: bool


class WordSource(Protocol):
    """Role: the words of one turn, as they are heard (offsets from ``origin_us``)."""

    def words(self, clock: Clock, origin_us: int) -> AsyncIterator[HeardWord]: ...


class ScheduledWords:
    """Words at fixed offsets (µs) from the turn's start."""

    def __init__(self, words: Sequence[str], word_us: Sequence[int]) -> None:
        if not words or len(words) != len(word_us):
            raise ValueError(f"ScheduledWords: {len(words)} words for {len(word_us)} instants")
        self.texts = list(words)
        self.word_us = [int(t) for t in word_us]

    async def words(self, clock: Clock, origin_us: int) -> AsyncIterator[HeardWord]:
        n = len(self.texts)
        for i, (text, at_us) in enumerate(zip(self.texts, self.word_us, strict=True), start=1):
            await clock.sleep_until_us(origin_us + at_us)
            yield HeardWord(text, i == n)


def replayed_question(query: str, word_us: Sequence[int]) -> ScheduledWords:
    """A known question's words at the instants a plan drew for it."""
    return ScheduledWords(query.split(), word_us)


MAX_TURN_MS = 600_000
"""The latest a transcript's word may come after the turn's start: ten minutes, far above
any spoken turn; a later time is a unit or typing mistake that a live run would wait out."""


def read_transcript(path: str | os.PathLike[str]) -> ScheduledWords:
    """A transcript file: JSON lines ``{"word": str, "t_ms": number ≥ 0}`` in time order,
    UTF-8, every word within :data:`MAX_TURN_MS` of the turn's start."""
    import math

    from streamrag.base.lines import json_line

    words: list[str] = []
    times: list[int] = []
    try:
        with open(path, "rb") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise DataFileError(f"{path}: cannot read the transcript ({exc.strerror})") from None
    for no, raw in enumerate(lines, start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RecordError(str(path), no, "", "not UTF-8 text") from None
        if not line.strip():
            continue
        obj = json_line(line, path, no)
        word, t_ms = (obj.get("word"), obj.get("t_ms")) if isinstance(obj, dict) else (None, None)
        if not isinstance(word, str) or not word.strip() or len(word.split()) != 1:
            raise RecordError(str(path), no, "word", f"expected one word, got {word!r}")
        if isinstance(t_ms, bool) or not isinstance(t_ms, int | float) or not math.isfinite(t_ms) or t_ms < 0:
            raise RecordError(str(path), no, "t_ms", f"expected a number of ms ≥ 0, got {t_ms!r}")
        if t_ms > MAX_TURN_MS:
            raise RecordError(str(path), no, "t_ms", f"{t_ms} is more than {MAX_TURN_MS} ms into the turn (ms, not µs?)")
        at_us = round(t_ms * 1000)
        if times and at_us < times[-1]:
            raise RecordError(str(path), no, "t_ms", f"{t_ms} is earlier than the word before it")
        words.append(word.strip())
        times.append(at_us)
    if not words:
        raise DataFileError(f"{path}: the transcript has no words")
    return ScheduledWords(words, times)


class TypedWords:
    """One turn of a typed stream (see the module docstring); :meth:`turns` reads them all."""

    def __init__(self, reader: _StreamReader) -> None:
        self.reader = reader

    async def words(self, clock: Clock, origin_us: int) -> AsyncIterator[HeardWord]:
        # A word is passed on as soon as the whitespace after it is typed; if the line
        # break comes after a space, the turn's end is a word-less HeardWord("", True).
        while True:
            word, ends_turn = await self.reader.next_word()
            if word is None:
                yield HeardWord("", True)
                return
            yield HeardWord(word, ends_turn)
            if ends_turn:
                return

    @staticmethod
    async def turns(fd: int) -> AsyncIterator[TypedWords]:
        """A :class:`TypedWords` per line of the stream on file descriptor ``fd``."""
        reader = _StreamReader(fd)
        while not await reader.at_end():
            yield TypedWords(reader)


class _StreamReader:
    """Words of a byte stream, read as they come (a thread waits on the descriptor)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = ""
        self.eof = False

    async def _fill(self) -> None:
        data = await anyio.to_thread.run_sync(os.read, self.fd, 4096, abandon_on_cancel=True)
        if not data:
            self.eof = True
        self.buffer += data.decode("utf-8", errors="replace")

    async def at_end(self) -> bool:
        """True when only whitespace is left before the end of the stream."""
        while not self.buffer.strip() and not self.eof:
            self.buffer = ""
            await self._fill()
        return not self.buffer.strip() and self.eof

    async def next_word(self) -> tuple[str | None, bool]:
        """The next complete word and whether a line break follows it; ``(None, _)`` at the
        end of a line with no word left, or at the end of the stream."""
        while True:
            stripped = self.buffer.lstrip(" \t\r")
            if stripped.startswith("\n"):
                self.buffer = stripped[1:]
                return None, True
            self.buffer = stripped
            end = next((i for i, ch in enumerate(stripped) if ch.isspace()), None)
            if end is not None:
                word, rest = stripped[:end], stripped[end:]
                gap = rest[: len(rest) - len(rest.lstrip(" \t\r"))]
                ends_turn = rest[len(gap) : len(gap) + 1] == "\n"
                self.buffer = rest[len(gap) + 1 :] if ends_turn else rest.lstrip(" \t\r")
                return word, ends_turn
            if self.eof:
                self.buffer = ""
                return (stripped or None), True
            await self._fill()
