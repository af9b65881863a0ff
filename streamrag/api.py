"""The Python API for notebooks: each of the study's steps in a line, pandas back.

::

    import streamrag

    table = streamrag.analyze("crag_task_1_and_2_dev_v4.jsonl.bz2", out="runs/analysis")
    results = streamrag.simulate("runs/analysis/stabilization.csv", "paper_rq3", set=["latency.L_ms=1000"])
    sweep = streamrag.read_run("runs/triggers")          # any run folder → its table
    results.attrs["summary"]["saved_ms"]["mean"]

Every function returns a :class:`pandas.DataFrame` — one row per question (or per sweep
point) — with the run's ``summary.json`` (and, for a folder, ``manifest.json`` and its
``kind``) in ``DataFrame.attrs``. The functions are the commands' own code paths: the
same inputs give the same numbers and, with ``out``, the same files as the CLI.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from streamrag.simulator.scenario import ResolvedScenario

__all__ = ["analyze", "compare_runs", "read_run", "simulate"]

PathLike = str | os.PathLike[str]


def analyze(
    data: PathLike,
    out: PathLike | None = None,
    *,
    split: int | None = 0,
    ids: Sequence[str] | None = None,
    limit: int | None = None,
    k: int = 3,
    grounding: str = "exact",
    retriever: str = "bm25",
    scope: str = "per-question",
    cache: PathLike | None = None,
    jobs: int = 1,
    figures: bool = True,
) -> pd.DataFrame:
    """The stabilization table of ``data`` (a CRAG file, or a corpus folder with
    ``scope="global"``), as ``streamrag analyze`` computes it; ``attrs["summary"]`` holds
    ``summary.json``. With ``out`` every output file is written there too.

    ``split``: 0 (validation, the paper; the default), 1, or ``None`` for all — when the
    split leaves rows of a CRAG file out, a :class:`UserWarning` says so ("kept split 0: 24
    of 32 rows"; counting costs one more read of the file) and ``attrs["selection"]``
    holds ``split``, ``kept`` and ``of``; ``cache``: a chunk-cache folder (default: none, so
    a notebook leaves no files behind). With ``out``, ``attrs["evidence"]`` is the
    ``prefixes.parquet`` written, which :func:`simulate` of this frame then uses.
    """
    from streamrag.analysis.entry import analyze_input
    from streamrag.analysis.stabilize import AnalysisSettings
    from streamrag.analysis.stats.rq import resolve_params, summarize
    from streamrag.analysis.study import table_frame, write_study
    from streamrag.base.system.outputs import check_out_dir
    from streamrag.data.chunk_cache import ChunkCache
    from streamrag.data.selection import Selection

    settings = AnalysisSettings.model_validate({"k": k, "grounding": grounding, "retriever": retriever})
    selection = Selection.model_validate(
        {"split": split, "ids": None if ids is None else tuple(ids), "limit": limit, "scope": scope}
    )
    if out is not None:
        check_out_dir(out, option="out")
    chunk_cache = None if cache is None else ChunkCache(Path(cache))
    analyzed = analyze_input(data, settings, selection, cache=chunk_cache, jobs=jobs)
    if out is not None:
        study = write_study(analyzed.analyses, Path(out), analyzed.parameters, figures=figures)
        table, summary = study.table, study.summary
    else:
        table = table_frame(analyzed.analyses)
        summary = summarize(table, params=resolve_params(None))
    table.attrs["summary"] = summary
    table.attrs["selection"] = _kept_split(Path(data), split, len(table)) if ids is None and limit is None else None
    if out is not None and (Path(out) / "prefixes.parquet").is_file():
        table.attrs["evidence"] = str(Path(out) / "prefixes.parquet")
    return table


def _kept_split(data: Path, split: int | None, kept: int) -> dict[str, Any] | None:
    """``{split, kept, of}`` when ``split`` left rows of a CRAG file out (and a warning)."""
    import warnings

    from streamrag.analysis.entry import input_kind, split_counts

    if split is None or input_kind(data) != "file":
        return None
    of = sum(split_counts(data).values())
    if of > kept:
        warnings.warn(f"kept split {split}: {kept} of {of} rows (split=None keeps all)", UserWarning, stacklevel=3)
    return {"split": split, "kept": kept, "of": of}


def simulate(
    source: PathLike | pd.DataFrame,
    scenario: str | ResolvedScenario = "paper_rq3",
    *,
    out: PathLike | None = None,
    set: Sequence[str] = (),  # the CLI's --set, by its name
    seed: int | None = None,
    ids: Sequence[str] | None = None,
    evidence: PathLike | bool | None = None,
    jobs: int = 1,
) -> pd.DataFrame:
    """Per-question results (``results.csv``) of replaying ``source`` through a scenario.

    ``source``: a stabilization table (``.csv``: trace-driven, with its
    ``prefixes.parquet`` when present), the DataFrame :func:`analyze` returns (with the
    evidence it wrote when it had ``out``; without, the table alone — the oracle
    reflector, as a bare ``.csv``) or a CRAG file (full mode). ``scenario``: a built-in
    name, a TOML path, or a resolved scenario (:func:`load_scenario`); ``set``: dotted
    overrides as ``--set`` takes them. ``attrs["summary"]`` holds ``summary.json``; with
    ``out`` the run folder is written as ``streamrag simulate`` writes it (refused when it
    holds an earlier run).
    """
    from streamrag.base.errors import ConfigError
    from streamrag.base.system.outputs import check_out_dir
    from streamrag.simulator.applies import refuse_inapplicable
    from streamrag.simulator.question_select import load_selected
    from streamrag.simulator.run_output import manifest_json, summary_json, write_run
    from streamrag.simulator.scenario import load_scenario
    from streamrag.simulator.simulate import recorded_for_table
    from streamrag.simulator.simulate import simulate as run_simulation

    if isinstance(scenario, str):
        rs = load_scenario(scenario, list(set), seed=seed)
    elif set or seed is not None:
        raise ConfigError("set= and seed= apply to a scenario given by name or file; a resolved scenario is final")
    else:
        rs = scenario
    if rs.scenario.load is not None:
        raise ConfigError(f"scenario {rs.scenario.name!r} is a load run ([load]): run it with 'streamrag simulate'")
    if out is not None:
        check_out_dir(out, option="out", refuse_nonempty="choose another folder")
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        import tempfile

        from streamrag.analysis.table import write_table

        with tempfile.TemporaryDirectory(prefix="streamrag-simulate-") as tmp:
            csv = write_table(source, Path(tmp) / "stabilization.csv")
            found = source.attrs.get("evidence")
            if evidence is None and found and Path(found).is_file():
                evidence = found
            return simulate(csv, rs, out=out, ids=ids, evidence=False if evidence is None else evidence, jobs=jobs)
    is_table = str(source).endswith(".csv")
    refuse_inapplicable(rs, "table" if is_table else "data")  # a setting this run would not read
    cache = None
    if not is_table:
        from streamrag.data.chunk_cache import ChunkCache, default_cache_dir

        cache = ChunkCache(default_cache_dir())
    qs = load_selected(
        rs.scenario,
        data=None if is_table else source,
        table=source if is_table else None,
        evidence=False if evidence is False else evidence,
        ids=ids,
        cache=cache,
        jobs=jobs,
    )
    run = run_simulation(qs, rs, jobs=jobs)
    if is_table:
        rs = recorded_for_table(rs, source)  # what the outputs record: the table's split
    if out is not None:
        manifest = manifest_json(
            rs,
            run.reflector_model,
            input_path=str(source),
            input_mode="table" if is_table else "data",
            command=["streamrag.simulate", str(source)],
            jobs=jobs,
            n_questions=qs.counts["selected"],
            replay=run.replay,
        )
        write_run(out, run, rs, manifest=manifest, counts=qs.counts)
    table = _results_frame(run.all_rows)
    table.attrs["summary"] = json.loads(summary_json(run, rs, qs.counts))
    return table


def compare_runs(a: PathLike, b: PathLike) -> pd.DataFrame:
    """Two simulate runs question by question: one row per question both replayed
    (``saved_ms_a``, ``saved_ms_b``, ``delta_saved_ms`` = B − A, …), ``attrs["summary"]``
    the ``comparison.json`` of ``streamrag compare RUN_A RUN_B`` (the Wilcoxon
    signed-rank test on the differences, their statistics, the ids only one run has)."""
    from streamrag.simulator.compare.runs import compare_runs as compare

    comparison = compare(a, b)
    comparison.table.attrs["summary"] = comparison.data
    return comparison.table


def _results_frame(rows: Sequence[Any]) -> pd.DataFrame:
    """``results.csv`` as a frame, read back through the CSV so types match :func:`read_run`."""
    import io

    from streamrag.simulator.results import read_results
    from streamrag.simulator.run_output import results_csv

    return read_results(io.BytesIO(results_csv(rows)))


def read_run(folder: PathLike) -> pd.DataFrame:
    """The table of any run folder, by what it holds: a sweep (``sweep.parquet``), a load
    run (``sessions.csv``), a simulation (``results.csv``) or an analysis
    (``stabilization.csv``), every column in its declared dtype.

    ``attrs``: ``kind`` (``sweep``, ``load``, ``simulation``, ``analysis``), ``summary`` and
    ``manifest`` (the folder's JSON files, ``None`` when absent).
    """
    from streamrag.base.formats import check_run
    from streamrag.report.sections import run_table

    run = Path(folder)
    check_run(run)
    kind, table = run_table(run)
    table.attrs.update(kind=kind, summary=_json_or_none(run / "summary.json"), manifest=_json_or_none(run / "manifest.json"))
    return table


def _json_or_none(path: Path) -> Any:
    from streamrag.base.formats import read_json

    return read_json(path) if path.is_file() else None
