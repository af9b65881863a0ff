"""Output paths checked before any work: a run never computes for an hour, then fails to write.

Every command that writes checks its outputs first with :func:`check_out_dir` (a folder
such as ``--out``) or :func:`check_out_file` (a file such as ``trace --png``). Neither
creates anything: a check that fails leaves no trace, and a folder is only made when the
first file is written. The rule, the same for every command:

- the path (when it exists) is of the right sort: a folder for a folder, not a folder
  for a file;
- its nearest existing ancestor is a folder (``a/file.txt/out`` cannot be made) into
  which this process may write;
- with ``refuse_nonempty``, an existing folder must be empty (``simulate`` refuses to mix
  two runs; ``--force`` replaces the old run's files, ``sweep --resume`` continues).

Problems are :class:`~streamrag.base.errors.ConfigError` lines naming the option and path.
"""

from __future__ import annotations

import os
from pathlib import Path

from streamrag.base.errors import ConfigError

__all__ = ["check_out_dir", "check_out_file"]


def _writable_ancestor(path: Path, option: str) -> None:
    """The nearest existing ancestor of ``path`` must be a folder this process can write in."""
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"{option} {path}: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {path}: cannot write in {parent} (permission denied)")


def check_out_dir(path: str | os.PathLike[str], *, option: str = "--out", refuse_nonempty: str | None = None) -> Path:
    """``path`` as an output folder that can be made or written (see the module docstring).

    ``refuse_nonempty``: when given, an existing non-empty folder is refused and this
    text (how to proceed) ends the message.
    """
    out = Path(path)
    if out.exists():
        if not out.is_dir():
            raise ConfigError(f"{option} {out}: exists and is not a folder")
        if not os.access(out, os.W_OK | os.X_OK):
            raise ConfigError(f"{option} {out}: cannot write in this folder (permission denied)")
        if refuse_nonempty is not None and any(out.iterdir()):
            raise ConfigError(f"{option} {out}: exists and is not empty; {refuse_nonempty}")
        return out
    _writable_ancestor(out, option)
    return out


def check_out_file(path: str | os.PathLike[str], *, option: str) -> Path:
    """``path`` as an output file that can be written (its folder is made when missing)."""
    out = Path(path)
    if out.is_dir():
        raise ConfigError(f"{option} {out}: is a folder; give a file name")
    if out.exists():
        if not os.access(out, os.W_OK) or not os.access(out.absolute().parent, os.W_OK | os.X_OK):
            raise ConfigError(f"{option} {out}: cannot replace this file (permission denied)")
        return out
    _writable_ancestor(out, option)
    return out
