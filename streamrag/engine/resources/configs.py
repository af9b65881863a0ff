"""The configs that build a resource, chosen by ``kind`` (a discriminated union)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from streamrag.base.validation import SettingsModel
from streamrag.engine.clock import Clock
from streamrag.engine.resources.base import Resource, Unlimited
from streamrag.engine.resources.batching import Batching
from streamrag.engine.resources.queued import CancelRule, Discipline
from streamrag.engine.resources.servers import Servers


class _Config(SettingsModel):
    """Frozen, no unknown key, no boolean for a number (:class:`~streamrag.base.validation.SettingsModel`)."""


class UnlimitedResourceConfig(_Config):
    """No capacity limit: every job starts at once."""

    kind: Literal["unlimited"] = "unlimited"

    def build(self, clock: Clock, name: str) -> Resource:
        return Unlimited(clock, name)


class ServersResourceConfig(_Config):
    """``servers`` identical servers and a queue."""

    kind: Literal["servers"] = "servers"
    servers: int = Field(ge=1)
    """How many identical servers (jobs served at once)."""
    discipline: Discipline = "fifo"
    """The queue's order: ``fifo``, or ``priority`` (confirmed work — the baseline, a fallback
    call, response generation — ahead of speculative calls; FIFO within a class)."""
    queue_limit: int | None = Field(default=None, ge=0)
    """A job that finds this many jobs waiting is rejected; absent: the queue is unbounded."""
    cancel: CancelRule = "frees"
    """A cancelled running job: ``frees`` its server at once, or ``completes`` (the server works
    on to the job's end, only the result is dropped: an HTTP call cannot be recalled)."""

    def build(self, clock: Clock, name: str) -> Resource:
        return Servers(
            clock, name=name, servers=self.servers, discipline=self.discipline, queue_limit=self.queue_limit, cancel=self.cancel
        )


class BatchingResourceConfig(_Config):
    """An LLM with continuous batching: s(b) = 1 + slowdown·(b − 1)."""

    kind: Literal["batching"] = "batching"
    max_batch: int = Field(ge=1)
    """How many requests are served at once (the batch); further requests wait in the queue."""
    slowdown: float = Field(default=0.048, ge=0, allow_inf_nan=False)
    """Per-token time at batch b is s(b) = 1 + slowdown·(b − 1); 0.048 gives s(64) = 4, the
    latency factor Databricks measured at batch 64 on an A100 (calibration source ``batching``)."""
    discipline: Discipline = "fifo"
    """The queue's order, as for ``servers``: ``fifo`` or ``priority`` (confirmed work first)."""
    queue_limit: int | None = Field(default=None, ge=0)
    """Requests waiting beyond which a new one is rejected; absent: unbounded."""
    cancel: CancelRule = "frees"
    """A cancelled request in the batch: ``frees`` its place at once, or ``completes`` (it is
    generated to its end, only the result dropped)."""

    def build(self, clock: Clock, name: str) -> Resource:
        return Batching(
            clock,
            name=name,
            max_batch=self.max_batch,
            slowdown=self.slowdown,
            discipline=self.discipline,
            queue_limit=self.queue_limit,
            cancel=self.cancel,
        )


ResourceConfig = Annotated[
    UnlimitedResourceConfig | ServersResourceConfig | BatchingResourceConfig,
    Field(discriminator="kind"),
]
"""One resource, chosen by ``kind``."""
