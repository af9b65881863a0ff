"""What a simulate run writes: ``results.csv``'s lines, ``summary.json``, ``manifest.json``.

:mod:`~streamrag.simulator.results` declares the per-question row and derives it from a
trace; here the rows become the run's files: the CSV lines (floats in shortest round-trip
form), the summary's aggregates by the naming rule of :mod:`~streamrag.simulator.results`
(gathered row by row in :class:`ResultColumns`, so a streamed table keeps a few numbers per
row), the summary and manifest data (validated against the models of
:mod:`~streamrag.simulator.run_files`), and :func:`write_run`, which writes a run's folder
together. Live runs and sweeps write through the same functions, so their files match.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from streamrag.base.digest import file_sha256
from streamrag.base.formats import FIELD, FORMAT_VERSION, versioned
from streamrag.pipeline.outcomes import OUTCOMES, outcome_counts
from streamrag.simulator.results import BOOL_COLUMNS, NUMERIC_COLUMNS, OPTIONAL_COLUMNS, RESULT_COLUMNS, ResultRow
from streamrag.simulator.turn_parts import ENDPOINT_COLUMNS, compute_summary

if TYPE_CHECKING:
    from streamrag.simulator.scenario import ResolvedScenario
    from streamrag.simulator.simulate import SimulationRun


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def result_columns(rows: Sequence[ResultRow]) -> tuple[str, ...]:
    """:data:`~streamrag.simulator.results.RESULT_COLUMNS`, and before ``question_type`` each optional column some row
    has: ``calls_on_revised`` (ASR hypotheses), ``rankings`` and ``ranking_busy_ms``
    (rankings that cost something); a plain run keeps the plain columns."""
    extra = tuple(c for c in OPTIONAL_COLUMNS if any(getattr(r, c) is not None for r in rows))
    if not extra:
        return RESULT_COLUMNS
    at = RESULT_COLUMNS.index("question_type")
    return (*RESULT_COLUMNS[:at], *extra, *RESULT_COLUMNS[at:])


def results_csv(rows: Sequence[ResultRow]) -> bytes:
    """``results.csv`` bytes: header + one line per row, floats in shortest round-trip form."""
    columns = result_columns(rows)
    return results_lines([columns], ()) + results_lines(rows, columns)


def results_lines(rows: Sequence[Any], columns: Sequence[str]) -> bytes:
    """Lines of ``results.csv``: each row's ``columns``, or (``columns`` empty) each row
    as the sequence of its fields (the header)."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for row in rows:
        writer.writerow([_fmt(getattr(row, c)) for c in columns] if columns else row)
    return buf.getvalue().encode("utf-8")


def _clean(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def stats(values: np.ndarray) -> dict[str, float | None]:
    if values.size == 0:
        return {"mean": None, "median": None, "p10": None, "p90": None, "min": None, "max": None}
    return {
        "mean": _clean(float(values.mean())),
        "median": _clean(float(np.median(values))),
        "p10": _clean(float(np.quantile(values, 0.1))),
        "p90": _clean(float(np.quantile(values, 0.9))),
        "min": _clean(float(values.min())),
        "max": _clean(float(values.max())),
    }


def spearman(x: np.ndarray, y: np.ndarray) -> dict[str, float | int | None]:
    """Spearman ρ and two-sided p (``None`` when undefined: < 3 rows or a constant column)."""
    from streamrag.base.correlation import spearman as rank_correlation

    return rank_correlation(x, y)


class ResultColumns:
    """The replayed rows' aggregated columns, gathered row by row (:meth:`add`): what
    :meth:`summary` needs, a few numbers per row instead of the rows."""

    def __init__(self) -> None:
        from array import array

        self.n = 0
        self._numeric = {name: array("d") for name in (*NUMERIC_COLUMNS, *OPTIONAL_COLUMNS)}
        self._hits = dict.fromkeys(BOOL_COLUMNS, 0)
        self._revised = False
        self._ranked = False
        self._mutating = False
        self._endpoint = False
        self._outcomes = [0] * len(OUTCOMES)

    @classmethod
    def of(cls, rows: Sequence[ResultRow]) -> ResultColumns:
        """The columns of ``rows``."""
        columns = cls()
        for row in rows:
            columns.add(row)
        return columns

    def add(self, row: ResultRow) -> None:
        """One more row (a skipped question's row is not aggregated)."""
        if not row.replayed:
            return
        self.n += 1
        nan = math.nan
        for name, values in self._numeric.items():
            value = getattr(row, name)
            values.append(nan if value is None else value)
        for name in self._hits:
            if getattr(row, name):
                self._hits[name] += 1
        self._revised = self._revised or row.calls_on_revised is not None
        self._ranked = self._ranked or row.rankings is not None
        self._mutating = self._mutating or row.unsafe_calls is not None
        self._endpoint = self._endpoint or row.endpoint_ms is not None
        if row.call_outcomes is not None:
            for i, count in enumerate(row.call_outcomes):
                self._outcomes[i] += count

    def column(self, name: str) -> np.ndarray:
        """A numeric column as floats (NaN where a row has no value)."""
        return np.array(self._numeric[name], dtype=float)

    def mean(self, name: str) -> float:
        """``sum(value or 0.0) / n`` over the rows (the console's means), NaN when no row."""
        return sum(v if v == v else 0.0 for v in self._numeric[name]) / self.n if self.n else math.nan

    def hits(self, name: str) -> int:
        """How many rows have boolean column ``name`` true."""
        return self._hits[name]

    def summary(self, parameters: dict[str, Any], counts: dict[str, int] | None = None) -> dict[str, Any]:
        """``summary.json`` over the rows (:func:`summarize`)."""
        col, n = self.column, self.n
        out: dict[str, Any] = {"n_questions": n}
        if counts:
            out["selection"] = counts
        for name in NUMERIC_COLUMNS:
            out[name] = stats(col(name))
        for name in BOOL_COLUMNS:
            hits = self._hits[name]
            out[name] = {"n": hits, "rate": hits / n if n else None}
        if self._revised:
            on_revised, fired = col("calls_on_revised"), col("calls_fired")
            out["calls_on_revised"] = stats(on_revised)
            out["calls_on_revised_share"] = float(on_revised.sum() / fired.sum()) if fired.sum() else None
        if self._ranked:
            out["rankings"] = stats(col("rankings"))
            out["ranking_busy_ms"] = stats(col("ranking_busy_ms"))
        out["call_outcomes"] = outcome_counts(self._outcomes)
        if self._mutating:
            unsafe_calls = col("unsafe_calls")
            out["unsafe_calls"] = stats(unsafe_calls)
            out["unsafe_per_1000_turns"] = float(1000 * unsafe_calls.sum() / n) if n else None
        if self._endpoint:
            for name in ENDPOINT_COLUMNS:
                out[name] = stats(col(name))
            out["endpoint"] = compute_summary(col, n)
        saved = col("saved_ms")
        out["spearman_H_saved"] = spearman(col("H_ms"), saved)
        out["spearman_H_G_saved"] = spearman(col("H_G_ms"), saved)
        out["parameters"] = parameters
        return out


def summarize(
    rows: Sequence[ResultRow] | ResultColumns, parameters: dict[str, Any], counts: dict[str, int] | None = None
) -> dict[str, Any]:
    """``summary.json`` over the replayed rows (or their gathered columns), by the naming
    rule of the module docstring."""
    return (rows if isinstance(rows, ResultColumns) else ResultColumns.of(rows)).summary(parameters, counts)


def parameters(rs: ResolvedScenario) -> dict[str, Any]:
    """The resolved scenario as plain JSON data."""
    return {"scenario": rs.scenario.model_dump(mode="json"), "latency_stages": rs.stages.model_dump(mode="json")}


def provenance(reflector_model: str, rs: ResolvedScenario) -> dict[str, Any]:
    """Which reflector model and pipeline rules ran (summary.json and manifest.json)."""
    return {"reflector_model": reflector_model, "rules": rs.rules()}


def summary_data(
    reflector_model: str,
    rows: Sequence[ResultRow] | ResultColumns,
    rs: ResolvedScenario,
    counts: dict[str, int] | None = None,
    *,
    replay: str | None = None,
    **marks: Any,
) -> dict[str, Any]:
    """``summary.json``'s data (:class:`~streamrag.simulator.run_files.SimulateSummary`,
    checked); ``replay``: what replayed the rows (``closed_form`` | ``engine``; None, a
    live run: the key is left out); ``marks``: what a live run adds (``interrupted``,
    ``signal``)."""
    from streamrag.simulator.run_files import SimulateSummary

    said = {} if replay is None else {"replay": replay}
    data = versioned({**provenance(reflector_model, rs), **said, **summarize(rows, parameters(rs), counts), **marks})
    SimulateSummary.model_validate(data)
    return data


def summary_json(run: SimulationRun, rs: ResolvedScenario, counts: dict[str, int] | None = None) -> bytes:
    data = summary_data(run.reflector_model, run.rows, rs, counts, replay=run.replay)
    return (json.dumps(data, indent=2, allow_nan=False) + "\n").encode("utf-8")


def manifest_json(
    rs: ResolvedScenario,
    reflector_model: str,
    *,
    input_path: str | None,
    input_mode: str,
    command: list[str],
    jobs: int,
    n_questions: int,
    replay: str | None = None,
) -> bytes:
    """``manifest.json``: resolved scenario, reflector model and rules, what replayed it
    (``replay``: ``closed_form`` | ``engine``; None, a live run: left out), seed, version,
    input hash, command, created time.

    ``created`` is the only field that differs between two identical runs.
    """
    import numpy
    import pydantic

    from streamrag.base.version import __version__
    from streamrag.engine.clock import wall_clock_iso
    from streamrag.simulator.run_files import RunManifest

    data = {
        FIELD: FORMAT_VERSION,
        "streamrag_version": __version__,
        "seed": rs.scenario.seed,
        **provenance(reflector_model, rs),
        **({} if replay is None else {"replay": replay}),
        "scenario": parameters(rs),
        "input": {
            "mode": input_mode,
            "path": None if input_path is None else str(input_path),
            "sha256": None if input_path is None or not Path(input_path).is_file() else file_sha256(input_path),
        },
        "n_questions": n_questions,
        "jobs": jobs,
        "command": command,
        "python": sys.version.split()[0],
        "numpy": numpy.__version__,
        "pydantic": pydantic.__version__,
        "created": wall_clock_iso(),
    }
    RunManifest.model_validate(data)
    return (json.dumps(data, indent=2) + "\n").encode("utf-8")


def write_run(
    out_dir: str | os.PathLike[str],
    run: SimulationRun,
    rs: ResolvedScenario,
    *,
    manifest: bytes,
    counts: dict[str, int] | None = None,
) -> Path:
    """Write ``trace.jsonl``, ``results.csv``, ``summary.json`` and ``manifest.json``,
    together (:func:`~streamrag.base.atomic.together`: an interrupt or a refused write
    leaves the folder as it was)."""
    from streamrag.base.atomic import atomic_path, together, write_bytes_atomic
    from streamrag.engine.trace_file import header_bytes

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with together():
        with atomic_path(out / "trace.jsonl") as tmp, open(tmp, "wb") as fh:
            fh.write(header_bytes())
            for part in run.trace_parts():
                fh.write(part)
        write_bytes_atomic(out / "results.csv", results_csv(run.all_rows))
        write_bytes_atomic(out / "summary.json", summary_json(run, rs, counts))
        write_bytes_atomic(out / "manifest.json", manifest)
    return out
