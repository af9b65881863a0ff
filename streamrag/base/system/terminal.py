"""Text from input files made safe to print on a terminal.

An interaction id, a file name or a skip reason comes from a data file that anyone may
have written; printed raw, ``\\x1b[2J`` in an id clears the user's screen and
``\\x1b]8;;…`` plants a link. Everything streamrag prints that holds such text goes
through :func:`printable`, which shows control characters as Python escapes instead.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["printable", "stdout_console"]

# C0 controls except tab, DEL, and the C1 controls (U+0080-U+009F: 8-bit CSI and OSC).
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with each control character replaced by its escape (``\\x1b``, ``\\n``)."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def stdout_console() -> Any:
    """A rich console on stdout whose closed pipe raises :class:`BrokenPipeError`.

    rich answers a closed pipe with ``SystemExit(1)``; ``streamrag trace … | head`` is not
    a failure, so the CLI turns the error into a quiet exit 0 (see ``streamrag.cli``).
    """
    from rich.console import Console

    class _PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return _PipeConsole()
