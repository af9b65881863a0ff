"""Real calls behind the G and L stages: the ``Tool`` and ``QueryGenerator`` roles and
the resources that await them.

In simulation a tool call is a job whose duration is drawn in advance and whose result
is the precomputed top-k of its prefix. Live, the same :class:`~streamrag.engine.resources.Job`
goes to a :class:`ToolResource`: it turns the job's prefix into the query heard so far,
awaits a real :class:`Tool`, keeps the result, and only then completes the job — so the
chain of stages (:mod:`~streamrag.pipeline.calls`), the arms and the reflector shell run
unchanged, and the call lasts as long as the tool took. Query generation G is a delay
on the clock unless a :class:`QueryResource` serves it with a real LLM call.

- :class:`Tool` — ``await tool.search(query, k)`` → :class:`ToolResult` (ranked
  :class:`Hit` s and the call's duration on the clock); a failed call raises
  :class:`~streamrag.base.errors.ToolError`;
- :class:`DelayedTool` — a tool plus a delay drawn from a latency model (inject L);
- :class:`QueryGenerator` — ``await generator.generate(words)`` → a search query;
- :class:`AwaitingResource` — a :class:`~streamrag.engine.resources.Resource` that runs
  each job as a task of the session's task group; its two kinds:
- :class:`ToolResource` (L): awaits a tool function (``fn(**arguments(query))``, a
  :class:`Tool`'s ``search`` being one) and keeps each call as a :class:`Called`. A tool
  error becomes a ``tool_error`` trace event and the job is *rejected*: the arm treats
  it as it treats a call a full queue refused (a speculative call is lost; the
  full-query call failing fails the arm);
- :class:`QueryResource` (G). The query and G's duration are a ``gen_query`` event; a
  failed generation is a ``gen_error`` event and the call searches the prefix words.

Implementations that need retrieval or HTTP (in-process BM25, a user's endpoint, an
OpenAI-compatible LLM) live in :mod:`streamrag.live`, above the pipeline.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import numpy as np
from anyio.abc import TaskGroup

from streamrag.base.errors import ToolError, ToolTimeoutError
from streamrag.engine.clock import Clock
from streamrag.engine.latency import LatencyModel
from streamrag.engine.resources import Job, LoadView, Unlimited


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


class QueryGenerator(Protocol):
    """Role: query generation G as a real call — the words heard so far in, a search
    query out (awaited; raises ToolError when it fails)."""

    name: str

    async def generate(self, words: str) -> str: ...


class AwaitingResource(Unlimited, ABC):
    """An unlimited resource whose job ends when an awaited call returns instead of at a
    drawn instant (one per live session): every job starts at once, as a task of the
    session's task group, and cancelling the job cancels the call.

    Subclasses say what a job asks (:meth:`request`, read when the job is submitted),
    how it is served (:meth:`serve`, which may raise ToolError) and what a failure means
    (:meth:`failed`: by default the job is rejected)."""

    def __init__(self, clock: Clock, tasks: TaskGroup, name: str) -> None:
        super().__init__(clock, name)
        self.tasks = tasks
        self.in_flight = 0

    @abstractmethod
    def request(self, job: Job) -> str:
        """What the job asks, read when it is submitted."""

    @abstractmethod
    async def serve(self, job: Job, request: str) -> None:
        """Await the call (ToolError when it fails)."""

    def failed(self, job: Job, error: ToolError) -> None:
        self._reject(job)

    def submit(self, job: Job) -> None:
        job.resource = self
        job.state = "running"
        job.arrived_us = job.started_us = self.clock.now_us()
        scope = anyio.CancelScope()
        job.timer = scope  # what Job.cancel reaches through cancel(): the call's cancel scope
        self.in_flight += 1
        if job.on_start is not None:
            job.on_start()
        self.tasks.start_soon(self._run, job, scope, self.request(job))

    async def _run(self, job: Job, scope: anyio.CancelScope, request: str) -> None:
        error: ToolError | None = None
        with scope:
            try:
                await self.serve(job, request)
            except ToolError as exc:
                error = exc
        if scope.cancel_called or job.state != "running":
            return  # withdrawn: the arm has moved on and hears nothing
        self.in_flight -= 1
        job.timer = None
        job.finished_us = self.clock.now_us()
        if error is not None:
            self.failed(job, error)
        else:
            self._complete(job)

    def _complete(self, job: Job) -> None:
        job.state = "done"
        if job.on_done is not None:
            job.on_done()

    def _reject(self, job: Job) -> None:
        job.state = "rejected"
        if job.on_reject is not None:
            job.on_reject()

    def cancel(self, job: Job) -> None:
        if job.state == "running":
            self.in_flight -= 1
        super().cancel(job)  # cancels the call's scope (the job's timer)

    def load(self) -> LoadView:
        return LoadView(None, self.in_flight, 0)


@dataclass(frozen=True, slots=True)
class Called:
    """One finished call: the prefix it was fired on, its query, arguments and value."""

    prefix_t: int
    query: str
    arguments: Mapping[str, Any]
    value: Any


ToolFunction = Callable[..., Awaitable[Any]]
"""A tool as an agent has it: an async function of JSON-serializable keyword arguments."""


class ToolResource(AwaitingResource):
    """Serves L jobs by awaiting a tool function on the job's arguments.

    ``query_of(job)`` gives the query of the job's call (the words heard up to its
    prefix, or the query G generated for it) and ``arguments(query)`` the call's keyword
    arguments (checked JSON-serializable); the call on prefix t is kept in
    :attr:`results` as a :class:`Called` before the job completes, so the ``tool_done``
    event and the reflector read it. The tool's own concurrency limit, if any, queues
    inside the tool. A failed call — a :class:`~streamrag.base.errors.ToolError` or any
    exception of the tool — is a ``tool_error`` event and a rejected job; one that did not
    answer within ``timeout_us`` (or raised TimeoutError, or ToolTimeoutError) is marked
    ``timed_out``. ``cache``: a dict of results by arguments (JSON), for an idempotent
    tool: a call with arguments already answered is served from it.
    """

    def __init__(
        self,
        clock: Clock,
        fn: ToolFunction,
        tasks: TaskGroup,
        query_of: Callable[[Job], str],
        arguments: Callable[[str], Mapping[str, Any]],
        *,
        name: str = "tool",
        timeout_us: int | None = None,
        cache: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(clock, tasks, "tool")
        self.fn = fn
        self.query_of = query_of
        self.arguments = arguments
        self.tool_name = name
        self.timeout_us = timeout_us
        self.cache = cache
        self.results: dict[int, Called] = {}
        self.last_error = ""

    def request(self, job: Job) -> str:
        return self.query_of(job)

    async def serve(self, job: Job, request: str) -> None:
        args = dict(self.arguments(request))
        try:
            key = json.dumps(args, allow_nan=False, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise ToolError(f"tool {self.tool_name}: arguments are not JSON-serializable ({exc})") from None
        if self.cache is not None and key in self.cache:
            value = self.cache[key]
        else:
            value = await self._call(args)
            if self.cache is not None:
                self.cache[key] = value
        self.results[job.prefix_t] = Called(job.prefix_t, request, args, value)

    async def _call(self, args: dict[str, Any]) -> Any:
        try:
            if self.timeout_us is None:
                return await self.fn(**args)
            with anyio.fail_after(self.timeout_us / 1_000_000):
                return await self.fn(**args)
        except ToolError:
            raise
        except TimeoutError:
            limit = "" if self.timeout_us is None else f" within {self.timeout_us / 1000:g} ms"
            raise ToolTimeoutError(f"tool {self.tool_name}: no answer{limit}") from None
        except Exception as exc:  # a user's tool: its failure is a lost call, not a crash
            raise ToolError(f"tool {self.tool_name}: {type(exc).__name__}: {exc}") from None

    def failed(self, job: Job, error: ToolError) -> None:
        self.last_error = str(error)
        job.timed_out = isinstance(error, ToolTimeoutError)
        if job.rec is not None:
            job.rec.emit(
                "tool_error", arm=job.arm, call=job.call, prefix_t=job.prefix_t, error=str(error), timed_out=job.timed_out
            )
        self._reject(job)


class QueryResource(AwaitingResource):
    """Serves G jobs by awaiting a real :class:`QueryGenerator` on the words heard up to
    the call's prefix (``words_of(prefix_t)``).

    The query is kept in :attr:`queries` by ``(arm, call)`` for the call's L job, and
    recorded (``gen_query``: the query and how long G took). A failed generation is a
    ``gen_error`` event and the call goes on with the prefix words as its query: a slow
    or dead LLM costs its timeout, never the call.
    """

    def __init__(
        self,
        clock: Clock,
        generator: QueryGenerator,
        tasks: TaskGroup,
        words_of: Callable[[int], str],
        *,
        name: str = "query llm",
    ) -> None:
        super().__init__(clock, tasks, name)
        self.generator = generator
        self.words_of = words_of
        self.queries: dict[tuple[str, int], str] = {}

    def query_of(self, job: Job) -> str:
        """The query of the call whose L job this is (its prefix words if G did not run here)."""
        return self.queries.get((job.arm, job.call)) or self.words_of(job.prefix_t)

    def request(self, job: Job) -> str:
        return self.words_of(job.prefix_t)

    async def serve(self, job: Job, request: str) -> None:
        query = await self.generator.generate(request)
        self.queries[(job.arm, job.call)] = query
        if job.rec is not None:
            elapsed_us = self.clock.now_us() - job.started_us
            job.rec.emit("gen_query", arm=job.arm, call=job.call, prefix_t=job.prefix_t, query=query, elapsed_us=elapsed_us)

    def failed(self, job: Job, error: ToolError) -> None:
        fallback = self.words_of(job.prefix_t)
        self.queries[(job.arm, job.call)] = fallback
        if job.rec is not None:
            job.rec.emit(
                "gen_error",
                arm=job.arm,
                call=job.call,
                prefix_t=job.prefix_t,
                error=f"{error}; querying the prefix words instead",
                query=fallback,
            )
        self._complete(job)
