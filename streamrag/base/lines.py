"""Line-by-line reading of ``.jsonl``, ``.jsonl.bz2`` and ``.jsonl.zst`` files, streaming.

The one JSONL reader of the package (CRAG records, BEIR corpora, word timings,
latency measurements); it sits in the base layer so that every layer can use it.
The format is told by the file's first bytes (its name must not claim another).
bzip2 is decoded by the standard library's ``bz2`` (one core) or ``indexed_bzip2``
(blocks decoded in parallel threads), chosen by the caller; Zstandard by the
``zstandard`` package, which decodes a CRAG-shaped file many times faster than
``bzip2 -dc`` (benchmarks/RESULTS.md) — ``streamrag ingest --convert OUT.jsonl.zst``
writes such a copy once.
"""

from __future__ import annotations

import bz2
import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from streamrag.base.errors import DataFileError

_BUFFER_BYTES = 1 << 20
_BZ2_MAGIC = b"BZh"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
SUFFIXES = (".jsonl", ".jsonl.bz2", ".jsonl.zst")
"""File names the readers take (a name says what a user gave; the first bytes decide)."""


def _format(path: Path) -> str:
    """``"bz2"``, ``"zst"`` or ``"plain"`` by the file's magic bytes; a compressed name on a
    file without that magic is an error (a renamed or half-written file)."""
    with path.open("rb") as fh:
        head = fh.read(4)
    found = "bz2" if head.startswith(_BZ2_MAGIC) else "zst" if head == _ZSTD_MAGIC else "plain"
    claimed = {".bz2": "bz2", ".zst": "zst"}.get(path.suffix)
    if claimed is not None and claimed != found:
        kind = {"bz2": "a bzip2", "zst": "a Zstandard"}[claimed]
        raise DataFileError(f"{path}: not {kind} file (its name ends in {path.suffix})")
    return found


ZSTD_LEVEL = 10
"""Level of the Zstandard files streamrag writes (``generate``, ``ingest --convert``): decoding
speed barely depends on it, and 10 is within a few percent of bzip2 -9's size on CRAG pages."""


def zstd_writer(raw: IO[bytes]) -> Any:
    """A writable stream that compresses into ``raw`` as one Zstandard frame with a content
    checksum (so a damaged copy is refused on reading, as bzip2's CRCs make a damaged
    ``.bz2`` refused). Close it to finish the frame; ``raw`` stays open."""
    import zstandard

    compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True, threads=-1)
    return compressor.stream_writer(raw, closefd=False)


class _TruncatedError(EOFError):
    pass


def _zstd_chunks(raw: IO[bytes]) -> Iterator[bytes]:
    """Decompressed bytes of every Zstandard frame in ``raw``, in order. Raises
    :class:`_TruncatedError` when the input ends inside a frame: ``zstandard``'s stream reader
    returns a truncated file's bytes without a word, so frame ends are checked here."""
    import zstandard

    decompressor = zstandard.ZstdDecompressor()
    frame = decompressor.decompressobj()
    in_frame = False
    while block := raw.read(_BUFFER_BYTES):
        while block:
            in_frame = True
            out = frame.decompress(block)
            if out:
                yield out
            if not frame.eof:
                break
            block, frame, in_frame = frame.unused_data, decompressor.decompressobj(), False
    if in_frame:
        raise _TruncatedError("Zstandard frame is cut short")


def _split_lines(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Lines (with their ``\\n``) of a stream of byte chunks, the last one possibly without."""
    rest = b""
    for chunk in chunks:
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        for line in lines:
            yield line + b"\n"
    if rest:
        yield rest


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
        raise DataFileError(f"{path}: is a folder, expected a .jsonl, .jsonl.bz2 or .jsonl.zst file")
    kind = _format(path)
    raw = path.open("rb")
    line_no = 0
    stream: IO[bytes] | Iterator[bytes]
    decoder: IO[bytes] | None = None  # a bzip2 decoder to close after the lines
    position: Callable[[], int]
    decode_errors: tuple[type[Exception], ...] = (EOFError, OSError, RuntimeError, ValueError)
    try:
        if kind == "plain":
            stream = io.BufferedReader(raw, _BUFFER_BYTES)
            position = raw.tell
        elif kind == "zst":
            import zstandard

            stream = _split_lines(_zstd_chunks(raw))
            position = raw.tell
            decode_errors = (*decode_errors, zstandard.ZstdError)
        elif parallel:
            import indexed_bzip2

            parallel_decoder = indexed_bzip2.open(raw, parallelization=0)  # 0 = all cores
            stream = decoder = parallel_decoder

            def position() -> int:
                return parallel_decoder.tell_compressed() // 8  # bits → bytes
        else:
            stream = decoder = bz2.BZ2File(raw)
            position = raw.tell
        try:
            done = 0
            for line_no, line in enumerate(stream, start=1):
                if progress is not None:
                    # the parallel decoder's position can step back between blocks
                    done = max(done, position())
                    progress(done)
                yield line_no, line
        except decode_errors as exc:
            where = f"after line {line_no}" if line_no else "before the first line"
            # indexed_bzip2 reports every decoding failure as a bare "std::exception".
            bare = isinstance(exc, RuntimeError) and kind == "bz2"
            detail = "bzip2 stream is cut short or damaged" if bare else str(exc) or type(exc).__name__
            raise DataFileError(f"{path}: compressed data is truncated or corrupt {where} ({detail})") from None
        finally:
            if decoder is not None:
                decoder.close()
    finally:
        raw.close()


def json_line(raw: str | bytes, path: str | os.PathLike[str], line_no: int) -> Any:
    """One line of a JSON-lines file parsed; a RecordError naming file and line when it is
    not UTF-8, not JSON, or nested too deeply for the parser (the one rule every JSON-lines
    reader uses)."""
    import json

    from streamrag.base.errors import RecordError

    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise RecordError(str(path), line_no, "", f"not valid UTF-8 (byte {exc.start})") from None
    except ValueError as exc:
        raise RecordError(str(path), line_no, "", f"not valid JSON ({exc})") from None
    except RecursionError:
        raise RecordError(str(path), line_no, "", "not valid JSON (nested too deeply)") from None


def iter_json_objects(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_no, object)`` for each non-blank line of a JSONL file (``.bz2`` too).

    Raises :class:`~streamrag.base.errors.RecordError` naming file and line for a line that is
    not UTF-8, not JSON, or not a JSON object; :class:`DataFileError` as :func:`iter_lines`.
    """
    from streamrag.base.errors import RecordError

    for line_no, raw in iter_lines(path):
        if not raw.strip():
            continue
        obj = json_line(raw, path, line_no)
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


def convert_to_zstd(source: Path, target: Path, *, parallel: bool = False, progress: Callable[[int], None] | None = None) -> int:
    """Write every line of ``source`` (any format :func:`iter_lines` reads) to ``target`` as
    Zstandard (:func:`zstd_writer`), atomically; returns the number of lines. Lines are copied
    byte for byte, so records, ids and chunk keys are those of the source."""
    from streamrag.base.atomic import atomic_path
    from streamrag.base.errors import ConfigError

    if target.suffix != ".zst":
        raise ConfigError(f"--convert writes Zstandard: name the copy *.jsonl.zst, not {target.name}")
    if target.resolve() == source.resolve():
        raise ConfigError(f"--convert {target}: the copy would overwrite its source")
    n = 0
    with atomic_path(target) as tmp, open(tmp, "wb") as raw:
        with zstd_writer(raw) as out:
            for n, line in iter_lines(source, parallel=parallel, progress=progress):  # noqa: B007
                out.write(line)
        raw.flush()
        os.fsync(raw.fileno())
    return n
