"""A stabilization table replayed as a stream: memory flat in the number of rows (issue 28).

:func:`simulate_table` reads the table row by row and its per-prefix evidence question
by question (:func:`~streamrag.simulator.questions.table_entries`), selects as it goes
(:class:`~streamrag.simulator.question_select.Selector`), replays blocks of :data:`BLOCK`
questions — by the closed form, or on the engine (:func:`~streamrag.simulator.simulate.replay_of`)
— and writes each block's result rows and trace lines as soon as it is replayed, to the
temporary files of ``results.csv`` and ``trace.jsonl``; ``summary.json`` is gathered
column by column (:class:`~streamrag.simulator.run_output.ResultColumns`). What stays in
memory is a block, the evidence batch it was read from, and a few numbers per row.

The outputs are :func:`~streamrag.simulator.run_output.write_run`'s, byte for byte, and
they land together (:func:`~streamrag.base.atomic.together`): an error or an interrupt
anywhere in the run — a bad row at the end of the table included — leaves the folder as
it was.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from streamrag.pipeline import reflectors
from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.question_select import Selector
from streamrag.simulator.questions import Entry, table_entries
from streamrag.simulator.replay.closed_form import CLOSED_FORM
from streamrag.simulator.results import ResultRow, skipped_result
from streamrag.simulator.run_output import ResultColumns, result_columns, results_lines

if TYPE_CHECKING:
    from streamrag.simulator.scenario import ResolvedScenario
    from streamrag.simulator.simulate import QuestionOutput

BLOCK = 256
"""Questions replayed (and written) at a time."""


@dataclass(frozen=True, slots=True)
class TableRun:
    """What a streamed table replay wrote: the reflector model, what replayed it, the
    selection counts and the replayed rows' columns."""

    reflector_model: str
    replay: str
    counts: dict[str, int]
    columns: ResultColumns


def simulate_table(
    table: str | os.PathLike[str],
    rs: ResolvedScenario,
    out: str | os.PathLike[str],
    *,
    recorded: ResolvedScenario | None = None,
    manifest: Callable[[str, str, int], bytes],
    evidence: str | os.PathLike[str] | bool | None = None,
    ids: Sequence[str] | None = None,
    jobs: int = 1,
    engine: bool = False,
    on_progress: Callable[[int], None] | None = None,
) -> TableRun:
    """Replay ``table`` (with its evidence, as :func:`~streamrag.simulator.questions.table_entries`
    finds it) under ``rs`` into ``out``: ``trace.jsonl``, ``results.csv``, ``summary.json``
    and ``manifest.json`` (``manifest(reflector_model, replay, n_selected)``'s bytes),
    ``recorded`` the scenario the outputs record (default ``rs``). ``on_progress(k)``: k
    more table rows done."""
    from streamrag.base.atomic import atomic_path, together, write_bytes_atomic
    from streamrag.base.system.outputs import made_folder
    from streamrag.engine.trace_file import header_bytes
    from streamrag.simulator.run_output import summary_data
    from streamrag.simulator.simulate import check_needs, replay_of

    selection = rs.scenario.selection(ids)
    selector = Selector(population=selection.population, limit=selection.limit, ids=ids, origin=str(table))
    entries, source = table_entries(table, evidence=evidence, k=rs.scenario.data.k)
    check_needs(rs, trace_driven=source == "")
    model = reflectors.reflector_model(rs.scenario.reflector, evidence_source=source)
    replay = replay_of(rs, engine=engine)
    columns = ResultColumns()
    with made_folder(out) as folder, together():
        with (
            atomic_path(folder / "trace.jsonl") as trace_tmp,
            atomic_path(folder / "results.csv") as results_tmp,
            open(trace_tmp, "wb") as trace_fh,
            open(results_tmp, "wb") as results_fh,
        ):
            trace_fh.write(header_bytes())
            results = _ResultsFile(results_fh)
            for block, outputs, trace in _replayed(_blocks(entries, selector), rs, replay, jobs):
                replayed = iter(outputs)
                rows = [next(replayed).row if isinstance(e, SimQuestion) else skipped_result(e) for e in block]
                for row in rows:
                    columns.add(row)
                results.write(rows)
                trace_fh.write(trace)
                if on_progress:
                    on_progress(len(block))
            counts = selector.counts()  # every id found, a question selected: else nothing lands
            results.close()
        summary = summary_data(model, columns, recorded or rs, counts, replay=replay)
        write_bytes_atomic(folder / "summary.json", _json_bytes(summary))
        write_bytes_atomic(folder / "manifest.json", manifest(model, replay, counts["selected"]))
    return TableRun(model, replay, counts, columns)


def _json_bytes(data: dict[str, Any]) -> bytes:
    import json

    return (json.dumps(data, indent=2, allow_nan=False) + "\n").encode("utf-8")


def _blocks(entries: Iterator[Entry], selector: Selector) -> Iterator[list[Entry]]:
    """The selected entries in blocks of :data:`BLOCK` questions (and the skipped entries among them)."""
    block: list[Entry] = []
    n = 0
    for entry in entries:
        taken = selector.take(entry)
        if taken is None:
            continue
        block.append(taken)
        if isinstance(taken, SimQuestion):
            n += 1
            if n == BLOCK:
                yield block
                block, n = [], 0
    if block:
        yield block


Replayed = tuple[list[Entry], list["QuestionOutput"], bytes]
"""A block, its questions' outputs (result rows) and its trace lines."""


def _replayed(blocks: Iterator[list[Entry]], rs: ResolvedScenario, replay: str, jobs: int) -> Iterator[Replayed]:
    """Each block replayed, in order: in this process, or with ``jobs > 1`` the traces (the
    closed form) or whole blocks (the engine) on worker processes, at most 2 × ``jobs``
    blocks in flight."""
    from streamrag.simulator.simulate import closed_form_outputs, closed_form_trace, closed_form_traced, run_chunk

    closed = replay == CLOSED_FORM

    def questions(block: list[Entry]) -> list[SimQuestion]:
        return [e for e in block if isinstance(e, SimQuestion)]

    if jobs <= 1:
        for block in blocks:
            qs = questions(block)
            if closed:
                yield block, *closed_form_traced(qs, rs)
            else:
                outputs = run_chunk(qs, rs) if qs else []
                yield block, outputs, b"".join(o.trace for o in outputs)
        return

    from streamrag.base.system.processes import worker_pool

    def done(item: tuple[list[Entry], list[QuestionOutput] | None, Any]) -> Replayed:
        block, outputs, future = item
        if future is None:
            return block, outputs or [], b""
        if outputs is not None:  # the closed form: rows here, the trace there
            return block, outputs, future.result()
        outputs = future.result()
        return block, outputs, b"".join(o.trace for o in outputs)

    with worker_pool(jobs) as pool:
        pending: deque[tuple[list[Entry], list[QuestionOutput] | None, Any]] = deque()
        for block in blocks:
            qs = questions(block)
            if not qs:
                pending.append((block, [], None))
            elif closed:
                pending.append((block, closed_form_outputs(qs, rs), pool.submit(closed_form_trace, qs, rs)))
            else:
                pending.append((block, None, pool.submit(run_chunk, qs, rs)))
            while len(pending) > 2 * jobs:
                yield done(pending.popleft())
        while pending:
            yield done(pending.popleft())


class _ResultsFile:
    """``results.csv`` written as rows come: its columns (:func:`~streamrag.simulator.run_output.result_columns`)
    are the first replayed row's — the rows of one table share them, as its evidence's
    columns are the file's —, the rows before it held until then."""

    def __init__(self, fh: IO[bytes]) -> None:
        self._fh = fh
        self._held: list[ResultRow] = []
        self._columns: tuple[str, ...] | None = None

    def write(self, rows: list[ResultRow]) -> None:
        if self._columns is None:
            first = next((r for r in rows if r.replayed), None)
            if first is None:
                self._held += rows
                return
            self._start(result_columns([first]))
            rows = [*self._held, *rows]
            self._held = []
        elif any(r.replayed for r in rows) and result_columns([r for r in rows if r.replayed]) != self._columns:
            raise RuntimeError("results.csv: rows of another column set after the first")  # pragma: no cover
        self._fh.write(results_lines(rows, self._columns))  # type: ignore[arg-type]

    def _start(self, columns: tuple[str, ...]) -> None:
        self._columns = columns
        self._fh.write(results_lines([columns], ()))

    def close(self) -> None:
        """Write what is held (no replayed row: the columns of word prefixes)."""
        if self._columns is None:
            self._start(result_columns(self._held))
            self._fh.write(results_lines(self._held, self._columns))  # type: ignore[arg-type]
            self._held = []
