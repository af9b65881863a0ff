"""CSV tables read row by row, every error one line naming file, line and column.

The rules every per-question CSV streamrag reads shares — the stabilization table
(:mod:`streamrag.analysis.table`), a run's ``results.csv`` and a published latency file
(:mod:`streamrag.simulator.compare.published`): UTF-8 (a BOM is ignored), a header row without
duplicates, the required columns present, as many fields per row as in the header,
fields stripped, blank lines skipped, one row per question id (a skipped row may
have none). Values are parsed by the
caller with :func:`parse_int` / :func:`parse_float`, which raise :class:`RowError`; the
caller adds file and line (``file:line: column 'c': problem``).
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, TextIO

from streamrag.base.errors import DataFileError, TableError

__all__ = ["CsvRow", "RowError", "iter_rows", "parse_float", "parse_int", "read_rows"]

_INT_RE = re.compile(r"[+-]?\d+(?:\.0*)?")  # "3" and "3.0" (pandas writes ints with NaN as floats)


class RowError(Exception):
    """A bad value in one row (``column 'c': problem``); the reader adds file and line."""

    def __init__(self, column: str, problem: str) -> None:
        super().__init__(f"column '{column}': {problem}")


class CsvRow(NamedTuple):
    """One data row: its 1-based line in the file and ``{column: stripped field}``."""

    line: int
    fields: dict[str, str]


INT64_MAX = 2**63 - 1
"""The largest integer a table cell may hold (its column's dtype is Int64)."""


def parse_int(column: str, raw: str) -> int | None:
    """An integer field (``3`` or ``3.0``); ``None`` when empty."""
    if raw == "":
        return None
    if not _INT_RE.fullmatch(raw):
        raise RowError(column, f"{raw!r} is not an integer")
    value = int(float(raw)) if "." in raw else int(raw)
    if abs(value) > INT64_MAX:
        raise RowError(column, f"{raw} is beyond the 64-bit integers every table column is read as")
    return value


def parse_float(column: str, raw: str) -> float | None:
    """A finite number; ``None`` when empty (NaN and infinities are refused: undefined is empty)."""
    if raw == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise RowError(column, f"{raw!r} is not a number") from None
    if not math.isfinite(value):
        raise RowError(column, f"{raw!r} is not a finite number (leave the field empty when undefined)")
    return value


def _open(path: str | os.PathLike[str]) -> TextIO:
    """The file opened for reading; :class:`DataFileError` when it cannot be."""
    try:
        return open(path, encoding="utf-8-sig", newline="")
    except FileNotFoundError:
        raise DataFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise DataFileError(f"{path}: cannot read: {exc.strerror or exc}") from None


def not_utf8(path: str | os.PathLike[str]) -> TableError:
    """The line of the first byte that is not UTF-8 (the text reader decodes blocks ahead
    of the rows, so the row being read when it fails is not where the byte is)."""
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return TableError(f"{path}:{line}: not UTF-8 text (byte {exc.start})")
    return TableError(f"{path}: not UTF-8 text")


def read_rows(
    path: str | os.PathLike[str],
    required: Sequence[str],
    *,
    id_column: str = "interaction_id",
    skip_column: str = "skip_reason",
) -> tuple[list[str], list[CsvRow]]:
    """The header and the data rows of a CSV file (:func:`iter_rows`, read whole)."""
    header, rows = iter_rows(path, required, id_column=id_column, skip_column=skip_column)
    return header, list(rows)


def iter_rows(
    path: str | os.PathLike[str],
    required: Sequence[str],
    *,
    id_column: str = "interaction_id",
    skip_column: str = "skip_reason",
) -> tuple[list[str], Iterator[CsvRow]]:
    """The header of a CSV file (read and checked now) and its data rows, one at a time
    (the file stays open until they are all read or the iterator is dropped).

    Checks the structure only: a header naming every column of ``required`` once, rows
    with as many fields as the header, ``id_column`` (when required) non-empty and unique
    — except on a row whose ``skip_column`` is non-empty: ``analyze --skip-bad`` keeps a
    line it could not read, and such a line may have no readable id.
    Raises :class:`~streamrag.base.errors.DataFileError` when the file cannot be read,
    :class:`~streamrag.base.errors.TableError` (``file:line: problem``) otherwise — for a
    row, when the iterator reaches it.
    """
    rows = _rows(path, required, id_column, skip_column)
    header = next(rows)
    return header, rows


def _rows(path: str | os.PathLike[str], required: Sequence[str], id_column: str, skip_column: str) -> Iterator[Any]:
    """The header first, then the rows (:func:`iter_rows`)."""
    name = str(path)
    first_line: dict[str, int] = {}
    line = 1
    with _open(path) as fh:
        reader = csv.reader(fh)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise TableError(f"{name}:1: empty file, expected a header row") from None
        except UnicodeDecodeError:
            raise not_utf8(path) from None
        except csv.Error as exc:
            raise TableError(f"{name}:1: unreadable header: {exc}") from None
        seen: set[str] = set()
        for col in header:
            if col in seen:
                raise TableError(f"{name}:1: duplicate column {col!r}")
            seen.add(col)
        missing = [c for c in required if c not in seen]
        if missing:
            listed = ", ".join(repr(c) for c in missing)
            raise TableError(f"{name}:1: missing column{'s' if len(missing) > 1 else ''} {listed}")
        yield header
        check_id = id_column in required
        try:
            for row in reader:
                line = reader.line_num
                if len(row) <= 1 and "".join(row).strip() == "":
                    continue  # a blank line (a single empty field cannot be a row of several columns)
                if len(row) != len(header):
                    raise TableError(f"{name}:{line}: expected {len(header)} fields as in the header, found {len(row)}")
                fields = {h: f.strip() for h, f in zip(header, row, strict=True)}
                if check_id:
                    qid = fields[id_column]
                    if qid == "" and fields.get(skip_column):
                        yield CsvRow(line, fields)  # a record unread by analyze --skip-bad: no id to repeat
                        continue
                    if qid == "":
                        raise TableError(f"{name}:{line}: column '{id_column}': empty, but a value is required")
                    if qid in first_line:
                        raise TableError(
                            f"{name}:{line}: column '{id_column}': {qid!r} repeats line {first_line[qid]} (one row per question)"
                        )
                    first_line[qid] = line
                yield CsvRow(line, fields)
        except csv.Error as exc:
            raise TableError(f"{name}:{reader.line_num}: malformed CSV: {exc}") from None
        except UnicodeDecodeError:
            raise not_utf8(path) from None
