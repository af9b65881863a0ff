"""``servers``: identical servers and a queue; each job holds one server for its work."""

from __future__ import annotations

from streamrag.engine.clock import Clock, Priority
from streamrag.engine.resources.base import Job
from streamrag.engine.resources.queued import CancelRule, Discipline, QueuedResource


class Servers(QueuedResource):
    """``servers`` identical servers and a queue (see the package docstring)."""

    def __init__(
        self,
        clock: Clock,
        *,
        name: str,
        servers: int,
        discipline: Discipline = "fifo",
        queue_limit: int | None = None,
        cancel: CancelRule = "frees",
    ) -> None:
        super().__init__(clock, name=name, capacity=servers, discipline=discipline, queue_limit=queue_limit, cancel=cancel)

    def _start(self, job: Job) -> None:
        self._serve(job)
        job.timer = self.clock.call_at_us(job.started_us + job.work_us, Priority.COMPLETION, lambda: self._done(job))

    def _rescheduled(self) -> None:
        pass  # each job has its own completion timer: an arrival changes none of them

    def _done(self, job: Job) -> None:
        job.timer = None  # fired; dropping it breaks the job -> timer -> job cycle
        self._sync()
        if job.state == "detached":  # cancelled, but the server worked on to the end
            self.detached -= 1
            self._release(job.server)
            self._admit_waiting()
            return
        self._finish(job, self.clock.now_us())
        self._release(job.server)
        self._admit_waiting()
        if job.on_done is not None:
            job.on_done()

    def _free(self, job: Job) -> None:
        if job.timer is not None:
            job.timer.cancel()
            job.timer = None
        self._release(job.server)
        self._admit_waiting()
