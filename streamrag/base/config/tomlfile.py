"""The one reader of TOML files (user files: scenarios, grids, profiles; built-ins), and
the one writer (:func:`dumps_toml`).

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

import json
import math
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


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _string(text: str) -> str:
    # JSON's escapes are TOML's (\" \\ \n \t \uXXXX); TOML also forbids a raw DEL.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a finite number: {value}")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list | tuple):
        inner = [_value(v) for v in value]
        if value and isinstance(value[0], list | tuple):  # quantile points: one pair per line
            return "[\n" + "".join(f"    {v},\n" for v in inner) + "]"
        return "[" + ", ".join(inner) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def dumps_toml(tables: dict[str, Any], prefix: str = "") -> str:
    """A TOML document of nested tables of strings, numbers, booleans and lists
    (values first, then one ``[header]`` per sub-table, depth first)."""
    lines = [f"{_key(k)} = {_value(v)}" for k, v in tables.items() if not isinstance(v, dict)]
    out = "\n".join(lines) + ("\n" if lines else "")
    for key, value in tables.items():
        if isinstance(value, dict):
            path = f"{prefix}.{_key(key)}" if prefix else _key(key)
            body = dumps_toml(value, path)
            has_values = any(not isinstance(v, dict) for v in value.values())
            out += ("\n" if out else "") + (f"[{path}]\n" if has_values or not value else "") + body
    return out
