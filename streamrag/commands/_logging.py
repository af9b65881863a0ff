"""The command's stderr: structlog renders the library's stdlib log records, set up here only.

The library logs the ecosystem's way: each module takes ``logging.getLogger(__name__)``
and logs with ``extra={...}`` fields; it adds no handler and configures nothing, so a
host application's own ``logging`` or structlog setup is what renders its events (or
nothing, below its levels). Only the ``streamrag`` command installs a handler, on the
``streamrag`` logger, whose formatter is structlog's ``ProcessorFormatter``: plain
``[level] event key=value`` lines, or one JSON object per line with ``level``,
``timestamp`` and ``logger`` under ``--log-json``.

structlog is imported at the first record that reaches the handler (importing it costs
more than replaying a table, and most runs log nothing).

Under ``--log-json`` everything the command writes on stderr is such an object: log
events, progress (:mod:`streamrag.base.progress` logs them in its ``json`` mode) and the
command's own messages (:func:`say`: the one-line error, "skipped N point(s)").
"""

from __future__ import annotations

import logging
import sys
from typing import Any

__all__ = ["configure", "say"]

ROOT_LOGGER = "streamrag"
MESSAGES_LOGGER = "streamrag.cli"
"""The command's own messages: shown at every level (as in text mode, where they are plain lines)."""
PROGRESS_LOGGER = "streamrag.base.progress"
"""Progress events: shown whenever progress is on (``--quiet`` turns it off, not the level)."""

_state: dict[str, bool] = {"json": False}


class _StderrHandler(logging.Handler):
    """Writes each record as one line on the *current* ``sys.stderr`` (a test's capture
    replaces it between runs), rendered by structlog made on the first record."""

    def __init__(self, *, json: bool) -> None:
        super().__init__()
        self.json = json
        self._formatter: logging.Formatter | None = None

    def format(self, record: logging.LogRecord) -> str:
        if self._formatter is None:
            self._formatter = _structlog_formatter(json=self.json)
        return self._formatter.format(record)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except Exception:  # logging's contract: a failing handler reports, never raises
            self.handleError(record)


def _structlog_formatter(*, json: bool) -> logging.Formatter:
    import structlog

    chain: list[Any] = [structlog.stdlib.add_log_level, structlog.stdlib.add_logger_name, structlog.stdlib.ExtraAdder()]
    if json:
        chain.append(structlog.processors.TimeStamper(fmt="iso", utc=True))
    renderer: Any = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=chain, processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer]
    )


def configure(level: str, *, json: bool, progress_on: bool) -> None:
    """Show the library's events of ``level`` and above on stderr, as JSON lines or text.

    Replaces the handler a previous call installed (``main`` may run many times in one
    process, as in tests); touches no other handler and neither the root logger nor
    structlog's global configuration."""
    _state["json"] = json
    root = logging.getLogger(ROOT_LOGGER)
    for handler in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(handler)
    root.addHandler(_StderrHandler(json=json))
    root.setLevel(getattr(logging, level.upper()))
    logging.getLogger(MESSAGES_LOGGER).setLevel(logging.DEBUG)
    logging.getLogger(PROGRESS_LOGGER).setLevel(logging.INFO if progress_on else logging.WARNING)


def say(text: str, *, level: str = "info", event: str | None = None, **fields: Any) -> None:
    """One message of the command on stderr: ``text`` as a plain line, or under
    ``--log-json`` a JSON object (``event``, default ``text``, plus ``fields``)."""
    if not _state["json"]:
        print(text, file=sys.stderr, flush=True)
        return
    logging.getLogger(MESSAGES_LOGGER).log(getattr(logging, level.upper()), event or text, extra=fields)
