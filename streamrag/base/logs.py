"""Log events: structlog, set up by the CLI's logging options, imported only when an event
is logged (importing it costs more than replaying a table; most runs log nothing).

Modules take a logger with ``log = get_logger(__name__)`` and call ``log.info(...)`` etc.
as on a structlog logger.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["configure", "get_logger"]

_settings: dict[str, Any] = {"level": "warning", "json": False, "applied": False}
_LEVELS = {"debug": 10, "info": 20, "warning": 30, "warn": 30, "error": 40, "exception": 40, "critical": 50}


def configure(level: str, *, json: bool) -> None:
    """Least severe level shown on stderr, and JSON lines or plain text (applied at the next event)."""
    _settings.update(level=level, json=json, applied=False)


def _apply() -> None:
    import logging

    import structlog

    renderer: Any = structlog.processors.JSONRenderer() if _settings["json"] else structlog.dev.ConsoleRenderer(colors=False)
    processors: list[Any] = [structlog.processors.add_log_level]
    if _settings["json"]:
        processors.append(structlog.processors.TimeStamper(fmt="iso", utc=True))
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, str(_settings["level"]).upper())),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        processors=[*processors, renderer],
        cache_logger_on_first_use=False,
    )
    _settings["applied"] = True


class _Logger:
    """A structlog logger made on the first event."""

    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, method: str) -> Any:
        level = _LEVELS.get(method)
        if level is not None and level < _LEVELS[_settings["level"]]:
            return _ignore  # filtered out, as structlog's filtering logger would: nothing to import
        if not _settings["applied"]:
            _apply()
        if self._logger is None:
            import structlog

            self._logger = structlog.get_logger(self._name)
        return getattr(self._logger, method)


def _ignore(*_args: Any, **_kwargs: Any) -> None:
    return None


def get_logger(name: str) -> Any:
    """A logger for module ``name`` (structlog's API; nothing is imported until it logs)."""
    return _Logger(name)
