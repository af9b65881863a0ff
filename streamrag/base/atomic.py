"""Atomic file writes: write a temporary file next to the target, then ``os.replace``.

A reader never sees a half-written table, summary or figure, and an interrupted run leaves
either the old file or the new one. The temporary file lives in the target's folder so
that ``os.replace`` is a rename on one file system.

A process killed with ``kill -9`` cannot remove its temporary file. The next write of the
same target removes such leftovers (:func:`remove_stale_temporaries`): a temporary file
names the process that wrote it, and one whose process is gone, or that has not changed
for :data:`STALE_AFTER_S`, is stale; a live writer's file is never touched.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

STALE_AFTER_S = 600.0
"""A temporary file unchanged this long belongs to no live writer (one whose name does
not say which process wrote it, or written from another machine on a shared folder)."""

_GRACE_S = 60.0  # a dead pid on this machine may be a live process elsewhere: wait a little


_RANDOM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
"""The characters of ``tempfile``'s 8 random ones."""


def _temporary_of(name: str, target_name: str) -> tuple[bool, int | None]:
    """Whether ``name`` is a temporary file of ``target_name`` (``.{target}.[{pid}-]{8 random}.tmp``,
    as :func:`atomic_path` makes them, older versions without the pid), and its writer's pid.

    Parsed by hand: a regex made from the target's name was compiled on every write
    (each name is new to ``re``'s cache), 0.25–0.4 ms of an atomic write's ~1 ms."""
    prefix = f".{target_name}."
    if not (name.startswith(prefix) and name.endswith(".tmp")):
        return False, None
    middle = name[len(prefix) : -len(".tmp")]
    pid, dash, random = middle.rpartition("-")
    if len(random) != 8 or not _RANDOM.issuperset(random) or (pid and not pid.isdecimal()) or (dash and not pid):
        return False, None
    return True, int(pid) if pid else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def remove_stale_temporaries(target: Path, now: float) -> list[Path]:
    """Remove the temporary files of ``target`` left by killed writers; return them.

    ``now`` is in the file system's time (the mtime of a file just made): ages compare
    mtimes of one file system, whatever the clocks of the machines writing to it."""
    removed: list[Path] = []
    folder = target.parent
    try:
        with os.scandir(folder) as entries:
            candidates = [(entry.name, *_temporary_of(entry.name, target.name)) for entry in entries]
    except OSError:
        return removed
    for name, ours, pid in candidates:
        if not ours:
            continue
        tmp = folder / name
        try:
            age_s = now - tmp.stat().st_mtime
        except OSError:
            continue
        dead = pid is not None and pid != os.getpid() and not _alive(pid)
        if age_s > STALE_AFTER_S or (dead and age_s > _GRACE_S):
            with contextlib.suppress(OSError):
                tmp.unlink()
                removed.append(tmp)
    return removed


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path to write to; on success it replaces ``path``.

    On an exception the temporary file is removed and ``path`` is left untouched.
    """
    target = Path(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp", dir=target.parent or ".")
    os.close(fd)
    tmp = Path(tmp_name)
    remove_stale_temporaries(target, now=tmp.stat().st_mtime)
    try:
        # mkstemp makes the file private (0600); outputs are ordinary files: keep the
        # mode of the file being replaced, else rw-r--r--.
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        os.chmod(tmp, mode)
        yield tmp
        with open(tmp, "rb") as fh:  # flush the data to disk before the rename makes it visible
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="\n")
