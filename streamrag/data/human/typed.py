"""Typed questions: a CRAG question typed the way a real participant of the keystroke logs
typed (:mod:`streamrag.data.human.keystrokes`).

A logged sentence's timing cannot be replayed onto a different text key for key, so each
participant becomes a **typist profile**, drawn from their own logged sentences alone:

- **word times by word length**: the participant's logged times from the space before a
  word to the space after it, for words of that length, each as it would have taken
  without its backspace runs (:func:`clean_word_times`; the nearest logged length, scaled
  by its number of key intervals, when none has it). This carries the inter-word gaps —
  hesitations, hard words — onto the new text. A sentence's **first** word (from its first
  key) and **last** word (to its final key) are timed from the participant's first and
  last words, per key: a sentence starts and ends slower than its middle goes;
- **key intervals by key pair** inside a word: the participant's intervals for that
  lower-cased character bigram when they typed it at least ``MIN_BIGRAM`` times, else
  for the pair's class (letter→letter, letter→space, space→letter, space→space); a
  word's key intervals are then rescaled to sum to its drawn word time;
- **backspace runs**: the participant's logged structure of runs
  (:mod:`streamrag.data.human.backspace_runs`): per start class (right after a space, or
  1, 2, 3, 4+ characters into a word) the runs per such key of the shown sentences and
  the logged runs, each with how far back it reached, whether it was retyped unchanged,
  and its own timing (the pause before it, the time between its backspaces, the pause
  before typing resumed, the time it took to type back what it deleted), drawn together.

Typing question ``q`` (``typed_keys``): at each key, with the rate of its start class, a
logged run is drawn and placed to end right after that key
(:func:`~streamrag.data.human.backspace_runs.plan_runs`): the keys it deletes are typed
first, at the word's own pace (the clean word time counts them, as the logs' first-typed
keys) — the first one wrong (a QWERTY neighbour, or a premature space in place of a
word's last character) unless the logged run was retyped unchanged — then deleted, and
typing resumes, the keys typed again taking the logged run's own time to retype them. A
run that deletes a space takes back a word already heard, and the retyped word revises
it, as in the logs. Every interval is one draw from the pools above.

Which participant types which question is seeded by the question's id (``seed``), so a
question's keys never depend on the other questions of a run, and under load each
session's question is typed by one participant throughout.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from streamrag.base.errors import InputError
from streamrag.data.human.backspace_runs import RunPools, plan_runs, run_pools
from streamrag.data.human.keystrokes import KeystrokeLogs, Skipped, TypedSentence, heard, log_files, read_keystrokes

MIN_BIGRAM = 3
MIN_REVISED = 3
"""Revised middle words a participant must have logged for their own slowdown (else none)."""
_QWERTY = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_NEIGHBOURS: dict[str, str] = {}
for _r, _row in enumerate(_QWERTY):
    for _c, _ch in enumerate(_row):
        near = [_row[j] for j in (_c - 1, _c + 1) if 0 <= j < len(_row)]
        for _other in (_r - 1, _r + 1):
            if 0 <= _other < len(_QWERTY):
                near += [_QWERTY[_other][j] for j in (_c - 1, _c, _c + 1) if 0 <= j < len(_QWERTY[_other])]
        _NEIGHBOURS[_ch] = "".join(near)


def pair_class(prev: str, ch: str) -> str:
    """``cc``, ``cs``, ``sc`` or ``ss``: whether each key of the pair is a space."""
    return ("s" if prev == " " else "c") + ("s" if ch == " " else "c")


@dataclass(frozen=True, slots=True)
class TypistProfile:
    """One participant's typing, as pools of logged intervals (ms) and episode counts."""

    participant: str
    bigram_ms: dict[str, np.ndarray]
    class_ms: dict[str, np.ndarray]
    all_ms: np.ndarray
    word_ms: dict[int, np.ndarray]
    """Word length → logged times from the space before a word to the space after it
    (:func:`clean_word_times`: without their backspace runs)."""
    edge_key_ms: dict[str, np.ndarray]
    """``first`` and ``last``: the sentence's first word (first key → the space after it)
    and last word (the last space → the final key), per key interval: a sentence starts
    and ends slower than its middle words go."""
    runs: RunPools
    """Backspace runs: rates and logged ``(n_deleted, retyped_same)`` draws by where
    they start (:mod:`streamrag.data.human.backspace_runs`)."""
    before_run_ms: np.ndarray
    within_run_ms: np.ndarray
    after_run_ms: np.ndarray
    revised_slowdown: float = 1.0
    """How much slower per key the participant typed a word they revised, its runs taken
    out, than one they did not (mean over their middle words): a hard word is slow even
    apart from its correction."""


def clean_word_times(chars: str, times: Sequence[float]) -> list[tuple[str, int, float]]:
    """``(where, intervals, ms)`` of the words of a logged sentence, as they would have
    taken typed without their backspace runs: the intervals of the keys that survive, where
    a key retyped after a run takes the interval of the key it replaces (the one first typed
    at its place) — the run itself (the backspaces, the pause before typing resumes and the
    time to type the deleted keys again) is what the model adds back, drawn from the
    participant's runs. So a word revised, which is often a slow word, is not left out.

    ``where``: ``middle`` (a space before and after it: from the space before to the space
    after, ``intervals`` is its length; ``revised`` when a run deleted one of its keys),
    ``first`` (from the first key to the space after it) or ``last`` (from the last space
    to the final key), each of ``intervals`` key intervals; a one-word sentence gives none."""
    kept: list[tuple[str, float]] = []  # surviving keys: (char, interval)
    first_deleted: dict[int, float] = {}  # buffer position → interval of the key first typed there
    touched: set[int] = set()  # buffer positions a backspace deleted a key at
    prev_t: float | None = None
    for ch, t in zip(chars, times, strict=True):
        gap = 0.0 if prev_t is None else float(t - prev_t)
        prev_t = t
        if ch == "\b":
            if kept:
                pos = len(kept) - 1
                first_deleted.setdefault(pos, kept[pos][1])
                touched.add(pos)
                kept.pop()
            continue
        pos = len(kept)
        kept.append((ch, first_deleted.pop(pos, gap)))
        first_deleted = {p: v for p, v in first_deleted.items() if p > pos}
    while kept and kept[-1][0] == " ":
        kept.pop()  # the text typed is whitespace-normalized: it ends on its last word
    spaces = [i for i, (ch, _) in enumerate(kept) if ch == " "]
    if not spaces or spaces[0] == 0:
        return []

    def span(lo: int, hi: int) -> float:  # the intervals of keys lo..hi
        return sum(gap for _, gap in kept[lo : hi + 1])

    out = [("first", spaces[0], span(1, spaces[0]))]
    for a, b in itertools.pairwise(spaces):
        if b - a > 1:
            out.append(("revised" if touched.intersection(range(a + 1, b + 1)) else "middle", b - a - 1, span(a + 1, b)))
    if len(kept) - 1 > spaces[-1]:
        out.append(("last", len(kept) - 1 - spaces[-1], span(spaces[-1] + 1, len(kept) - 1)))
    return out


def _arr(values: list[float], fallback: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.float64) if values else fallback


def typist_profile(participant: str, sentences: Sequence[TypedSentence]) -> TypistProfile:
    """The pools of one participant's logged sentences (module docstring)."""
    bigram: dict[str, list[float]] = defaultdict(list)
    klass: dict[str, list[float]] = defaultdict(list)
    words: dict[int, list[float]] = defaultdict(list)
    edges: dict[str, list[float]] = defaultdict(list)
    plain: list[float] = []  # per key: middle words typed without a run
    revised: list[float] = []  # per key: middle words with one, their runs taken out
    everything: list[float] = []
    before: list[float] = []
    within: list[float] = []
    after: list[float] = []
    for s in sentences:
        chars, times = s.chars, s.press_ms
        for i, ch in enumerate(chars):
            gap = float(times[i] - times[i - 1]) if i else None
            if ch == "\b":
                if gap is not None:
                    (within if chars[i - 1] == "\b" else before).append(gap)
                continue
            if gap is None:
                pass
            elif chars[i - 1] == "\b":
                after.append(gap)
            else:
                prev = chars[i - 1]
                bigram[(prev + ch).lower()].append(gap)
                klass[pair_class(prev, ch)].append(gap)
                everything.append(gap)
        for where, length, ms in clean_word_times(chars, times):
            if where == "middle":
                words[length].append(ms)
                plain.append(ms / (length + 1))
            elif where == "revised":
                revised.append(ms / (length + 1))
            else:
                edges[where].append(ms / length)
    all_ms = np.asarray(everything or [200.0], dtype=np.float64)
    slower = float(np.mean(revised) / np.mean(plain)) if len(revised) >= MIN_REVISED and plain else 1.0
    return TypistProfile(
        participant,
        {k: np.asarray(v) for k, v in bigram.items() if len(v) >= MIN_BIGRAM},
        {k: np.asarray(v) for k, v in klass.items()},
        all_ms,
        {k: np.asarray(v) for k, v in words.items()},
        {k: np.asarray(v) for k, v in edges.items()},
        run_pools([(s.sentence, s.chars, s.press_ms) for s in sentences]),
        _arr(before, all_ms),
        _arr(within, all_ms),
        _arr(after, all_ms),
        slower,
    )


def _draw(pool: np.ndarray, rng: np.random.Generator) -> float:
    return float(pool[int(rng.integers(len(pool)))])


def _interval(profile: TypistProfile, prev: str, ch: str, rng: np.random.Generator) -> float:
    pool = profile.bigram_ms.get((prev + ch).lower())
    if pool is None:
        pool = profile.class_ms.get(pair_class(prev, ch), profile.all_ms)
    return _draw(pool, rng)


def _typo(ch: str, rng: np.random.Generator) -> str:
    near = _NEIGHBOURS.get(ch.lower(), "") or _NEIGHBOURS["g"]
    wrong = near[int(rng.integers(len(near)))]
    return wrong.upper() if ch.isupper() else wrong


def _word_time(profile: TypistProfile, length: int, rng: np.random.Generator) -> float | None:
    """A logged space-to-space time of a word of ``length`` (the nearest logged length,
    scaled by its number of key intervals); None when the participant logged no word."""
    if not profile.word_ms:
        return None
    nearest = min(profile.word_ms, key=lambda n: (abs(n - length), n))
    return _draw(profile.word_ms[nearest], rng) * (length + 1) / (nearest + 1)


def _units(text: str) -> list[int]:
    """The word each key of ``text`` belongs to (a space to the word it ends)."""
    units, u = [], 0
    for ch in text:
        units.append(u)
        u += ch == " "
    return units


def _clean_intervals(
    text: str,
    profile: TypistProfile,
    rng: np.random.Generator,
    revised: frozenset[int] = frozenset(),
    unit: list[int] | None = None,
) -> list[float]:
    """Interval before each key of ``text`` typed without error (index 0: none): key-pair
    draws, rescaled per word to a logged word time of its length (the first and the last
    word: a logged first or last word's time per key, times its keys)."""
    base = [0.0] + [_interval(profile, text[pos - 1], text[pos], rng) for pos in range(1, len(text))]
    unit = _units(text) if unit is None else unit
    lengths = [len(w) for w in text.split(" ")]
    for u, length in enumerate(lengths):
        members = [pos for pos in range(1, len(text)) if unit[pos] == u]
        total = sum(base[pos] for pos in members)
        edge = "first" if u == 0 else "last" if u == len(lengths) - 1 else None
        if edge is not None and edge in profile.edge_key_ms:  # per key: the word takes it times its members
            drawn: float | None = _draw(profile.edge_key_ms[edge], rng) * (length + 1)
        else:
            drawn = _word_time(profile, length, rng)
            if drawn is not None and u in revised:  # a word the typist will correct: a hard one
                drawn *= profile.revised_slowdown
        if not members or drawn is None or total <= 0:
            continue
        scale = drawn * len(members) / (length + 1) / total
        for pos in members:
            base[pos] *= scale
    return base


def typed_keys(text: str, profile: TypistProfile, rng: np.random.Generator) -> tuple[list[float], str]:
    """``(press times in ms from the first key, characters with "\\b" for backspace)``:
    ``text`` typed by ``profile`` (module docstring). The keys always end on ``text``."""
    planned = plan_runs(text, profile.runs, rng, _typo)
    units = _units(text)
    revised = frozenset(
        units[p] for run in planned.values() for p in range(run.resume, min(len(text), run.resume + len(run.keys)))
    )
    clean = _clean_intervals(text, profile, rng, revised, units)
    again: dict[int, float] = {}  # position → its interval when typed again after a run
    times: list[float] = []
    keys: list[str] = []
    t = 0.0
    for pos in range(len(text)):
        run = planned.get(pos)
        if run is not None:
            n = len(run.keys)
            for j, ch in enumerate(run.keys):  # first typed at the word's own pace (as its clean time counts them)
                t += clean[pos + j]
                times.append(t)
                keys.append(ch)
            before, within, after, retype = run.timing_ms  # the logged run's own (NaN: drawn from the pools)
            for j in range(n):
                if j == 0:
                    t += before if before == before else _draw(profile.before_run_ms, rng)
                else:  # the logged run's time between backspaces, spread over this run's
                    t += within / (n - 1) if within == within and within > 0 else _draw(profile.within_run_ms, rng)
                times.append(t)
                keys.append("\b")
            t += after if after == after else _draw(profile.after_run_ms, rng)
            again.update(_retyped(text, pos, n, retype, clean, profile, rng))
        else:
            t += again.pop(pos, clean[pos])
        times.append(t)
        keys.append(text[pos])
    return times, "".join(keys)


def _retyped(
    text: str, pos: int, n: int, retype_ms: float, clean: list[float], profile: TypistProfile, rng: np.random.Generator
) -> dict[int, float]:
    """The intervals of the keys after ``pos`` typed again after a run of ``n`` keys: the
    logged run's own retyping time spread like the clean intervals there, or, where the
    log has none (another run came first), key-pair draws."""
    span = range(pos + 1, min(len(text), pos + n))
    total = sum(clean[p] for p in span)
    if retype_ms == retype_ms and total > 0:
        return {p: retype_ms * clean[p] / total for p in span}
    return {p: _interval(profile, text[p - 1], text[p], rng) for p in span}


def split_participants(ids: Sequence[str], held_out_share: float, seed: int) -> tuple[list[str], list[str]]:
    """``(fit, held out)``: a seeded split of the participants, each side in id order."""
    order = np.random.default_rng(seed).permutation(len(ids))
    n_out = round(len(ids) * held_out_share)
    out = {ids[i] for i in order[:n_out]}
    return [p for p in ids if p not in out], [p for p in ids if p in out]


@dataclass(frozen=True, slots=True)
class Typists:
    """The profiles of a keystroke folder's participants, in id order."""

    root: str
    profiles: tuple[TypistProfile, ...]
    left_out: Skipped
    """What reading the folder left out (implausible rows and sentences)."""

    def report(self) -> dict[str, Any]:
        """What a run's summary says of its typed input: the folder, the participants
        typing, and the rows and sentences left out (:meth:`Skipped.report`)."""
        return {"path": self.root, "n_participants": len(self.profiles), **self.left_out.report()}


def typists_of(logs: KeystrokeLogs, participants: Sequence[str] | None = None) -> Typists:
    ids = sorted(logs.participants) if participants is None else list(participants)
    return Typists(logs.root, tuple(typist_profile(p, logs.participants[p]) for p in ids), logs.left_out)


@functools.lru_cache(maxsize=4)
def _cached(root: str, stamp: tuple[int, int], use: str, held_out_share: float, split_seed: int) -> Typists:
    logs = read_keystrokes(root, on_error="skip")  # what is left out is logged once, and reported by the run
    if use == "all":
        return typists_of(logs)
    fit, held = split_participants(sorted(logs.participants), held_out_share, split_seed)
    return typists_of(logs, fit if use == "fit" else held)


def typists(root: str | os.PathLike[str], use: str = "all", held_out_share: float = 0.2, split_seed: int = 0) -> Typists:
    """The profiles of ``root``'s participants (``use``: all, the fit side or the held-out
    side of :func:`split_participants`), read once per process while the folder's files
    are unchanged."""
    files = log_files(root)
    stamp = (len(files), max(f.stat().st_mtime_ns for f in files))
    return _cached(str(root), stamp, use, held_out_share, split_seed)


def type_keys(text: str, pool: Typists, rng: np.random.Generator) -> tuple[list[float], str]:
    """``text`` typed by one participant drawn from ``pool``: press times and keys
    (:func:`typed_keys`)."""
    if not text.strip():
        raise InputError("a typed question needs at least one word")
    profile = pool.profiles[int(rng.integers(len(pool.profiles)))]
    return typed_keys(" ".join(text.split()), profile, rng)


def type_question(text: str, pool: Typists, rng: np.random.Generator) -> tuple[list[tuple[str, ...]], list[float]]:
    """``text`` typed by one participant drawn from ``pool``: hypotheses' words and times."""
    out = heard(*type_keys(text, pool, rng))
    assert out is not None  # the keys end on the text, which has a word
    return out
