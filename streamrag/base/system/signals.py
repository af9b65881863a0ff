"""SIGTERM and SIGHUP end a command as Ctrl-C does.

Python's default for SIGTERM ends the process at once: no ``finally`` runs, temporary
files stay, an output folder looks finished, the exit code is 143 with no message
(issue 33). Inside :func:`terminations_interrupt`, SIGTERM and SIGHUP call whatever
handles SIGINT now — Python's, which raises KeyboardInterrupt, or the asyncio runner's,
which cancels the main task first so every ``finally`` and ``async with`` unwinds — and
:func:`interrupt_name` tells afterwards which signal it was (for the message, the exit
code and the ``"interrupted"`` mark a command puts on its outputs). Where SIGINT is
ignored (a job a script started with ``&``, nohup), it stays ignored, and SIGTERM and
SIGHUP still end the command: inside an asyncio run by cancelling the main task that
:func:`main_task` marks, as the runner does on Ctrl-C (the engine's runs mark theirs).

A command says what an interrupt left by raising :class:`Interrupted` (the CLI prints
its ``left`` after the signal's name). :func:`held` keeps a signal waiting for a block
that must not be cut in two: the renames that make a run's files appear together, the
write of a run's interrupted mark.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

_received: list[signal.Signals] = []

TERMINATIONS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that end a command as Ctrl-C does."""


class Interrupted(KeyboardInterrupt):
    """A command was interrupted; ``left`` says what it left and what to do next (one
    line: ``nothing was written to runs/x/; rerun the same command``)."""

    def __init__(self, left: str) -> None:
        super().__init__(left)
        self.left = left


def interrupt_name() -> str:
    """The signal that interrupted the run: ``SIGTERM``/``SIGHUP``, else ``SIGINT``."""
    return _received[-1].name if _received else "SIGINT"


def interrupt_exit_code() -> int:
    """128 + the signal's number, as a shell reports a process the signal ended."""
    return 128 + (_received[-1].value if _received else signal.SIGINT.value)


def _raise_interrupt() -> None:
    raise KeyboardInterrupt


def _as_sigint(number: int, frame: FrameType | None) -> None:
    _received.append(signal.Signals(number))
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
        return
    # SIGINT is ignored: a job a script started with `&` (the shell ignores SIGINT for it),
    # under nohup or a batch system. Then asyncio's runner has not put its Ctrl-C handler in
    # place, and a KeyboardInterrupt raised here could land in a weakref callback or a
    # __del__, where Python prints "Exception ignored" and the run goes on (seen: a load run
    # killed with SIGTERM finished and exited 0). In an event loop this does what that
    # handler does — the main task (main_task) is cancelled, and the run's CancelledError
    # becomes the interrupt (cancellation_as_interrupt) — or, with no main task marked,
    # raises the interrupt from a callback of the loop. A further signal is dropped, as
    # held(deliver=False) drops one: raised into the first one's unwinding, it would cut it
    # short ("coroutine ... was never awaited" after the command's last line).
    if len(_received) > 1:
        return
    aio = sys.modules.get("asyncio")  # not imported: no loop runs
    loop = aio._get_running_loop() if aio is not None else None
    if loop is None:
        raise KeyboardInterrupt
    task = _main_tasks.get(loop)
    if task is None or task.done():
        loop.call_soon_threadsafe(_raise_interrupt)
        return
    _cancelled.append(task)
    task.cancel()
    loop.call_soon_threadsafe(_wake)


def _wake() -> None:
    """A callback that only wakes the loop."""


_main_tasks: dict[asyncio.AbstractEventLoop, asyncio.Task[Any]] = {}
"""Each running loop's main task, while :func:`main_task` marks it."""
_cancelled: list[asyncio.Task[Any]] = []
"""The main tasks a termination cancelled (this command's)."""


@contextlib.contextmanager
def main_task() -> Iterator[None]:
    """Mark the running asyncio task as its loop's main task for the block: where SIGINT is
    ignored, a termination cancels it, as asyncio's runner cancels it on Ctrl-C (around
    the run, :func:`cancellation_as_interrupt` turns that back into KeyboardInterrupt)."""
    import asyncio

    task = asyncio.current_task()
    assert task is not None  # called from a coroutine
    loop = task.get_loop()
    _main_tasks[loop] = task
    try:
        yield
    finally:
        _main_tasks.pop(loop, None)


@contextlib.contextmanager
def cancellation_as_interrupt() -> Iterator[None]:
    """Around an asyncio run whose main task :func:`main_task` marks: the CancelledError a
    termination ended it with is raised as KeyboardInterrupt (what asyncio's runner does
    for the Ctrl-C it cancelled on)."""
    import asyncio

    try:
        yield
    except asyncio.CancelledError:
        if _cancelled:
            raise KeyboardInterrupt from None
        raise


@contextlib.contextmanager
def terminations_interrupt(*, process: bool = False) -> Iterator[None]:
    """SIGTERM and SIGHUP act as SIGINT for the block (main thread only: elsewhere a
    handler cannot be set and the defaults stay).

    ``process``: the block is the whole process's command (the console script). When it
    ends on a termination, later ones are dropped until the process exits: its line and
    exit code (128 + the signal) are decided, and a second SIGTERM during the
    interpreter's shutdown would otherwise kill it by the signal instead."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    _cancelled.clear()
    saved = {sig: signal.signal(sig, _as_sigint) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        ending = process and bool(_received)
        for sig, handler in saved.items():
            signal.signal(sig, signal.SIG_IGN if ending else handler)
        if ending:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def held(*, deliver: bool = True) -> Iterator[None]:
    """Signals in :data:`TERMINATIONS` wait for the end of the block (main thread only).

    A signal that came meanwhile is raised again once the block is over and the handlers
    are back (``deliver``), so it acts then as it would have: a few renames, or a mark
    being written, are never cut in two. ``deliver=False``: the block runs because the
    command is already ending on a signal; a second one is dropped.

    The handlers are swapped rather than the signals masked: the kernel hands a signal
    masked in the main thread to any other thread, and CPython runs its handler in the
    main thread anyway.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []

    def wait(number: int, frame: FrameType | None) -> None:
        came.append(number)

    saved = {sig: signal.signal(sig, wait) for sig in TERMINATIONS}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    if came and deliver:
        signal.raise_signal(came[0])
