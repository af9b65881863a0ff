"""The job, the ``Resource`` role, what a policy may read of a resource, and ``unlimited``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from streamrag.engine.clock import Clock, Priority, Timer

CONFIRMED = 0
"""Job class of confirmed work: the baseline, a fallback call, response generation."""
SPECULATIVE = 1
"""Job class of speculative calls (fired before the reflector decided)."""

JobState = Literal["new", "queued", "running", "done", "cancelled", "rejected", "detached"]


class JobRecorder(Protocol):
    """Where a resource reports what happened to a job (a session's trace recorder)."""

    def emit(self, kind: str, **fields: Any) -> None: ...


class Job:
    """One stage of one call waiting for or holding a server."""

    __slots__ = (
        "arm",
        "arrived_us",
        "call",
        "finished_us",
        "job_class",
        "on_done",
        "on_reject",
        "on_start",
        "prefix_t",
        "rec",
        "remaining",
        "resource",
        "seq",
        "server",
        "slot",
        "stage",
        "started_us",
        "state",
        "timed_out",
        "timer",
        "work_us",
    )

    def __init__(
        self,
        work_us: int,
        *,
        job_class: int = CONFIRMED,
        on_done: Callable[[], object] | None = None,
        on_start: Callable[[], object] | None = None,
        on_reject: Callable[[], object] | None = None,
        rec: JobRecorder | None = None,
        stage: str = "",
        call: int = 0,
        arm: str = "",
        prefix_t: int = 0,
    ) -> None:
        self.work_us = work_us
        self.prefix_t = prefix_t
        """The prefix a call's G or L works on; a live resource turns it into its request
        (the words to generate a query from, the query to search)."""
        self.arm = arm
        self.job_class = job_class
        self.on_done = on_done
        self.on_start = on_start
        self.on_reject = on_reject
        self.rec = rec
        self.stage = stage
        self.call = call
        self.state: JobState = "new"
        self.server = -1
        self.arrived_us = self.started_us = self.finished_us = -1
        self.timer: Timer | None = None
        self.resource: Resource | None = None
        self.seq = 0
        self.slot: list[Job] | None = None
        self.remaining = float(work_us)
        self.timed_out = False
        """Rejected because the call behind it did not answer in time (a live tool)."""

    @property
    def waited_us(self) -> int:
        return 0 if self.started_us < 0 else self.started_us - self.arrived_us

    def cancel(self) -> None:
        """Withdraw the job (a killed call): out of the queue, or off its server."""
        if self.resource is not None and self.state in ("queued", "running"):
            self.resource.cancel(self)


class Resource(Protocol):
    """Serves jobs; ``name`` is how reports and traces call it."""

    name: str

    def submit(self, job: Job) -> None: ...

    def cancel(self, job: Job) -> None: ...

    def replace(self, waiting: Job, job: Job) -> bool:
        """Put ``job`` in the queue place of ``waiting`` (withdrawn); False if it is not
        waiting in this resource's queue."""
        ...

    def load(self) -> LoadView: ...

    def report(self, end_us: int) -> dict[str, Any] | None:
        """The run's summary up to ``end_us`` (see :class:`~.usage.Usage`); None when the
        resource has no capacity to account."""
        ...


@dataclass(frozen=True, slots=True)
class LoadView:
    """What a speculation policy may read of a resource at an instant."""

    servers: int | None
    """Servers (None: unlimited)."""
    busy: int
    queued: int

    @property
    def utilization(self) -> float:
        """Busy servers / servers now (0 for an unlimited resource)."""
        return 0.0 if not self.servers else self.busy / self.servers


def resource_report(resource: Resource, end_us: int) -> dict[str, Any] | None:
    """A finite resource's report (utilization, queue, waits, Little's law); None if unlimited."""
    return resource.report(end_us)


class Unlimited:
    """Every job starts at once (no queue, no events: the per-question replay)."""

    def __init__(self, clock: Clock, name: str = "unlimited") -> None:
        self.clock = clock
        self.name = name

    def submit(self, job: Job) -> None:
        job.resource = self
        job.state = "running"
        job.arrived_us = job.started_us = self.clock.now_us()
        if job.on_start is not None:
            job.on_start()
        job.timer = self.clock.call_at_us(job.started_us + job.work_us, Priority.COMPLETION, lambda: self._done(job))

    def _done(self, job: Job) -> None:
        job.timer = None  # fired; dropping it breaks the job -> timer -> job cycle
        job.state = "done"
        job.finished_us = self.clock.now_us()
        if job.on_done is not None:
            job.on_done()

    def cancel(self, job: Job) -> None:
        if job.timer is not None:
            job.timer.cancel()
            job.timer = None
        job.state = "cancelled"

    def replace(self, waiting: Job, job: Job) -> bool:
        return False  # nothing ever waits here

    def load(self) -> LoadView:
        return LoadView(None, 0, 0)

    def report(self, end_us: int) -> dict[str, Any] | None:
        return None  # no capacity, so nothing to account
