"""Atomic file writes: write a temporary file next to the target, then ``os.replace``.

A reader never sees a half-written table, summary or figure, and an interrupted run leaves
either the old file or the new one. The temporary file lives in the target's folder so
that ``os.replace`` is a rename on one file system.

A process killed with ``kill -9`` cannot remove its temporary file. The next write of the
same target removes such leftovers (:func:`remove_stale_temporaries`): a temporary file
names the process that wrote it, and one whose process is gone, or that has not changed
for :data:`STALE_AFTER_S`, is stale; a live writer's file is never touched.

When the file system refuses the write (disk full, quota, read-only, permission), the
temporary file is removed, the target keeps its old content, and the error is an
:class:`~streamrag.base.errors.OutputError` naming the target (:func:`refused_writes`):
one line on the command line, not a traceback.

A run writes several files that belong together (a table and its summary, a simulation's
trace and results). Inside :func:`together` every atomic write is held back, fully
written and flushed, and at the end of the block they all replace their targets at once,
with signals held (:func:`~streamrag.base.system.signals.held`); an exception or an interrupt in
the block replaces none. So an interrupted run leaves the folder as it was — an earlier
run's files all untouched — never half old, half new.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from streamrag.base.errors import OutputError

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


WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})
"""What the file system says when it will not take more bytes: an error of the write
wherever it happens (a read error keeps its own message)."""


def output_error(exc: OSError, target: str | os.PathLike[str]) -> OutputError:
    """``exc`` (a refused write) as one line naming ``target``."""
    why = exc.strerror or os.strerror(exc.errno or 0) or str(exc)
    return OutputError(f"{target}: cannot write ({why}); nothing of it was written")


@contextlib.contextmanager
def refused_writes(target: str | os.PathLike[str], *, every: bool = False) -> Iterator[None]:
    """Turn the file system's refusal of a write in the block into :func:`output_error`:
    errors in :data:`WRITE_ERRNOS`, or (``every``) any ``OSError``, for blocks that only
    write ``target``."""
    try:
        yield
    except OSError as exc:
        if every or exc.errno in WRITE_ERRNOS:
            raise output_error(exc, target) from exc
        raise


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, durable: bool = True) -> Iterator[Path]:
    """Yield a temporary path to write to; on success it replaces ``path``.

    On an exception the temporary file is removed and ``path`` is left untouched.
    ``durable=False`` skips the flush to disk before the rename: only for files that
    verify themselves when read (cache entries), which a power cut may leave empty or
    torn under their final name, and whose reader then treats them as absent.
    """
    target = Path(path)
    with refused_writes(target, every=True):  # the folder refuses a new file: permission, full, read-only
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp", dir=target.parent or ".")
    os.close(fd)
    tmp = Path(tmp_name)
    remove_stale_temporaries(target, now=tmp.stat().st_mtime)
    try:
        # mkstemp makes the file private (0600); outputs are ordinary files: keep the
        # mode of the file being replaced, else rw-r--r--.
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
        os.chmod(tmp, mode)
        with refused_writes(target):
            yield tmp
        if durable:
            with refused_writes(target, every=True), open(tmp, "rb") as fh:
                os.fsync(fh.fileno())  # flush the data to disk before the rename makes it visible
        group = _GROUP.get()
        if group is not None:
            group.hold(target, tmp)
            return
        with refused_writes(target, every=True):
            os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` atomically (``durable``: see :func:`atomic_path`)."""
    with atomic_path(path, durable=durable) as tmp:
        tmp.write_bytes(data)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8", newline="\n")


@dataclass(slots=True)
class Together:
    """The files a :func:`together` block holds back (target → its temporary file, in
    the order they were last written)."""

    held: dict[Path, Path] = field(default_factory=dict)
    outer: Together | None = None
    """The block this one is inside (None: its files land when it ends)."""

    def hold(self, target: Path, tmp: Path) -> None:
        key = Path(os.path.abspath(target))
        earlier = self.held.pop(key, None)  # written twice: the last write counts
        if earlier is not None and earlier != tmp:
            _discard([earlier])
        self.held[key] = tmp


class Landed(KeyboardInterrupt):
    """An interrupt that came while a :func:`together` block's files replaced their
    targets: it waited, so they all did (``targets``) before it was raised."""

    def __init__(self, targets: list[Path]) -> None:
        super().__init__(f"{len(targets)} file(s) written before the interrupt")
        self.targets = targets


_GROUP: contextvars.ContextVar[Together | None] = contextvars.ContextVar("streamrag_atomic_together", default=None)


def _discard(paths: list[Path]) -> None:
    for tmp in paths:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


@contextlib.contextmanager
def together() -> Iterator[Together]:
    """The block's atomic writes (:func:`atomic_path` and what uses it) replace their
    targets together when the block ends, in the order each was last written (write the
    file that says "complete" last); on an exception or interrupt none does and their
    temporary files are removed. Inside another such block, the writes of one that ends
    well join the outer block's, those of one that fails are dropped alone.

    A signal during the renames waits for them (:func:`~streamrag.base.system.signals.held`)
    and is raised after as :class:`Landed`."""
    outer = _GROUP.get()
    group = Together(outer=outer)
    token = _GROUP.set(group)
    try:
        yield group
    except BaseException:
        _GROUP.reset(token)
        _discard(list(group.held.values()))
        raise
    _GROUP.reset(token)
    if outer is not None:
        for target, tmp in group.held.items():
            outer.hold(target, tmp)
        return
    from streamrag.base.system.signals import held

    pending = list(group.held.items())
    landed = False
    try:
        with held():
            try:
                while pending:
                    target, tmp = pending[0]
                    with refused_writes(target, every=True):
                        os.replace(tmp, target)
                    pending.pop(0)
            finally:
                _discard([tmp for _, tmp in pending])
            landed = True
    except KeyboardInterrupt:
        if landed:  # the held signal, raised again once every file was in place
            raise Landed(list(group.held)) from None
        raise


def staged(path: str | os.PathLike[str]) -> Path:
    """Where ``path``'s new content is now: its temporary file while a :func:`together`
    block holds it back (to read back what was just written), else ``path``."""
    key = Path(os.path.abspath(path))
    group = _GROUP.get()
    while group is not None:
        if key in group.held:
            return group.held[key]
        group = group.outer
    return Path(path)
