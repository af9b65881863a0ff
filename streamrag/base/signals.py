"""SIGTERM and SIGHUP end a command as Ctrl-C does.

Python's default for SIGTERM ends the process at once: no ``finally`` runs, temporary
files stay, an output folder looks finished, the exit code is 143 with no message
(issue 33). Inside :func:`terminations_interrupt`, SIGTERM and SIGHUP call whatever
handles SIGINT now — Python's, which raises KeyboardInterrupt, or the asyncio runner's,
which cancels the main task first so every ``finally`` and ``async with`` unwinds — and
:func:`interrupt_name` tells afterwards which signal it was (for the message, the exit
code and the ``"interrupted"`` mark a command puts on its outputs).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

_received: list[signal.Signals] = []


def interrupt_name() -> str:
    """The signal that interrupted the run: ``SIGTERM``/``SIGHUP``, else ``SIGINT``."""
    return _received[-1].name if _received else "SIGINT"


def interrupt_exit_code() -> int:
    """128 + the signal's number, as a shell reports a process the signal ended."""
    return 128 + (_received[-1].value if _received else signal.SIGINT.value)


def _as_sigint(number: int, frame: FrameType | None) -> None:
    _received.append(signal.Signals(number))
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


@contextlib.contextmanager
def terminations_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP act as SIGINT for the block (main thread only: elsewhere a
    handler cannot be set and the defaults stay)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    saved = {sig: signal.signal(sig, _as_sigint) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
