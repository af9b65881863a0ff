"""Progress bars for long reads (rich), shown only on an interactive terminal."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def file_progress(path: Path, description: str, *, enabled: bool | None = None) -> Iterator[Callable[[int], None] | None]:
    """Yield a callback taking bytes read of ``path`` (on disk), drawing a bar on stderr.

    Yields ``None`` (no bar, no cost) when stderr is not a terminal or ``enabled`` is False.
    """
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled or not path.is_file():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

    total = path.stat().st_size
    columns = (description, BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.update(task, completed=done)
