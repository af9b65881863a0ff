"""CRAG tasks 1&2 records: the pydantic model and a streaming reader.

Accepts CRAG v4 (``alt_ans``: a list) and the older format (``alternative_answers``: a
string holding a list). Reads ``.jsonl`` and ``.jsonl.bz2`` line by line, never loading a
whole file. Every problem is reported as file, 1-based line and field; with
``on_error="skip"`` the reader yields a :class:`SkippedRecord` with the reason instead,
so that no input row is silently dropped.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from streamrag.base.errors import RecordError
from streamrag.base.lines import iter_lines
from streamrag.base.validation import error_key, problem

OnError = Literal["raise", "skip"]

MAX_QUERY_WORDS = 10_000
"""The longest query streamrag takes, in words: about 55 minutes of speech at 3 words/s.

Work and memory grow with the words (a prefix per word, a replayed event per word), so a
query or table row beyond this is refused with a line naming it rather than run out of
memory: one table row with 10^8 words once made ``simulate --table`` grow to 21.8 GB."""


class SearchResult(BaseModel):
    """One retrieved web page of a CRAG record. Missing or null text fields become ''."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    page_name: str = ""
    page_url: str = ""
    page_snippet: str = ""
    page_result: str = ""
    page_last_modified: str = ""

    @field_validator("page_name", "page_url", "page_snippet", "page_result", "page_last_modified", mode="before")
    @classmethod
    def _none_to_empty(cls, value: Any) -> Any:
        return "" if value is None else value


def _answer_text(value: Any) -> str:
    """Numbers become their decimal text (``3.0`` → ``"3"``); strings pass through."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return value
    raise ValueError(f"expected a string or a number, got {type(value).__name__}")


def _parse_alt_string(text: str) -> list[Any]:
    """The older format stores alt answers as a string holding a (JSON or Python) list."""
    stripped = text.strip()
    if not stripped:
        return []
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        return value if isinstance(value, list) else [value]
    return [stripped]


class CragRecord(BaseModel):
    """A CRAG question with its pages.

    ``answer`` is text; a numeric answer becomes its decimal text and a list answer
    contributes its first element as ``answer`` and the rest to ``alt_ans``.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    interaction_id: str = Field(min_length=1)
    query: str
    answer: str = ""
    alt_ans: tuple[str, ...] = ()
    domain: str = ""
    question_type: str = ""
    static_or_dynamic: str = ""
    split: int | None = None
    query_time: str = ""
    search_results: tuple[SearchResult, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _normalize_formats(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        data = dict(data)
        alt: list[Any] = []
        if "alt_ans" in data and data["alt_ans"] is not None:
            raw = data["alt_ans"]
            alt = _parse_alt_string(raw) if isinstance(raw, str) else raw
        elif data.get("alternative_answers") is not None:
            raw = data["alternative_answers"]
            alt = _parse_alt_string(raw) if isinstance(raw, str) else raw
        if not isinstance(alt, list):
            raise ValueError("alt_ans: expected a list")
        answer = data.get("answer", "")
        if isinstance(answer, list):
            alt = list(answer[1:]) + list(alt)
            answer = answer[0] if answer else ""
        data["answer"] = "" if answer is None else answer
        data["alt_ans"] = alt
        if data.get("search_results") is None:
            data["search_results"] = []
        return data

    @field_validator("split", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, bool):  # pydantic takes true as split 1: a silent change of population
            raise ValueError("Input should be a number, not a boolean")
        return value

    @field_validator("answer", mode="before")
    @classmethod
    def _answer(cls, value: Any) -> str:
        return _answer_text(value)

    @field_validator("alt_ans", mode="before")
    @classmethod
    def _alt(cls, value: Any) -> tuple[str, ...]:
        return tuple(_answer_text(v) for v in value if v is not None)

    @field_validator("query")
    @classmethod
    def _query_not_empty(cls, value: str) -> str:
        n_words = len(value.split())
        if not n_words:
            raise ValueError("empty query")
        if n_words > MAX_QUERY_WORDS:
            raise ValueError(f"{n_words} words, more than the {MAX_QUERY_WORDS:,} streamrag takes (MAX_QUERY_WORDS)")
        return value

    @field_validator("search_results", mode="before")
    @classmethod
    def _pages_list(cls, value: Any) -> Any:
        if not isinstance(value, list):
            raise ValueError(f"expected a list of pages, got {type(value).__name__}")
        return value

    @property
    def n_words(self) -> int:
        """Number of whitespace-separated words of the query (design §2)."""
        return len(self.query.split())

    @property
    def answers(self) -> tuple[str, ...]:
        """The answer followed by the alt answers."""
        return (self.answer, *self.alt_ans)


@dataclass(frozen=True, slots=True)
class SkippedRecord:
    """A line that could not be used, with the reason (``on_error="skip"``)."""

    line_no: int
    interaction_id: str | None
    reason: str


def _record_error(path: Path, line_no: int, exc: ValidationError) -> RecordError:
    first = exc.errors(include_url=False)[0]
    message = "missing" if first.get("type") == "missing" else problem(first)
    return RecordError(str(path), line_no, error_key(CragRecord, first), message)


def parse_record(raw: bytes | str, *, path: Path, line_no: int) -> CragRecord:
    """Decode and validate one JSONL line; raise :class:`RecordError` naming the problem."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordError(str(path), line_no, "", f"not valid UTF-8 (byte {exc.start})") from None
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise RecordError(str(path), line_no, "", f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise RecordError(str(path), line_no, "", "not valid JSON (nested too deeply)") from None
    try:
        return CragRecord.model_validate(obj)
    except ValidationError as exc:
        raise _record_error(path, line_no, exc) from None


def _guess_id(raw: bytes | str) -> str | None:
    """Best-effort id of a bad line, for the skip row."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    marker = '"interaction_id"'
    pos = text.find(marker)
    if pos < 0:
        return None
    rest = text[pos + len(marker) :].lstrip(" :")
    if rest.startswith('"'):
        end = rest.find('"', 1)
        if end > 1:
            return rest[1:end]
    return None


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line that gave no record: why, and the interaction id it seems to name."""

    error: RecordError
    interaction_id: str | None


def read_line(raw: bytes | str, *, path: Path, line_no: int, split: int | None) -> CragRecord | BadLine:
    """One non-blank line as a record, or what is wrong with it: the part of reading that
    needs no other line (a worker process can do it; :class:`Selection` does the rest, in
    file order)."""
    try:
        record = parse_record(raw, path=path, line_no=line_no)
        if split is not None and record.split is None:
            raise RecordError(
                str(path),
                line_no,
                "split",
                'missing; to read records without one, pass --split all (a grid: input = {source = "...", split = "all"})',
            )
    except RecordError as exc:
        return BadLine(exc, _guess_id(raw))
    return record


@dataclass(frozen=True, slots=True)
class Wanted:
    """Which records a reading keeps: of ``split`` (None: all) and among ``ids`` (None: all)."""

    split: int | None = None
    ids: frozenset[str] | None = None

    def keeps(self, record: CragRecord) -> bool:
        return (self.split is None or record.split == self.split) and (self.ids is None or record.interaction_id in self.ids)


class Selection:
    """The ordered part of reading, fed each non-blank line's :func:`read_line` in file
    order: what is yielded (kept records, and bad lines as :class:`SkippedRecord` with
    ``on_error="skip"``), a repeated interaction id (a :class:`RecordError` even then:
    a second row for one question would make every table written from it ambiguous), and
    ``limit`` (skipped lines count too, so no row is lost from view)."""

    def __init__(self, path: Path, wanted: Wanted, limit: int | None, on_error: OnError) -> None:
        self.path, self.wanted, self.limit, self.on_error = path, wanted, limit, on_error
        self.n_yielded = 0
        self._first_line: dict[str, int] = {}

    @property
    def remaining(self) -> int | None:
        """How many more items may be yielded (None: no limit)."""
        return None if self.limit is None else max(0, self.limit - self.n_yielded)

    def lines(self, lines: Iterable[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
        """The non-blank lines of ``lines``, until the limit can take no more (checked
        before each line is read, so the caller admits each before asking for the next)."""
        for line_no, raw in lines:
            if self.remaining == 0:
                return
            if raw.strip():
                yield line_no, raw

    def admit(self, line_no: int, item: CragRecord | BadLine) -> CragRecord | SkippedRecord | None:
        """What line ``line_no`` yields, if anything."""
        if isinstance(item, BadLine):
            if self.on_error == "raise":
                raise item.error
            rid = item.interaction_id
            if rid is not None:
                self._check_first(rid, line_no)
            if self.wanted.ids is not None and rid not in self.wanted.ids:
                return None
            self.n_yielded += 1
            exc = item.error
            reason = f"line {line_no}: {exc.field + ': ' if exc.field else ''}{exc.problem}"
            return SkippedRecord(line_no=line_no, interaction_id=rid, reason=reason)
        self._check_first(item.interaction_id, line_no)
        if not self.wanted.keeps(item):
            return None
        self.n_yielded += 1
        return item

    def _check_first(self, interaction_id: str, line_no: int) -> None:
        """Note where ``interaction_id`` is first read; a second line with it is a RecordError."""
        seen_on = self._first_line.setdefault(interaction_id, line_no)
        if seen_on != line_no:
            problem = f"{interaction_id!r} repeats line {seen_on} (one record per question)"
            raise RecordError(str(self.path), line_no, "interaction_id", problem)


def read_records(
    path: str | Path,
    *,
    split: int | None = None,
    limit: int | None = None,
    ids: Collection[str] | None = None,
    on_error: OnError = "raise",
    parallel_decompression: bool = False,
    progress: Any = None,
) -> Iterator[CragRecord | SkippedRecord]:
    """Stream CRAG records from ``path`` (``.jsonl``, ``.jsonl.bz2`` or ``.jsonl.zst``).

    ``split`` keeps records of that split (0 = validation), ``None`` keeps all;
    ``ids`` keeps the listed interaction ids; ``limit`` stops after that many records
    were yielded (skipped lines count too, so no row is lost from view). Blank lines are
    ignored. ``progress`` is an optional callable receiving the compressed bytes read so
    far.

    An interaction id read twice raises :class:`RecordError` even with ``on_error="skip"``:
    a second row for one question would make every table written from it ambiguous.
    """
    path = Path(path)
    selection = Selection(path, Wanted(split, frozenset(ids) if ids is not None else None), limit, on_error)
    for line_no, raw in selection.lines(iter_lines(path, parallel=parallel_decompression, progress=progress)):
        item = selection.admit(line_no, read_line(raw, path=path, line_no=line_no, split=split))
        if item is not None:
            yield item
