"""Executors: where points run. Same jobs in, same outputs out, in any order.

- :class:`SerialExecutor` — in this process, one point after another (``--jobs 1``);
- :class:`ProcessExecutor` — a local process pool (``--jobs N``); the prepared input is
  installed once per worker, not shipped with every point;
- :class:`DaskExecutor` — a Dask distributed cluster (``--scheduler ADDRESS``); the
  prepared input is scattered to every worker once. Workers need streamrag installed and,
  for analyze points, the data file at the same path.

The serial executor and each pool worker keep the question plans of the points they ran
for the run (:class:`~streamrag.simulator.replay.planning.PlanCache`): the points of a
frontier, which differ in the trigger only, draw each question's plan once per process,
not once per point. A Dask task draws its own.

A point's output depends only on its job and input (per-question random streams, see
:mod:`streamrag.engine.rng`), so every executor gives byte-identical files; the run
folder orders the sweep table by point, never by completion.

An executor is a context manager (``__enter__`` connects or starts workers, so a bad
scheduler address fails before the run folder is touched) with one method,
``run(jobs, shared)``, yielding a :class:`~streamrag.sweep.work.PointOutput` per job as
it completes.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from streamrag.base.errors import ConfigError
from streamrag.base.system.processes import worker_pool
from streamrag.sweep.point_kinds import PointJob
from streamrag.sweep.work import PointOutput, execute_point

if TYPE_CHECKING:
    from streamrag.simulator.replay.planning import PlanCache


class Executor(Protocol):
    """Runs point jobs; ``shared`` maps a job's ``input_ref`` to its prepared input."""

    name: str

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...

    def run(self, jobs: Sequence[PointJob], shared: Mapping[str, Any]) -> Generator[PointOutput, None, None]: ...


class SerialExecutor:
    """Points one after another in this process."""

    name = "serial"

    def __enter__(self) -> SerialExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, jobs: Sequence[PointJob], shared: Mapping[str, Any]) -> Generator[PointOutput, None, None]:
        from streamrag.simulator.replay.planning import PlanCache

        plans = PlanCache()
        for job in jobs:
            yield execute_point(job, shared.get(job.input_ref) if job.input_ref else None, plans)


# A pool worker's prepared inputs, filled once by the pool initializer (_install) so
# that points do not ship them again, and the plans of the points it ran.
_WORKER_SHARED: dict[str, Any] = {}
_WORKER_PLANS: list[PlanCache] = []


def _install(shared: Mapping[str, Any]) -> None:
    from streamrag.simulator.replay.planning import PlanCache

    _WORKER_SHARED.clear()
    _WORKER_SHARED.update(shared)
    _WORKER_PLANS[:] = [PlanCache()]


def _execute_installed(job: PointJob) -> PointOutput:
    return execute_point(job, _WORKER_SHARED.get(job.input_ref) if job.input_ref else None, _WORKER_PLANS[0])


class ProcessExecutor:
    """A pool of ``jobs`` worker processes on this machine."""

    name = "processes"

    def __init__(self, jobs: int) -> None:
        if jobs < 1:
            raise ConfigError(f"--jobs: must be ≥ 1, got {jobs}")
        self.jobs = jobs

    def __enter__(self) -> ProcessExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, jobs: Sequence[PointJob], shared: Mapping[str, Any]) -> Generator[PointOutput, None, None]:
        from concurrent.futures import as_completed

        if not jobs:
            return
        # On an error queued points are dropped; on an interrupt (or the consumer
        # stopping) the points in flight too (WorkerPool).
        with worker_pool(min(self.jobs, len(jobs)), initializer=_install, initargs=(dict(shared),)) as pool:
            futures = [pool.submit(_execute_installed, job) for job in jobs]
            for fut in as_completed(futures):
                yield fut.result()


# --- Dask distributed ----------------------------------------------------------------


class DaskExecutor:
    """Points as tasks on a Dask distributed cluster.

    Give the scheduler's ``address`` (``tcp://host:8786``) or an existing
    ``dask.distributed.Client`` (left open afterwards).
    """

    name = "dask"

    def __init__(self, address: str | None = None, *, client: Any = None, timeout_s: float = 10.0) -> None:
        if (address is None) == (client is None):
            raise ConfigError("DaskExecutor: give a scheduler address or a client, not both or neither")
        self.address = address
        self.timeout_s = timeout_s
        self._client = client
        self._owned = client is None

    def __enter__(self) -> DaskExecutor:
        if self._client is None:
            try:
                from dask.distributed import Client
            except ImportError:
                raise ConfigError(
                    f"--scheduler {self.address}: Dask is not installed; pip install 'streamrag[dask]' (on every worker too)"
                ) from None
            try:
                self._client = Client(self.address, timeout=self.timeout_s, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as exc:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise ConfigError(f"--scheduler {self.address}: cannot connect to a Dask scheduler ({first})") from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self._owned and self._client is not None:
            self._client.close()
            self._client = None

    @property
    def workers(self) -> int:
        """Number of workers the scheduler knows (0 before ``__enter__``)."""
        if self._client is None:
            return 0
        return len(self._client.scheduler_info().get("workers", {}))

    def run(self, jobs: Sequence[PointJob], shared: Mapping[str, Any]) -> Generator[PointOutput, None, None]:
        import uuid

        from dask.distributed import as_completed

        client = self._client
        if client is None:
            raise ConfigError("DaskExecutor.run outside `with executor:`")
        if not jobs:
            return
        # scatter([x]) ships x as one object (a list or tuple would be split up).
        refs = {name: client.scatter([value], broadcast=True, hash=False)[0] for name, value in shared.items()}
        token = uuid.uuid4().hex[:8]
        futures = [
            client.submit(
                execute_point,
                job,
                refs.get(job.input_ref) if job.input_ref else None,
                key=f"streamrag-point-{job.key}-{token}",
                pure=False,
            )
            for job in jobs
        ]
        try:
            for fut in as_completed(futures, loop=client.loop):  # this client, not a global default one
                yield fut.result()
        finally:
            client.cancel(futures)
            for ref in refs.values():
                ref.release()


def check_parallelism(jobs: int, scheduler: str | None) -> None:
    """ConfigError unless ``jobs`` and ``scheduler`` choose one executor (callers check
    before any work; :func:`make_executor` checks again)."""
    if jobs < 1:
        raise ConfigError(f"--jobs: must be ≥ 1, got {jobs}")
    if scheduler is not None and jobs != 1:
        raise ConfigError("--jobs and --scheduler exclude each other: the Dask cluster decides the parallelism")


def make_executor(*, jobs: int = 1, scheduler: str | None = None) -> SerialExecutor | ProcessExecutor | DaskExecutor:
    """The executor the CLI options choose: ``--scheduler`` → Dask, ``--jobs N > 1`` →
    local processes, else serial."""
    check_parallelism(jobs, scheduler)
    if scheduler is not None:
        return DaskExecutor(scheduler)
    return SerialExecutor() if jobs == 1 else ProcessExecutor(jobs)
