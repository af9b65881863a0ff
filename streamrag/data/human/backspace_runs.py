"""Backspace runs as the keystroke logs show them, and the runs a typist plans on a new text.

A **run** is a maximal sequence of backspaces (keys ``"\\b"``) that deleted at least one
character. Replaying the keys into a buffer (as :func:`~streamrag.data.human.keystrokes.heard`
does), each run is described by:

- its **start class** (:data:`START_CLASSES`): the characters of the current word typed
  just before it — ``"s"`` when the key before it was a space (right after a word was
  heard), else ``"1"``, ``"2"``, ``"3"`` or ``"4+"`` (mid-word, that many characters in);
- ``n_deleted``: how far back it reaches, in characters; ``across_space``: whether one of
  them was a space, i.e. whether it took back a word already heard;
- ``retyped_same``: whether the keys typed after it begin with exactly what it deleted
  (nothing deleted was wrong: the error, if any, was elsewhere); otherwise the first
  deleted key was the wrong one (91% of the shared logs' runs differ there).

A typist profile keeps, per start class, its runs per *opportunity* (a key of the shown
sentences whose buffer would put a run in that class: spaces for ``"s"``, the ``k``-th
character of a word for ``"k"``) and its logged ``(n_deleted, retyped_same)`` pairs.
:func:`plan_runs` replays that structure on a new text: at each key, with the rate of its
class, one logged pair is drawn and placed so that the run ends right after that key:

- ``retyped_same``: the keys it deletes were typed right, and are retyped the same;
- else the first key it deletes is a wrong one: a QWERTY neighbour of the intended key,
  or — for a one-character run right after a space — a **premature space** typed in place
  of the word's last character (``fenc ⌫es``), which is how most such logged runs read
  (64% of them retype a letter or digit, 22% punctuation).

So a run starting right after a space always reaches across it, and a mid-word run
reaches across the space before the word when it deletes more characters than the word
has typed — as in the logs, by construction rather than by tuning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

START_CLASSES = ("s", "1", "2", "3", "4+")
"""Where a run starts: right after a space, or that many characters into a word."""


def start_class(word_chars: int) -> str:
    """The start class of a run after ``word_chars`` characters of the current word
    (0: right after a space)."""
    if word_chars <= 0:
        return "s"
    return str(word_chars) if word_chars < 4 else "4+"


@dataclass(frozen=True, slots=True)
class LoggedRun:
    """One backspace run of a log (module docstring)."""

    start: str
    n_deleted: int
    across_space: bool
    retyped_same: bool
    timing_ms: tuple[float, float, float, float] | None = None
    """``(before, within, after, retype)``: the pause before its first backspace, the time
    from its first backspace to its last, the pause before typing resumes, and the time
    from that first key typed again to the key that restores what the run deleted (its
    ``n_deleted - 1`` intervals after the first; 0 for a one-key run). NaN where the
    sentence ends first, or, for ``retype``, where another run comes first; None without
    press times."""
    word: int = 0
    """The word it starts in: the spaces typed before it."""
    word_chars: int = 0
    """That word's characters typed when it starts (0: right after a space)."""


def logged_runs(chars: str, press_ms: Sequence[float] | None = None) -> list[LoggedRun]:
    """The backspace runs of one sentence's keys (``"\\b"`` for a backspace), in order,
    with their timing when ``press_ms`` is given; backspaces on an empty buffer delete
    nothing and make no run."""
    buffer: list[str] = []
    runs: list[LoggedRun] = []
    i, n = 0, len(chars)
    while i < n:
        if chars[i] != "\b":
            buffer.append(chars[i])
            i += 1
            continue
        typed = "".join(buffer)
        word, word_chars = typed.count(" "), len(typed.rsplit(" ", 1)[-1])  # 0 chars right after a space
        deleted: list[str] = []
        first = i
        while i < n and chars[i] == "\b":
            if buffer:
                deleted.append(buffer.pop())
            i += 1
        if not deleted:
            continue
        gone = "".join(reversed(deleted))
        after = chars[i : i + len(gone)]
        timing = None
        if press_ms is not None:
            before = float(press_ms[first] - press_ms[first - 1]) if first else float("nan")
            resume = float(press_ms[i] - press_ms[i - 1]) if i < n else float("nan")
            retyped = len(after) == len(gone) and "\b" not in after  # the keys typing back what it deleted
            retype = float(press_ms[i + len(gone) - 1] - press_ms[i]) if retyped else float("nan")
            timing = (before, float(press_ms[i - 1] - press_ms[first]), resume, retype)
        runs.append(LoggedRun(start_class(word_chars), len(gone), " " in gone, after == gone, timing, word, word_chars))
    return runs


def opportunities(text: str) -> dict[str, int]:
    """Per start class, the keys of ``text`` after which a run would start in that class."""
    counts = dict.fromkeys(START_CLASSES, 0)
    word_chars = 0
    for ch in text:
        word_chars = 0 if ch == " " else word_chars + 1
        counts[start_class(word_chars)] += 1
    return counts


@dataclass(frozen=True, slots=True)
class RunPools:
    """One typist's backspace-run structure: rates and logged draws per start class."""

    rate: dict[str, float]
    """Runs per opportunity (module docstring), per start class."""
    draws: dict[str, np.ndarray]
    """Per start class with runs, its logged ``(n_deleted, retyped_same, before_ms,
    within_ms, after_ms, retype_ms)`` rows (float; a time NaN where the log has none): a run's reach
    and its timing are drawn together, so a long hesitation keeps the correction it went with."""
    again_rate: float = 0.0
    """Runs per key of a word after its first run (corrections cluster on hard words);
    ``rate`` is then the first run's, per key of a word that has had none."""


def run_pools(sentences: Sequence[tuple[str, str, Sequence[float]]]) -> RunPools:
    """The structure of ``(shown sentence, typed keys, press times)`` triples: runs counted
    by start class over the opportunities of the shown sentences (whitespace-normalized),
    as :func:`plan_runs` draws them once per key of a new text. A word's first run counts
    against the keys of words before their first run (``rate``); its later runs against the
    word's keys after the first run (``again_rate``: in the shared logs 15% of the runs come
    in a word that already had one, more than independent keys give)."""
    chances = dict.fromkeys(START_CLASSES, 0)
    rows: dict[str, list[tuple[float, ...]]] = {c: [] for c in START_CLASSES}
    first = dict.fromkeys(START_CLASSES, 0)
    later_chances = dict.fromkeys(START_CLASSES, 0)
    again = 0
    for shown, chars, press_ms in sentences:
        words = " ".join(shown.split()).split(" ")
        for cls, n in opportunities(" ".join(shown.split())).items():
            chances[cls] += n
        seen: set[int] = set()  # words of the sentence that have had a run
        for run in logged_runs(chars, press_ms):
            assert run.timing_ms is not None  # timed: press_ms given
            rows[run.start].append((run.n_deleted, int(run.retyped_same), *run.timing_ms))
            mid_word = run.start != "s" and run.word < len(words)
            if mid_word and run.word in seen:
                again += 1  # the word's second run or later
                continue
            first[run.start] += 1
            if mid_word:
                seen.add(run.word)
                for k in range(run.word_chars + 1, len(words[run.word]) + 1):  # the word's keys after its first run
                    later_chances[start_class(k)] += 1
    rate = {
        c: min(1.0, first[c] / (chances[c] - later_chances[c])) if chances[c] > later_chances[c] else 0.0 for c in START_CLASSES
    }
    n_later = sum(later_chances.values())
    return RunPools(
        rate,
        {c: np.asarray(rows[c], dtype=np.float64).reshape(-1, 6) for c in START_CLASSES if rows[c]},
        min(1.0, again / n_later) if n_later else 0.0,
    )


@dataclass(frozen=True, slots=True)
class PlannedRun:
    """A run :func:`plan_runs` placed: at key ``resume`` of the text, ``keys`` are typed
    instead, then deleted, and typing resumes at ``resume``; ``timing_ms`` is the logged
    run's ``(before, within, after, retype)`` (:class:`LoggedRun`), ``retype`` scaled to
    this run's keys when it deletes fewer than the logged one did."""

    resume: int
    keys: str
    timing_ms: tuple[float, float, float, float] = (float("nan"),) * 4


def _placed(text: str, start: int, end: int, same: bool, last_end: int, typo: Any, rng: np.random.Generator) -> PlannedRun:
    """The run that deletes what was typed for keys ``start … end`` (module docstring)."""
    if same:
        return PlannedRun(start, text[start : end + 1])
    if text[start] != " ":
        return PlannedRun(start, typo(text[start], rng) + text[start + 1 : end + 1])
    if start - 1 > last_end:
        # The deleted space was the wrong key: typed in place of the word's last character
        # (a premature space: "fenc ⌫es"), as most logged runs ending on a space read.
        return PlannedRun(start - 1, " " + text[start + 1 : end + 1])
    return PlannedRun(start, text[start : end + 1])


def _timed(run: PlannedRun, row: np.ndarray) -> PlannedRun:
    retype = float(row[5]) * (len(run.keys) - 1) / (row[0] - 1) if row[0] > 1 else 0.0  # over its own keys
    return PlannedRun(run.resume, run.keys, (float(row[2]), float(row[3]), float(row[4]), retype))


def plan_runs(text: str, pools: RunPools, rng: np.random.Generator, typo: Any) -> dict[int, PlannedRun]:
    """The runs typing ``text`` makes, by the key where each resumes (module docstring);
    ``typo(ch, rng)`` gives a wrong key for ``ch``. A key of a word that has had a run draws
    at ``again_rate``, any other at its class's ``rate``. A run reaching into the previous
    run's keys erases only what was retyped since (a second slip while retyping), so every
    drawn run happens and the runs per opportunity stay the logged rate."""
    planned: dict[int, PlannedRun] = {}
    last_end = -1
    word_chars = 0
    had = False  # the current word has had a run
    for end, ch in enumerate(text):
        word_chars = 0 if ch == " " else word_chars + 1
        if ch == " ":
            had = False
        cls = start_class(word_chars)
        if rng.random() >= (pools.again_rate if had else pools.rate[cls]):
            continue
        rows = pools.draws.get(cls)
        if rows is None:  # a later run in a class this typist logged no run of
            continue
        had = ch != " "
        row = rows[int(rng.integers(len(rows)))]
        n_deleted, same = int(row[0]), bool(row[1])
        run = _placed(text, max(end - n_deleted + 1, last_end + 1), end, same, last_end, typo, rng)
        planned[run.resume] = _timed(run, row)
        last_end = end
    return planned


def structure(runs: Sequence[LoggedRun], n_keys: int) -> dict[str, Any]:
    """What a fit file stores of a set of logged runs: per start class, the share of
    runs, how far they reach (``n_deleted`` counts), the share across a space and the
    share retyped unchanged; ``n_keys`` the typing keys pressed."""
    out: dict[str, Any] = {
        "n_runs": len(runs),
        "runs_per_key": len(runs) / n_keys if n_keys else None,
        "across_space_share": float(np.mean([r.across_space for r in runs])) if runs else None,
        "by_start": {},
    }
    for cls in START_CLASSES:
        mine = [r for r in runs if r.start == cls]
        reach: dict[str, int] = {}
        for r in sorted(mine, key=lambda r: r.n_deleted):
            reach[str(r.n_deleted)] = reach.get(str(r.n_deleted), 0) + 1
        out["by_start"][cls] = {
            "share": len(mine) / len(runs) if runs else None,
            "n_deleted": reach,
            "across_space_share": float(np.mean([r.across_space for r in mine])) if mine else None,
            "retyped_same_share": float(np.mean([r.retyped_same for r in mine])) if mine else None,
        }
    return out
