"""The ingestion progress callback reports compressed bytes read, up to the file size."""

from __future__ import annotations

from pathlib import Path

from streamrag.base.progress import file_progress
from streamrag.data.crag import read_records


def test_progress_reaches_the_file_size(crag_sample: Path) -> None:
    seen: list[int] = []
    for parallel in (False, True):
        seen.clear()
        list(read_records(crag_sample, progress=seen.append, parallel_decompression=parallel))
        assert len(seen) == 10
        assert seen == sorted(seen) and 0 < seen[-1] <= crag_sample.stat().st_size


def test_bar_is_off_without_a_terminal_and_drawn_when_asked(crag_sample: Path) -> None:
    with file_progress(crag_sample, "reading", enabled=False) as callback:
        assert callback is None
    with file_progress(crag_sample, "reading", enabled=True) as callback:
        assert callback is not None
        list(read_records(crag_sample, progress=callback))
