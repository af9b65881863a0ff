"""Compute one point: the function executors run, in any process or on any machine.

:func:`execute_point` takes a :class:`~streamrag.sweep.point_kinds.PointJob` and the prepared
input it reads and returns the point's files as bytes plus its metrics. It writes
nothing: the parent process writes every file, so workers need no shared file system
(except analyze points, which read the data file at its path).

Metrics — the sweep table's columns after the axes — are named by the project's one
rule: a metric's name is its path in the point's output file (``summary.json`` or
``cell.json``), dots between keys, so ``saved_ms.mean`` in ``sweep.csv`` is
``summary["saved_ms"]["mean"]`` of the point and the mean of the ``saved_ms`` column of its
``results.csv``. By kind: :data:`SIMULATE_METRICS`, :data:`STREAMABLE_METRICS`,
``n_skipped`` and the flattened :func:`~streamrag.analysis.stats.rq.headline` (analyze:
``phi_suf.mean`` is ``summary["rq1"]["phi_suf"]["mean"]``, ``streamable_fraction`` the
configured RQ2 point's).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NamedTuple

from streamrag.base.columns import Dtype
from streamrag.sweep.point_kinds import PointJob

if TYPE_CHECKING:
    from streamrag.simulator.replay.planning import PlanCache


class PointOutput(NamedTuple):
    """What a worker returns for one point."""

    key: str
    files: dict[str, bytes]
    """File name → content, written into the point's folder by the parent."""
    metrics: dict[str, Any]
    wall_s: float
    """Wall time the worker spent on the point (s)."""


def _json(data: Any) -> bytes:
    return (json.dumps(data, indent=2, allow_nan=False, ensure_ascii=False) + "\n").encode("utf-8")


SIMULATE_METRICS: tuple[str, ...] = (
    "reflector_model",
    "rules.preset",
    "n_questions",
    "saved_ms.mean",
    "saved_ms.median",
    "saved_ms.p10",
    "saved_ms.p90",
    "H_ms.mean",
    "H_G_ms.mean",
    "H_prime_ms.mean",
    "baseline_ms.mean",
    "streaming_ms.mean",
    "spearman_H_saved.rho",
    "spearman_H_G_saved.rho",
    "negative.rate",
    "misfire.rate",
    "calls_fired.mean",
    "wasted_calls.mean",
    "cancelled_calls.mean",
    "skipped_fires.mean",
    "llm_busy_ms.mean",
    "tool_busy_ms.mean",
)
"""A simulate point's columns: paths into its ``summary.json``."""

STREAMABLE_METRICS: tuple[str, ...] = (
    "n",
    "n_streamable",
    "streamable_fraction",
    *(f"{part}.{name}" for part in ("retrieved_gold", "fallback") for name in ("n", "n_streamable", "streamable_fraction")),
    "H_ms.mean",
    "H_G_ms.mean",
    "H_prime_ms.mean",
)
"""A streamable point's columns: paths into its ``cell.json``."""


TEXT_METRICS: tuple[str, ...] = ("reflector_model", "rules.preset")
"""The metrics whose values are text."""


def metric_dtype(name: str) -> Dtype:
    """A metric column's type, by the naming rule: text for :data:`TEXT_METRICS`, an
    integer for a count (its last part ``n``, ``n_*`` or ``counted``), else a float —
    never from the values, so a metric undefined at every point keeps its type."""
    if name in TEXT_METRICS:
        return "str"
    last = name.rpartition(".")[2]
    return "int" if last in ("n", "counted") or last.startswith("n_") else "float"


def simulate_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    """A simulate point's metrics from its ``summary.json`` data."""
    from streamrag.analysis.stats.rq import pick

    out = pick(summary, SIMULATE_METRICS)
    if "calls_on_revised_share" in summary:  # the questions were ASR hypotheses
        out.update(pick(summary, ASR_METRICS))
    if "rankings" in summary:  # the rankings of word prefixes cost something (pipeline.ranking)
        out.update(pick(summary, RANKING_METRICS))
    if summary.get("endpoint") is not None:  # an endpointer ended the turns ([endpoint])
        out.update(pick(summary, ENDPOINT_METRICS))
    return out


def streamable_metrics(cell: dict[str, Any]) -> dict[str, Any]:
    """A streamable point's metrics from its cell (:func:`streamable_cell`)."""
    from streamrag.analysis.stats.rq import pick

    return pick(cell, STREAMABLE_METRICS)


def analyze_metrics(summary: dict[str, Any]) -> dict[str, Any]:
    """An analyze point's metrics from its ``summary.json`` data."""
    from streamrag.analysis.stats.rq import flatten, headline

    return {"n_skipped": summary["n_skipped"], **flatten(headline(summary["rq1"], summary["rq2"]["point"]))}


def _simulate(job: PointJob, prepared: Any, plans: PlanCache | None) -> tuple[dict[str, bytes], dict[str, Any]]:
    from streamrag.simulator.question_select import select_for
    from streamrag.simulator.run_output import results_csv, summary_json
    from streamrag.simulator.simulate import simulate
    from streamrag.sweep.points import StudiedQuestions

    rs = job.settings
    study: dict[str, bytes] = {}
    if isinstance(prepared, StudiedQuestions):  # a data input: its analysis's outputs are kept too
        prepared, study = prepared.questions, prepared.study
    selected = select_for(prepared, rs.scenario.selection())
    if rs.scenario.load is not None:
        files, metrics = _load(job, selected)
    else:
        run = simulate(selected, rs, jobs=1, plans=plans)
        summary = summary_json(run, rs, selected.counts)
        files = {"results.csv": results_csv(run.all_rows), "summary.json": summary}
        if job.traces:
            from streamrag.engine.trace_file import header_bytes

            files["trace.jsonl"] = header_bytes() + run.trace_bytes()
        metrics = simulate_metrics(json.loads(summary))
    if study:
        files.update(study)
        metrics.update({f"analysis.{k}": v for k, v in analyze_metrics(json.loads(study["analysis.json"])).items()})
    return files, metrics


ASR_METRICS: tuple[str, ...] = ("t_star.mean", "calls_on_revised_share", "calls_on_revised.mean")
"""Extra columns of a simulate point over ASR hypotheses (``data.asr``)."""
RANKING_METRICS: tuple[str, ...] = ("rankings.mean", "ranking_busy_ms.mean")
"""Extra columns of a simulate point whose rankings cost something (``pipeline.ranking``)."""

ENDPOINT_METRICS: tuple[str, ...] = (
    "endpoint_ms.mean",
    "confirm_ms.mean",
    *(
        f"endpoint.{name}"
        for name in (
            "false_cutoffs_per_100_turns",
            "answered_partial_per_100_turns",
            "eager_restarts_per_100_turns",
            "extra_llm_calls_per_turn",
            "extra_tool_calls_per_turn",
            "extra_llm_share",
            "extra_tool_share",
            "extra_llm_tokens_in_per_turn",
            "extra_llm_tokens_in_share",
        )
    ),
)
"""Extra columns of a simulate point whose turns an endpointer ended (:mod:`streamrag.simulator.turn_parts`)."""

LOAD_METRICS: tuple[str, ...] = (
    "reflector_model",
    "rules.preset",
    "sessions.counted",
    *(f"{system}.answer_ms.{stat}" for system in ("streaming", "baseline") for stat in ("mean", "median", "p90", "p99")),
    *(f"answer_ms_difference.{stat}" for stat in ("mean", "median", "p90", "p99")),
    "saved_ms.mean",
    "saved_ms.median",
    *(f"{system}.resources.{res}.utilization" for system in ("streaming", "baseline") for res in ("tool", "llm")),
    *(f"{system}.failed.rate" for system in ("streaming", "baseline")),
    "streaming.calls_fired.mean",
    "streaming.wasted_share.tool",
    "reference.unlimited_saved_ms.mean",
    "reference.loaded_saved_ms.mean",
)
"""A load point's columns: paths into its ``summary.json`` (:mod:`streamrag.simulator.load.run`)."""


def _load(job: PointJob, selected: Any) -> tuple[dict[str, bytes], dict[str, Any]]:
    import tempfile
    from pathlib import Path

    from streamrag.analysis.stats.rq import pick
    from streamrag.simulator.load.output import load_summary, summary_bytes, write_load_trace, write_sessions_csv
    from streamrag.simulator.load.run import run_load
    from streamrag.simulator.run_output import parameters
    from streamrag.simulator.simulate import reflector_model_of

    rs = job.settings
    model = reflector_model_of(selected.entries, rs, selected.evidence_source)
    with (
        tempfile.TemporaryDirectory(prefix="streamrag-load-") as tmp,
        run_load(selected.questions, rs, trace_dir=tmp if job.traces else None, reflector_model=model) as run,
    ):
        summary = load_summary(run, {**parameters(rs), "population": selected.counts})
        files = {
            "sessions.csv": write_sessions_csv(run, Path(tmp) / "sessions.csv").read_bytes(),
            "summary.json": summary_bytes(summary),
        }
        if job.traces:
            trace = write_load_trace(run, Path(tmp) / "trace.jsonl")
            files["trace.jsonl"] = trace.read_bytes() if trace is not None else b""
    return files, pick(summary, LOAD_METRICS)


def _streamable(job: PointJob, table: Any) -> tuple[dict[str, bytes], dict[str, Any]]:
    from streamrag.analysis.stats.rq import streamable_cell

    p = job.settings
    cell = streamable_cell(table, L_ms=p["L_ms"], delta_wps=p["delta_wps"], theta=p["theta"], G_ms=p["G_ms"])
    return {"cell.json": _json(cell)}, streamable_metrics(cell)


def _analyze(job: PointJob) -> tuple[dict[str, bytes], dict[str, Any]]:
    import tempfile
    from pathlib import Path

    from streamrag.analysis.study import run_study
    from streamrag.base.errors import CacheError
    from streamrag.data.chunk_cache import ChunkCache, default_cache_dir
    from streamrag.data.selection import Selection

    try:
        cache = ChunkCache(default_cache_dir())
    except CacheError:  # a worker without a usable cache folder still computes the point
        cache = None
    data = job.data or {}
    with tempfile.TemporaryDirectory(prefix="streamrag-point-") as tmp:
        selection = Selection(split=data.get("split"), limit=data.get("limit"))
        run_study(data["path"], tmp, job.settings, selection, cache=cache, jobs=1, figures=False)
        files = {name: (Path(tmp) / name).read_bytes() for name in ("stabilization.csv", "summary.json")}
    return files, analyze_metrics(json.loads(files["summary.json"]))


def execute_point(job: PointJob, prepared: Any = None, plans: PlanCache | None = None) -> PointOutput:
    """Compute one point (see the module docstring); deterministic in ``job`` and input.
    ``plans``: the question plans of the points this process ran before, reused where a
    point's plan settings are theirs (:class:`~streamrag.simulator.replay.planning.PlanCache`:
    the same bytes as drawing them anew)."""
    from streamrag.engine.clock import RealClock

    clock = RealClock()
    if job.kind == "simulate":
        files, metrics = _simulate(job, prepared, plans)
    elif job.kind == "streamable":
        files, metrics = _streamable(job, prepared)
    else:
        files, metrics = _analyze(job)
    return PointOutput(job.key, files, metrics, clock.now_us() / 1e6)
