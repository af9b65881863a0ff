"""Real tools behind the L stage: the ``Tool`` role and the resource that awaits it.

In simulation a tool call is a job whose duration is drawn in advance and whose result
is the precomputed top-k of its prefix. Live, the same :class:`~streamrag.engine.resources.Job`
goes to a :class:`ToolResource`: it turns the job's prefix into the query heard so far,
awaits a real :class:`Tool`, keeps the result, and only then completes the job — so the
chain of stages (:mod:`~streamrag.pipeline.calls`), the arms and the reflector shell run
unchanged, and the call lasts as long as the tool took.

- :class:`Tool` — ``await tool.search(query, k)`` → :class:`ToolResult` (ranked
  :class:`Hit` s and the call's duration on the clock); a failed call raises
  :class:`~streamrag.errors.ToolError`;
- :class:`DelayedTool` — a tool plus a delay drawn from a latency model (inject L);
- :class:`ToolResource` — a :class:`~streamrag.engine.resources.Resource` that runs each
  job as a task of the session's task group. A tool error becomes a ``tool_error``
  trace event and the job is *rejected*: the arm treats it as it treats a call a full
  queue refused (a speculative call is lost; the full-query call failing fails the arm).

Implementations that need retrieval or HTTP (in-process BM25, a user's endpoint) live
in :mod:`streamrag.live.tools`, above the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import anyio
import numpy as np
from anyio.abc import TaskGroup

from streamrag.engine.clock import Clock
from streamrag.engine.latency import LatencyModel
from streamrag.engine.resources import Job, LoadView, Unlimited
from streamrag.errors import ToolError


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked result: a chunk id of the tool's corpus, its score and text."""

    chunk_id: int
    score: float
    text: str = ""


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What one call returned: hits best first, and how long it took (µs on the clock)."""

    hits: tuple[Hit, ...]
    elapsed_us: int

    @property
    def top(self) -> tuple[int, ...]:
        """The hits' chunk ids, best first (a trace event's ``top``)."""
        return tuple(h.chunk_id for h in self.hits)


class Tool(Protocol):
    """Role: a retrieval call on a query (awaited; raises ToolError when it fails)."""

    name: str

    async def search(self, query: str, k: int) -> ToolResult: ...


class DelayedTool:
    """``inner`` after a delay drawn from ``latency`` (µs, on ``clock``): inject L.

    The delay comes first, as a slow network or a loaded backend would add it; the
    result's ``elapsed_us`` covers both."""

    def __init__(self, inner: Tool, latency: LatencyModel, clock: Clock, rng: np.random.Generator | None = None) -> None:
        if latency.needs_rng and rng is None:
            raise ValueError("DelayedTool: a random latency model needs an rng")
        self.inner = inner
        self.latency = latency
        self.clock = clock
        self.rng = rng
        self.name = f"{inner.name} + {latency.kind} delay"

    async def search(self, query: str, k: int) -> ToolResult:
        start = self.clock.now_us()
        await self.clock.sleep_us(int(self.latency.sample_us(self.rng, 1)[0]))
        result = await self.inner.search(query, k)
        return ToolResult(result.hits, self.clock.now_us() - start)


class ToolResource(Unlimited):
    """Serves L jobs by awaiting a real tool (one per live session): an unlimited
    resource whose job ends when the call returns instead of at a drawn instant.

    ``query_of(prefix_t)`` gives the words heard up to the job's prefix; the result of
    the call on prefix t is kept in :attr:`results` before the job completes, so the
    ``tool_done`` event and the reflector read it. Every job starts at once (the tool's
    own concurrency limit, if any, queues inside the tool).
    """

    def __init__(
        self,
        clock: Clock,
        tool: Tool,
        tasks: TaskGroup,
        query_of: Callable[[int], str],
        *,
        k: int = 3,
        name: str = "tool",
    ) -> None:
        super().__init__(clock, name)
        self.tool = tool
        self.tasks = tasks
        self.query_of = query_of
        self.k = k
        self.results: dict[int, ToolResult] = {}
        self.in_flight = 0

    def submit(self, job: Job) -> None:
        job.resource = self
        job.state = "running"
        job.arrived_us = job.started_us = self.clock.now_us()
        scope = anyio.CancelScope()
        job.timer = scope  # what Job.cancel reaches through cancel(): the call's cancel scope
        self.in_flight += 1
        if job.on_start is not None:
            job.on_start()
        self.tasks.start_soon(self._serve, job, scope, self.query_of(job.prefix_t))

    async def _serve(self, job: Job, scope: anyio.CancelScope, query: str) -> None:
        error: ToolError | None = None
        result: ToolResult | None = None
        with scope:
            try:
                result = await self.tool.search(query, self.k)
            except ToolError as exc:
                error = exc
        if scope.cancel_called or job.state != "running":
            return  # withdrawn: the arm has moved on and hears nothing
        self.in_flight -= 1
        job.timer = None
        job.finished_us = self.clock.now_us()
        if error is not None or result is None:
            job.state = "rejected"
            if job.rec is not None:
                job.rec.emit("tool_error", arm=job.arm, call=job.call, prefix_t=job.prefix_t, error=str(error))
            if job.on_reject is not None:
                job.on_reject()
            return
        self.results[job.prefix_t] = result
        job.state = "done"
        if job.on_done is not None:
            job.on_done()

    def cancel(self, job: Job) -> None:
        if job.state == "running":
            self.in_flight -= 1
        super().cancel(job)  # cancels the call's scope (the job's timer)

    def load(self) -> LoadView:
        return LoadView(None, self.in_flight, 0)
