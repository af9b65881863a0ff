"""Which questions a run takes: one ``Selection`` and one id-file reader for every command.

``analyze``, ``simulate``, ``ingest`` and sweeps select questions the same way:

- ``split`` — CRAG split (0 = validation, 1) or ``None`` for every record;
- ``ids`` — only these interaction ids (read with :func:`read_ids`); an id that is not
  in the input is an error naming it, in every command;
- ``limit`` — at most this many questions (input order);
- ``scope`` — ``per-question`` (each question ranks its own pages, the paper) or
  ``global`` (one index over every selected question's pages, or over a corpus folder);
- ``population`` — for simulation: ``all``, ``retrieved_gold`` (t_suf defined) or
  ``fallback`` (not retrieved-gold: t* = t_sc).

An id file holds one interaction id per line; ``#`` starts a comment anywhere on a line
(``abc  # note`` is the id ``abc``), blank lines are ignored, and an id listed twice is an
error (it would ask for two rows of one question).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from streamrag.base.errors import InputError
from streamrag.base.validation import SettingsModel

Scope = Literal["per-question", "global"]
Population = Literal["all", "retrieved_gold", "fallback"]


class Selection(SettingsModel):
    """Which questions of an input a run takes (see the module docstring)."""

    split: int | None = 0
    ids: tuple[str, ...] | None = None
    limit: int | None = Field(default=None, ge=1)
    scope: Scope = "per-question"
    population: Population = "all"

    @field_validator("ids", mode="wrap")
    @classmethod
    def _keep_id_file(cls, value: Any, handler: Any) -> Any:
        """An :class:`IdList` stays one (its file and lines name a missing id)."""
        checked = handler(value)
        return value if isinstance(value, IdList) else checked

    @property
    def split_label(self) -> int | str:
        """The split as outputs record it (``"all"`` for every record)."""
        return "all" if self.split is None else self.split


class IdList(tuple[str, ...]):
    """Interaction ids read from a file: the ids, with the file (``path``) and the line of
    each (``lines``) for errors."""

    path: str
    lines: dict[str, int]

    def __new__(cls, ids: Sequence[str], path: str, lines: dict[str, int]) -> IdList:
        made = super().__new__(cls, ids)
        made.path, made.lines = path, lines
        return made

    def __reduce__(self) -> Any:  # pickled with its file and lines (worker processes)
        return (IdList, (tuple(self), self.path, self.lines))


def read_ids(path: str | os.PathLike[str]) -> IdList:
    """Interaction ids from a file (see the module docstring for the format)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the id file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: the id file is not UTF-8 text") from None
    ids: list[str] = []
    seen: dict[str, int] = {}
    for line_no, line in enumerate(text.splitlines(), start=1):
        value = line.split("#", 1)[0].strip()
        if not value:
            continue
        if value in seen:
            raise InputError(f"{path}:{line_no}: id {value!r} is listed twice (first on line {seen[value]})")
        seen[value] = line_no
        ids.append(value)
    if not ids:
        raise InputError(f"{path}: the id file lists no interaction id")
    return IdList(ids, str(path), seen)


def check_ids_found(ids: Sequence[str] | None, found: Collection[str], where: str | os.PathLike[str]) -> None:
    """Raise InputError naming the first requested id that is not in the input."""
    if ids is None:
        return
    missing = [i for i in ids if i not in found]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        named = f"{ids.path}:{ids.lines[missing[0]]}" if isinstance(ids, IdList) else "--ids"
        raise InputError(f"{named}: question {missing[0]!r}{more} not in {where}")
