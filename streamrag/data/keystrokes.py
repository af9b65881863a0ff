"""Keystroke logs of the 136M Keystrokes format, read, and what a streaming pipeline hears
from them.

**Format** (Dhakal et al., CHI 2018; one tab-separated file per participant,
``<id>_keystrokes.txt``, header line then one row per key press)::

    PARTICIPANT_ID TEST_SECTION_ID SENTENCE USER_INPUT KEYSTROKE_ID PRESS_TIME RELEASE_TIME LETTER KEYCODE

``PRESS_TIME`` in ms since the epoch; ``LETTER`` the character or a key name (``BKSP``,
``SHIFT``, …; ``NA`` where the logger lost the character: the key code then says which
key it was); ``KEYCODE`` the JavaScript key code (8 backspace, 32 space). A row with
the wrong number of fields or a non-integer time or key code is an error naming the
file, line and field; ``on_error="skip"`` skips it and keeps its place in
:attr:`KeystrokeLogs.skipped`.

**What is heard.** Replaying a typed sentence's keys into a text buffer (a printable
key appends, a backspace deletes the last character; cursor keys and modifiers are left
out, so the few sentences edited with arrow keys replay approximately), a word is
*heard* when the space after it is typed, and the last word at the last key press.
Each change of the heard words is one hypothesis at that key's time (ms from the first
key press). A backspace run that reaches back across a space takes back a word already
heard; when it is typed again differently the new hypothesis revises it
(``hypotheses_of`` in :mod:`streamrag.data.hypotheses` flags and counts it).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

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
BACKSPACE_CODE = 8
SPACE_CODE = 32
_CODE_CHARS = {32: " ", 186: ";", 187: "=", 188: ",", 189: "-", 190: ".", 191: "/", 222: "'"}

Key = Literal["char", "space", "bksp"]


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
class KeystrokeLogs:
    """A folder of keystroke logs, read: sentences by participant, in file order."""

    root: str
    participants: dict[str, tuple[TypedSentence, ...]]
    skipped: tuple[str, ...]
    """``file:line: field …`` of each row skipped (``on_error="skip"``)."""

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


def _rows(path: Path, on_error: Literal["raise", "skip"], skipped: list[str]) -> Iterable[tuple[str, str, str, int, str]]:
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        for line_no, raw in enumerate(fh, 1):
            line = raw.rstrip("\r\n")
            if line_no == 1 and line.startswith("PARTICIPANT_ID"):
                continue
            if not line:
                continue
            parts = line.split("\t")
            error: RecordError | None = None
            if len(parts) != len(FIELDS):
                error = RecordError(str(path), line_no, "row", f"expected {len(FIELDS)} tab-separated fields, got {len(parts)}")
            else:
                for name, value in (("PRESS_TIME", parts[5]), ("KEYCODE", parts[8])):
                    if not value.strip().lstrip("-").isdigit():
                        error = RecordError(str(path), line_no, name, f"expected an integer, got {value!r}")
                        break
            if error is not None:
                if on_error == "raise":
                    raise error
                skipped.append(str(error))
                continue
            yield parts[0], parts[1], parts[2], int(parts[5]), parts[7] + "\t" + parts[8]


def read_keystrokes(
    root: str | os.PathLike[str], *, on_error: Literal["raise", "skip"] = "raise", limit: int | None = None
) -> KeystrokeLogs:
    """Read every participant file of ``root`` (the first ``limit`` in name order)."""
    skipped: list[str] = []
    participants: dict[str, tuple[TypedSentence, ...]] = {}
    for path in log_files(root)[:limit]:
        sentences: dict[str, tuple[str, str, list[int], list[str]]] = {}
        for pid, section, sentence, press, key in _rows(path, on_error, skipped):
            letter, code = key.split("\t")
            ch = key_char(letter, int(code))
            if ch is None:
                continue
            entry = sentences.setdefault(section, (pid, sentence, [], []))
            entry[2].append(press)
            entry[3].append(ch)
        typed = []
        for section, (pid, sentence, presses, chars) in sentences.items():
            order = sorted(range(len(presses)), key=lambda i: presses[i])  # press order; ties keep file order
            first = presses[order[0]]
            typed.append(
                TypedSentence(pid, section, sentence, tuple(presses[i] - first for i in order), "".join(chars[i] for i in order))
            )
        if typed:
            participants[typed[0].participant] = tuple(typed)
    if not participants:
        raise DataFileError(f"{root}: no typed sentences")
    return KeystrokeLogs(str(root), participants, tuple(skipped))


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
