"""Speculation policies: whether a trigger's fire goes ahead, given the load.

Under shared capacity a speculative call is not free: it queues for the tool and the LLM
ahead of other sessions' work. A policy is a plain decision, consulted by the streaming
arm for every speculative fire after the trigger and the thread cap agreed; it reads the
resources' :class:`~streamrag.engine.resources.LoadView` at that instant.

Policies (config ``kind``):

==============  ===================================================================
``always``      speculate whenever the trigger fires (the per-question replay)
``admission``   admission control: refuse the fire when the tool's utilization is at
                least ``max_utilization`` or its queue holds at least ``max_queue``
                jobs (either bound may be left out)
``stretch``     stretch the trigger interval with load: a fire needs at least
                ``⌈1 + gain·u⌉`` words since the last one, u = tool utilization +
                tool queue length / servers
``coalesce``    a session never has two speculative calls waiting in one queue: a fire
                while one of its calls waits for query generation re-aims that call at
                the newer prefix (it keeps its place); a newer call reaching the tool
                queue while an older one of the session still waits there takes the
                older one's place, and the older is withdrawn (``superseded``). The
                freshest prefix is served first and stale ones never use a server.
``budget``      closed loop: moves a level of caution (a tool-pressure bound and the
                words between fires) to hold the p90 (``quantile``) response time
                under ``budget_ms``, with at most ``max_extra_calls`` extra calls per
                session (:mod:`streamrag.pipeline.budget`)
==============  ===================================================================

``coalesce`` and ``budget`` are ours: the references measure one user at a time, where
nothing waits in a queue and the question does not arise.

One policy object serves every session of a system; the arm tells it when a session
starts and when it is answered (the only state ``budget`` keeps besides the clock).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal, Protocol

from pydantic import Field

from streamrag.base.validation import SettingsModel
from streamrag.engine.clock import Clock
from streamrag.engine.resources import LoadView
from streamrag.pipeline.budget import BudgetPolicyConfig


class SpeculationPolicy(Protocol):
    """Decides, for one session, whether a speculative fire goes ahead."""

    coalesce: bool
    """Re-aim a waiting speculative call instead of queueing another (``coalesce``)."""

    def refuse(self, words_since_fire: int, tool: LoadView) -> str | None:
        """Why the fire is refused (a trace ``skip`` reason), or None to let it go."""
        ...

    def session_started(self) -> None:
        """A session's streaming arm started."""
        ...

    def session_answered(self, response_us: int, speculative: int, extra_calls: int) -> None:
        """A session was answered ``response_us`` after its end of input, having fired
        ``speculative`` trigger calls and ``extra_calls`` calls beyond one in all."""
        ...


class _Policy:
    coalesce = False

    def refuse(self, words_since_fire: int, tool: LoadView) -> str | None:
        return None

    def session_started(self) -> None:
        return None

    def session_answered(self, response_us: int, speculative: int, extra_calls: int) -> None:
        return None


class AlwaysPolicy(_Policy):
    """Speculate whenever the trigger fires."""


class AdmissionPolicy(_Policy):
    def __init__(self, max_utilization: float | None, max_queue: int | None) -> None:
        self.max_utilization = max_utilization
        self.max_queue = max_queue

    def refuse(self, words_since_fire: int, tool: LoadView) -> str | None:
        if self.max_utilization is not None and tool.servers and tool.utilization >= self.max_utilization:
            return "admission"
        if self.max_queue is not None and tool.queued >= self.max_queue:
            return "admission"
        return None


class StretchPolicy(_Policy):
    def __init__(self, gain: float) -> None:
        self.gain = gain

    def refuse(self, words_since_fire: int, tool: LoadView) -> str | None:
        if not tool.servers:
            return None
        load = tool.utilization + tool.queued / tool.servers
        return "stretch" if words_since_fire < math.ceil(1 + self.gain * load) else None


class CoalescePolicy(_Policy):
    coalesce = True


class _Config(SettingsModel):
    """Frozen, no unknown key, no boolean for a number (:class:`~streamrag.base.validation.SettingsModel`)."""


class AlwaysPolicyConfig(_Config):
    """Speculate whenever the trigger fires (the per-question replay)."""

    kind: Literal["always"] = "always"

    def build(self, clock: Clock) -> SpeculationPolicy:
        return AlwaysPolicy()


class AdmissionPolicyConfig(_Config):
    """Refuse a fire when the tool's utilization reaches ``max_utilization`` or its queue ``max_queue``."""

    kind: Literal["admission"] = "admission"
    max_utilization: float | None = Field(default=0.9, gt=0, le=1)
    """Refuse a fire while the tool's busy servers / servers is at least this (0–1);
    absent: no utilization bound."""
    max_queue: int | None = Field(default=None, ge=0)
    """Refuse a fire while the tool's queue holds at least this many jobs; absent: no
    queue bound."""

    def build(self, clock: Clock) -> SpeculationPolicy:
        return AdmissionPolicy(self.max_utilization, self.max_queue)


class StretchPolicyConfig(_Config):
    """Stretch the trigger interval with load: ⌈1 + gain·u⌉ words between fires."""

    kind: Literal["stretch"] = "stretch"
    gain: float = Field(default=2.0, ge=0, allow_inf_nan=False)
    """Words between fires per unit of tool load u (utilization + queue length / servers):
    a fire needs ⌈1 + gain·u⌉ words since the last."""

    def build(self, clock: Clock) -> SpeculationPolicy:
        return StretchPolicy(self.gain)


class CoalescePolicyConfig(_Config):
    """At most one waiting speculative call per session and queue: a newer fire re-aims it."""

    kind: Literal["coalesce"] = "coalesce"

    def build(self, clock: Clock) -> SpeculationPolicy:
        return CoalescePolicy()


PolicyConfig = Annotated[
    AlwaysPolicyConfig | AdmissionPolicyConfig | StretchPolicyConfig | CoalescePolicyConfig | BudgetPolicyConfig,
    Field(discriminator="kind"),
]
"""A speculation policy, chosen by ``kind``."""
