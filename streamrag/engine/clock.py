"""The ``Clock``: the one narrow way pipeline components read and wait for time.

Components never call ``time`` or ``anyio.sleep`` themselves: a :class:`Clock` is passed
in. Two implementations:

- :class:`VirtualClock` — simulation. Time is an integer count of microseconds that
  jumps to the next scheduled wake-up whenever nothing is runnable (see
  :mod:`streamrag.engine.loop`). Same-instant wake-ups are ordered by the explicit rule
  ``(t_us, priority, seq)``; ``priority`` is a :class:`Priority`.
- :class:`RealClock` — live mode: the same components on the wall clock (``priority``
  cannot order real instants and is ignored).

This module and :mod:`streamrag.engine.loop` are the only places in the package that
read time (:func:`wall_clock_iso` exists for the run manifest's ``created`` field, the
one output allowed to differ between two runs).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from enum import IntEnum
from typing import Protocol, runtime_checkable

US_PER_S = 1_000_000


class Priority(IntEnum):
    """Order of wake-ups scheduled for the same microsecond (lower runs first).

    The rule is: *what finishes at an instant is visible to what decides at that
    instant*. A tool result landing at the same microsecond as a word is seen by the
    trigger deciding on that word (and frees its thread slot); a result landing exactly
    at end of turn is seen by the reflector.
    """

    COMPLETION = 0
    """A stage ends: query generation, tool call, reflector check, response generation."""
    INPUT = 1
    """A word arrives."""
    TICK = 2
    """A time-based trigger opportunity (``interval(seconds=…)``, ``replace``)."""
    TURN_END = 3
    """End of turn: the reflector and the baseline arm start."""
    DEFAULT = 4
    """Anything else."""


class Timer(Protocol):
    """A scheduled callback (:meth:`Clock.call_at_us`)."""

    def cancel(self) -> None: ...


@runtime_checkable
class Clock(Protocol):
    """Time source, sleeper and timer passed to every pipeline component: what they
    need, no more.

    Instants are integer microseconds (``*_us``) so timestamps are exact. Waiting a
    negative duration is an error (a component that computes one has a bug), not a
    silent zero; waiting until an instant that has passed returns at once, after a yield.

    ``call_at_us`` is for the parts that react rather than wait — a resource starting
    its next job when one finishes, a tool call moving from query generation to the
    tool: a callback costs one heap entry, where a task per call would cost a task, a
    cancel scope and several loop iterations.
    """

    def now_us(self) -> int:
        """Current instant in µs."""
        ...

    async def sleep_us(self, duration_us: int, priority: int = Priority.DEFAULT) -> None:
        """Wait ``duration_us`` µs (≥ 0; ValueError otherwise)."""
        ...

    async def sleep_until_us(self, at_us: int, priority: int = Priority.DEFAULT) -> None:
        """Wait until instant ``at_us``."""
        ...

    def call_at_us(self, at_us: int, priority: int, callback: Callable[[], object]) -> Timer:
        """Run ``callback()`` at instant ``at_us`` (at once if it passed); cancellable."""
        ...


class VirtualKernel(Protocol):
    """What :class:`VirtualClock` needs of its loop (:class:`~streamrag.engine.loop.VirtualEventLoop`
    has it): the current instant, a timer, and a wake-up to await. Declared here so that the
    clock does not import the loop that imports it."""

    now_us: int

    def call_at_us(self, at_us: int, priority: int, callback: Callable[[], object]) -> Timer: ...

    def wake_at(self, at_us: int, priority: int = ...) -> Awaitable[None]: ...


def seconds_to_us(seconds: float) -> int:
    """Round seconds to the nearest whole microsecond."""
    return round(seconds * US_PER_S)


def _check_duration(duration_us: int) -> int:
    if duration_us < 0:
        raise ValueError(f"cannot sleep a negative duration ({duration_us} µs)")
    return int(duration_us)


class VirtualClock:
    """Virtual time of a :class:`~streamrag.engine.loop.VirtualEventLoop`.

    ``sleep_until_us`` registers a wake-up ``(at_us, priority, seq)`` with the loop's
    kernel; the loop resolves exactly one wake-up each time nothing is runnable, so
    same-instant events run in that order and never by scheduler accident.
    """

    __slots__ = ("_loop", "call_at_us")

    def __init__(self, loop: VirtualKernel) -> None:
        self._loop = loop
        # The kernel's own method, bound: no wrapper call on the hottest path.
        self.call_at_us = loop.call_at_us

    def now_us(self) -> int:
        return self._loop.now_us

    async def sleep_until_us(self, at_us: int, priority: int = Priority.DEFAULT) -> None:
        await self._loop.wake_at(at_us, priority)

    async def sleep_us(self, duration_us: int, priority: int = Priority.DEFAULT) -> None:
        loop = self._loop
        await loop.wake_at(loop.now_us + _check_duration(duration_us), priority)


class RealClock:
    """Wall-clock time for live mode (monotonic; µs since the clock was made).

    ``priority`` is ignored: real same-instant events have no defined order, so live
    tests space their events apart.
    """

    __slots__ = ("_origin_ns",)

    def __init__(self) -> None:
        self._origin_ns = time.monotonic_ns()

    def now_us(self) -> int:
        return (time.monotonic_ns() - self._origin_ns) // 1000

    async def sleep_until_us(self, at_us: int, priority: int = Priority.DEFAULT) -> None:
        import anyio

        await anyio.sleep(max(0, at_us - self.now_us()) / US_PER_S)

    async def sleep_us(self, duration_us: int, priority: int = Priority.DEFAULT) -> None:
        await self.sleep_until_us(self.now_us() + _check_duration(duration_us), priority)

    def call_at_us(self, at_us: int, priority: int, callback: Callable[[], object]) -> Timer:
        import asyncio

        loop = asyncio.get_running_loop()
        return loop.call_later(max(0, at_us - self.now_us()) / US_PER_S, callback, context=_asyncio_context())


def _asyncio_context() -> contextvars.Context:
    """The caller's context, marked as running on asyncio: a timer callback runs outside
    any task, and anyio (when sniffio is installed) finds its event loop only through
    that mark, which ``anyio.run`` sets and a plain ``asyncio.run`` (an agent
    framework's loop) does not."""
    context = contextvars.copy_context()
    try:
        import sniffio
    except ImportError:  # anyio then asks asyncio for the running loop, which works in a callback
        return context
    context.run(sniffio.current_async_library_cvar.set, "asyncio")
    return context


def wall_clock_iso() -> str:
    """UTC wall-clock time as ISO 8601 (seconds) — for run manifests only."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def unix_offset_ns(now_us: int) -> int:
    """Unix time (ns) minus a clock's instant ``now_us`` (µs) read just before: an instant
    ``t_us`` on that clock is Unix nanosecond ``offset + t_us * 1000`` (exported spans)."""
    return time.time_ns() - now_us * 1000


def process_cpu_s() -> float:
    """CPU seconds this process has used (user + system) — for reporting a command's cost."""
    return time.process_time()


def thread_cpu_s() -> float:
    """CPU seconds the calling thread has used — for one step of work done in this thread
    (a recognizer's decoding, ``speak``), which other threads' CPU would overstate."""
    return time.thread_time()
