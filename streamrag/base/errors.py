"""The exception tree of streamrag.

Every error a user can cause derives from :class:`StreamragError`; the CLI prints such
errors as one line on stderr and exits with code 1. Anything else is a bug.

::

    StreamragError
    ├── InputError                 bad user input (files, values, settings)
    │   ├── RecordError            one record of a data file is malformed (file, line, field)
    │   ├── DataFileError          a data file as a whole is unreadable (missing, truncated)
    │   ├── TableError             a stabilization / results table is malformed
    │   ├── ConfigError            a scenario, grid or setting is invalid
    │   └── NothingToRankError     one question cannot be ranked (``reason`` → skip row)
    │       ├── EmptyCorpusError   the question has no chunks
    │       └── EmptyQueryError    the query has no word
    ├── EmptySelectionError        the chosen split / ids / limit selects no record
    ├── CacheError                 the cache folder cannot be used (not: a corrupt entry,
    │                              which is rebuilt silently)
    ├── OutputError                an output cannot be written (disk full, permission
    │                              denied, read-only file system), or would not fit
    ├── SimulationError            the simulation cannot proceed
    │   └── DeadlockError          every task is blocked and no timer is pending
    └── ToolError                  a live tool call failed (unreachable endpoint, timeout,
        │                          bad reply): recorded as a trace event, never a crash
        ├── ToolUnreachableError   no connection to the endpoint: ``live`` checks once
        │                          before the run and stops (exit 1) instead of running
        │                          every turn against a dead endpoint
        └── ToolTimeoutError       no answer in time (a call's outcome ``timed_out``)

A SIGTERM or SIGHUP ends a command as Ctrl-C does, with KeyboardInterrupt
(:mod:`streamrag.base.system.signals`).
"""

from __future__ import annotations


class StreamragError(Exception):
    """Base of every error streamrag raises on purpose."""


class InputError(StreamragError):
    """Bad user input: a file, a value or a setting."""


class RecordError(InputError):
    """One record of a data file is malformed.

    The message names the file, the 1-based line and the field, e.g.
    ``data.jsonl:17: field 'query': missing``.
    """

    def __init__(self, path: str, line_no: int, field: str, problem: str) -> None:
        self.path = str(path)
        self.line_no = line_no
        self.field = field
        self.problem = problem
        where = f"{self.path}:{line_no}"
        what = f"field '{field}': {problem}" if field else problem
        super().__init__(f"{where}: {what}")

    def __reduce__(self) -> tuple[type, tuple[str, int, str, str]]:  # picklable across worker processes
        return (type(self), (self.path, self.line_no, self.field, self.problem))


class DataFileError(InputError):
    """A data file cannot be read as a whole (missing, truncated, wrong format)."""


class TableError(InputError):
    """A table (CSV) does not have the expected columns or values."""


class ConfigError(InputError):
    """A scenario, grid or setting is invalid."""


class NothingToRankError(InputError):
    """A question cannot be ranked; ``reason`` is a short phrase for a skip column."""

    reason = "nothing to rank"


class EmptyCorpusError(NothingToRankError):
    """The question's corpus has no chunks (N = 0), so no prefix has a top-1."""

    reason = "no chunks"


class EmptyQueryError(NothingToRankError):
    """The query has no whitespace-separated word (n = 0), so there is no prefix."""

    reason = "empty query"


class EmptySelectionError(StreamragError):
    """The split / id / limit selection matched no record."""


class CacheError(StreamragError):
    """The cache folder cannot be used at all."""


class OutputError(StreamragError):
    """An output cannot be written: the file system refused the write (disk full, quota,
    permission, read-only) or the free space cannot hold it. The message names the file."""


class SimulationError(StreamragError):
    """The simulation cannot proceed."""


class DeadlockError(SimulationError):
    """All tasks are blocked and no timer is pending: the simulation can never advance."""

    def __init__(self, virtual_time_s: float, detail: str = "") -> None:
        self.virtual_time_s = virtual_time_s
        self.detail = detail
        msg = f"simulation deadlock at virtual time {virtual_time_s:.6f} s: every task is blocked and no timer is pending"
        super().__init__(f"{msg} ({detail})" if detail else msg)

    def __reduce__(self) -> tuple[type, tuple[float, str]]:  # picklable across worker processes
        return (type(self), (self.virtual_time_s, self.detail))


class ToolError(StreamragError):
    """A live tool call failed: the endpoint is unreachable, timed out or answered badly.

    The live pipeline records it as a ``tool_error`` trace event (the call is lost, as a
    rejected one is) and the terminal shows this message as one line."""


class ToolUnreachableError(ToolError):
    """The endpoint refused or dropped the connection (nothing listens there)."""


class ToolTimeoutError(ToolError):
    """The tool did not answer in time: the call's outcome is ``timed_out``
    (:mod:`streamrag.pipeline.outcomes`), not ``failed``."""
