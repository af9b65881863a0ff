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
A run whose size is known before it starts checks that its files fit too
(:func:`check_free_space`): an :class:`~streamrag.base.errors.OutputError` at once, not a
full disk hours later.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from streamrag.base.errors import ConfigError, OutputError

__all__ = ["check_free_space", "check_out_dir", "check_out_file", "human_bytes", "made_folder"]


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


def human_bytes(n: float) -> str:
    """``n`` bytes as ``12.3 GB`` (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    raise AssertionError("unreachable")


def check_free_space(folder: str | os.PathLike[str], need_bytes: float, what: str, *, hint: str = "") -> None:
    """Refuse (:class:`OutputError`) when the file system of ``folder`` (or of its nearest
    existing ancestor) has less than ``need_bytes`` free for ``what``; ``hint``: what to do."""
    import shutil

    where = Path(folder).absolute()
    while not where.exists():
        where = where.parent
    free = shutil.disk_usage(where).free
    if need_bytes > free:
        raise OutputError(
            f"{where}: {what} needs {human_bytes(need_bytes)}, more than the {human_bytes(free)} free on this file system"
            + (f"; {hint}" if hint else "")
        )


@contextlib.contextmanager
def made_folder(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Make the output folder ``path`` (and missing parents) for the block; when the block
    fails or is interrupted, the folders it made are removed again if they are empty, so
    a run that wrote nothing leaves nothing (and a rerun is not refused)."""
    out = Path(path)
    made: list[Path] = []
    at = out.absolute()
    while not at.exists():
        made.append(at)
        at = at.parent
    out.mkdir(parents=True, exist_ok=True)
    try:
        yield out
    except BaseException:
        for folder in made:  # innermost first
            with contextlib.suppress(OSError):  # not empty (a file was written): kept
                folder.rmdir()
        raise
