"""Keystroke logs of the 136M Keystrokes format, read, and what a streaming pipeline hears
from them.

**Format** (Dhakal et al., CHI 2018; one tab-separated file per participant,
``<id>_keystrokes.txt``, header line then one row per key press)::

    PARTICIPANT_ID TEST_SECTION_ID SENTENCE USER_INPUT KEYSTROKE_ID PRESS_TIME RELEASE_TIME LETTER KEYCODE

``PRESS_TIME`` in ms since the epoch; ``LETTER`` the character or a key name (``BKSP``,
``SHIFT``, …; ``NA`` where the logger lost the character: the key code then says which
key it was); ``KEYCODE`` the JavaScript key code (8 backspace, 32 space). The other
fields' numbers (``KEYSTROKE_ID``, ``RELEASE_TIME``) are not read.

**Plausibility**, declared once here (:data:`INTEGER_FIELDS`, :data:`MAX_GAP_MS`):

- a row has the nine fields, its ``PARTICIPANT_ID`` is the one of the file's name, and
  each integer field read is a decimal integer in its declared range: ``PRESS_TIME``
  ms since the epoch, not negative and below its bound, ``KEYCODE`` one byte;
- within one sentence (a ``TEST_SECTION_ID``), consecutive presses in press order are at
  most :data:`MAX_GAP_MS` apart.

What fails is a :class:`~streamrag.base.errors.RecordError` naming the file, line and
field; ``on_error="skip"`` leaves out the row — or, for a gap, the whole sentence, whose
times cannot be trusted — and counts it in :attr:`KeystrokeLogs.left_out`: the reader
logs its one line (:meth:`Skipped.line`) as a warning, a command writes its
:meth:`Skipped.report`. What is left out reads as if it were absent: the other keys
keep their times, and no other sentence or participant changes.

**What is heard.** Replaying a typed sentence's keys into a text buffer (a printable
key appends, a backspace deletes the last character; cursor keys and modifiers are left
out, so the few sentences edited with arrow keys replay approximately), a word is
*heard* when the space after it is typed, and the last word at the last key press.
Each change of the heard words is one hypothesis at that key's time (ms from the first
key press). A backspace run that reaches back across a space takes back a word already
heard; when it is typed again differently the new hypothesis revises it
(``hypotheses_of`` in :mod:`streamrag.data.human.asr` flags and counts it).
"""

from __future__ import annotations

import itertools
import logging
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from streamrag.base.errors import DataFileError, RecordError

FIELDS = (
    "PARTICIPANT_ID",
    "TEST_SECTION_ID",
    "SENTENCE",
    "USER_INPUT",
    "KEYSTROKE_ID",
    "PRESS_TIME",
    "RELEASE_TIME",
    "LETTER",
    "KEYCODE",
)
INTEGER_FIELDS: dict[str, tuple[int, int]] = {
    # ms since the epoch, up to 2100-01-01 UTC. Not bounded below by an era: only a
    # sentence's differences are used, a logger counting from 0 reads the same, and a
    # time out of line with its sentence is a gap (MAX_GAP_MS).
    "PRESS_TIME": (0, 4_102_444_800_000),
    "KEYCODE": (0, 256),  # JavaScript key codes are one byte (the shared logs use 0-222)
}
"""Each integer field read and its plausible values, ``[lo, hi)``."""
MAX_GAP_MS = 600_000
"""Most ms between consecutive presses (press order) of one sentence: ten minutes, far
above any pause while copying one sentence, far below a clock jump or a mistyped time."""
FIRST_REASONS = 5
"""Reasons of skipped rows a report keeps (the count is of all)."""
BACKSPACE_CODE = 8
SPACE_CODE = 32
_CODE_CHARS = {32: " ", 186: ";", 187: "=", 188: ",", 189: "-", 190: ".", 191: "/", 222: "'"}

Key = Literal["char", "space", "bksp"]
OnError = Literal["raise", "skip"]
_INTEGER = re.compile(r"-?[0-9]+")  # ASCII digits only: int() would take "²" no further
_MAX_DIGITS = 20  # longer is out of every range: never converted (int() refuses 4,300 digits)

log = logging.getLogger(__name__)


def key_char(letter: str, keycode: int) -> str | None:
    """The character a key press types, ``"\\b"`` for a backspace, None for a key that
    types nothing (modifiers, arrows). ``NA`` letters are recovered from the key code
    (letters lower-cased: the logger lost their case)."""
    if keycode == BACKSPACE_CODE or letter == "BKSP":
        return "\b"
    if len(letter) == 1:
        return letter
    if letter == "NA":
        if 65 <= keycode <= 90:
            return chr(keycode).lower()
        if 48 <= keycode <= 57:
            return chr(keycode)
        return _CODE_CHARS.get(keycode)
    return None


@dataclass(frozen=True, slots=True)
class TypedSentence:
    """One typed sentence (a ``TEST_SECTION_ID``): its text keys in press order."""

    participant: str
    section: str
    sentence: str
    """The sentence shown (what the participant copied)."""
    press_ms: tuple[int, ...]
    """Press times of the keys that type (printable, space, backspace), from the first."""
    chars: str
    """Those keys' characters, ``"\\b"`` for a backspace."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """What ``on_error="skip"`` left out of a read, in file order."""

    reasons: tuple[str, ...] = ()
    """``file:line: field '…': …`` of each row, or sentence, left out."""
    n_rows: int = 0
    """Rows left out, the rows of whole sentences left out included."""
    n_sentences: int = 0
    """Whole sentences left out (their press times implausible together)."""

    def report(self) -> dict[str, Any]:
        """The counts and the first :data:`FIRST_REASONS` reasons (for a summary file)."""
        return {
            "n_skipped_rows": self.n_rows,
            "n_skipped_sentences": self.n_sentences,
            "skipped": list(self.reasons[:FIRST_REASONS]),
        }

    def line(self, root: str) -> str | None:
        """One line for the console; None when nothing was left out."""
        if not self.reasons:
            return None
        whole = f", {self.n_sentences} whole sentence{'s' * (self.n_sentences != 1)} among them" if self.n_sentences else ""
        more = f" (and {len(self.reasons) - 1} more)" if len(self.reasons) > 1 else ""
        return f"{root}: skipped {self.n_rows} implausible keystroke row{'s' * (self.n_rows != 1)}{whole}; first: {self.reasons[0]}{more}"


@dataclass(frozen=True, slots=True)
class KeystrokeLogs:
    """A folder of keystroke logs, read: sentences by participant, in file order."""

    root: str
    participants: dict[str, tuple[TypedSentence, ...]]
    left_out: Skipped = Skipped()
    """What ``on_error="skip"`` left out."""

    @property
    def skipped(self) -> tuple[str, ...]:
        """``file:line: field …`` of each row or sentence skipped (``on_error="skip"``)."""
        return self.left_out.reasons

    @property
    def n_sentences(self) -> int:
        return sum(len(s) for s in self.participants.values())


def log_files(root: str | os.PathLike[str]) -> list[Path]:
    """``*_keystrokes.txt`` in ``root`` or its ``participants/`` folder, sorted by name."""
    path = Path(root)
    if not path.is_dir():
        raise DataFileError(f"{path}: not a folder (expected a folder of *_keystrokes.txt)")
    files = sorted(path.glob("*_keystrokes.txt")) or sorted((path / "participants").glob("*_keystrokes.txt"))
    if not files:
        raise DataFileError(f"{path}: no *_keystrokes.txt files (nor in {path / 'participants'})")
    return files


def _shown(value: str) -> str:
    return repr(value if len(value) <= 24 else value[:24] + "…")


def participant_of(path: Path) -> str:
    """The participant id in a log file's name, ``<id>_keystrokes.txt``."""
    return path.name.removesuffix("_keystrokes.txt")


def row_problem(parts: Sequence[str], participant: str) -> tuple[str, str] | None:
    """``(field, problem)`` of the first implausible field of a row's fields, else None;
    ``participant``: the id of the file's name."""
    if len(parts) != len(FIELDS):
        return "row", f"expected {len(FIELDS)} tab-separated fields, got {len(parts)}"
    if parts[0].strip() != participant:
        # A stray id would make another participant: every participant's draws would shift.
        return "PARTICIPANT_ID", f"expected {participant!r} (the file's name), got {_shown(parts[0])}"
    for name, (lo, hi) in INTEGER_FIELDS.items():
        value = parts[FIELDS.index(name)].strip()
        if not _INTEGER.fullmatch(value):
            return name, f"expected an integer, got {_shown(value)}"
        if len(value.lstrip("-")) > _MAX_DIGITS or not lo <= int(value) < hi:
            return name, f"{_shown(value)} is outside the plausible [{lo}, {hi})"
    return None


def gap_problem(presses: Sequence[tuple[int, int]]) -> tuple[int, str] | None:
    """``(line, problem)`` of the first press more than :data:`MAX_GAP_MS` after the one
    before it, ``presses`` being one sentence's ``(press ms, line)`` in press order."""
    for (before, before_line), (t, line_no) in itertools.pairwise(presses):
        if t - before > MAX_GAP_MS:
            return line_no, f"{t - before} ms after the press before it (line {before_line}): the most is {MAX_GAP_MS} ms"
    return None


_PRESS, _CODE = FIELDS.index("PRESS_TIME"), FIELDS.index("KEYCODE")


class _Tally:
    """What a lenient read has left out so far."""

    def __init__(self) -> None:
        self.reasons: list[str] = []
        self.n_rows = self.n_sentences = 0

    def done(self) -> Skipped:
        return Skipped(tuple(self.reasons), self.n_rows, self.n_sentences)


def _rows(path: Path, on_error: OnError, tally: _Tally) -> Iterable[tuple[int, list[str]]]:
    """``(line, fields)`` of each plausible row of the file (:func:`row_problem`)."""
    participant = participant_of(path)
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        for line_no, raw in enumerate(fh, 1):
            line = raw.rstrip("\r\n")
            if line_no == 1 and line.startswith("PARTICIPANT_ID"):
                continue
            if not line:
                continue
            parts = line.split("\t")
            problem = row_problem(parts, participant)
            if problem is not None:
                error = RecordError(str(path), line_no, *problem)
                if on_error == "raise":
                    raise error
                tally.reasons.append(str(error))
                tally.n_rows += 1
                continue
            yield line_no, parts


def _sentences(path: Path, on_error: OnError, tally: _Tally) -> list[TypedSentence]:
    """The file's sentences, in the order of their first typing key (:func:`gap_problem`
    checked over every key of a sentence, typing or not)."""
    rows: dict[str, list[tuple[int, int, str | None]]] = {}  # section → (press ms, line, char)
    shown: dict[str, tuple[str, str]] = {}  # section → (participant, sentence), in first-typing-key order
    for line_no, parts in _rows(path, on_error, tally):
        section = parts[1]
        ch = key_char(parts[7], int(parts[_CODE]))
        rows.setdefault(section, []).append((int(parts[_PRESS]), line_no, ch))
        if ch is not None:
            shown.setdefault(section, (parts[0], parts[2]))
    typed = []
    for section, (pid, sentence) in shown.items():
        keys = sorted(rows[section], key=lambda row: row[0])  # press order; ties keep file order
        gap = gap_problem([(t, line_no) for t, line_no, _ in keys])
        if gap is not None:
            error = RecordError(str(path), gap[0], "PRESS_TIME", gap[1])
            if on_error == "raise":
                raise error
            tally.reasons.append(f"{error} (sentence {section!r} skipped, {len(keys)} rows)")
            tally.n_rows += len(keys)
            tally.n_sentences += 1
            continue
        text = [(t, ch) for t, _, ch in keys if ch is not None]
        first = text[0][0]
        typed.append(TypedSentence(pid, section, sentence, tuple(t - first for t, _ in text), "".join(ch for _, ch in text)))
    return typed


def read_keystrokes(root: str | os.PathLike[str], *, on_error: OnError = "raise", limit: int | None = None) -> KeystrokeLogs:
    """Read every participant file of ``root`` (the first ``limit`` in name order),
    checking each row and sentence (module docstring); what ``on_error="skip"`` left out
    is logged as one warning (:meth:`Skipped.line`) and kept in ``left_out``."""
    tally = _Tally()
    participants: dict[str, tuple[TypedSentence, ...]] = {}
    for path in log_files(root)[:limit]:
        typed = _sentences(path, on_error, tally)
        if typed:
            participants[typed[0].participant] = tuple(typed)
    left_out = tally.done()
    if not participants:
        said = f" ({left_out.line(str(root))})" if left_out.reasons else ""
        raise DataFileError(f"{root}: no typed sentences{said}")
    if (line := left_out.line(str(root))) is not None:
        log.warning(line, extra={"n_skipped_rows": left_out.n_rows, "n_skipped_sentences": left_out.n_sentences})
    return KeystrokeLogs(str(root), participants, left_out)


def heard(press_ms: Sequence[float], chars: str) -> tuple[list[tuple[str, ...]], list[float]] | None:
    """``(hypotheses' words, their times in ms)``: what a pipeline hears from these keys
    (module docstring); None when no word was typed."""
    buffer: list[str] = []
    shown: list[tuple[str, ...]] = []
    times: list[float] = []
    for t, ch in zip(press_ms, chars, strict=True):
        if ch == "\b":
            if buffer:
                buffer.pop()
            continue
        buffer.append(ch)
        if ch == " ":
            words = tuple("".join(buffer).split())
            if words and (not shown or words != shown[-1]):
                shown.append(words)
                times.append(float(t))
    final = tuple("".join(buffer).split())
    if not final:
        return None
    if not shown or final != shown[-1]:
        shown.append(final)
        times.append(float(press_ms[-1]))
    return shown, times
