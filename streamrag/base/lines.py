"""Line-by-line reading of ``.jsonl`` and ``.jsonl.bz2`` files, streaming.

The one JSONL reader of the package (CRAG records, BEIR corpora, word timings,
latency measurements); it sits in the base layer so that every layer can use it.
Decompression is either the standard library's ``bz2`` (one core) or ``indexed_bzip2``
(bzip2 blocks decoded in parallel threads), chosen by the caller.
"""

from __future__ import annotations

import bz2
import io
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from streamrag.base.errors import DataFileError

_BUFFER_BYTES = 1 << 20


def _is_bz2(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(3) == b"BZh"


def iter_lines(
    path: Path,
    *,
    parallel: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_no, raw_line)`` with 1-based line numbers.

    ``progress`` receives the number of *compressed* (on-disk) bytes consumed so far,
    at most once per line. Raises :class:`DataFileError` for a missing file or a
    truncated / corrupt compressed stream, naming the last complete line.
    """
    if not path.exists():
        raise DataFileError(f"{path}: no such file")
    if path.is_dir():
        raise DataFileError(f"{path}: is a folder, expected a .jsonl or .jsonl.bz2 file")
    compressed = _is_bz2(path)
    if path.suffix == ".bz2" and not compressed:
        raise DataFileError(f"{path}: not a bzip2 file (its name ends in .bz2)")
    raw = path.open("rb")
    line_no = 0
    stream: IO[bytes]
    position: Callable[[], int]
    try:
        if not compressed:
            stream = io.BufferedReader(raw, _BUFFER_BYTES)
            position = raw.tell
        elif parallel:
            import indexed_bzip2

            decoder = indexed_bzip2.open(raw, parallelization=0)  # 0 = all cores
            stream = decoder

            def position() -> int:
                return decoder.tell_compressed() // 8  # bits → bytes
        else:
            stream = bz2.BZ2File(raw)
            position = raw.tell
        try:
            done = 0
            for line_no, line in enumerate(stream, start=1):
                if progress is not None:
                    # the parallel decoder's position can step back between blocks
                    done = max(done, position())
                    progress(done)
                yield line_no, line
        except (EOFError, OSError, RuntimeError, ValueError) as exc:
            where = f"after line {line_no}" if line_no else "before the first line"
            # indexed_bzip2 reports every decoding failure as a bare "std::exception".
            detail = "bzip2 stream is cut short or damaged" if isinstance(exc, RuntimeError) else str(exc) or type(exc).__name__
            raise DataFileError(f"{path}: compressed data is truncated or corrupt {where} ({detail})") from None
        finally:
            if compressed:
                stream.close()
    finally:
        raw.close()


def iter_json_objects(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_no, object)`` for each non-blank line of a JSONL file (``.bz2`` too).

    Raises :class:`~streamrag.base.errors.RecordError` naming file and line for a line that is
    not UTF-8, not JSON, or not a JSON object; :class:`DataFileError` as :func:`iter_lines`.
    """
    import json

    from streamrag.base.errors import RecordError

    for line_no, raw in iter_lines(path):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except UnicodeDecodeError as exc:
            raise RecordError(str(path), line_no, "", f"not valid UTF-8 (byte {exc.start})") from None
        except ValueError as exc:
            raise RecordError(str(path), line_no, "", f"not valid JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise RecordError(str(path), line_no, "", f"expected a JSON object, got {type(obj).__name__}")
        yield line_no, obj


def iter_question_objects(path: Path, *, twice: str = "appears twice") -> Iterator[tuple[int, str, dict]]:
    """``(line_no, interaction_id, object)`` of a per-question JSONL file: each object has a
    non-empty string ``interaction_id``, unique in the file. ``twice`` words the
    duplicate's error (``'q' {twice} (first on line N)``). Raises as
    :func:`iter_json_objects`, and :class:`~streamrag.base.errors.RecordError` for the id."""
    from streamrag.base.errors import RecordError

    first_line: dict[str, int] = {}
    for line_no, obj in iter_json_objects(path):
        qid = obj.get("interaction_id")
        if not isinstance(qid, str) or not qid:
            problem = "missing" if qid is None else f"expected a non-empty string, got {qid!r}"
            raise RecordError(str(path), line_no, "interaction_id", problem)
        if qid in first_line:
            raise RecordError(str(path), line_no, "interaction_id", f"{qid!r} {twice} (first on line {first_line[qid]})")
        first_line[qid] = line_no
        yield line_no, qid, obj
