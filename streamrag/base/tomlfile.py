"""The one reader of TOML files: user files (scenarios, grids, profiles) and built-ins.

Every TOML streamrag reads goes through :func:`read_toml` (a file) or :func:`parse_toml`
(text already read), so every reader reports a problem the same way, as one line naming
the file and, for a syntax error, its line::

    scenario s.toml: no such file
    grid g.toml:3: invalid TOML: Expected '=' after a key in a key/value pair (column 7)
    latency.profile: /abs/mine.toml: cannot read: [Errno 21] Is a directory

What the tables must hold is checked afterwards by the loader's pydantic model, whose
errors name the field (:mod:`streamrag.base.validation`).
"""

from __future__ import annotations

import os
import re
import tomllib
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from streamrag.base.errors import ConfigError


def invalid_toml(where: str, exc: tomllib.TOMLDecodeError) -> ConfigError:
    """``where:LINE: invalid TOML: problem (column C)`` for a file ``tomllib`` refused.

    tomllib (Python < 3.14) gives the position only inside its message, ``… (at line 2,
    column 9)``; it is reported as the file's line.
    """
    message = str(exc)
    m = re.search(r" \(at line (\d+), column (\d+)\)$", message)
    if m is None:
        return ConfigError(f"{where}: invalid TOML: {message}")
    return ConfigError(f"{where}:{m.group(1)}: invalid TOML: {message[: m.start()]} (column {m.group(2)})")


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """``text`` as tables; ``where`` (the file) names it in the error."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise invalid_toml(where, exc) from None
    except RecursionError:  # tomllib parses nested arrays and tables by recursion
        raise ConfigError(f"{where}: invalid TOML: arrays or tables nested too deeply") from None


def read_toml(file: str | os.PathLike[str] | Traversable, what: str = "") -> dict[str, Any]:
    """A TOML file as tables. Errors read ``WHAT FILE: …`` (``what`` says which setting or
    kind of file it is: ``scenario``, ``grid``, ``latency.profile:``)."""
    return read_toml_text(file, what)[1]


def read_toml_text(file: str | os.PathLike[str] | Traversable, what: str = "") -> tuple[str, dict[str, Any]]:
    """A TOML file's text and tables (for a reader that keeps the text, e.g. to hash it),
    with the errors of :func:`read_toml`."""
    where = f"{what} {file}" if what else str(file)
    source = file if isinstance(file, Traversable) else Path(file)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where}: cannot read: {exc}") from None
    return text, parse_toml(text, where)
