"""How streamrag starts worker processes: one rule for the simulator's, the sweep's and
the chunker's pools.

Workers die with their parent. A pool's workers wait on a queue the parent feeds; after
``kill -9`` of the parent nothing feeds or stops them, so they would block forever,
holding their memory (about 166 MB each in a sweep). Each worker therefore runs a small
watchdog thread blocked on multiprocessing's *parent sentinel* — the read end of a pipe
whose write end only the parent holds, so it reads end-of-file the moment the parent is
gone, however it died — and then exits the worker. It works for every start method and
system, costs no polling, and reacts at once; ``PR_SET_PDEATHSIG`` would not (it follows
the thread that forked, and does not exist outside Linux).

Interrupts are the parent's. A forked worker inherits the parent's handlers, which turn
SIGTERM and SIGHUP into KeyboardInterrupt (:mod:`streamrag.base.system.signals`): a terminal's
Ctrl-C or hang-up, or a batch system's SIGTERM, reaches every process of the group, and
each worker would print a traceback of its own while the parent wrote its mark. So a
worker ignores SIGINT and takes the system's default for SIGTERM and SIGHUP (it ends at
once, quietly; it holds nothing a parent would keep). The parent, interrupted, ends its
workers the same way (:meth:`WorkerPool.abort`) instead of waiting for the work in flight
— a sweep point can take minutes — and then writes what its run leaves.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.context import BaseContext
from typing import Any


def mp_context() -> BaseContext:
    """``fork`` on Linux when this process runs no other thread (workers start in ms and
    inherit the imported modules and any prepared input); ``spawn`` otherwise, which is
    safe with threads and on other systems. Results never depend on the choice."""
    import multiprocessing

    if sys.platform == "linux" and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _exit_when_orphaned() -> None:
    import multiprocessing

    parent = multiprocessing.parent_process()
    if parent is None:  # not a multiprocessing child: nothing to watch
        return
    parent.join()  # returns when the parent sentinel reads end-of-file: the parent is gone
    os._exit(1)  # no cleanup: the parent that would read any result is gone


def _leave_interrupts_to_the_parent() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _start_worker(initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    _leave_interrupts_to_the_parent()
    threading.Thread(target=_exit_when_orphaned, name="streamrag-parent-watch", daemon=True).start()
    if initializer is not None:
        initializer(*initargs)


class WorkerPool(ProcessPoolExecutor):
    """A process pool whose ``with`` block, left by an interrupt (or a generator closed
    early by one), ends its workers at once instead of waiting for their work
    (:meth:`abort`). Left by an error — a generator closed early because its consumer
    failed among them — it drops the queued work and lets the work in hand finish: a
    worker terminated while it writes its result leaves part of a message in the pipe,
    and the pool's reader waits for the rest for ever."""

    def abort(self) -> None:
        """End every worker now (SIGTERM: they die quietly) and drop the queued work."""
        for process in list((getattr(self, "_processes", None) or {}).values()):
            if process.is_alive():
                process.terminate()
        self.shutdown(wait=True, cancel_futures=True)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool | None:
        if exc_type is not None and _interrupted(exc):  # KeyboardInterrupt, SystemExit, or a close they caused
            self.abort()
            return None
        self.shutdown(wait=True, cancel_futures=exc_type is not None)
        return None


def _interrupted(exc: BaseException | None) -> bool:
    """Whether ``exc`` is an interrupt: not an error, nor a generator's close (GeneratorExit)
    that an error caused (its context), nor a plain early close."""
    if isinstance(exc, GeneratorExit):
        cause = exc.__context__
        return cause is not None and not isinstance(cause, Exception | GeneratorExit)
    return exc is not None and not isinstance(exc, Exception)


def worker_pool(
    max_workers: int, *, initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()
) -> WorkerPool:
    """A process pool (:func:`mp_context`) whose workers exit when this process dies and
    leave interrupts to it (see the module docstring)."""
    return WorkerPool(
        max_workers=max_workers,
        mp_context=mp_context(),
        initializer=_start_worker,
        initargs=(initializer, initargs),
    )


def all_workers_started(pool: ProcessPoolExecutor, n: int) -> bool:
    """Whether ``pool`` has started its ``n`` worker processes (it starts them one per
    submission, as needed). Reads the executor's ``_processes`` (CPython 3.8–3.13); if
    that ever goes, the answer is False and callers wait until they submit no more."""
    return len(getattr(pool, "_processes", None) or ()) >= n


def import_in_background(modules: Sequence[str]) -> threading.Thread:
    """Import ``modules`` on a daemon thread, while this process mostly waits for its
    workers (an analysis imports its statistics so, instead of before or after it).

    Call it only once no more worker will be forked (:func:`all_workers_started`, or
    after the last submission): a child forked while this thread imports would inherit
    a module lock held by a thread it does not have, and hang importing that module. A
    later ``import`` here of one of the modules waits for this one to finish.
    """
    import importlib

    def run() -> None:
        for name in modules:
            importlib.import_module(name)

    thread = threading.Thread(target=run, name="streamrag-import", daemon=True)
    thread.start()
    return thread
