"""What a load run measures of each session, read off its events, and where it all goes.

A load run's memory must not grow with its number of sessions (issue 33: 10⁷ sessions
preallocated 928 MB of per-session arrays). So nothing per session stays in memory:

- :class:`SessionTable` — one fixed-width binary record per session (its question, and per
  system its arrival, answer latency, calls fired / used / rejected, waits per resource and
  where its events sit in the trace spool), written in place (``pwrite`` at
  ``i · record size``) as each system finishes the session, in a temporary file; readers
  take it back in chunks (:meth:`SessionTable.chunks`) or one column at a time;
- :class:`SessionMeasures` — one system's view of that table: parses a finished session's
  events into its record, keeps the run's totals (busy and wasted server time);
- :class:`TraceSink` — each finished session's events appended to a temporary file;
- :class:`SpooledDraws` — a per-session random draw (the question asked, a think time),
  drawn in chunks into a temporary file and read back by index.

Every file is a temporary of the run's folder (:func:`spool_file`); :meth:`LoadSpool.remove`
deletes them, on success after the outputs are written, on any failure or interrupt at once.
"""

from __future__ import annotations

import contextlib
import os
import struct
import tempfile
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.engine.trace import dump_events
from streamrag.pipeline.outcomes import OUTCOMES

CHUNK = 1 << 16
"""Sessions per chunk when draws are made and the table is read back."""

SYSTEM_FIELDS: tuple[tuple[str, str], ...] = (
    ("arrival_us", "<i8"),
    ("answer_us", "<i8"),
    ("fired", "<i4"),
    ("used", "<i4"),
    ("rejected", "<i4"),
    ("unsafe", "<i4"),
    ("trace_at", "<i8"),
    ("trace_size", "<i8"),
)
"""One system's part of a session record (then its calls per outcome, and one ``<i8`` wait per resource)."""
_NO_OUTCOMES = (0,) * len(OUTCOMES)


def spool_file(folder: str | os.PathLike[str] | None, name: str) -> Path:
    """A new empty temporary file ``.{name}.{pid}-{random}.tmp`` in ``folder`` (None: the
    system's temporary folder): the name :mod:`streamrag.base.atomic` gives its own, so a
    killed run's leftovers are recognized as stale the same way."""
    fd, path = tempfile.mkstemp(prefix=f".{name}.{os.getpid()}-", suffix=".tmp", dir=folder)
    os.close(fd)
    return Path(path)


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _refused(exc: OSError, spool: Path, output: str) -> None:
    """A refused write of a spool file, raised as a refused write of the output it feeds
    (other errors go on as they are)."""
    from streamrag.base.atomic import WRITE_ERRNOS, output_error

    if exc.errno in WRITE_ERRNOS:
        raise output_error(exc, spool.parent / output) from exc


def record_dtype(resources: Sequence[str], systems: Sequence[str]) -> np.dtype[Any]:
    """A session's record: its question, then per system :data:`SYSTEM_FIELDS`, its
    speculative calls per terminal outcome (:data:`~streamrag.pipeline.outcomes.OUTCOMES`)
    and a wait per resource (packed, little-endian)."""
    system = np.dtype([*SYSTEM_FIELDS, ("outcomes", "<i4", (len(OUTCOMES),)), ("wait_us", "<i8", (len(resources),))])
    return np.dtype([("question", "<i4"), *((s, system) for s in systems)])


class SessionTable:
    """One fixed-width record per session in a temporary file (see the module docstring)."""

    def __init__(self, path: Path, n: int, resources: Sequence[str], systems: Sequence[str]) -> None:
        self.path = path
        self.n = n
        self.resources = tuple(resources)
        self.systems = tuple(systems)
        self.dtype = record_dtype(self.resources, self.systems)
        self._system_at = {s: self.dtype.fields[s][1] for s in self.systems}  # type: ignore[index]
        self._pack = struct.Struct("<qqiiiiqq" + "i" * len(OUTCOMES) + "q" * len(self.resources)).pack
        self.fd: int | None = os.open(path, os.O_RDWR)
        weakref.finalize(self, _unlink, path)  # the file lives as long as its readers
        os.ftruncate(self.fd, n * self.dtype.itemsize)  # sparse until written

    def write(
        self, system: str, i: int, question: int, values: Sequence[int], waits: Sequence[int], outcomes: Sequence[int]
    ) -> None:
        """Session ``i``'s record for ``system`` (``values`` in :data:`SYSTEM_FIELDS` order)."""
        assert self.fd is not None  # written only while the run is on
        at = i * self.dtype.itemsize
        try:
            os.pwrite(self.fd, struct.pack("<i", question), at)
            os.pwrite(self.fd, self._pack(*values, *outcomes, *waits), at + self._system_at[system])
        except OSError as exc:
            _refused(exc, self.path, "sessions.csv")
            raise

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def chunks(self) -> Iterator[np.ndarray]:
        """The records in session order, :data:`CHUNK` at a time (a structured array each)."""
        with open(self.path, "rb") as fh:
            for start in range(0, self.n, CHUNK):
                yield np.fromfile(fh, dtype=self.dtype, count=min(CHUNK, self.n - start))

    def column(self, system: str | None, name: str) -> np.ndarray:
        """One field of every session (``system`` None: the question), read chunk by chunk:
        the only per-session memory a reader holds is this column."""
        field = self.dtype[name] if system is None else self.dtype[system][name]
        out = np.empty((self.n, *field.shape), dtype=field.base)
        at = 0
        for c in self.chunks():
            out[at : at + len(c)] = c[name] if system is None else c[system][name]
            at += len(c)
        return out


class SessionMeasures:
    """One system's per-session measurements: written to the :class:`SessionTable` as
    sessions finish; the columns (``answer_us``, …) are read back from it on demand."""

    def __init__(self, table: SessionTable, system: str) -> None:
        self.table = table
        self.system = system
        self.n = table.n
        self._resource_idx = {name: k for k, name in enumerate(table.resources)}
        self.waited: set[str] = set()
        """Resources a job of this system ever queued at (the wait columns shown)."""
        self.busy_us: dict[str, int] = {}
        self.wasted_us: dict[str, int] = {}

    @property
    def question(self) -> np.ndarray:
        return self.table.column(None, "question")

    @property
    def arrival_us(self) -> np.ndarray:
        return self.table.column(self.system, "arrival_us")

    @property
    def answer_us(self) -> np.ndarray:
        """Answer ready − end of input, µs; −1: the session failed."""
        return self.table.column(self.system, "answer_us")

    @property
    def fired(self) -> np.ndarray:
        return self.table.column(self.system, "fired")

    @property
    def used(self) -> np.ndarray:
        return self.table.column(self.system, "used")

    @property
    def rejected(self) -> np.ndarray:
        return self.table.column(self.system, "rejected")

    @property
    def unsafe(self) -> np.ndarray:
        """Unsafe executions of a mutating tool per session (0 for any other tool)."""
        return self.table.column(self.system, "unsafe")

    @property
    def outcomes(self) -> np.ndarray:
        """Speculative calls per terminal outcome, per session (sessions × outcomes)."""
        return self.table.column(self.system, "outcomes")

    @property
    def waits(self) -> dict[str, np.ndarray]:
        """µs each session's jobs waited per resource, for the resources with a wait."""
        if not self.waited:
            return {}
        all_waits = self.table.column(self.system, "wait_us")
        return {name: all_waits[:, self._resource_idx[name]] for name in sorted(self.waited)}

    def add(
        self,
        i: int,
        question: int,
        arrival_us: int,
        input_end_us: int,
        events: list[dict[str, Any]],
        trace: tuple[int, int],
        unsafe: int = 0,
        outcomes: Sequence[int] = _NO_OUTCOMES,
    ) -> None:
        """Session ``i`` finished: its record from its ``events``; ``trace`` = (offset, size)
        of its events in this system's trace spool ((−1, 0): not traced); ``unsafe``: its
        unsafe executions (a mutating tool's); ``outcomes``: its speculative calls per
        terminal outcome (the arm's :class:`~streamrag.pipeline.outcomes.CallEnds`)."""
        fired = rejected = 0
        answer = -1
        used_call = None
        waits = [0] * len(self._resource_idx)
        opened: dict[tuple[str, int, str], int] = {}
        queued: dict[tuple[str, int, str], int] = {}
        spans: list[tuple[str, int, int]] = []  # (resource, call, µs of service)
        for e in events:
            kind = e["kind"]
            if kind == "fire":
                fired += 1
            elif kind == "cancel" and e["reason"] == "unstarted":
                fired -= 1
            elif kind == "reject":
                rejected += 1
            elif kind == "respond":
                used_call = e["call"]
            elif kind == "answer_ready":
                answer = e["t_us"] - input_end_us
            elif kind == "enqueue":
                queued[(e["resource"], e["call"], e["stage"])] = e["t_us"]
            elif kind == "serve":
                key = (e["resource"], e["call"], e["stage"])
                since = queued.pop(key, None)
                if since is not None:
                    self._wait(waits, e["resource"], e["t_us"] - since)
                opened[key] = e["t_us"]
            elif kind in ("finish", "withdraw"):
                key = (e["resource"], e["call"], e["stage"])
                start = opened.pop(key, None)
                if start is not None:
                    spans.append((e["resource"], e["call"], e["t_us"] - start))
                elif kind == "withdraw":  # withdrawn while waiting
                    since = queued.pop(key, None)
                    if since is not None:
                        self._wait(waits, e["resource"], e["t_us"] - since)
        for resource, call, us in spans:
            self.busy_us[resource] = self.busy_us.get(resource, 0) + us
            if call != 0 and call != used_call:  # F jobs are call 0: always used
                self.wasted_us[resource] = self.wasted_us.get(resource, 0) + us
        used = 1 if answer >= 0 else 0
        self.table.write(self.system, i, question, (arrival_us, answer, fired, used, rejected, unsafe, *trace), waits, outcomes)

    def _wait(self, waits: list[int], resource: str, us: int) -> None:
        self.waited.add(resource)
        waits[self._resource_idx[resource]] += us


class TraceSink:
    """Each finished session's events, appended to a temporary file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fh = open(path, "wb")  # noqa: SIM115 - closed in close(), after the run
        weakref.finalize(self, _unlink, path)
        self.size = 0

    def add(self, events: list[dict[str, Any]]) -> tuple[int, int]:
        """Append the events; their (offset, size) in the file."""
        blob = dump_events(events)
        at = self.size
        try:
            self.fh.write(blob)
        except OSError as exc:
            _refused(exc, self.path, "trace.jsonl")
            raise
        self.size += len(blob)
        return at, len(blob)

    def close(self) -> None:
        self.fh.close()


class SpooledDraws:
    """``n`` per-session values of one random stream, drawn :data:`CHUNK` at a time into a
    temporary file and read back by index (chunked draws equal one draw of ``n``:
    numpy's generators fill arrays value by value)."""

    ITEM_BYTES = 8

    def __init__(self, path: Path, n: int, draw: Callable[[int], np.ndarray]) -> None:
        self.path = path
        self.dtype = np.dtype("<i8")
        self.fd: int | None = os.open(path, os.O_RDWR)
        for start in range(0, n, CHUNK):
            try:
                os.write(self.fd, np.ascontiguousarray(draw(min(CHUNK, n - start)), dtype=self.dtype).tobytes())
            except OSError as exc:
                _refused(exc, path, "sessions.csv")
                raise

    def __getitem__(self, i: int) -> int:
        assert self.fd is not None  # read only while the run is on
        return int.from_bytes(os.pread(self.fd, 8, i * 8), "little", signed=True)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class LoadSpool:
    """The temporary files of one load run, removed together."""

    def __init__(self, folder: str | os.PathLike[str] | None) -> None:
        self.folder = None if folder is None else Path(folder)
        self.paths: list[Path] = []
        self._open: list[SessionTable | TraceSink | SpooledDraws] = []

    def file(self, name: str) -> Path:
        path = spool_file(self.folder, name)
        self.paths.append(path)
        return path

    def table(self, n: int, resources: Sequence[str], systems: Sequence[str]) -> SessionTable:
        from streamrag.base.system.outputs import check_free_space

        record = record_dtype(resources, systems).itemsize + SpooledDraws.ITEM_BYTES  # + the question drawn
        check_free_space(self.folder or tempfile.gettempdir(), n * record, "the load run's session table")
        table = SessionTable(self.file("sessions.csv"), n, resources, systems)
        self._open.append(table)
        return table

    def sink(self, system: str) -> TraceSink:
        sink = TraceSink(self.file(f"trace-{system}.jsonl"))
        self._open.append(sink)
        return sink

    def draws(self, name: str, n: int, draw: Callable[[int], np.ndarray]) -> SpooledDraws:
        draws = SpooledDraws(self.file(name), n, draw)
        self._open.append(draws)
        return draws

    def close(self) -> None:
        """Close every file (the run is over: the table and traces are read by path from
        now on, the draws are not needed)."""
        for f in self._open:
            f.close()
            if isinstance(f, SpooledDraws):
                _unlink(f.path)
        self._open = []

    def remove(self) -> None:
        """Close and delete every file (idempotent)."""
        self.close()
        for path in self.paths:
            _unlink(path)
        self.paths = []
