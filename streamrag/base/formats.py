"""Format versions of the files a run folder holds, and the check every reader makes.

``summary.json`` and ``manifest.json`` carry ``format_version`` (an integer, their first
key); a Parquet table carries it in its Arrow schema's metadata
(``streamrag.format_version``); ``trace.jsonl`` in its first line, a header
(:mod:`streamrag.engine.trace_file`; every other line is one event's own JSON), and a
Perfetto file in its ``metadata``. A run folder's ``manifest.json`` versions every file
in the folder.

Versions:

- **1** — everything written before versions were recorded: no ``format_version``. A
  Parquet column whose values were all undefined has Arrow type ``null``. Read as it
  is, such columns typed by the table's declaration.
- **2** — ``format_version`` recorded; every Parquet table has its declared Arrow
  schema (types never depend on the values).
- **3** — ``trace.jsonl`` starts with its header line
  ``{"format_version":3,"format":"streamrag.trace"}``; Perfetto files carry
  ``metadata.format_version``. A trace without the header (versions 1 and 2) still reads.

A reader accepts :data:`OLDEST_READABLE` … :data:`FORMAT_VERSION`; anything else is a
one-line :class:`~streamrag.base.errors.InputError` naming the file and the version it
needs (:func:`check_version`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from streamrag.base.errors import InputError

FORMAT_VERSION = 3
"""The version this streamrag writes."""

OLDEST_READABLE = 1
"""The oldest version this streamrag reads."""

UNVERSIONED = 1
"""The version of a file without ``format_version`` (written before versions existed)."""

FIELD = "format_version"
"""The key in ``summary.json`` / ``manifest.json``."""

ARROW_KEY = b"streamrag.format_version"
"""The key in a Parquet file's Arrow schema metadata."""


def versioned(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with ``format_version`` as its first key (what every JSON writer stores)."""
    return {FIELD: FORMAT_VERSION, **{k: v for k, v in data.items() if k != FIELD}}


def check_version(version: Any, path: str | os.PathLike[str]) -> int:
    """The format version ``version`` of file ``path`` (``None``: unversioned, 1), if
    this streamrag reads it; else an InputError naming the file and the version needed."""
    if version is None:
        return UNVERSIONED
    if isinstance(version, bytes):
        version = version.decode("ascii", "replace")
    if isinstance(version, str) and version.isdecimal():
        version = int(version)
    if isinstance(version, bool) or not isinstance(version, int):
        raise InputError(f"{path}: {FIELD} {version!r} is not an integer")
    if version > FORMAT_VERSION:
        raise InputError(
            f"{path}: written in format version {version}; this streamrag reads format versions "
            f"{OLDEST_READABLE}-{FORMAT_VERSION}: install a streamrag that reads version {version}"
        )
    if version < OLDEST_READABLE:
        raise InputError(
            f"{path}: written in format version {version}; this streamrag reads format versions "
            f"{OLDEST_READABLE}-{FORMAT_VERSION}: rewrite it with a streamrag that reads version {version}"
        )
    return version


def check_run(run_dir: str | os.PathLike[str]) -> int:
    """The format version of a run folder (its ``manifest.json``'s, which versions every
    file in the folder; unversioned without one), if this streamrag reads it; else the
    one-line InputError of :func:`check_version`."""
    manifest = Path(run_dir) / "manifest.json"
    if not manifest.is_file():
        return UNVERSIONED
    data = read_json(manifest)
    return check_version(data.get(FIELD) if isinstance(data, dict) else None, manifest)


def read_json(path: str | os.PathLike[str]) -> Any:
    """A run's JSON file (``summary.json``, ``manifest.json``, …), its version checked.

    Raises InputError (one line, naming the file) when it is unreadable, not JSON, or of
    a format version this streamrag does not read."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not readable JSON ({exc})") from None
    if isinstance(data, dict):
        check_version(data.get(FIELD), path)
    return data
