"""Progress of long work: a bar on a terminal, plain periodic lines in logs.

A run under ``nohup``, SLURM or ``2> log`` has no terminal, and a bar there is either
invisible or a mess of carriage returns; such runs get one plain line every
:data:`LINE_EVERY_S` seconds instead (done/total, rate, ETA), or with ``--log-json`` a
``progress`` log event (on this module's stdlib logger, at ``info``; the CLI's handler
renders it as a JSON object with level and timestamp). Short work prints nothing: the first line comes after
:data:`LINE_EVERY_S`, and a run that printed lines ends with a final one.

The CLI chooses the mode (:func:`configure`, from ``--quiet`` and ``--log-json``); a
library caller gets the ``auto`` mode: a bar on an interactive terminal, nothing
otherwise, so notebooks and tests stay quiet.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal, TextIO

Mode = Literal["auto", "lines", "json", "off"]
Unit = Literal["bytes", "items"]
Update = Callable[..., None]
"""``update(done, total=None)``: how much is done (absolute), and the total if it changed."""

LINE_EVERY_S = 10.0
"""Seconds between two progress lines when stderr is not a terminal."""

Clock = Callable[[], float]
"""Seconds on a monotonic clock; the CLI passes the wall clock (only
:mod:`streamrag.engine.clock` reads it), tests a list they advance."""

log = logging.getLogger(__name__)

_chosen: dict[str, Mode] = {"mode": "auto"}  # what configure() chose; one process, one CLI run
_clock: dict[str, Clock] = {}


def configure(mode: Mode, clock: Clock | None = None) -> None:
    """How progress is shown (the CLI calls this once): ``auto`` (a bar on a terminal,
    else nothing), ``lines`` (a bar on a terminal, else plain lines), ``json`` (JSON
    lines), ``off``; ``clock`` times the lines (needed for ``lines`` and ``json``)."""
    _chosen["mode"] = mode
    if clock is not None:
        _clock["now"] = clock


def _amount(value: float, unit: Unit) -> str:
    return f"{value / 1e6:.1f} MB" if unit == "bytes" else f"{value:,.0f}"


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class ProgressLines:
    """A progress callback (``update(done)``, done in ``unit``) printing a line at most
    every ``every_s`` seconds to ``stream``, or with ``as_json`` logging a ``progress``
    event (its fields: :meth:`fields`)."""

    def __init__(
        self,
        description: str,
        total: float | None,
        unit: Unit,
        *,
        as_json: bool = False,
        every_s: float | None = None,
        stream: TextIO | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.description, self.total, self.unit, self.as_json = description, total, unit, as_json
        self.every_s = LINE_EVERY_S if every_s is None else every_s
        self.stream = stream
        if clock is None and "now" not in _clock:
            raise ValueError("ProgressLines needs a clock: pass one, or configure(mode, clock) first")
        self.clock = clock or _clock["now"]
        self.started = self.last = self.clock()
        self.done = 0.0
        self.n_lines = 0

    def __call__(self, done: float, total: float | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        now = self.clock()
        if now - self.last >= self.every_s:
            self.last = now
            self.emit(now)

    def finish(self) -> None:
        """A last line, if any was printed: the log then shows where the work ended."""
        if self.n_lines:
            self.emit(self.clock())

    def _rate(self, now: float) -> tuple[float, float, float | None]:
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / elapsed
        remaining = None if self.total is None or rate <= 0 else max(self.total - self.done, 0) / rate
        return elapsed, rate, remaining

    def fields(self, now: float) -> dict[str, object]:
        """The ``progress`` event's fields (``--log-json``)."""
        elapsed, rate, remaining = self._rate(now)
        return {
            "task": self.description,
            "done": self.done,
            "total": self.total,
            "unit": self.unit,
            "rate_per_s": rate,
            "elapsed_s": round(elapsed, 3),
            "eta_s": None if remaining is None else round(remaining, 3),
        }

    def line(self, now: float) -> str:
        """The plain progress line."""
        _, rate, remaining = self._rate(now)
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        total = f"/{_amount(self.total, self.unit)}" if self.total is not None else ""
        eta = "?" if remaining is None else _duration(remaining)
        per_s = f"{_amount(rate, self.unit)}/s" if self.unit == "bytes" else f"{rate:,.1f}/s"
        return f"streamrag: {self.description}: {_amount(self.done, self.unit)}{total}{share}, {per_s}, ETA {eta}"

    def emit(self, now: float) -> None:
        self.n_lines += 1
        if self.as_json:
            log.info("progress", extra=self.fields(now))
            return
        stream = self.stream or sys.stderr
        print(self.line(now), file=stream, flush=True)


@contextlib.contextmanager
def task_progress(
    description: str, total: float | None, *, unit: Unit = "items", enabled: bool | None = None
) -> Iterator[Update | None]:
    """Yield ``update(done, total=None)`` for work of ``total`` (``unit``; a later
    ``total`` replaces it), shown as the mode says.

    Yields ``None`` (no display, no cost) when progress is off or ``enabled`` is False.
    ``enabled=True`` forces a bar (a test's terminal)."""
    mode = "lines" if enabled else _chosen["mode"]
    terminal = sys.stderr.isatty() if enabled is None else enabled
    if enabled is False or mode == "off" or (not terminal and mode == "auto"):
        yield None
        return
    if terminal and mode != "json":
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            MofNCompleteColumn,
            Progress,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        counts = (DownloadColumn(), TransferSpeedColumn()) if unit == "bytes" else (MofNCompleteColumn(),)
        with Progress(
            description, BarColumn(), *counts, TimeRemainingColumn(), console=Console(stderr=True), transient=True
        ) as bar:
            task = bar.add_task(description, total=total)
            yield lambda done, total=None: bar.update(task, completed=done, total=total)
        return
    lines = ProgressLines(description, total, unit, as_json=mode == "json")
    yield lines
    lines.finish()


def notice(text: str, *, stream: TextIO | None = None) -> None:
    """One line about slow work that starts now and reports no progress of its own (a
    one-time compile), shown where progress is: on a terminal, in ``lines`` mode, and in
    ``json`` mode as a ``notice`` log event (field ``text``); not when progress is off,
    nor in ``auto`` mode without a terminal (a library caller's logs stay quiet)."""
    mode = _chosen["mode"]
    if mode == "json":
        log.info("notice", extra={"text": text})
        return
    out = stream or sys.stderr
    if mode == "off" or (mode == "auto" and not out.isatty()):
        return
    print(f"streamrag: {text}", file=out, flush=True)


@contextlib.contextmanager
def file_progress(path: Path, description: str, *, enabled: bool | None = None) -> Iterator[Callable[[int], None] | None]:
    """Yield a callback taking bytes read of ``path`` (on disk): :func:`task_progress`
    in bytes, named after the file."""
    if not path.is_file():
        yield None
        return
    with task_progress(f"{description} {path.name}", path.stat().st_size, unit="bytes", enabled=enabled) as update:
        yield update


def advancing(update: Update | None) -> Callable[[int], None] | None:
    """``advance(k)`` — k more done — over an absolute ``update`` (for callers that count steps)."""
    if update is None:
        return None
    done = 0

    def advance(k: int = 1) -> None:
        nonlocal done
        done += k
        update(done)

    return advance
