"""``batching``: an LLM serving up to ``max_batch`` requests at once by continuous batching.

With b requests in service each progresses at rate ``1 / s(b)``, ``s(b) = 1 + slowdown ·
(b − 1)`` (processor sharing with a linear slowdown); one kernel timer, re-planned at every
change, fires at the soonest completion.
"""

from __future__ import annotations

import math

from streamrag.engine.clock import Clock, Priority, Timer
from streamrag.engine.resources.base import Job
from streamrag.engine.resources.queued import CancelRule, Discipline, QueuedResource


class Batching(QueuedResource):
    """An LLM serving up to ``max_batch`` requests at once, each at rate ``1/s(b)``."""

    def __init__(
        self,
        clock: Clock,
        *,
        name: str,
        max_batch: int,
        slowdown: float,
        discipline: Discipline = "fifo",
        queue_limit: int | None = None,
        cancel: CancelRule = "frees",
    ) -> None:
        super().__init__(clock, name=name, capacity=max_batch, discipline=discipline, queue_limit=queue_limit, cancel=cancel)
        self.slowdown = slowdown
        self.active: list[Job] = []
        self._last_us = 0
        self._timer: Timer | None = None

    def rate(self, b: int) -> float:
        """Work (µs of solo service) each of b requests gets done per µs."""
        return 1.0 / (1.0 + self.slowdown * (b - 1)) if b else 0.0

    def _sync(self) -> None:
        """Account, and charge every request in service for the time since the last change."""
        now = self.clock.now_us()
        self.usage.advance(now, self.in_service, len(self.queue), self.detached)
        dt = now - self._last_us
        if dt and self.active:
            r = self.rate(len(self.active))
            for job in self.active:
                job.remaining -= dt * r
        self._last_us = now

    def _rescheduled(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self.active:
            return
        r = self.rate(len(self.active))
        soonest = min(job.remaining for job in self.active)
        at = self.clock.now_us() + max(0, math.ceil(soonest / r - 1e-9))
        self._timer = self.clock.call_at_us(at, Priority.COMPLETION, self._tick)

    def _start(self, job: Job) -> None:
        self.active.append(job)
        self._serve(job)

    def _tick(self) -> None:
        self._timer = None
        self._sync()
        now = self.clock.now_us()
        # Requests whose work is done (allowing for the µs rounding of the timer).
        done = [job for job in self.active if job.remaining <= 1e-6 * max(1.0, job.work_us)]
        if not done:  # rounding left a sliver: finish the nearest one
            done = [min(self.active, key=lambda j: j.remaining)]
        for job in done:
            self.active.remove(job)
        self._release(*(job.server for job in done))
        finished = []
        for job in done:
            if job.state == "detached":
                self.detached -= 1
                continue
            self._finish(job, now)
            finished.append(job)
        self._admit_waiting()
        self._rescheduled()
        for job in finished:
            if job.on_done is not None:
                job.on_done()

    def _free(self, job: Job) -> None:
        self.active.remove(job)
        self._release(job.server)
        self._admit_waiting()
        self._rescheduled()
