"""An independent re-statement of the anchor study's RQ3 harness rules, as plain arithmetic.

Not streamrag's pipeline: no event loop, no tasks, no trace — a direct computation of one
question's streaming and baseline answer times from the five rules of the anchor's code
(issue 10), so the simulator's ``paper`` preset can be checked against it question by
question, the way rank_bm25 checks the BM25 scorer.

Rules restated:
- words arrive at w_t = round(t·10⁶/δ) µs; end of input E = w_n; the reflector runs at E;
- a speculative call on prefix t is fired at word t when t − last_fire ≥ m and fewer than
  ``cap`` calls are in flight (a call whose completion time is < w_t is done: one
  completing at w_t still holds its slot for word t, as in the anchor's asyncio harness;
  ``slot_release="at_completion"`` restates streamrag's alternative, ≤ w_t); a blocked
  fire waits for the next word with a free slot; last_fire is the last actual fire;
- a call takes G + L and then its result is complete;
- at E, the result judged is the best completed one (highest full-query score of its top
  chunk; ties: first completed); if sufficient it is used; calls created at word n have
  not started and are cancelled (not counted as fired);
- otherwise every completion (in time order) triggers a judgment of the best of all
  completed results; the first sufficient one is used;
- if none is, the full query is dispatched again (G + L) when the last call completes;
- response generation F follows the chosen result. Baseline: E + G + L + F.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class AnchorOutcome:
    baseline_us: int
    streaming_us: int
    calls_fired: int
    misfire: bool

    @property
    def saved_ms(self) -> float:
        return (self.baseline_us - self.streaming_us) / 1000


def anchor_question(
    n: int,
    *,
    delta_wps: float,
    words: int,
    cap: int,
    g_us: int,
    l_us: int,
    f_us: int,
    score: Callable[[int], float],
    sufficient: Callable[[int], bool],
    word_us: Sequence[int] | None = None,
    slot_release: str = "after_words",
) -> AnchorOutcome:
    """One question under the anchor's rules (times in µs from arrival)."""
    w = list(word_us) if word_us is not None else [round(t * 1_000_000 / delta_wps) for t in range(1, n + 1)]
    end = w[-1]
    calls: list[tuple[int, int, int]] = []  # (prefix t, start, done)
    last_fire = 0
    created_at_end: list[int] = []
    for t in range(1, n + 1):
        now = w[t - 1]
        in_flight = sum(1 for (_, _, done) in calls if done > now or (done == now and slot_release == "after_words"))
        if t - last_fire >= words and in_flight < cap:
            if t == n:
                created_at_end.append(t)
            else:
                calls.append((t, now, now + g_us + l_us))
            last_fire = t

    def order_key(i: int) -> tuple[int, int]:
        return (calls[i][2], i)  # completion time, then creation order

    def best(done_idx: list[int]) -> int | None:
        if not done_idx:
            return None
        ordered = sorted(done_idx, key=order_key)
        top = max(score(calls[i][0]) for i in ordered)
        return next(i for i in ordered if score(calls[i][0]) == top)

    completed = [i for i in range(len(calls)) if calls[i][2] <= end]
    b = best(completed)
    if b is not None and sufficient(calls[b][0]):
        return AnchorOutcome(end + g_us + l_us + f_us, end + f_us, len(calls), False)
    # The reflector waits: the calls created at word n start now.
    for t in created_at_end:
        calls.append((t, end, end + g_us + l_us))
    pending = sorted((i for i in range(len(calls)) if calls[i][2] > end), key=order_key)
    for i in pending:
        completed.append(i)
        b = best(completed)
        if sufficient(calls[b][0]):  # type: ignore[index]
            return AnchorOutcome(end + g_us + l_us + f_us, calls[i][2] + f_us, len(calls), False)
    last = max([end, *(calls[i][2] for i in pending)])
    fired = len(calls) + 1  # the fallback call on the full query
    return AnchorOutcome(end + g_us + l_us + f_us, last + g_us + l_us + f_us, fired, len(calls) > 0)
