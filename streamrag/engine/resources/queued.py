"""What every finite kind shares: admission, the queue discipline, rejection by a full
bounded queue, withdrawal, replacement in the queue, and the accounting behind a report.

A :class:`QueuedResource` has ``capacity`` slots (servers, or batch places) numbered from
0, a queue, and a :class:`~.usage.Usage`. A kind says only how a job occupies a slot
(:meth:`QueuedResource._start`) and what a cancelled running job gives back
(:meth:`QueuedResource._free`); the order of events — account first, then change, then
emit, then call back — is the base's, so every kind keeps the same trace order.
"""

from __future__ import annotations

import heapq
from abc import ABC, abstractmethod
from typing import Any, Literal

from streamrag.engine.clock import Clock
from streamrag.engine.resources.base import Job, LoadView
from streamrag.engine.resources.usage import Usage

Discipline = Literal["fifo", "priority"]
CancelRule = Literal["frees", "completes"]


class JobQueue:
    """FIFO, or two FIFO classes (confirmed first) with lazy removal of cancelled jobs.

    Each entry holds its job in a one-element slot, so a job can take another's place
    (:meth:`replace`) without moving in the heap."""

    __slots__ = ("_heap", "_live", "_seq", "priority")

    def __init__(self, priority: bool) -> None:
        self.priority = priority
        self._heap: list[tuple[int, int, list[Job]]] = []
        self._live = 0
        self._seq = 0

    def __len__(self) -> int:
        return self._live

    def push(self, job: Job) -> None:
        self._seq += 1
        job.seq = self._seq
        job.slot = [job]
        heapq.heappush(self._heap, (job.job_class if self.priority else 0, self._seq, job.slot))
        self._live += 1

    def pop(self) -> Job | None:
        while self._heap:
            job = heapq.heappop(self._heap)[2][0]
            job.slot = None  # out of the queue (and no job -> slot -> job cycle)
            if job.state == "queued":
                self._live -= 1
                return job
        return None

    def replace(self, waiting: Job, job: Job) -> None:
        """``job`` takes the place of ``waiting`` (which leaves the queue)."""
        slot = waiting.slot
        assert slot is not None and slot[0] is waiting  # a caller bug otherwise: only queued jobs get here
        slot[0] = job
        job.slot, job.seq = slot, waiting.seq
        waiting.slot = None

    def removed(self) -> None:
        """A queued job was cancelled (it stays in the heap until popped)."""
        self._live -= 1


class FreeSlots:
    """The free slot indices of ``capacity`` slots; :meth:`pop` gives the lowest.

    Slots never used yet are a counter, not a list: a resource of 10⁹ servers costs a few
    bytes, not the 36 GB a list of every index took (issue 33); given-back slots wait in
    a heap, all below the counter, so the lowest free index is the heap's smallest, else
    the counter."""

    __slots__ = ("_fresh", "_given_back", "capacity")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._given_back: list[int] = []
        self._fresh = 0

    def __len__(self) -> int:
        return len(self._given_back) + self.capacity - self._fresh

    def pop(self) -> int:
        if self._given_back:
            return heapq.heappop(self._given_back)
        if self._fresh >= self.capacity:
            raise IndexError("pop from no free slot")
        self._fresh += 1
        return self._fresh - 1

    def give_back(self, slots: tuple[int, ...]) -> None:
        for slot in slots:
            heapq.heappush(self._given_back, slot)


class QueuedResource(ABC):
    """``capacity`` slots and a queue; subclasses say how a job is served."""

    def __init__(
        self,
        clock: Clock,
        *,
        name: str,
        capacity: int,
        discipline: Discipline = "fifo",
        queue_limit: int | None = None,
        cancel: CancelRule = "frees",
    ) -> None:
        self.clock = clock
        self.name = name
        self.capacity = capacity
        self.queue_limit = queue_limit
        self.cancel_frees = cancel == "frees"
        self.queue = JobQueue(discipline == "priority")
        self.free = FreeSlots(capacity)
        self.detached = 0
        """Cancelled jobs whose slot works on to their end (``cancel = "completes"``)."""
        self.usage = Usage()

    # ------------------------------------------------------------------ what a kind says

    @abstractmethod
    def _start(self, job: Job) -> None:
        """A job takes a free slot now (call :meth:`_serve` for the shared part)."""

    @abstractmethod
    def _free(self, job: Job) -> None:
        """A running job was cancelled with ``cancel = "frees"``: give its slot back."""

    @abstractmethod
    def _rescheduled(self) -> None:
        """After an arrival took a slot: a kind whose timing depends on who is in service
        re-plans its timers here."""

    # ------------------------------------------------------------------ the shared rules

    @property
    def in_service(self) -> int:
        """Slots taken, detached jobs included."""
        return self.capacity - len(self.free)

    def _sync(self) -> None:
        """Bring the accounting up to now (call before every change)."""
        self.usage.advance(self.clock.now_us(), self.in_service, len(self.queue), self.detached)

    def submit(self, job: Job) -> None:
        self._sync()
        job.resource = self
        job.arrived_us = self.clock.now_us()
        job.remaining = float(job.work_us)
        if self.free:
            self.usage.jobs += 1
            self._start(job)
            self._rescheduled()
            return
        self._queue_or_reject(job)

    def _serve(self, job: Job) -> None:
        """The part of a start every kind shares: a slot, the wait, ``serve``, ``on_start``."""
        now = self.clock.now_us()
        job.server = self.free.pop()
        job.state = "running"
        job.started_us = now
        self.usage.wait_us += now - job.arrived_us
        if job.rec is not None:
            job.rec.emit("serve", arm=job.arm, resource=self.name, stage=job.stage, call=job.call, server=job.server)
        if job.on_start is not None:
            job.on_start()

    def _finish(self, job: Job, now: int) -> None:
        """A job's work is done: account it and emit ``finish`` (its caller hears later)."""
        job.state = "done"
        job.finished_us = now
        self.usage.completed += 1
        self.usage.sojourn_us += now - job.arrived_us
        if job.rec is not None:
            job.rec.emit("finish", arm=job.arm, resource=self.name, stage=job.stage, call=job.call, server=job.server)

    def _release(self, *servers: int) -> None:
        """Slots given back; the lowest free index is served next."""
        self.free.give_back(servers)

    def _admit_waiting(self) -> None:
        """Start waiting jobs, in queue order, while a slot is free."""
        while self.free and (nxt := self.queue.pop()) is not None:
            self._start(nxt)

    def _queue_or_reject(self, job: Job) -> None:
        """A job that found no free slot: rejected by a full bounded queue, else queued."""
        if self.queue_limit is not None and len(self.queue) >= self.queue_limit:
            job.state = "rejected"
            self.usage.rejected += 1
            if job.rec is not None:
                job.rec.emit("reject", arm=job.arm, resource=self.name, stage=job.stage, call=job.call)
            if job.on_reject is not None:
                job.on_reject()
            return
        self.usage.jobs += 1
        self.usage.waited += 1
        job.state = "queued"
        self.queue.push(job)
        self._emit_enqueue(job)

    def _emit_enqueue(self, job: Job) -> None:
        if job.rec is not None:
            job.rec.emit("enqueue", arm=job.arm, resource=self.name, stage=job.stage, call=job.call, queued=len(self.queue))

    def _account_withdrawal(self, job: Job, now: int) -> None:
        self.usage.cancelled += 1
        self.usage.sojourn_us += now - job.arrived_us
        if job.rec is not None:
            job.rec.emit("withdraw", arm=job.arm, resource=self.name, stage=job.stage, call=job.call, server=job.server)

    def cancel(self, job: Job) -> None:
        self._sync()
        self._account_withdrawal(job, self.clock.now_us())
        if job.state == "queued":  # only waiting: it just leaves the queue
            job.state = "cancelled"
            self.queue.removed()
        elif self.cancel_frees:
            job.state = "cancelled"
            self._free(job)
        else:
            job.state = "detached"
            self.detached += 1

    def replace(self, waiting: Job, job: Job) -> bool:
        """``job`` takes the queue place of ``waiting``, which is withdrawn (its caller
        hears nothing: it is being replaced)."""
        if waiting.resource is not self or waiting.state != "queued":
            return False
        now = self.clock.now_us()
        self._sync()
        self._account_withdrawal(waiting, now)  # a queued job: server -1
        waiting.state = "cancelled"
        self.queue.replace(waiting, job)
        self.usage.jobs += 1
        self.usage.waited += 1
        job.resource = self
        job.arrived_us = now
        job.state = "queued"
        self._emit_enqueue(job)
        return True

    def load(self) -> LoadView:
        return LoadView(self.capacity, self.in_service, len(self.queue))

    def report(self, end_us: int) -> dict[str, Any] | None:
        self._sync()
        return self.usage.report(self.capacity, end_us)
