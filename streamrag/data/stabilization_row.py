"""The stabilization table's row (design §7), declared once.

:class:`StabilizationRow` lists every column streamrag knows, in the order ``analyze``
writes them; each field's :class:`Column` metadata says what the readers, the writer and
the frames need. Everything else is read off it: the contract columns, the optional
ones, the columns a published table may lack, the columns by type, the values a row that
is not skipped must have, the row of a skipped question.

Rows travel as dicts (``analyze`` builds thousands; a dict is what a frame and a CSV
writer take); the class is their schema, not their container.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated, Any, Literal, get_type_hints

from streamrag.base.columns import Dtype


@dataclass(frozen=True, slots=True)
class Column:
    """What a column of the stabilization table is.

    ``contract``: a §7 column (required in a table, except ``absent_ok``); otherwise an
    optional column, read with its type when present. ``required``: a row that is not
    skipped must have a value. ``when``: the column is written only by analyses that make
    it (``entity``: ``--entity-predictor``; ``asr``: ASR hypotheses). ``read_rank``: the
    optional column's place among the optional columns of a frame read back (readers
    have always ordered them so)."""

    dtype: Dtype
    contract: bool = False
    required: bool = False
    absent_ok: bool = False
    when: Literal["entity", "asr"] | None = None
    read_rank: int = 0


@dataclass(frozen=True, slots=True)
class StabilizationRow:
    """One question of the stabilization table (``None``: undefined, an empty field)."""

    interaction_id: Annotated[str, Column("str", contract=True, required=True)]
    domain: Annotated[str | None, Column("str", contract=True)]
    question_type: Annotated[str | None, Column("str", contract=True)]
    static_or_dynamic: Annotated[str | None, Column("str", contract=True)]
    n_words: Annotated[int | None, Column("int", contract=True, required=True)]
    n_passages: Annotated[int | None, Column("int", contract=True)]
    groundable: Annotated[bool | None, Column("bool", contract=True, required=True)]
    retrieved_gold: Annotated[bool | None, Column("bool", contract=True, required=True)]
    t_sc: Annotated[int | None, Column("int", contract=True, required=True)]
    phi_sc: Annotated[float | None, Column("float", contract=True, required=True)]
    t_suf: Annotated[int | None, Column("int", contract=True)]
    phi_suf: Annotated[float | None, Column("float", contract=True)]
    volatility: Annotated[int | None, Column("int", contract=True)]
    gold_density: Annotated[float | None, Column("float", contract=True, absent_ok=True)]
    """The anchor study's published tables have no such column."""
    n_gold: Annotated[int | None, Column("int", read_rank=2)]
    t_anchor: Annotated[int | None, Column("int", read_rank=1)]
    t_pivot: Annotated[int | None, Column("int", read_rank=3)]
    no_overlap: Annotated[bool | None, Column("bool", read_rank=5)]
    n_pages_unread: Annotated[int | None, Column("int", read_rank=6)]
    n_chunks_cut: Annotated[int | None, Column("int", read_rank=7)]
    t_entity: Annotated[int | None, Column("int", when="entity", read_rank=4)]
    """First named entity heard: the first t whose prefix the tagger finds one in (online)."""
    t_entity_full: Annotated[int | None, Column("int", when="entity", read_rank=15)]
    """First named entity of the whole question tagged at once (the anchor's rule)."""
    n_hypotheses: Annotated[int | None, Column("int", when="asr", read_rank=12)]
    """Over hypotheses: the input events; ``n_words`` stays the question's words."""
    t_sc_words: Annotated[int | None, Column("int", when="asr", read_rank=13)]
    t_suf_words: Annotated[int | None, Column("int", when="asr", read_rank=14)]
    """The words hypothesis t_sc (t_suf) showed (``t_sc``/``t_suf`` count hypotheses)."""
    t_sc_ms: Annotated[float | None, Column("float", when="asr", read_rank=8)]
    t_suf_ms: Annotated[float | None, Column("float", when="asr", read_rank=9)]
    revised_share: Annotated[float | None, Column("float", when="asr", read_rank=10)]
    n_revisions: Annotated[int | None, Column("int", when="asr", read_rank=11)]
    skip_reason: Annotated[str | None, Column("str", read_rank=0)]
    """Non-empty: the question was skipped (kept in the table, counted, excluded from
    statistics)."""


def _columns() -> dict[str, Column]:
    hints = get_type_hints(StabilizationRow, include_extras=True)
    return {f.name: next(m for m in hints[f.name].__metadata__ if isinstance(m, Column)) for f in fields(StabilizationRow)}


COLUMNS: dict[str, Column] = _columns()
"""Every known column, in written order, with its :class:`Column`."""

STABILIZATION_COLUMNS: tuple[str, ...] = tuple(name for name, c in COLUMNS.items() if c.contract)
"""The contract columns of a stabilization table (design §7), in the order they are written."""

ABSENT_COLUMNS: tuple[str, ...] = tuple(name for name, c in COLUMNS.items() if c.absent_ok)
"""Contract columns a table may lack: the anchor study's published tables have no
``gold_density``. Every other contract column is required."""

OPTIONAL_COLUMNS: tuple[str, ...] = tuple(
    sorted((name for name, c in COLUMNS.items() if not c.contract), key=lambda name: COLUMNS[name].read_rank)
)
"""Columns streamrag writes and reads with their types when present; tables from
elsewhere may lack them."""

WRITTEN_EXTRA_COLUMNS: tuple[str, ...] = tuple(name for name, c in COLUMNS.items() if not c.contract)
"""The optional columns in the order ``analyze`` writes them (after the contract ones;
those with a ``when`` only when some row has them)."""

REQUIRED_VALUES: tuple[str, ...] = tuple(name for name, c in COLUMNS.items() if c.required)
"""Needed on every row that is not skipped; the other columns may be empty (undefined)."""

ASR_COLUMNS: tuple[str, ...] = tuple(name for name, c in COLUMNS.items() if c.when == "asr")
"""Row columns of an analysis over ASR hypotheses."""


DTYPES: dict[str, Dtype] = {name: c.dtype for name, c in COLUMNS.items()}
"""Every known column's declared type (its Arrow type and dtype: :mod:`streamrag.base.columns`)."""


def columns_of(dtype: Dtype) -> tuple[str, ...]:
    """The known columns of one type, in written order."""
    return tuple(name for name, c in COLUMNS.items() if c.dtype == dtype)


def skipped_row(interaction_id: str | None, reason: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A row for a question that could not be analyzed: its metadata if known (the text
    columns), every value undefined, the reason."""
    row: dict[str, Any] = {"interaction_id": interaction_id or "", "domain": "", "question_type": "", "static_or_dynamic": ""}
    row.update(meta or {})
    row.update({name: None for name, c in COLUMNS.items() if c.dtype != "str" and c.when is None})
    row["skip_reason"] = reason
    return row
