"""The ``budget`` policy: a closed-loop controller that holds a response-time budget.

The static policies (``admission``, ``stretch``, ``coalesce``) apply one rule at every
load; the right amount of speculation at 0.2 of capacity is wrong at 0.9. This policy
watches what the sessions it serves actually waited and moves one *level* of caution
k ∈ {0, …, ``levels``} to keep the ``quantile`` (p90 by default) of their response time
under ``budget_ms``, while a ledger keeps the extra calls per session under
``max_extra_calls``. It is one object shared by every session of a system and reads
time only from the clock it is given.

**What it observes** (hooks the streaming arm calls): a session started; a session was
answered, with its response time r = answer ready − end of input (what the user waited,
``answer_us`` of a load run), its speculative fires and its extra calls (calls fired − 1);
and, at each fire, the tool's
:class:`~streamrag.engine.resources.LoadView`.

**The control law.** At every instant b = n·``period_s`` (n = 1, 2, …) of clock time the
controller reads q = the ``quantile`` of the response times answered in
[b − ``window_s``, b) (numpy's linear interpolation, as a load run's ``summary.json``)
and, with B = ``budget_ms`` and h = ``headroom``:

====================================  ================================================
q > B                                 k ← min(k + ``step_up``, ``levels``) (over budget)
(1 − h)·B < q ≤ B                     k ← min(k + 1, ``levels``)       (close to it)
q < (1 − 2h)·B                        k ← max(k − 1, 0)                (room to spare)
otherwise, or < ``min_samples``       k stays
====================================  ================================================

Updates are applied lazily, in order, when the next event arrives (no timer keeps the
loop alive): an event at t first applies every update b ≤ t, so responses answered at b
count from the next update on. **A fire at level k goes ahead** iff

1. the tool's pressure x = (busy + queued) / servers is below
   ``pressure_max`` · (1 − k / ``levels``) (at k = ``levels`` nothing fires; an unlimited
   tool has x = 0) — refused as ``budget``;
2. at least ⌈1 + ``words_per_level`` · k⌉ words arrived since the session's last fire —
   refused as ``budget``;
3. the ledger holds a credit: each session start adds ``max_extra_calls`` credits, each
   fire let through spends one, and an answered session gets back its speculative fires
   minus its extra calls (the bank holds at most ``max_credit``) — refused as ``spend``.

A session's extra calls never exceed its speculative fires (a fallback call is fired
only after at least one speculative call failed the reflector, or instead of any), so
the charge is an upper bound until the session is answered and exact after. Hence
answered sessions' extra calls plus the unanswered sessions' fires never exceed
``max_extra_calls`` × sessions started: once every session is answered, the mean extra
calls per session are ≤ ``max_extra_calls``. Nothing is random: the same events give
the same decisions.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from streamrag.base.validation import MAX_MS, SettingsModel
from streamrag.engine.clock import Clock
from streamrag.engine.resources import LoadView

US_PER_S = 1_000_000


class BudgetPolicy:
    """The ``budget`` controller (see the module docstring for the formula)."""

    coalesce = False

    def __init__(self, config: BudgetPolicyConfig, clock: Clock) -> None:
        self.config = config
        self.clock = clock
        self.level = 0
        self.credit = 0.0
        self.responses: deque[tuple[int, int]] = deque()
        """(answered at µs, response µs), oldest first, within the last window."""
        self.period_us = round(config.period_s * US_PER_S)
        self.window_us = round(config.window_s * US_PER_S)
        self.next_update_us = self.period_us
        self.updates: list[tuple[int, float | None, int]] = []
        """Each update applied: (instant µs, the quantile read in ms or None, level after)."""

    # -- hooks ---------------------------------------------------------------------------

    def session_started(self) -> None:
        self._catch_up()
        self.credit = min(self.config.max_credit, self.credit + self.config.max_extra_calls)

    def session_answered(self, response_us: int, speculative: int, extra_calls: int) -> None:
        now = self._catch_up()
        self.responses.append((now, response_us))
        # Settle: the session was charged one credit per speculative fire; it cost
        # extra_calls ≤ speculative, so the difference comes back.
        self.credit = min(self.config.max_credit, self.credit + speculative - extra_calls)

    def refuse(self, words_since_fire: int, tool: LoadView) -> str | None:
        self._catch_up()
        pressure = (tool.busy + tool.queued) / tool.servers if tool.servers else 0.0
        if pressure >= self.pressure_bound() or words_since_fire < self.min_words():
            return "budget"
        if self.credit < 1:
            return "spend"
        self.credit -= 1
        return None

    # -- the law -------------------------------------------------------------------------

    def pressure_bound(self) -> float:
        """Fires need tool pressure below this at the current level."""
        c = self.config
        return c.pressure_max * (1 - self.level / c.levels)

    def min_words(self) -> int:
        """Words since the last fire a fire needs at the current level."""
        return math.ceil(1 + self.config.words_per_level * self.level)

    def _catch_up(self) -> int:
        """Apply every update due by now; returns now (µs)."""
        now = self.clock.now_us()
        while self.next_update_us <= now:
            self._update(self.next_update_us)
            self.next_update_us += self.period_us
        return now

    def _update(self, at_us: int) -> None:
        c = self.config
        while self.responses and self.responses[0][0] < at_us - self.window_us:
            self.responses.popleft()
        q_ms: float | None = None
        if len(self.responses) >= c.min_samples:
            q_ms = float(np.quantile(np.fromiter((r for _, r in self.responses), dtype=np.int64), c.quantile)) / 1000
            self.level = next_level(self.level, q_ms, c)
        self.updates.append((at_us, q_ms, self.level))


def next_level(level: int, q_ms: float, c: BudgetPolicyConfig) -> int:
    """The level after an update that read the quantile ``q_ms`` (the table above)."""
    if q_ms > c.budget_ms:
        return min(level + c.step_up, c.levels)
    if q_ms > (1 - c.headroom) * c.budget_ms:
        return min(level + 1, c.levels)
    if q_ms < (1 - 2 * c.headroom) * c.budget_ms:
        return max(level - 1, 0)
    return level


class BudgetPolicyConfig(SettingsModel):
    """Hold the ``quantile`` of response time under ``budget_ms`` with ≤ ``max_extra_calls``
    extra calls per session (closed loop; :mod:`streamrag.pipeline.budget`)."""

    kind: Literal["budget"] = "budget"
    budget_ms: float = Field(gt=0, le=MAX_MS, allow_inf_nan=False)
    """The response-time budget (answer ready − end of input) at ``quantile``."""
    quantile: float = Field(default=0.9, gt=0, lt=1)
    """Which quantile (0–1) of the response times the controller holds under ``budget_ms``."""
    max_extra_calls: float = Field(default=1.0, ge=0, allow_inf_nan=False)
    """The cap on mean extra calls per session (calls fired − 1)."""
    period_s: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    """Clock time (s) between two updates of the level of caution."""
    window_s: float = Field(default=120.0, gt=0, allow_inf_nan=False)
    """An update reads the response times of the sessions answered in the last
    ``window_s`` seconds."""
    min_samples: int = Field(default=20, ge=1)
    """Fewer answered sessions than this in the window: the level stays."""
    levels: int = Field(default=8, ge=1)
    """The highest level of caution k (levels 0 … ``levels``; at the highest nothing fires)."""
    step_up: int = Field(default=2, ge=1)
    """Levels added at an update that finds the quantile over budget."""
    headroom: float = Field(default=0.1, ge=0, lt=0.5)
    """Share h of the budget B: a quantile in ((1 − h)·B, B] raises the level by one, one
    below (1 − 2h)·B lowers it by one."""
    pressure_max: float = Field(default=2.0, gt=0, allow_inf_nan=False)
    """The tool pressure (busy + queued) / servers that stops fires at level 0."""
    words_per_level: float = Field(default=0.5, ge=0, allow_inf_nan=False)
    """Words between fires added per level: at level k a fire needs ⌈1 + words_per_level·k⌉
    words since the session's last."""
    max_credit: float = Field(default=20.0, ge=1, allow_inf_nan=False)
    """Unspent credit (calls) the ledger banks for later sessions."""

    @model_validator(mode="after")
    def _bank_holds_a_session(self) -> BudgetPolicyConfig:
        if self.max_credit < self.max_extra_calls:
            raise ValueError("max_credit must be at least max_extra_calls (one session's credit)")
        return self

    def build(self, clock: Clock) -> BudgetPolicy:
        return BudgetPolicy(self, clock)
