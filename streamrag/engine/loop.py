"""A virtual-time asyncio event loop, run through anyio.

:class:`VirtualEventLoop` is an ordinary ``asyncio.SelectorEventLoop`` whose selector
never blocks: whenever asyncio would wait (nothing runnable), the loop instead *jumps*
virtual time to the next wake-up and resolves it. Hours of timers run in milliseconds.

Time is an integer number of microseconds (``now_us``); ``loop.time()`` returns it in
seconds so that asyncio/anyio timers (``anyio.sleep``, ``move_on_after``) work too.

Ordering rule (deterministic, documented, tested)
-------------------------------------------------
Wake-ups registered through :meth:`VirtualEventLoop.wake_at` (what
:class:`~streamrag.engine.clock.VirtualClock` uses to sleep) and timer callbacks
registered through :meth:`VirtualEventLoop.call_at_us` live in the loop's own heap keyed
by ``(t_us, priority, seq)``: time first, then :class:`~streamrag.engine.clock.Priority`
(completions < word arrivals < ticks < end of turn < other), then ``seq``, the order in
which the wake-ups were registered. The kernel resolves **one** wake-up at a time and
lets everything it makes runnable run (asyncio's ready queue is FIFO) before it resolves
the next, so a same-instant cascade never interleaves with another wake-up.

Native asyncio timers (``anyio.sleep`` and friends) also advance virtual time; one due
at the same microsecond as a kernel wake-up runs right after it, and native timers
among themselves follow asyncio's heap (no defined order for exact ties) — pipeline
components use the Clock.

Deadlock: if nothing is runnable, no kernel wake-up and no native timer is pending, no
task can ever run again; the loop raises :class:`~streamrag.base.errors.DeadlockError` with
the virtual time and the names of the blocked tasks.

The virtual loop does no real I/O: threads (``to_thread``, executors) would break the
deadlock detection and are not supported inside it.

Speed: ``_run_once`` is overridden with a lean version that skips I/O polling (about 2×
faster than asyncio's). It uses the same private attributes asyncio's own does
(``_ready``, ``_scheduled``, ``_stopping``, handle ``_when``/``_cancelled``/``_run``),
stable from Python 3.8 to 3.13; the engine tests exercise it on every run.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import math
import selectors
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from streamrag.base.errors import DeadlockError
from streamrag.base.system.signals import cancellation_as_interrupt, main_task
from streamrag.engine.clock import US_PER_S, Priority, RealClock, VirtualClock

T = TypeVar("T")


class _VirtualSelector(selectors.BaseSelector):
    """A selector with no readiness: ``select`` advances virtual time instead of waiting."""

    def __init__(self) -> None:
        self._map: dict[int, selectors.SelectorKey] = {}
        self.loop: VirtualEventLoop | None = None

    @staticmethod
    def _fd(fileobj: Any) -> int:
        return fileobj if isinstance(fileobj, int) else fileobj.fileno()

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        key = selectors.SelectorKey(fileobj, self._fd(fileobj), events, data)
        self._map[key.fd] = key
        return key

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._map.pop(self._fd(fileobj))

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        self.unregister(fileobj)
        return self.register(fileobj, events, data)

    def select(self, timeout: float | None = None) -> list:
        # asyncio passes timeout 0 while callbacks are ready: then time must not move.
        if timeout is None or timeout > 0:
            assert self.loop is not None
            self.loop._advance()
        return []

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return self._map

    def close(self) -> None:
        self._map.clear()


class KernelTimer:
    """A callback scheduled on the kernel heap (:meth:`VirtualEventLoop.call_at_us`).

    Runs inside the wake-up that resolves it, so what it makes runnable runs in the same
    cascade, before the next wake-up. ``cancel()`` before then drops it.
    """

    __slots__ = ("callback", "cancelled")

    def __init__(self, callback: Callable[[], object]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def done(self) -> bool:  # the heap skips what is done, like a cancelled waiter's future
        return self.cancelled


class VirtualEventLoop(asyncio.SelectorEventLoop):
    """asyncio event loop on virtual time (see the module docstring for the rules)."""

    def __init__(self) -> None:
        selector = _VirtualSelector()
        super().__init__(selector)
        selector.loop = self
        self.now_us = 0
        self._wakeups: list[tuple[int, int, int, asyncio.Future[None] | KernelTimer]] = []
        self._seq = 0
        self.n_wakeups = 0
        """Kernel wake-ups resolved so far (the engine's event count)."""

    # asyncio reads time through this; keep it exact for µs instants.
    def time(self) -> float:
        return self.now_us / US_PER_S

    def wake_at(self, at_us: int, priority: int = Priority.DEFAULT) -> asyncio.Future[None]:
        """A future resolved at ``max(at_us, now)`` in ``(t_us, priority, seq)`` order."""
        fut = self.create_future()
        self._seq += 1
        at = at_us if at_us > self.now_us else self.now_us
        heapq.heappush(self._wakeups, (at, int(priority), self._seq, fut))
        return fut

    def call_at_us(self, at_us: int, priority: int, callback: Callable[[], object]) -> KernelTimer:
        """Run ``callback()`` at ``max(at_us, now)``, in ``(t_us, priority, seq)`` order."""
        timer = KernelTimer(callback)
        self._seq += 1
        at = at_us if at_us > self.now_us else self.now_us
        heapq.heappush(self._wakeups, (at, int(priority), self._seq, timer))
        return timer

    def _run_once(self) -> None:
        """One loop iteration, lean: no I/O polling (there is none in virtual time).

        Same contract as ``BaseEventLoop._run_once``: if nothing is ready, advance time
        (one kernel wake-up, or to the next native timer); move due native timers to the
        ready queue; run the callbacks ready at the start of the run, FIFO.
        """
        ready = self._ready  # type: ignore[attr-defined]
        scheduled = self._scheduled  # type: ignore[attr-defined]
        if not ready and not self._stopping:  # type: ignore[attr-defined]
            self._advance()
        if scheduled:
            end = self.now_us / US_PER_S + self._clock_resolution  # type: ignore[attr-defined]
            while scheduled and scheduled[0]._when < end:
                handle = heapq.heappop(scheduled)
                handle._scheduled = False
                if handle._cancelled:
                    self._timer_cancelled_count -= 1  # type: ignore[attr-defined]
                else:
                    ready.append(handle)
        for _ in range(len(ready)):
            handle = ready.popleft()
            if not handle._cancelled:
                handle._run()

    def _advance(self) -> None:
        """Nothing is runnable: jump to the next wake-up or native timer, or deadlock."""
        heap = self._wakeups
        while heap and heap[0][3].done():  # its waiter was cancelled
            heapq.heappop(heap)
        scheduled = self._scheduled  # type: ignore[attr-defined]
        while scheduled and scheduled[0]._cancelled:
            heapq.heappop(scheduled)._scheduled = False
            self._timer_cancelled_count -= 1  # type: ignore[attr-defined]
        native = scheduled[0]._when if scheduled else None
        limit = math.inf if native is None else native * US_PER_S
        if heap and heap[0][0] <= limit:
            ready = self._ready  # type: ignore[attr-defined]
            pop = heapq.heappop
            # Timer callbacks run here, one after another, for as long as none of them
            # makes a task runnable: the same order as one wake-up per loop iteration,
            # without the iterations.
            while True:
                at_us, _, _, target = pop(heap)
                self.now_us = at_us
                self.n_wakeups += 1
                if type(target) is not KernelTimer:
                    # A signal's handler may have cancelled its waiter since the check above.
                    with contextlib.suppress(asyncio.InvalidStateError):
                        target.set_result(None)  # type: ignore[union-attr]
                    return
                target.callback()
                if ready or (scheduled and scheduled[0]._when * US_PER_S < limit):  # a task to run, a new native timer
                    return
                while heap and heap[0][3].done():
                    pop(heap)
                if not heap or heap[0][0] > limit:
                    return
        if native is None:
            blocked = sorted(t.get_name() for t in asyncio.all_tasks(self) if not t.done())
            detail = f"{len(blocked)} blocked task(s): {', '.join(blocked[:8])}" if blocked else "no tasks"
            raise DeadlockError(self.now_us / US_PER_S, detail)
        # Smallest whole µs at or after the native timer, so asyncio sees it as due.
        at_us = round(native * US_PER_S)
        if at_us / US_PER_S < native:
            at_us += 1
        if at_us > self.now_us:
            self.now_us = at_us


def run_virtual(fn: Callable[[VirtualClock], Awaitable[T]]) -> T:
    """Run ``await fn(clock)`` on a fresh :class:`VirtualEventLoop` through anyio.

    Virtual time starts at 0 µs. Raises :class:`~streamrag.base.errors.DeadlockError` if
    every task blocks with no wake-up pending. Works from inside a running event loop
    too (e.g. a notebook): the virtual loop then runs on a helper thread.
    """
    import anyio

    async def main() -> T:
        loop = asyncio.get_running_loop()
        if not isinstance(loop, VirtualEventLoop):  # pragma: no cover - defensive
            raise RuntimeError("run_virtual: the running loop is not a VirtualEventLoop")
        with main_task():
            return await fn(VirtualClock(loop))

    def run() -> T:
        with cancellation_as_interrupt():
            return anyio.run(main, backend="asyncio", backend_options={"loop_factory": VirtualEventLoop})

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    # Called from code that already runs an event loop in this thread (a Jupyter kernel,
    # an async application): the virtual loop needs a thread of its own.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="streamrag-virtual-loop") as helper:
        return helper.submit(run).result()


def run_real(fn: Callable[[RealClock], Awaitable[T]], *, backend: str = "asyncio") -> T:
    """Run ``await fn(clock)`` on the wall clock (live mode) through anyio."""
    import anyio

    async def main() -> T:
        if backend != "asyncio":
            return await fn(RealClock())
        with main_task():
            return await fn(RealClock())

    with cancellation_as_interrupt():
        return anyio.run(main, backend=backend)
