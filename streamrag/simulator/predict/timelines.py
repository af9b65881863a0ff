"""Every question's nominal timeline at any call duration, each replayed once per class.

The load model asks for the population's timelines (:func:`~streamrag.simulator.predict.saving.timeline`)
at some forty nominal call durations X = E[G] + w + E[L] — a grid of waits w and the fixed
points its bisection visits. Replaying every question at each of them cost most of
``predict``'s time, yet a question's timeline changes with X only at a few durations.

**Why a replay holds on an interval of durations.** On the nominal timeline every call
takes X, and a trigger's call starts at an instant that does not depend on X — a word, a
tick, or the reflector's first look ``T + check`` (a held call). The arm's machine
(:mod:`~streamrag.pipeline.arm`) reads the calls in flight only at a fire *opportunity*
(a word the trigger offers, and each later word while a fire blocked by the cap is
deferred; a tick) — and there only whether they fill the thread cap, which they cannot
while fewer calls than the cap have started — at the turn end T and at its first look; after that it judges
results in the order they complete, and two completions ``s + X``, ``s' + X`` compare as
their starts do (nothing after the refire starts matters to the trigger's calls). The
timeline's own blocking rule compares completions with ``T + check``. Replayed at X, the
machine started its calls at instants S and had its opportunities at instants U; at any
X' for which every ``u − s`` (u ∈ U ∪ {T, T + check}, s ∈ S ∪ {T}) stays on the same
side, each of those comparisons comes out the same, so — event by event — the same
calls start at the same instants, have the same opportunities and are judged alike: the
timeline is the same. The cache keeps each replay with that open interval and answers
any duration inside it. A duration within 2 µs of an interval's end (the plan rounds X
to µs, the blocking rule compares ms with a 1 ns tolerance) is replayed anew.

``tests/unit/simulator/test_predict_whole.py`` replays every question of a population directly at many
durations and compares every field.
"""

from __future__ import annotations

from collections.abc import Sequence

from streamrag.base.errors import ConfigError
from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.predict.saving import Timeline, timeline, unpredictable, word_times_us
from streamrag.simulator.scenario import ResolvedScenario

_NEAR_US = 2.0
"""A duration closer than this to a breakpoint is replayed, never cached (µs)."""


def decision_instants_us(
    line: Timeline,
    offered: list[int],
    word_us: Sequence[int],
    tick_us: int | None,
    end_of_turn_us: int,
    cap: int | None,
    rank_us: int = 0,
) -> list[int]:
    """The instants (µs) at which the machine's decisions on ``line``'s replay depended on
    its calls in flight: each offered word up to the word its fire was made (a blocked fire
    is deferred) where at least ``cap`` calls had started before, the ticks, the turn end
    and the first look."""
    n = len(word_us)
    starts = started_us(line)
    fired = sorted(line.fired_t)
    words: set[int] = set()
    for due in offered:
        made = next((t for t in fired if t >= due), n)
        words.update(range(due, made + 1))
    instants = [int(word_us[t - 1]) + rank_us for t in words]  # a local ranking's delay (pipeline.ranking)
    if cap is not None:  # fewer calls started than the cap: none can fill it
        instants = [u for u in instants if sum(s < u for s in starts) >= cap]
    turn_end = int(word_us[-1]) + end_of_turn_us
    instants += [turn_end, turn_end + round(line.check_ms * 1000)]
    if tick_us:
        instants += [k * tick_us for k in range(1, int(word_us[-1]) // tick_us + 1)]
    return instants


def started_us(line: Timeline) -> list[int]:
    """The instants (µs) at which ``line``'s calls that were not held started."""
    pairs = zip(line.offsets_ms.tolist(), line.held.tolist(), strict=True)
    return [round((line.turn_end_ms - d) * 1000) for d, held in pairs if not held]


def holds_on(line: Timeline, instants: list[int], x_us: float) -> tuple[float, float] | None:
    """The open interval of durations (µs) around ``x_us`` on which ``line`` — replayed at
    ``x_us``, with its decision ``instants`` — is every duration's timeline (module
    docstring); None if ``x_us`` is too near a breakpoint to tell."""
    starts = [*started_us(line), round(line.turn_end_ms * 1000)]
    lo, hi = 0.0, float("inf")
    for u in instants:
        for s in starts:
            b = u - s
            if b <= 0:
                continue
            if b < x_us:
                lo = max(lo, b)
            elif b > x_us:
                hi = min(hi, b)
            else:
                return None
    if x_us - lo < _NEAR_US or hi - x_us < _NEAR_US:
        return None
    return lo + _NEAR_US, hi - _NEAR_US


class TimelineCache:
    """The population's timelines at any nominal call duration (ms), each question replayed
    once per interval of durations that orders its events alike (module docstring)."""

    def __init__(self, questions: Sequence[SimQuestion], rs: ResolvedScenario) -> None:
        self.questions = list(questions)
        self.rs = rs
        sc = rs.scenario
        triggers = [sc.trigger.build(q) for q in self.questions]
        why = unpredictable(rs, triggers[0]) if triggers else ""
        if why:  # what predict refuses (a trigger that kills calls, a search per word), before any replay
            raise ConfigError(why)
        self._words = [tuple(word_times_us(q, rs)) for q in self.questions]
        self._ticks = [t.tick_us for t in triggers]
        self._end_of_turn_us = sc.input.end_of_turn_us
        self._rank_us = sc.pipeline.local_rank_us if sc.pipeline.ranking == "local" else 0
        self._cap = rs.arm_rules.max_threads
        self._kept: list[list[tuple[float, float, Timeline]]] = [[] for _ in self.questions]
        self.n_replayed = 0
        """Replays so far (a test reads it)."""

    def at(self, x_nominal_ms: float) -> list[Timeline]:
        """Every question's timeline with every call taking ``x_nominal_ms``."""
        x_us = x_nominal_ms * 1000.0
        out: list[Timeline] = []
        for i, kept in enumerate(self._kept):
            line = next((ln for lo, hi, ln in kept if lo < x_us < hi), None)
            if line is None:
                offered: list[int] = []
                line = timeline(self.questions[i], self.rs, x_nominal_ms, offered=offered)
                self.n_replayed += 1
                words = self._words[i]
                instants = decision_instants_us(
                    line, offered, words, self._ticks[i], self._end_of_turn_us, self._cap, self._rank_us
                )
                cell = holds_on(line, instants, x_us)
                if cell is not None:
                    kept.append((*cell, line))
            out.append(line)
        return out
